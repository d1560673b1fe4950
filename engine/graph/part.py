"""A graph part's columns: how one flush, the compacted base, or the unflushed delta is laid out.

Columns of a `graph.csr` segment (the delta holds the same arrays in memory):

    edge.id           int32/64[E] global edge ids of this part's live edges, strictly increasing
    edge.time         float64[E] edge timestamps (seconds since the epoch)
    edge.custom_id    int32/64[C] ids of edges whose key is not the default one, strictly increasing
    edge.custom.key_offsets  uint64[C+1] and edge.custom.keys uint8[...]: those keys, UTF-8 (an edge's
                      default key is derived from its ends and type, so most edges store no key bytes at all)
    edge.dropped      int32/64[D] edge ids this part deletes
    node.id           int32/64[N] nodes whose state this part records, strictly increasing
    node.type         uint16[N]
    node.deleted      uint8[N]   1: deleted for good (no key)
    node.key_offsets  uint64[N+1] and node.keys uint8[...]
    node.key_order    int32/64[N] node rows in key byte order: key → id lookups without the records
    out.*, in.*       csr.Adjacency columns (indptr, neighbor, edge_type, weight, edge_row, and rows
                      when the part is sparse); edge_row indexes the edge.* arrays

meta: {"version": GRAPH_SEGMENT_VERSION, "node_count", "edge_count" (id bounds when written), "dense",
"edges": E, "nodes": N, "types": {"node:<Name>" / "edge:<Name>": id}}. Every column is validated the first
time it is used, so a cold query pays only for the columns it touches and a damaged file raises
CorruptionError instead of answering wrongly. Ids are int32 while they fit: each column a cold query
touches is checksummed in full on first use, so narrower columns make a faster first query.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from engine.errors import CorruptionError, UnsupportedVersion
from engine.format import GRAPH_SEGMENT_VERSION
from engine.graph import csr
from engine.graph.view import NODE_TYPE_DTYPE

KEY_OFFSET_DTYPE = np.dtype(np.uint64)


def encode_keys(keys) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, UTF-8 bytes) of a sequence of strings."""
    encoded = [key.encode("utf-8") for key in keys]
    offsets = np.zeros(len(encoded) + 1, KEY_OFFSET_DTYPE)
    np.cumsum([len(item) for item in encoded], out=offsets[1:])
    return offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8)


