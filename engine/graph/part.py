"""A graph part's columns: how one flush, the compacted base, or the unflushed delta is laid out.

Columns of a `graph.csr` segment (the delta holds the same arrays in memory; dtypes, rules and a worked
example: MANIFEST.spec section 4b):

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
"edges": E, "nodes": N, "types": {"node:<Name>" / "edge:<Name>": id}}. A damaged file raises CorruptionError
instead of answering wrongly, and a cold query pays only for what it reads: the attributes below (out, inn,
edge_id, ...) check whole columns (block checksums and values) on first use, for whole-graph work and
`memctl check`; the row reads a query makes (`gather_rows`, `edge_ids_at`, `edge_times_at`, `decode_keys`
of node keys) check only the block-sized spans they read from (checksums, then values). Ids are int32 while
they fit.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from engine.arrays import sorted_unique
from engine.errors import CorruptionError, UnsupportedVersion
from engine.format import GRAPH_SEGMENT_VERSION, SEGMENT_CHECKSUM_BLOCK_BYTES
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
    edge_order = np.argsort(np.asarray(edges["id"]), kind="stable")
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
        "edge.id": np.asarray(edges["id"])[edge_order].astype(edge_ids),
        "edge.time": np.asarray(edges["time"], dtype=np.float64)[edge_order],
        "edge.custom_id": np.asarray(edges["custom_id"], dtype=np.int64)[custom_order].astype(edge_ids),
        "edge.custom.key_offsets": custom_offsets,
        "edge.custom.keys": custom_keys,
        "edge.dropped": sorted_unique(np.asarray(dropped, dtype=np.int64)).astype(edge_ids),
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

    def __init__(self, column, meta: dict, path: str, segment=None):
        self._column = column
        self._segment = segment  # None: in-memory columns, nothing to verify
        self._views: dict = {}  # name → column whose dtype and length are checked, its blocks and values not
        self._stored: dict = {}  # side → _StoredAdjacency
        self._checked: dict = {}  # name → which block-sized spans of the column `_take` has checked
        self._sound: set = set()  # names whose every span is checked
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
        return cls(segment.column, segment.meta, segment.path, segment)

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

    def _unchecked(self, name: str, dtypes, length: int | None = None) -> np.ndarray:
        """A column with its dtype and length checked, but neither its checksum blocks nor its values: reads
        through `_take` check what they gather."""
        array = self._views.get(name)
        if array is None:
            array = self._segment.column(name, verify=False) if self._segment is not None else self._column(name)
            if array.dtype not in [np.dtype(dtype) for dtype in dtypes] or array.ndim != 1:
                self._fail(f"column {name} has dtype {array.dtype} and {array.ndim} dimensions")
            if length is not None and len(array) != length:
                self._fail(f"column {name} has {len(array)} entries, expected {length}")
            self._views[name] = array
        return array

    def _take(self, name: str, positions: np.ndarray, check=None) -> np.ndarray:
        """Entries `positions` (in range) of a column taken by `_unchecked`. Each block-sized span they fall in
        is checked once: its checksum blocks, then `check(values)` (raises on a bad value) over the whole span,
        so later reads of it, and every read once all spans are checked, just index."""
        array = self._views[name]
        if name not in self._sound and len(positions):
            span = max(SEGMENT_CHECKSUM_BLOCK_BYTES // array.itemsize, 1)
            checked = self._checked.get(name)
            if checked is None:
                checked = self._checked[name] = np.zeros(-(-len(array) // span), bool)
            touched = np.zeros(len(checked), bool)
            touched[positions // span] = True
            for block in np.flatnonzero(touched & ~checked).tolist():
                # verify_items checks every stored block the span overlaps, whatever the segment's block size.
                if self._segment is not None:
                    self._segment.verify_items(name, block * span, (block + 1) * span)
                if check is not None:
                    check(array[block * span: (block + 1) * span])
                checked[block] = True
            if checked.all():
                self._sound.add(name)
        return array[positions]

    def _below(self, name: str, limit: int):
        """A `_take` check: every value lies in 0..limit-1."""
        def check(values: np.ndarray) -> None:
            if len(values) and (values.min() < 0 or values.max() >= limit):
                self._fail(f"column {name} holds a value outside 0..{limit - 1}")

        return check

    def _row_source(self, side: str):
        """What `gather_rows` reads: the whole validated adjacency once it is loaded (or for an in-memory or
        sparse part, which is small), else the stored columns checked as they are read."""
        attribute = "out" if side == "out" else "inn"
        if self._segment is None or not self.dense or attribute in self.__dict__:
            return getattr(self, attribute)
        source = self._stored.get(side)
        if source is None:
            source = self._stored[side] = _StoredAdjacency(self, side)
        return source

    def gather_rows(self, side: str, nodes: np.ndarray, mask) -> tuple:
        """(origin, neighbor, edge_type, weight, edge_row) of the `side` edges of `nodes` (csr.gather_rows)."""
        return csr.gather_rows(self._row_source(side), nodes, mask)

    def edge_ids_at(self, rows: np.ndarray) -> np.ndarray:
        if "edge_id" in self.__dict__:
            return self.edge_id[rows]
        self._unchecked("edge.id", (np.int32, np.int64), self.meta["edges"])
        return self._take("edge.id", rows, self._below("edge.id", self.edge_count))

    def edge_times_at(self, rows: np.ndarray) -> np.ndarray:
        if "edge_time" in self.__dict__:
            return self.edge_time[rows]
        self._unchecked("edge.time", (np.float64,), self.meta["edges"])
        return self._take("edge.time", rows)

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
        """Keys at `positions` (in range) of the node keys (which="node") or of the custom edge keys."""
        if which == "node" and self._segment is not None and "node_key_columns" not in self.__dict__:
            return self._read_node_keys(np.asarray(positions, dtype=np.int64))
        offsets, blob = self.node_key_columns if which == "node" else self.custom_key_columns
        return [self._decode(which, position, blob[int(offsets[position]): int(offsets[position + 1])])
                for position in positions]

    def _read_node_keys(self, positions: np.ndarray) -> list[str]:
        """Node keys checking only their offsets, bytes and the blocks holding them (a query's few keys)."""
        self._unchecked("node.key_offsets", (KEY_OFFSET_DTYPE,), self.meta["nodes"] + 1)
        blob = self._unchecked("node.keys", (np.uint8,))
        check = self._below("node.key_offsets", len(blob) + 1)
        starts = self._take("node.key_offsets", positions, check).astype(np.int64)
        ends = self._take("node.key_offsets", positions + 1, check).astype(np.int64)
        if (ends < starts).any():
            self._fail("node key offsets do not partition the key bytes")
        keys = []
        for position, start, end in zip(positions.tolist(), starts.tolist(), ends.tolist()):
            self._segment.verify_items("node.keys", start, end)
            keys.append(self._decode("node", position, blob[start:end]))
        return keys

    def _decode(self, which: str, position: int, data: np.ndarray) -> str:
        try:
            return bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            self._fail(f"{which} key {position} is not UTF-8")


class _StoredAdjacency:
    """One direction of a stored dense part, read a few rows at a time (csr.gather_rows' source): only the
    block-sized spans holding the entries it takes are checked (checksums, then bounds), so a query touching a
    few nodes does not hash and scan every edge column."""

    _EDGE_COLUMNS = {"neighbor": (np.int32, np.int64), "edge_type": (np.uint8, np.uint16),
                     "weight": (csr.WEIGHT_DTYPE,), "edge_row": (np.int32, np.int64)}

    rows = None  # dense: row r is node r

    def __init__(self, part: GraphPart, side: str):
        self.part = part
        self.prefix = "out" if side == "out" else "in"
        indptr = part._unchecked(f"{self.prefix}.indptr", (csr.INDPTR_DTYPE,))
        for name, dtypes in self._EDGE_COLUMNS.items():
            part._unchecked(f"{self.prefix}.{name}", dtypes, part.meta["edges"])
        self.row_count = len(indptr) - 1
        if not 0 <= self.row_count <= part.node_count:
            part._fail(f"{self.prefix} adjacency has {self.row_count} rows for {part.node_count} nodes")
        edges = part.meta["edges"]
        self.checks = {"indptr": part._below(f"{self.prefix}.indptr", edges + 1),
                       "neighbor": part._below(f"{self.prefix}.neighbor", part.node_count),
                       "edge_row": part._below(f"{self.prefix}.edge_row", edges), "weight": self._weights_sound}

    def bounds(self, row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        starts, ends = self.take("indptr", row), self.take("indptr", row + 1)
        lengths = ends - starts
        if (lengths < 0).any():
            self.part._fail(f"{self.prefix}.indptr is not monotone")
        return starts, lengths

    def take(self, name: str, positions: np.ndarray) -> np.ndarray:
        return self.part._take(f"{self.prefix}.{name}", positions, self.checks.get(name))

    def _weights_sound(self, values: np.ndarray) -> None:
        if not (np.isfinite(values) & (values >= 0)).all():
            self.part._fail(f"{self.prefix}.weight holds a negative, NaN or infinite weight")
