"""Neighbours, k-hop expansion and degrees over a GraphView, with whole-frontier numpy operations.

No function here loops over edges or nodes in Python: a frontier's edges are gathered with one
repeat/arange per part, filtered with boolean masks, and de-duplicated with one sort. A hub with a million
edges costs a few array passes and no Python object per edge.

Path edge rule (k-hop): a node first reached at hop h is attributed to the strongest edge from a hop h-1
node that reaches it (highest weight, then lowest edge id), so the answer does not depend on how the edges
happen to be split into parts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.arrays import sorted_unique
from engine.graph.view import GraphView

DIRECTIONS = ("out", "in", "both")
SECONDS_PER_DAY = 86400.0
_TYPE_SLOTS = 1 << 16  # edge types are at most uint16
_EMPTY_IDS = np.zeros(0, np.int64)


_FIELDS = ("origin", "neighbor", "edge_type", "weight", "edge_id", "edge_time")


@dataclass(frozen=True)
class EdgeSet:
    """Traversed edges as parallel arrays: the walk went origin → neighbor over edge `edge_id`.

    edge_id is None when the caller did not ask for it (PageRank does not need it, and on a whole graph it is
    a million-entry gather); edge_time is only gathered for a degree cap.
    """

    origin: np.ndarray
    neighbor: np.ndarray
    edge_type: np.ndarray
    weight: np.ndarray
    edge_id: np.ndarray | None
    edge_time: np.ndarray | None

    def __len__(self) -> int:
        return len(self.origin)

    def take(self, selector) -> "EdgeSet":
        return EdgeSet(*(None if values is None else values[selector]
                         for values in (getattr(self, field) for field in _FIELDS)))


@dataclass(frozen=True)
class DegreeCap:
    """Keep at most `limits[type]` edges per (node, type) on read: the top by weight × recency.

    recency = exp(-age / tau) (seed 001 §6.1 and §22.1); `now` and `tau_days` make the result reproducible.
    A type missing from `limits` is not capped.
    """

    limits: dict
    now: float
    tau_days: float = 90.0

    def limit_array(self) -> np.ndarray:
        limits = np.full(_TYPE_SLOTS, np.iinfo(np.int64).max, np.int64)
        for edge_type, limit in self.limits.items():
            limits[int(edge_type)] = int(limit)
        return limits


@dataclass(frozen=True)
class Reached:
    """k-hop result, ordered by hop then node id. Seeds have hop 0, edge_id -1 and parent -1."""

    node: np.ndarray
    hop: np.ndarray
    edge_id: np.ndarray
    parent: np.ndarray

    def __len__(self) -> int:
        return len(self.node)


def type_mask(types) -> np.ndarray | None:
    """Boolean lookup table over edge type ids; None means every type."""
    if types is None:
        return None
    mask = np.zeros(_TYPE_SLOTS, bool)
    mask[np.asarray(list(types), dtype=np.int64)] = True
    return mask


def gather(view: GraphView, nodes: np.ndarray | None, direction: str = "out", types=None,
           cap: DegreeCap | None = None, detail: bool = True) -> EdgeSet:
    """Every live edge leaving `nodes` (None: every node) in `direction`, type-filtered and capped.

    detail=False leaves out edge ids and times where nothing needs them.
    """
    _check_direction(direction)
    mask = type_mask(types)
    sides = ("out", "in") if direction == "both" else (direction,)
    sets = []
    for side in sides:
        found = _concat([_gather_part(view, index, part, side, nodes, mask, detail, cap is not None)
                         for index, part in enumerate(view.parts)])
        sets.append(_apply_cap(found, cap) if cap is not None else found)
    return _concat(sets)


def neighbors(view: GraphView, node: int, direction: str = "out", types=None, limit: int | None = None,
              cap: DegreeCap | None = None) -> EdgeSet:
    """Edges from `node`, strongest first (weight descending, then edge id)."""
    edges = gather(view, _check_ids(view, [node]), direction, types, cap)
    order = np.lexsort((edges.edge_id, -edges.weight))
    if limit is not None:
        order = order[:limit]
    return edges.take(order)


def khop(view: GraphView, seeds, k: int, types=None, direction: str = "out", max_nodes: int | None = None,
         cap: DegreeCap | None = None) -> Reached:
    """Nodes within `k` hops of `seeds`, each with its hop and the path edge that first reached it."""
    seeds = sorted_unique(_check_ids(view, seeds))
    seeds = seeds[view.alive(seeds)]
    if max_nodes is not None:
        seeds = seeds[:max_nodes]
    nodes, hops, edge_ids, parents = [seeds], [np.zeros(len(seeds), np.int64)], [np.full(len(seeds), -1)], \
        [np.full(len(seeds), -1)]
    visited = np.zeros(view.node_count, bool)
    visited[seeds] = True
    frontier, total = seeds, len(seeds)
    for hop in range(1, k + 1):
        room = None if max_nodes is None else max_nodes - total
        if len(frontier) == 0 or room == 0:
            break
        edges = gather(view, frontier, direction, types, cap)
        edges = edges.take(~visited[edges.neighbor])
        best = _strongest_per_neighbor(edges)
        if room is not None and len(best) > room:
            keep = np.lexsort((best.neighbor, -best.weight))[:room]
            best = best.take(np.sort(keep))
        frontier = best.neighbor
        visited[frontier] = True
        total += len(frontier)
        nodes.append(frontier)
        hops.append(np.full(len(frontier), hop, np.int64))
        edge_ids.append(best.edge_id)
        parents.append(best.origin)
    return Reached(np.concatenate(nodes), np.concatenate(hops), np.concatenate(edge_ids).astype(np.int64),
                   np.concatenate(parents).astype(np.int64))


def degree(view: GraphView, nodes, direction: str = "out", types=None) -> np.ndarray:
    """Live degree of each of `nodes` (in the given order)."""
    nodes = np.asarray(nodes, dtype=np.int64)
    edges = gather(view, np.unique(nodes), direction, types)
    unique_nodes, counts = np.unique(edges.origin, return_counts=True)
    position = np.searchsorted(unique_nodes, nodes)
    found = position < len(unique_nodes)
    found[found] = unique_nodes[position[found]] == nodes[found]
    result = np.zeros(len(nodes), np.int64)
    result[found] = counts[position[found]]
    return result


def type_degrees(view: GraphView, node: int, direction: str = "out") -> dict:
    """{edge type: count} of one node's live edges."""
    edges = gather(view, np.array([node], np.int64), direction)
    types, counts = np.unique(edges.edge_type, return_counts=True)
    return {int(edge_type): int(count) for edge_type, count in zip(types, counts)}


