"""Stage C (seed 001 §5.2, W4 step 2): graph expansion from the stage-A seeds.

1. Reply hop: over TEMPORAL_NEXT edges that join two turns of one session by different speakers (the
   Episodes' session and speaker attributes, else the edge's same_session and speaker_change props, both written
   by R2G), s'(n) = s(n) + recall.reply_neighbor · max s(m) over n's
   reply neighbours m; neighbours enter as candidates. A question's answer is very often the reply to the
   turn that matches the question's words (LoCoMo dev: +0.016 Recall@10 over stage A alone, see RESULTS.md).
2. k-hop expansion (k = recall.k_hop, or mvp_k_hop with --mvp) over the configured edge types, both
   directions, at most recall.expand_max_nodes nodes, not through hubs (nodes with more than recall.hub_degree
   such edges); then Personalized PageRank on that subgraph (the edges the expansion gathered, walked both
   ways), restarting
   at the best recall.ppr_seeds seeds in proportion to their scores (damping recall.ppr_damping, edge weight ×
   graph.edge_weights of its type). The PPR score enters the ranking with λ_ppr.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

TEMPORAL_NEXT = "TEMPORAL_NEXT"


class GraphStage:
    def __init__(self, graph, nodes, settings):
        self.graph = graph
        self.nodes = nodes
        self.settings = settings
        self.snapshot = graph.snapshot()
        self.edge_types = graph.type_ids("edge")
        self._reply: dict = {}

    def node_ids(self, keys: list) -> dict:
        """key → internal id of the live nodes among `keys`."""
        found = {}
        for key in keys:
            node = self.nodes.record(key)
            if node is not None and node.id < self.snapshot.node_count:
                found[key] = int(node.id)
        return found

    # --- reply hop --------------------------------------------------------------------------------------

    def reply_hop(self, scores: dict, weight: float) -> tuple[dict, dict, dict]:
        """(new scores, via, facts): every seed and reply neighbour scored s + weight · max s(neighbours)."""
        type_id = self.edge_types.get(TEMPORAL_NEXT)
        if not weight or type_id is None or not scores:
            return dict(scores), {}, {"reply_edges": 0, "added": 0}
        ids = self.node_ids(list(scores))
        if not ids:
            return dict(scores), {}, {"reply_edges": 0, "added": 0}
        key_of = {node_id: key for key, node_id in ids.items()}
        edges = self.snapshot.gather(np.array(sorted(key_of), np.int64), "both", [type_id])
        neighbor_keys = dict(zip(edges.neighbor.tolist(), self.snapshot.node_keys(edges.neighbor)))
        best: dict = {}  # key → (best neighbour score, neighbour key)
        replies = 0
        for source, target, edge_id in zip(edges.origin.tolist(), edges.neighbor.tolist(), edges.edge_id.tolist()):
            source_key, target_key = key_of[source], neighbor_keys[target]
            if target_key is None or not self._is_reply(source_key, target_key, edge_id):
                continue
            replies += 1
            score = scores[source_key]
            if score > best.get(target_key, (0.0, None))[0]:
                best[target_key] = (score, source_key)
        updated = dict(scores)
        via = {}
        added = 0
        for key, (score, source_key) in best.items():
            if key not in updated:
                updated[key] = 0.0
                via[key] = (source_key, TEMPORAL_NEXT, "reply")
                added += 1
            updated[key] += weight * score
        return updated, via, {"reply_edges": replies, "added": added}

    def _is_reply(self, first: str, second: str, edge_id: int) -> bool:
        """Same session, another speaker: from the Episodes' speaker and session attributes (R2G writes the
        edge's same_session/speaker_change from the same values); from the edge's own props for nodes that lack
        them (graphs imported from elsewhere)."""
        one, two = self.nodes.props(first).get("attributes") or {}, self.nodes.props(second).get("attributes") or {}
        if one.get("speaker") and two.get("speaker") and "session" in one and "session" in two:
            return one["session"] == two["session"] and one["speaker"] != two["speaker"]
        found = self._reply.get(edge_id)
        if found is None:
            [edge] = self.graph.edges_by_id([edge_id])
            props = (edge.props if edge is not None else None) or {}
            found = self._reply[edge_id] = bool(props.get("same_session") and props.get("speaker_change"))
        return found

    # --- k-hop + PPR ------------------------------------------------------------------------------------

    def expand(self, scores: dict, k: int, edge_type_names, added_types, added_limit: int):
        """PPR over the k-hop subgraph of the best seeds: (PPR of the scored keys, [(key, PPR, type, via)] of
        the best `added_limit` other nodes of `added_types`, facts). Keys are decoded only for those."""
        from engine.graph.pagerank import power_iteration, type_weights

        type_ids = [self.edge_types[name] for name in edge_type_names if name in self.edge_types]
        ids = self.node_ids([key for key, score in scores.items() if score > 0])
        if not ids or k <= 0 or not type_ids:
            return {}, [], {"subgraph": 0, "edge_types": list(edge_type_names)}
        seed_keys = sorted(ids, key=lambda key: (-scores[key], key))[: self.settings.recall.ppr_seeds]
        seed_ids = np.array([ids[key] for key in seed_keys], np.int64)
        reached = self.neighbourhood(seed_ids, k, type_ids, max(self.settings.recall.expand_max_nodes, len(seed_ids)))
        weights = type_weights(self.edge_types, self.settings.graph.edge_weights, self.settings.graph.default_edge_weight)
        walk = _walk(reached, weights)
        ranking = power_iteration(walk, seed_ids, [max(scores[key], 0.0) for key in seed_keys],
                                  self.settings.recall.ppr_damping, self.settings.recall.ppr_iterations, 0.0, "numpy")
        rows = np.minimum(np.searchsorted(ranking.node, np.array(list(ids.values()), np.int64)),
                          len(ranking.node) - 1)
        ppr = {key: float(ranking.score[row]) for (key, node), row in zip(ids.items(), rows.tolist())
               if ranking.node[row] == node}
        added = self._additions(ranking, reached, set(ids.values()), added_types, added_limit)
        return ppr, added, {"subgraph": int(len(reached)), "seeds": len(seed_keys), "k": k,
                            "iterations": int(ranking.iterations), "edge_types": list(edge_type_names)}

    def neighbourhood(self, seeds, k: int, type_ids: list, max_nodes: int) -> Neighbourhood:
        """Nodes within k hops of `seeds` over `type_ids`, both directions, at most `max_nodes`.

        Unlike engine.graph.traverse.khop, a node with more than recall.hub_degree such edges (a topic hub)
        joins the subgraph but is not expanded through: one hub would otherwise pull thousands of unrelated
        turns into hop 2, and sorting its edges costs more than the rest of the query. Each node keeps the
        first edge found to it (the path shown as evidence), and when the hop would pass max_nodes the
        strongest edges' nodes are kept."""
        visited = np.zeros(self.snapshot.node_count, bool)
        visited[seeds] = True
        unset = np.full(len(seeds), -1, np.int64)
        parts = [(seeds, unset, unset, np.zeros(len(seeds), np.int64), unset)]
        frontier, total = seeds, len(seeds)
        found = []
        for hop in range(1, k + 1):
            if not len(frontier) or total >= max_nodes:
                break
            edges = self.snapshot.gather(frontier, "both", type_ids)
            ordered = np.sort(frontier)
            row = np.searchsorted(ordered, edges.origin)
            expanded = (np.bincount(row, minlength=len(ordered)) <= self.settings.recall.hub_degree)[row]
            edges = edges.take(expanded)
            found.append(edges)
            keep = ~visited[edges.neighbor]
            origin, neighbor, weight, edge_id, edge_type = (edges.origin[keep], edges.neighbor[keep],
                                                            edges.weight[keep], edges.edge_id[keep],
                                                            edges.edge_type[keep])
            order = np.argsort(neighbor, kind="stable")
            first = np.ones(len(order), bool)
            first[1:] = neighbor[order][1:] != neighbor[order][:-1]
            chosen = order[first]
            room = max_nodes - total
            if len(chosen) > room:
                chosen = chosen[np.argsort(-weight[chosen], kind="stable")[:room]]
            new = neighbor[chosen]
            visited[new] = True
            parts.append((new, origin[chosen], edge_id[chosen], np.full(len(new), hop, np.int64),
                          edge_type[chosen].astype(np.int64)))
            frontier, total = new, total + len(new)
        node, parent, edge, hops, edge_type = (np.concatenate(column) for column in zip(*parts))
        return Neighbourhood(node, hops, edge, parent, edge_type, found)

    def _additions(self, ranking, reached, known: set, added_types, limit: int) -> list:
        node_types = self.graph.type_ids("node")
        allowed = np.array([node_types[name] for name in added_types if name in node_types], np.int64)
        if not limit or not len(allowed):
            return []
        ranked_types = self.snapshot.node_types(ranking.node)
        wanted = np.zeros(int(max(allowed.max(), ranked_types.max(initial=0))) + 1, bool)
        wanted[allowed] = True
        usable = (ranking.score > 0) & wanted[ranked_types]
        candidates = np.flatnonzero(usable)
        order = candidates[np.lexsort((ranking.node[candidates], -ranking.score[candidates]))]
        chosen = [index for index in order.tolist() if int(ranking.node[index]) not in known][:limit]
        if not chosen:
            return []
        nodes = ranking.node[chosen]
        names = self.graph.type_names("node")
        where = {node: index for index, node in enumerate(reached.node.tolist())}
        rows = [where.get(node) for node in nodes.tolist()]
        reached_by = [row if row is not None and reached.hop[row] > 0 else None for row in rows]
        parents = self.snapshot.node_keys([-1 if row is None else reached.parent[row] for row in reached_by])
        edge_names = {type_id: name for name, type_id in self.edge_types.items()}
        edges = [None if row is None else edge_names.get(int(reached.edge_type[row])) for row in reached_by]
        added = []
        for key, score, type_id, parent, edge in zip(self.snapshot.node_keys(nodes), ranking.score[chosen].tolist(),
                                                     ranked_types[chosen].tolist(), parents, edges):
            if key is None:
                continue
            via = (parent, edge, "hop") if parent is not None else None
            added.append((key, float(score), names.get(int(type_id)), via))
        return added

    def episodes_of(self, keys: list) -> dict:
        """key → the Episode each node derives from (its DERIVED_FROM edge to an Episode), when it has one."""
        derived = self.edge_types.get("DERIVED_FROM")
        episode = self.graph.type_ids("node").get("Episode")
        ids = self.node_ids(keys)
        if derived is None or episode is None or not ids:
            return {}
        key_of = {node_id: key for key, node_id in ids.items()}
        edges = self.snapshot.gather(np.array(sorted(key_of), np.int64), "out", [derived])
        keep = self.snapshot.node_types(edges.neighbor) == episode
        origin, target = edges.origin[keep], edges.neighbor[keep]
        found = {}
        for source, key in zip(origin.tolist(), self.snapshot.node_keys(target)):
            if key is not None:
                found.setdefault(key_of[source], key)
        return found


