"""One consistent graph: an ordered list of parts (oldest first) merged by masks, never by copying.

A part is what one flush (or the compaction, or the unflushed delta) contributes. It exposes:

    out, inn        csr.Adjacency of its live edges, keyed by source and by destination
    edge_id         int32 or int64[edge rows]: the dense global id of each edge row
    edge_time       float64[edge rows]: the edge's timestamp, seconds since the epoch
    dropped_edges   int64: ids of edges this part deletes
    node_id         int32 or int64, sorted: nodes whose state this part records
    node_type       uint16[len(node_id)]
    node_deleted    bool[len(node_id)]
    gather_rows(side, nodes, mask), edge_ids_at(rows), edge_times_at(rows): the edges of a few nodes and their
                    ids and times (a stored part checks only what these read, not whole columns)

Any object with these attributes is a part (segment-backed parts load them lazily). A later part's version
of an edge or node replaces an earlier one: `edge_owner[edge id]` names the part holding an edge's live
version (-1 once deleted), and `node_dead` marks deleted nodes. Both stay None when nothing needs masking,
which is the common case right after a compaction.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from engine.graph import csr

NODE_TYPE_DTYPE = np.dtype(np.uint16)


class Part:
    """A part held in memory (the unflushed delta, or one built by a test)."""

    def __init__(self, out, inn, edge_id, edge_time, dropped_edges=None, node_id=None, node_type=None,
                 node_deleted=None):
        self.out = out
        self.inn = inn
        self.edge_id = np.asarray(edge_id, dtype=np.int64)
        self.edge_time = np.asarray(edge_time, dtype=np.float64)
        self.dropped_edges = _ids(dropped_edges)
        self.node_id = _ids(node_id)
        self.node_type = np.zeros(len(self.node_id), NODE_TYPE_DTYPE) if node_type is None else \
            np.asarray(node_type, dtype=NODE_TYPE_DTYPE)
        self.node_deleted = np.zeros(len(self.node_id), bool) if node_deleted is None else \
            np.asarray(node_deleted, dtype=bool)

    def gather_rows(self, side: str, nodes: np.ndarray, mask) -> tuple:
        return csr.gather_rows(self.out if side == "out" else self.inn, nodes, mask)

    def edge_ids_at(self, rows: np.ndarray) -> np.ndarray:
        return self.edge_id[rows]

    def edge_times_at(self, rows: np.ndarray) -> np.ndarray:
        return self.edge_time[rows]


def build_part(edge_id, source, target, edge_type, weight, edge_time, node_count: int, dense: bool = False,
               dropped_edges=None, node_id=None, node_type=None, node_deleted=None) -> Part:
    """A Part from edge arrays (live edges only) and node states, in any order."""
    out, inn = csr.build_both(source, target, edge_type, weight, node_count, dense)
    node_id = _ids(node_id)
    order = np.argsort(node_id, kind="stable")
    return Part(out, inn, edge_id, edge_time, dropped_edges, node_id[order],
                None if node_type is None else np.asarray(node_type)[order],
                None if node_deleted is None else np.asarray(node_deleted)[order])


def _ids(values) -> np.ndarray:
    return np.zeros(0, np.int64) if values is None else np.asarray(values, dtype=np.int64)


class GraphView:
    """Parts merged: what traversal and PageRank read. Immutable once built."""

    def __init__(self, parts: list, node_count: int, edge_count: int):
        self.parts = list(parts)
        self.node_count = int(node_count)
        self.edge_count = int(edge_count)
        self.edge_owner = _edge_owner(self.parts, self.edge_count)
        self.node_dead = _node_dead(self.parts, self.node_count)

    @cached_property
    def node_types(self) -> np.ndarray:
        """uint16[node_count]: each node's type in its latest state."""
        types = np.zeros(self.node_count, NODE_TYPE_DTYPE)
        for part in self.parts:
            types[part.node_id] = part.node_type
        return types

    def alive(self, nodes: np.ndarray) -> np.ndarray:
        """Mask of `nodes` (ids already below node_count) that are not deleted."""
        if self.node_dead is None:
            return np.ones(len(nodes), bool)
        return ~self.node_dead[nodes]

    def live_nodes(self) -> np.ndarray:
        """Every id below node_count names a node (ids are allocated with their record); minus deleted ones."""
        if self.node_dead is None:
            return np.arange(self.node_count, dtype=np.int64)
        return np.flatnonzero(~self.node_dead)

    def nodes_of_type(self, node_type: int) -> np.ndarray:
        matches = self.node_types == node_type
        if self.node_dead is not None:
            matches &= ~self.node_dead
        return np.flatnonzero(matches)


def _edge_owner(parts: list, edge_count: int) -> np.ndarray | None:
    if len(parts) <= 1 and not any(len(part.dropped_edges) for part in parts):
        return None
    # zeros: every edge not named by a later part belongs to part 0, so the base part costs no scatter.
    owner = np.zeros(edge_count, np.int32)
    for index, part in enumerate(parts):
        if index:
            owner[part.edge_id] = index
        owner[part.dropped_edges] = -1
    return owner


def _node_dead(parts: list, node_count: int) -> np.ndarray | None:
    first = next((index for index, part in enumerate(parts) if part.node_deleted.any()), None)
    if first is None:
        return None
    dead = np.zeros(node_count, bool)
    for part in parts[first:]:
        dead[part.node_id] = part.node_deleted
    return dead
