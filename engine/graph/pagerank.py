"""Personalized PageRank over a GraphView: the whole graph or a node subset such as a k-hop neighbourhood.

    x ← d · Pᵀx + (d · dangling(x) + 1 − d) · p

P is row-stochastic: a step from u follows edge u→v with probability w(u,v) / Σ w(u,·), where
w = type weight × edge weight. Type weights default to seed 001 appendix A (ABOUT 1.0, SUPPORTS 0.8,
SIMILAR_TO 0.5, TEMPORAL_NEXT 0.3, anything else 0.5). Mass on nodes without outgoing edges in the
(sub)graph goes back to the personalization vector p, so the scores always sum to 1.

The sparse product is one gather (x at each edge's source) and one np.bincount over destinations; np.add.at
would be several times slower. Large graphs can hand the product to a numba kernel (`kernels.py`), which is
only worth its import time for offline, whole-graph runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.arrays import sorted_unique
from engine.graph.traverse import gather
from engine.graph.view import GraphView

DAMPING = 0.85
DEFAULT_TYPE_WEIGHTS = {"ABOUT": 1.0, "SUPPORTS": 0.8, "SIMILAR_TO": 0.5, "TEMPORAL_NEXT": 0.3}
DEFAULT_OTHER_WEIGHT = 0.5
# numba saves about 2 ns per edge per iteration but costs ~0.5 s to import in a fresh process: with 20
# iterations that only pays off above roughly ten million edges.
KERNEL_MIN_EDGES = 10_000_000
_TYPE_SLOTS = 1 << 16


@dataclass(frozen=True)
class Ranking:
    """Scores of `node` (sorted ids), summing to 1; `iterations` run and final L1 change."""

    node: np.ndarray
    score: np.ndarray
    iterations: int
    change: float

    def top(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        order = np.lexsort((self.node, -self.score))[:count]
        return self.node[order], self.score[order]


@dataclass(frozen=True)
class Transition:
    """A (sub)graph's random-walk step as parallel arrays over local node indices 0..size-1."""

    node: np.ndarray  # local index → global node id
    source: np.ndarray
    target: np.ndarray
    weight: np.ndarray
    inverse_out_weight: np.ndarray  # per node: scaling scores by it makes each row sum to 1
    dangling: np.ndarray  # local indices without outgoing weight

    @property
    def size(self) -> int:
        return len(self.node)


def type_weights(type_ids: dict, weights: dict | None = None, other: float = DEFAULT_OTHER_WEIGHT) -> np.ndarray:
    """float64 lookup table by edge type id, from {type name: id} and {type name: weight}."""
    chosen = dict(DEFAULT_TYPE_WEIGHTS if weights is None else weights)
    table = np.full(_TYPE_SLOTS, float(other))
    for name, type_id in type_ids.items():
        if name in chosen:
            table[int(type_id)] = float(chosen[name])
    return table


def transition(view: GraphView, nodes=None, weights: np.ndarray | None = None, direction: str = "out",
               types=None) -> Transition:
    """The walk restricted to `nodes` (None: every live node); edges leaving the subset are ignored."""
    if nodes is None:
        node = view.live_nodes()
        edges = gather(view, None, direction, types, detail=False)
    else:
        node = sorted_unique(np.asarray(nodes, dtype=np.int64))
        node = node[view.alive(node)]
        edges = gather(view, node, direction, types, detail=False)
    source, target, inside = _local_ids(view, node, edges)
    weight = edges.weight.astype(np.float64)
    if weights is not None:
        weight *= weights[edges.edge_type]
    usable = weight > 0
    if inside is not None:
        usable &= inside
    if not usable.all():
        source, target, weight = source[usable], target[usable], weight[usable]
    out_weight = np.bincount(source, weights=weight, minlength=len(node))
    dangling = out_weight == 0
    inverse = np.divide(1.0, out_weight, out=np.zeros(len(node)), where=~dangling)
    return Transition(node, source, target, weight, inverse, np.flatnonzero(dangling))


