"""Plain-Python reference answers and random part histories for the graph tests.

A history is a list of parts; each part holds edge versions, edge drops and node states, applied in order.
`Model` folds a history into the final live graph the way a reader should see it, and answers neighbours,
k-hop and PageRank with dictionaries, a FIFO queue and a dense matrix.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
from hypothesis import strategies as st

from engine.graph.view import GraphView, build_part

NODE_LIMIT = 24
EDGE_ID_LIMIT = 60
TYPE_COUNT = 4
# float32-exact weights with deliberate ties, so the tie-break rules are exercised.
WEIGHTS = [0.0, 0.25, 0.5, 1.0, 1.5, 2.0]
TIMES = [0.0, 86400.0 * 10, 86400.0 * 100, 86400.0 * 400]


@st.composite
def histories(draw, max_parts: int = 4):
    node_count = draw(st.integers(1, NODE_LIMIT))
    node = st.integers(0, node_count - 1)
    edge = st.tuples(st.integers(0, EDGE_ID_LIMIT - 1), node, node, st.integers(0, TYPE_COUNT - 1),
                     st.sampled_from(WEIGHTS), st.sampled_from(TIMES))
    parts = []
    for _ in range(draw(st.integers(1, max_parts))):
        versions = {item[0]: item for item in draw(st.lists(edge, max_size=40))}
        dropped = sorted(set(draw(st.lists(st.integers(0, EDGE_ID_LIMIT - 1), max_size=6))) - set(versions))
        states = dict(draw(st.lists(st.tuples(node, st.tuples(st.integers(0, 3), st.booleans())), max_size=5)))
        parts.append({"edges": list(versions.values()), "dropped": dropped, "nodes": states,
                      "dense": draw(st.booleans())})
    return node_count, parts


def build_view(node_count: int, parts: list) -> GraphView:
    built = []
    for part in parts:
        edges = np.array(part["edges"], dtype=np.float64).reshape(-1, 6)
        states = sorted(part["nodes"].items())
        built.append(build_part(
            edge_id=edges[:, 0].astype(np.int64), source=edges[:, 1].astype(np.int64),
            target=edges[:, 2].astype(np.int64), edge_type=edges[:, 3].astype(np.uint8),
            weight=edges[:, 4].astype(np.float32), edge_time=edges[:, 5], node_count=node_count,
            dense=part["dense"], dropped_edges=part["dropped"], node_id=[node for node, _ in states],
            node_type=[state[0] for _, state in states], node_deleted=[state[1] for _, state in states]))
    return GraphView(built, node_count, EDGE_ID_LIMIT)


class Model:
    def __init__(self, node_count: int, parts: list):
        self.node_count = node_count
        edges, dead = {}, set()
        for part in parts:
            for version in part["edges"]:
                edges[version[0]] = version
            for edge_id in part["dropped"]:
                edges.pop(edge_id, None)
            for node, (_type, deleted) in part["nodes"].items():
                (dead.add if deleted else dead.discard)(node)
        self.dead = dead
        # edge id -> (source, target, type, weight, time) for edges whose ends are both alive
        self.edges = {edge_id: (src, dst, kind, weight, time) for edge_id, src, dst, kind, weight, time
                      in edges.values() if src not in dead and dst not in dead}

    def compacted(self) -> GraphView:
        """The same live graph as one dense part: what a compaction must produce."""
        rows = [(edge_id, *values) for edge_id, values in sorted(self.edges.items())]
        part = {"edges": rows, "dropped": [], "dense": True,
                "nodes": {node: (0, node in self.dead) for node in range(self.node_count)}}
        return build_view(self.node_count, [part])

    def steps(self, node: int, direction: str, types=None, cap=None):
        """[(neighbor, edge_id, type, weight, time)] of live edges leaving `node`."""
        found = []
        sides = ("out", "in") if direction == "both" else (direction,)
        for side in sides:
            side_found = []
            for edge_id, (src, dst, kind, weight, time) in self.edges.items():
                if types is not None and kind not in types:
                    continue
                if side == "out" and src == node:
                    side_found.append((dst, edge_id, kind, weight, time))
                elif side == "in" and dst == node:
                    side_found.append((src, edge_id, kind, weight, time))
            found += self._capped(side_found, cap) if cap is not None else side_found
        return found

    @staticmethod
    def _capped(steps: list, cap) -> list:
        kept = []
        for kind in {step[2] for step in steps}:
            group = [step for step in steps if step[2] == kind]
            # The stored weight is float32; the product is float64, as in traverse (a float32 product underflows
            # to 0 for old edges and would tie edges the implementation tells apart).
            score = {step[1]: float(np.float32(step[3])) * math.exp(-max(cap.now - step[4], 0.0) / 86400.0
                                                                    / cap.tau_days)
                     for step in group}
            group.sort(key=lambda step: (-score[step[1]], step[1]))
            limit = cap.limits.get(kind)
            kept += group if limit is None else group[:limit]
        return kept

    def neighbors(self, node: int, direction: str, types=None, cap=None):
        if node in self.dead:
            return []
        return sorted(self.steps(node, direction, types, cap), key=lambda step: (-step[3], step[1]))

    def khop(self, seeds, k: int, direction: str, types=None, max_nodes=None, cap=None):
        """{node: (hop, edge_id, parent)} by breadth-first search with the strongest-edge rule."""
        seeds = sorted({seed for seed in seeds if seed not in self.dead})
        if max_nodes is not None:
            seeds = seeds[:max_nodes]
        reached = {seed: (0, -1, -1) for seed in seeds}
        frontier = deque(seeds)
        for hop in range(1, k + 1):
            best = {}
            for _ in range(len(frontier)):
                node = frontier.popleft()
                for neighbor, edge_id, _kind, weight, _time in self.steps(node, direction, types, cap):
                    if neighbor in reached:
                        continue
                    candidate = (-weight, edge_id, node)
                    if neighbor not in best or candidate < best[neighbor]:
                        best[neighbor] = candidate
            chosen = sorted(best)
            if max_nodes is not None:
                room = max_nodes - len(reached)
                chosen = sorted(sorted(best, key=lambda node: (best[node][0], node))[:max(room, 0)])
            for node in chosen:
                reached[node] = (hop, best[node][1], best[node][2])
                frontier.append(node)
        return reached

    def pagerank(self, seeds, seed_weights, nodes, weights, direction: str, damping: float, iterations: int):
        """Dense power iteration: {node: score}."""
        live = [node for node in range(self.node_count) if node not in self.dead]
        subset = live if nodes is None else sorted(set(nodes) | set(seeds)) 
        subset = [node for node in subset if node not in self.dead]
        index = {node: position for position, node in enumerate(subset)}
        size = len(subset)
        matrix = np.zeros((size, size))
        for node in subset:
            for neighbor, _edge_id, kind, weight, _time in self.steps(node, direction):
                if neighbor in index:
                    matrix[index[node], index[neighbor]] += float(np.float32(weight)) * weights[kind]
        personal = np.zeros(size)
        for seed, mass in zip(seeds, seed_weights):
            if seed in index:
                personal[index[seed]] += mass
        if personal.sum() == 0:
            return {node: 0.0 for node in subset}
        personal /= personal.sum()
        row_sums = matrix.sum(axis=1)
        dangling = row_sums == 0
        transition = np.divide(matrix, row_sums[:, None], out=np.zeros_like(matrix), where=~dangling[:, None])
        scores = personal.copy()
        for _ in range(iterations):
            scores = damping * transition.T @ scores + (damping * scores[dangling].sum() + 1 - damping) * personal
        return dict(zip(subset, scores))
