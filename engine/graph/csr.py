"""Compressed sparse row adjacency for one direction of one graph part.

A part (a flushed segment, the compacted base, or the unflushed delta) holds some edges. Its adjacency in one
direction lists, for each node that has edges there, the contiguous run of those edges:

    rows       sorted distinct node ids that have edges (None when dense: row r is node r)
    indptr     int64[len(rows) + 1]: the edges of row r are positions indptr[r] .. indptr[r + 1]
    neighbor   the node at the other end of each edge
    edge_type  small unsigned int per edge
    weight     float32 per edge, finite and non-negative
    edge_row   the edge's row in the part's edge table (its id, timestamp and key live there)

Within a row, edges are ordered by (type, weight descending, neighbor, edge_row), so the edges of one type
are one run, strongest first. Per-flush parts are "doubly compressed" (only rows with edges) so that a
flush of a hundred edges costs a hundred entries, not one per node of the whole graph; the compacted base
is dense, which makes finding a row one index instead of a binary search.

Arrays loaded from disk are checked by `validate` before any traversal indexes with them: numpy raises on
an out-of-range index, but a wrong-but-in-range id would silently return another node's edges. A gather of
a few rows (`gather_rows`) reads through a source's `bounds` and `take`, so a stored part can instead check
only the entries it returns (and only their checksum blocks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import CorruptionError

INDPTR_DTYPE = np.dtype(np.int64)
WEIGHT_DTYPE = np.dtype(np.float32)


def index_dtype(limit: int) -> np.dtype:
    """The narrowest signed integer type holding every index below `limit`."""
    return np.dtype(np.int32) if limit < 2**31 else np.dtype(np.int64)


def type_dtype(type_limit: int) -> np.dtype:
    return np.dtype(np.uint8) if type_limit <= 256 else np.dtype(np.uint16)


@dataclass(frozen=True)
class Adjacency:
    rows: np.ndarray | None
    indptr: np.ndarray
    neighbor: np.ndarray
    edge_type: np.ndarray
    weight: np.ndarray
    edge_row: np.ndarray

    @property
    def edge_count(self) -> int:
        return len(self.neighbor)

    @property
    def row_count(self) -> int:
        return len(self.indptr) - 1

    def bounds(self, row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(first position, edge count) of each row."""
        starts = self.indptr[row]
        return starts, self.indptr[row + 1] - starts

    def take(self, name: str, positions: np.ndarray) -> np.ndarray:
        return getattr(self, name)[positions]

    def columns(self) -> dict:
        """Arrays to store, by name (rows only when sparse)."""
        columns = {"indptr": self.indptr, "neighbor": self.neighbor, "edge_type": self.edge_type,
                   "weight": self.weight, "edge_row": self.edge_row}
        if self.rows is not None:
            columns["rows"] = self.rows
        return columns


def build(origin, other, edge_type, weight, node_count: int, dense: bool) -> Adjacency:
    """Adjacency keyed by `origin` (the source for out-edges, the destination for in-edges).

    All inputs are parallel arrays over the part's edge table; the result refers to them by row.
    """
    origin, other = _node_ids(origin), _node_ids(other)  # as given: a merge's int32 ids sort as int64 would
    edge_type = np.asarray(edge_type)
    weight = np.asarray(weight, dtype=WEIGHT_DTYPE)
    edge_count = len(origin)
    # lexsort is stable, so equal keys keep edge-row order: the last tie-break comes free.
    order = np.lexsort((other, -weight, edge_type, origin))
    sorted_origin = origin[order]
    if dense:
        rows = None
        counts = np.bincount(sorted_origin, minlength=node_count)
    else:
        rows, counts = np.unique(sorted_origin, return_counts=True)
        rows = rows.astype(np.int64, copy=False)
    indptr = np.zeros(len(counts) + 1, dtype=INDPTR_DTYPE)
    np.cumsum(counts, out=indptr[1:])
    return Adjacency(
        rows=rows,
        indptr=indptr,
        neighbor=other[order].astype(index_dtype(node_count)),
        edge_type=edge_type[order].astype(type_dtype(int(edge_type.max(initial=0)) + 1)),
        weight=weight[order],
        edge_row=order.astype(index_dtype(edge_count)),
    )


def _node_ids(values) -> np.ndarray:
    array = np.asarray(values)
    return array if array.dtype.kind in "iu" else array.astype(np.int64)


def build_both(source, target, edge_type, weight, node_count: int, dense: bool) -> tuple[Adjacency, Adjacency]:
    """(out, in) adjacency of one part's edges."""
    return (build(source, target, edge_type, weight, node_count, dense),
            build(target, source, edge_type, weight, node_count, dense))