def _local_ids(view: GraphView, node: np.ndarray, edges):
    """Edge ends as indices into `node`, and which edges stay inside it (None: all of them)."""
    if len(node) == view.node_count:  # the whole graph, nothing deleted: local ids are global ids
        return edges.origin, edges.neighbor, None
    if len(edges) * 20 < view.node_count:  # few edges: binary search beats filling a table per node
        source = np.searchsorted(node, edges.origin)
        target = np.searchsorted(node, edges.neighbor)
        inside = target < len(node)
        inside[inside] = node[target[inside]] == edges.neighbor[inside]
        return source, np.where(inside, target, 0), inside
    local = np.full(view.node_count, -1, np.int64)
    local[node] = np.arange(len(node))
    source, target = local[edges.origin], local[edges.neighbor]
    inside = target >= 0
    return source, np.maximum(target, 0), inside


def personalized_pagerank(view: GraphView, seeds, seed_weights=None, nodes=None, weights: np.ndarray | None = None,
                          damping: float = DAMPING, iterations: int = 100, tolerance: float = 1e-6,
                          direction: str = "out", types=None, kernel: str = "auto") -> Ranking:
    """PPR from `seeds` (global ids, optionally weighted), over `nodes` or the whole graph.

    Stops after `iterations` or once the L1 change of an iteration falls below `tolerance` (0: never).
    Seeds outside the subset or deleted are ignored; with no usable seed every score is 0.
    """
    if nodes is not None:
        nodes = sorted_unique(np.concatenate([np.asarray(nodes, dtype=np.int64).reshape(-1),
                                              np.asarray(seeds, dtype=np.int64).reshape(-1)]))
    walk = transition(view, nodes, weights, direction, types)
    return power_iteration(walk, seeds, seed_weights, damping, iterations, tolerance, kernel)


def power_iteration(walk: Transition, seeds, seed_weights=None, damping: float = DAMPING, iterations: int = 100,
                    tolerance: float = 1e-6, kernel: str = "auto") -> Ranking:
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), not {damping}")
    personal = _personalization(walk, seeds, seed_weights)
    if not personal.any():
        return Ranking(walk.node, personal, 0, 0.0)
    step = _choose_product(walk, kernel)
    scores, change, done = personal.copy(), 0.0, 0
    for done in range(1, iterations + 1):
        spread = step(scores)
        restart = damping * scores[walk.dangling].sum() + (1.0 - damping)
        updated = damping * spread + restart * personal
        change = float(np.abs(updated - scores).sum())
        scores = updated
        if change < tolerance:
            break
    return Ranking(walk.node, scores, done, change)


def _personalization(walk: Transition, seeds, seed_weights) -> np.ndarray:
    seeds = np.asarray(seeds, dtype=np.int64).reshape(-1)
    mass = np.ones(len(seeds)) if seed_weights is None else np.asarray(seed_weights, dtype=np.float64)
    if len(mass) != len(seeds):
        raise ValueError(f"{len(seeds)} seeds but {len(mass)} seed weights")
    if (~np.isfinite(mass)).any() or (mass < 0).any():
        raise ValueError("seed weights must be finite and non-negative")
    position = np.searchsorted(walk.node, seeds)
    inside = position < walk.size
    inside[inside] = walk.node[position[inside]] == seeds[inside]
    personal = np.bincount(position[inside], weights=mass[inside], minlength=walk.size).astype(np.float64)
    total = personal.sum()
    return personal / total if total > 0 else personal


def _choose_product(walk: Transition, kernel: str):
    if kernel not in ("auto", "numpy", "numba"):
        raise ValueError(f"kernel must be auto, numpy or numba, not {kernel!r}")
    if kernel == "numba" or (kernel == "auto" and len(walk.source) >= KERNEL_MIN_EDGES):
        from engine.graph.kernels import transition_product

        return transition_product(walk)
    source, target, weight, inverse, size = walk.source, walk.target, walk.weight, walk.inverse_out_weight, walk.size

    def product(scores: np.ndarray) -> np.ndarray:
        return np.bincount(target, weights=(scores * inverse)[source] * weight, minlength=size)

    return product