def type_statistics(view: GraphView, direction: str = "out") -> dict:
    """Per edge type: edge count, nodes having such edges, mean and max degree, and the top node.

    With direction "both" a node's degree counts its in- and out-edges; an edge is still counted once."""
    edges = gather(view, None, direction)
    statistics = {}
    for edge_type in np.unique(edges.edge_type):
        chosen = edges.edge_type == edge_type
        origins = edges.origin[chosen]
        nodes, counts = np.unique(origins, return_counts=True)
        top = int(np.argmax(counts))
        edge_count = len(np.unique(edges.edge_id[chosen])) if direction == "both" else len(origins)
        statistics[int(edge_type)] = {"edges": int(edge_count), "nodes": int(len(nodes)),
                                      "mean_degree": float(counts.mean()), "max_degree": int(counts[top]),
                                      "max_node": int(nodes[top])}
    return statistics


# --- internals ---------------------------------------------------------------------------------------------


def _check_ids(view: GraphView, nodes) -> np.ndarray:
    nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
    if len(nodes) and (nodes.min() < 0 or nodes.max() >= view.node_count):
        raise ValueError(f"node ids must be in 0..{view.node_count - 1}")
    return nodes


def _check_direction(direction: str) -> None:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")


def _gather_part(view: GraphView, index: int, part, side: str, nodes, mask, detail: bool,
                 timed: bool) -> EdgeSet:
    detail = detail or timed  # the cap breaks ties by edge id
    with_ids = detail or view.edge_owner is not None
    if nodes is None:
        adjacency = part.out if side == "out" else part.inn
        row_nodes = np.arange(adjacency.row_count) if adjacency.rows is None else adjacency.rows
        origin = np.repeat(row_nodes, np.diff(adjacency.indptr))
        # every edge: slices are views, where a million-entry index array would copy every column
        positions = slice(None)
        if mask is not None:
            positions = np.flatnonzero(mask[adjacency.edge_type])
            origin = origin[positions]
        neighbor, edge_type, weight, edge_row = (adjacency.neighbor[positions], adjacency.edge_type[positions],
                                                 adjacency.weight[positions], adjacency.edge_row[positions])
        edge_id = part.edge_id[edge_row] if with_ids else None
        edge_time = part.edge_time[edge_row] if timed else None
    else:
        origin, neighbor, edge_type, weight, edge_row = part.gather_rows(side, nodes, mask)
        edge_id = part.edge_ids_at(edge_row) if with_ids else None
        edge_time = part.edge_times_at(edge_row) if timed else None
    keep = None
    if view.edge_owner is not None:
        keep = view.edge_owner[edge_id] == index
    if view.node_dead is not None:
        alive = ~view.node_dead[neighbor] & ~view.node_dead[origin]
        keep = alive if keep is None else keep & alive
    found = EdgeSet(origin.astype(np.int64, copy=False), neighbor.astype(np.int64, copy=False), edge_type, weight,
                    edge_id if detail else None, edge_time)
    return found if keep is None else found.take(keep)