def gather_rows(source, nodes: np.ndarray, mask) -> tuple:
    """(origin, neighbor, edge_type, weight, edge_row) of the edges of `nodes` whose type `mask` (a boolean
    table by type; None: every type) allows. `source`: an Adjacency, or a stored one that checks what it takes."""
    row, origin_rows = find_rows(source, nodes)
    starts, lengths = source.bounds(row)
    positions = expand(starts, lengths)
    origin = np.repeat(origin_rows, lengths)
    if mask is not None:
        keep = mask[source.take("edge_type", positions)]
        positions, origin = positions[keep], origin[keep]
    return (origin, source.take("neighbor", positions), source.take("edge_type", positions),
            source.take("weight", positions), source.take("edge_row", positions))


def find_rows(source, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row index, node) of each of `nodes` that has a row in this adjacency."""
    if source.rows is None:
        present = nodes[nodes < source.row_count]
        return present, present
    rows = source.rows
    position = np.searchsorted(rows, nodes)
    inside = position < len(rows)
    position, present = position[inside], nodes[inside]
    hit = rows[position] == present
    return position[hit], present[hit]


def expand(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of the ranges starts[i] .. starts[i] + lengths[i], without a Python loop."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    shifts = starts - (np.cumsum(lengths) - lengths)
    return np.repeat(shifts, lengths) + np.arange(total)


def validate(adjacency: Adjacency, node_count: int, edge_rows: int, path: str = "<graph part>") -> Adjacency:
    """Raise CorruptionError unless every array is shaped and bounded as `build` makes them."""

    def fail(reason: str):
        raise CorruptionError(path, None, f"graph adjacency: {reason}")

    arrays = {"indptr": adjacency.indptr, "neighbor": adjacency.neighbor, "edge_type": adjacency.edge_type,
              "weight": adjacency.weight, "edge_row": adjacency.edge_row}
    if adjacency.rows is not None:
        arrays["rows"] = adjacency.rows
    for name, array in arrays.items():
        if not isinstance(array, np.ndarray) or array.ndim != 1:
            fail(f"{name} is not a one-dimensional array")
        if not array.flags.c_contiguous:
            fail(f"{name} is not contiguous")
    _check_kinds(arrays, fail)
    indptr = adjacency.indptr
    edge_count = len(adjacency.neighbor)
    if len(indptr) < 1 or indptr[0] != 0:
        fail("indptr does not start at 0")
    if indptr[-1] != edge_count:
        fail(f"indptr ends at {indptr[-1]}, but there are {edge_count} edges")
    if len(indptr) > 1 and (np.diff(indptr) < 0).any():
        fail("indptr is not monotone")
    for name in ("edge_type", "weight", "edge_row"):
        if len(arrays[name]) != edge_count:
            fail(f"{name} has {len(arrays[name])} entries for {edge_count} edges")
    rows = adjacency.rows
    if rows is None:
        if len(indptr) - 1 > node_count:
            fail(f"{len(indptr) - 1} rows for {node_count} nodes")
    else:
        if len(rows) != len(indptr) - 1:
            fail(f"{len(rows)} row ids for {len(indptr) - 1} rows")
        if len(rows) and (rows[0] < 0 or rows[-1] >= node_count or (np.diff(rows) <= 0).any()):
            fail("row ids are not strictly increasing node ids")
    if edge_count:
        _check_range(adjacency.neighbor, node_count, "neighbor", fail)
        _check_range(adjacency.edge_row, edge_rows, "edge_row", fail)
        weight = adjacency.weight
        if not np.isfinite(weight).all() or (weight < 0).any():
            fail("a weight is negative, NaN or infinite")
    return adjacency


def _check_kinds(arrays: dict, fail) -> None:
    if arrays["indptr"].dtype != INDPTR_DTYPE:
        fail(f"indptr has dtype {arrays['indptr'].dtype}, expected int64")
    if arrays["weight"].dtype != WEIGHT_DTYPE:
        fail(f"weight has dtype {arrays['weight'].dtype}, expected float32")
    if arrays["edge_type"].dtype not in (np.dtype(np.uint8), np.dtype(np.uint16)):
        fail(f"edge_type has dtype {arrays['edge_type'].dtype}, expected uint8 or uint16")
    for name in ("neighbor", "edge_row", "rows"):
        if name in arrays and arrays[name].dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
            fail(f"{name} has dtype {arrays[name].dtype}, expected int32 or int64")


def _check_range(array: np.ndarray, limit: int, name: str, fail) -> None:
    if array.min() < 0 or array.max() >= limit:
        fail(f"{name} outside 0..{limit - 1}")