def take_keys(offsets: np.ndarray, blob: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The keys at `positions`, re-packed, without decoding them one by one."""
    starts = offsets[:-1][positions].astype(np.int64)
    lengths = offsets[1:][positions].astype(np.int64) - starts
    new_offsets = np.zeros(len(positions) + 1, KEY_OFFSET_DTYPE)
    np.cumsum(lengths, out=new_offsets[1:])
    total = int(lengths.sum())
    if total == 0:
        return new_offsets, np.zeros(0, np.uint8)
    shifts = starts - (np.cumsum(lengths) - lengths)
    return new_offsets, blob[np.repeat(shifts, lengths) + np.arange(total)]


def build_columns(edges: dict, dropped, nodes: dict, node_count: int, edge_count: int, dense: bool):
    """(columns, meta) of a part. `edges`: id, source, target, type, weight, time, and custom_id,
    custom_key_offsets, custom_keys; `nodes`: id, type, deleted, key_offsets, keys (all in any order)."""
    edge_order = np.argsort(np.asarray(edges["id"], dtype=np.int64), kind="stable")
    node_order = np.argsort(np.asarray(nodes["id"], dtype=np.int64), kind="stable")
    edge_type = np.asarray(edges["type"])[edge_order].astype(np.uint16)
    out, inn = csr.build_both(np.asarray(edges["source"])[edge_order], np.asarray(edges["target"])[edge_order],
                              edge_type, np.asarray(edges["weight"])[edge_order], node_count, dense)
    custom_order = np.argsort(np.asarray(edges["custom_id"], dtype=np.int64), kind="stable")
    custom_offsets, custom_keys = take_keys(edges["custom_key_offsets"], edges["custom_keys"], custom_order)
    node_offsets, node_keys = take_keys(nodes["key_offsets"], nodes["keys"], node_order)
    bounds = node_offsets.tolist()
    key_bytes = [bytes(node_keys[start:end]) for start, end in zip(bounds[:-1], bounds[1:])]
    edge_ids, node_ids = csr.index_dtype(edge_count), csr.index_dtype(node_count)
    columns = {
        "edge.id": np.asarray(edges["id"], dtype=np.int64)[edge_order].astype(edge_ids),
        "edge.time": np.asarray(edges["time"], dtype=np.float64)[edge_order],
        "edge.custom_id": np.asarray(edges["custom_id"], dtype=np.int64)[custom_order].astype(edge_ids),
        "edge.custom.key_offsets": custom_offsets,
        "edge.custom.keys": custom_keys,
        "edge.dropped": np.unique(np.asarray(dropped, dtype=np.int64)).astype(edge_ids),
        "node.id": np.asarray(nodes["id"], dtype=np.int64)[node_order].astype(node_ids),
        "node.type": np.asarray(nodes["type"])[node_order].astype(NODE_TYPE_DTYPE),
        "node.deleted": np.asarray(nodes["deleted"])[node_order].astype(np.uint8),
        "node.key_offsets": node_offsets,
        "node.keys": node_keys,
        "node.key_order": np.array(sorted(range(len(key_bytes)), key=key_bytes.__getitem__),
                                   dtype=csr.index_dtype(len(key_bytes))),
    }
    for prefix, adjacency in (("out", out), ("in", inn)):
        for name, array in adjacency.columns().items():
            columns[f"{prefix}.{name}"] = array
    meta = {"version": GRAPH_SEGMENT_VERSION, "node_count": int(node_count), "edge_count": int(edge_count),
            "dense": bool(dense), "edges": len(edge_order), "nodes": len(node_order)}
    return columns, meta


class GraphPart:
    """A part read from a segment (or from in-memory columns), checked column by column on first use."""

    def __init__(self, column, meta: dict, path: str):
        self._column = column
        self.path = path
        self.meta = meta
        if not isinstance(meta, dict):
            self._fail("meta is not a map")
        version = meta.get("version")
        if isinstance(version, int) and version > GRAPH_SEGMENT_VERSION:
            raise UnsupportedVersion(path, version, GRAPH_SEGMENT_VERSION)
        if version != GRAPH_SEGMENT_VERSION:
            self._fail(f"unknown graph segment version {version!r}")
        for name in ("node_count", "edge_count", "edges", "nodes"):
            if not isinstance(meta.get(name), int) or meta[name] < 0:
                self._fail(f"meta field {name!r} is missing or negative")
        self.node_count = meta["node_count"]
        self.edge_count = meta["edge_count"]
        self.dense = bool(meta.get("dense"))

    @classmethod
    def from_segment(cls, segment) -> "GraphPart":
        return cls(segment.column, segment.meta, segment.path)

    @classmethod
    def from_columns(cls, columns: dict, meta: dict, path: str = "<unflushed graph records>") -> "GraphPart":
        def column(name: str) -> np.ndarray:
            if name not in columns:
                raise CorruptionError(path, None, f"graph part has no column {name!r}")
            return columns[name]

        return cls(column, meta, path)

    def _fail(self, reason: str):
        raise CorruptionError(self.path, None, f"graph segment: {reason}")

    def _array(self, name: str, dtype, length: int | None = None) -> np.ndarray:
        array = self._column(name)
        if array.dtype != np.dtype(dtype) or array.ndim != 1:
            self._fail(f"column {name} has dtype {array.dtype} and {array.ndim} dimensions, expected {np.dtype(dtype)}")
        if length is not None and len(array) != length:
            self._fail(f"column {name} has {len(array)} entries, expected {length}")
        return array

    def _ids(self, name: str, limit: int, length: int | None, strictly_increasing: bool) -> np.ndarray:
        ids = self._column(name)
        if ids.dtype not in (np.dtype(np.int32), np.dtype(np.int64)) or ids.ndim != 1:
            self._fail(f"column {name} has dtype {ids.dtype}, expected int32 or int64")
        if length is not None and len(ids) != length:
            self._fail(f"column {name} has {len(ids)} entries, expected {length}")
        if len(ids) and (ids.min() < 0 or ids.max() >= limit):
            self._fail(f"column {name} holds an id outside 0..{limit - 1}")
        if strictly_increasing and len(ids) > 1 and (np.diff(ids) <= 0).any():
            self._fail(f"column {name} is not strictly increasing")
        return ids

    def _adjacency(self, prefix: str) -> csr.Adjacency:
        def column(name: str):
            return self._column(f"{prefix}.{name}")

        adjacency = csr.Adjacency(rows=None if self.dense else column("rows"), indptr=column("indptr"),
                                  neighbor=column("neighbor"), edge_type=column("edge_type"),
                                  weight=column("weight"), edge_row=column("edge_row"))
        if adjacency.edge_count != self.meta["edges"]:
            self._fail(f"{prefix} adjacency holds {adjacency.edge_count} edges, meta says {self.meta['edges']}")
        return csr.validate(adjacency, self.node_count, self.meta["edges"], self.path)

    @cached_property
    def out(self) -> csr.Adjacency:
        return self._adjacency("out")

    @cached_property
    def inn(self) -> csr.Adjacency:
        return self._adjacency("in")

    @cached_property
    def edge_id(self) -> np.ndarray:
        return self._ids("edge.id", self.edge_count, self.meta["edges"], strictly_increasing=True)

    @cached_property
    def edge_time(self) -> np.ndarray:
        return self._array("edge.time", np.float64, self.meta["edges"])

    @cached_property
    def dropped_edges(self) -> np.ndarray:
        return self._ids("edge.dropped", self.edge_count, None, strictly_increasing=True)

    @cached_property
    def node_id(self) -> np.ndarray:
        return self._ids("node.id", self.node_count, self.meta["nodes"], strictly_increasing=True)

    @cached_property
    def node_type(self) -> np.ndarray:
        return self._array("node.type", NODE_TYPE_DTYPE, self.meta["nodes"])

    @cached_property
    def node_deleted(self) -> np.ndarray:
        flags = self._array("node.deleted", np.uint8, self.meta["nodes"])
        if len(flags) and flags.max() > 1:
            self._fail("node.deleted holds a value other than 0 and 1")
        return flags.view(bool)

    def _keys(self, prefix: str, count: int) -> tuple[np.ndarray, np.ndarray]:
        offsets = self._array(f"{prefix}.key_offsets", KEY_OFFSET_DTYPE, count + 1)
        blob = self._array(f"{prefix}.keys", np.uint8)
        if offsets[0] != 0 or offsets[-1] != len(blob) or (np.diff(offsets.astype(np.int64)) < 0).any():
            self._fail(f"{prefix} key offsets do not partition the key bytes")
        return offsets, blob

    @cached_property
    def node_key_columns(self) -> tuple[np.ndarray, np.ndarray]:
        return self._keys("node", self.meta["nodes"])

    @cached_property
    def custom_edge_ids(self) -> np.ndarray:
        return self._ids("edge.custom_id", self.edge_count, None, strictly_increasing=True)

    @cached_property
    def custom_key_columns(self) -> tuple[np.ndarray, np.ndarray]:
        return self._keys("edge.custom", len(self.custom_edge_ids))

    @cached_property
    def _out_position(self) -> np.ndarray:
        """Edge row → its position in the out adjacency (the inverse of out.edge_row)."""
        position = np.full(self.meta["edges"], -1, np.int64)
        position[self.out.edge_row] = np.arange(self.out.edge_count)
        if (position < 0).any():
            self._fail("out.edge_row is not a permutation of the edge rows")
        return position

    def verify(self) -> None:
        """Load and check every column, and that both directions hold the same edges (for `memctl check`)."""
        every_row = np.arange(self.meta["edges"])
        source, target, edge_type = self.edge_ends(every_row)
        inn = self.inn
        position = np.full(self.meta["edges"], -1, np.int64)
        position[inn.edge_row] = np.arange(inn.edge_count)
        if (position < 0).any():
            self._fail("in.edge_row is not a permutation of the edge rows")
        rows = np.arange(inn.row_count) if inn.rows is None else inn.rows
        in_target = np.repeat(rows, np.diff(inn.indptr))[position]
        if not (np.array_equal(in_target, target) and np.array_equal(inn.neighbor[position], source)
                and np.array_equal(inn.edge_type[position], edge_type)):
            self._fail("the in adjacency does not hold the same edges as the out adjacency")
        if len(np.unique(self.node_key_order)) != self.meta["nodes"]:
            self._fail("node.key_order is not a permutation of the node rows")
        if not np.isin(self.custom_edge_ids, self.edge_id).all():
            self._fail("a custom edge key belongs to no edge of this segment")
        self.custom_key_columns, self.edge_time, self.dropped_edges, self.node_type
        dead = self.node_id[self.node_deleted]
        if self.dense and len(dead) and (np.isin(source, dead).any() or np.isin(target, dead).any()):
            self._fail("a compacted segment holds an edge of a deleted node")

    def _out_positions_of(self, rows: np.ndarray) -> np.ndarray:
        """Positions of edge rows in the out adjacency. For a few rows (a query's result keys), one pass over
        out.edge_row costs a fraction of building and checking the whole inverse permutation."""
        if "_out_position" in self.__dict__ or len(rows) * 16 > self.meta["edges"]:
            return self._out_position[rows]
        edge_row = self.out.edge_row
        wanted = np.zeros(self.meta["edges"], bool)
        wanted[rows] = True
        positions = np.flatnonzero(wanted[edge_row])
        found = edge_row[positions]
        order = np.argsort(found)
        found, positions = found[order], positions[order]
        index = np.minimum(np.searchsorted(found, rows), max(len(found) - 1, 0))
        if len(rows) and (len(found) == 0 or (found[index] != rows).any()):
            self._fail("out.edge_row is not a permutation of the edge rows")
        return positions[index]

    def edge_ends(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(source, target, type) of edge rows, read from the out adjacency."""
        position = self._out_positions_of(np.asarray(rows, dtype=np.int64))
        row = np.searchsorted(self.out.indptr, position, side="right") - 1
        source = row if self.out.rows is None else self.out.rows[row]
        return source.astype(np.int64), self.out.neighbor[position].astype(np.int64), self.out.edge_type[position]

    @cached_property
    def node_key_order(self) -> np.ndarray:
        # Bounds suffice: a lookup compares the key it lands on, so a wrong order can only miss, never mislead.
        return self._ids("node.key_order", max(self.meta["nodes"], 1), self.meta["nodes"], strictly_increasing=False)

    def find_node(self, key: bytes) -> int | None:
        """Row of the node whose key is `key` in this part (binary search over node.key_order)."""
        order = self.node_key_order
        offsets, blob = self.node_key_columns
        low, high = 0, len(order)
        while low < high:
            middle = (low + high) // 2
            row = int(order[middle])
            found = bytes(blob[int(offsets[row]): int(offsets[row + 1])])
            if found == key:
                return row
            if found < key:
                low = middle + 1
            else:
                high = middle
        return None

    def decode_keys(self, which: str, positions) -> list[str]:
        """Keys at `positions` of the node keys (which="node") or of the custom edge keys."""
        offsets, blob = self.node_key_columns if which == "node" else self.custom_key_columns
        keys = []
        for position in positions:
            try:
                keys.append(bytes(blob[int(offsets[position]): int(offsets[position + 1])]).decode("utf-8"))
            except UnicodeDecodeError:
                self._fail(f"{which} key {position} is not UTF-8")
        return keys