def _concat(sets: list) -> EdgeSet:
    sets = [edge_set for edge_set in sets if len(edge_set)] or sets[:1]
    if len(sets) == 1:
        return sets[0]
    if not sets:
        return _empty_edge_set()
    return EdgeSet(*(None if getattr(sets[0], field) is None else
                     np.concatenate([getattr(edge_set, field) for edge_set in sets]) for field in _FIELDS))


def _empty_edge_set() -> EdgeSet:
    return EdgeSet(_EMPTY_IDS, _EMPTY_IDS, np.zeros(0, np.uint16), np.zeros(0, np.float32), _EMPTY_IDS,
                   np.zeros(0, np.float64))


def _strongest_per_neighbor(edges: EdgeSet) -> EdgeSet:
    """One edge per distinct neighbor (the path edge rule), ordered by neighbor id."""
    order = np.lexsort((edges.edge_id, -edges.weight, edges.neighbor))
    neighbor = edges.neighbor[order]
    first = np.ones(len(order), bool)
    first[1:] = neighbor[1:] != neighbor[:-1]
    return edges.take(order[first])


def _apply_cap(edges: EdgeSet, cap: DegreeCap) -> EdgeSet:
    if len(edges) == 0:
        return edges
    age_days = np.maximum(cap.now - edges.edge_time, 0.0) / SECONDS_PER_DAY
    score = edges.weight * np.exp(-age_days / cap.tau_days)
    order = np.lexsort((edges.edge_id, -score, edges.edge_type, edges.origin))
    origin, edge_type = edges.origin[order], edges.edge_type[order]
    group_start = np.ones(len(order), bool)
    group_start[1:] = (origin[1:] != origin[:-1]) | (edge_type[1:] != edge_type[:-1])
    start_index = np.maximum.accumulate(np.where(group_start, np.arange(len(order)), 0))
    rank = np.arange(len(order)) - start_index
    kept = order[rank < cap.limit_array()[edge_type]]
    return edges.take(np.sort(kept))