@dataclass
class Neighbourhood:
    """Like engine.graph.traverse.Reached: seeds first (hop 0, edge and parent -1)."""

    node: np.ndarray
    hop: np.ndarray
    edge_id: np.ndarray
    parent: np.ndarray
    edge_type: np.ndarray  # type id of the path edge, -1 for seeds
    edges: list = field(default_factory=list)  # the EdgeSets gathered from each expanded frontier

    def __len__(self) -> int:
        return len(self.node)


def _walk(reached: Neighbourhood, type_weights: np.ndarray):
    """The PPR walk over the subgraph, built from the edges the expansion already gathered: every edge between
    two subgraph nodes that an expanded node holds, once, walked both ways (what pagerank.transition with
    direction "both" gives, without gathering a hub's thousands of edges a second time)."""
    from engine.graph.pagerank import Transition

    node = np.sort(reached.node)
    if reached.edges:
        origin = np.concatenate([edges.origin for edges in reached.edges])
        neighbor = np.concatenate([edges.neighbor for edges in reached.edges])
        weight = np.concatenate([edges.weight for edges in reached.edges]).astype(np.float64)
        weight *= type_weights[np.concatenate([edges.edge_type for edges in reached.edges])]
        edge_id = np.concatenate([edges.edge_id for edges in reached.edges])
        inside = _members(node, neighbor) & (weight > 0)
        origin, neighbor, weight, edge_id = origin[inside], neighbor[inside], weight[inside], edge_id[inside]
        order = np.argsort(edge_id, kind="stable")
        once = np.ones(len(order), bool)
        once[1:] = edge_id[order][1:] != edge_id[order][:-1]
        chosen = order[once]
        source = np.searchsorted(node, np.concatenate([origin[chosen], neighbor[chosen]]))
        target = np.searchsorted(node, np.concatenate([neighbor[chosen], origin[chosen]]))
        weight = np.concatenate([weight[chosen], weight[chosen]])
    else:
        source = target = np.zeros(0, np.int64)
        weight = np.zeros(0)
    out_weight = np.bincount(source, weights=weight, minlength=len(node))
    dangling = out_weight == 0
    inverse = np.divide(1.0, out_weight, out=np.zeros(len(node)), where=~dangling)
    return Transition(node, source, target, weight, inverse, np.flatnonzero(dangling))


def _members(sorted_values: np.ndarray, probes: np.ndarray) -> np.ndarray:
    """Which probes occur in `sorted_values` (binary search; np.isin would import numpy.ma)."""
    if not len(sorted_values):
        return np.zeros(len(probes), bool)
    places = np.minimum(np.searchsorted(sorted_values, probes), len(sorted_values) - 1)
    return sorted_values[places] == probes
