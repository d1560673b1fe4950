"""The `graph` derived segment kind: CSR segments built from the records of the `graph.*` tables.

Records (the source of truth, written by engine.graph.api.GraphStore through engine.graph.batch; every field:
MANIFEST.spec section 4b):
    graph.node  external key → {"id", "type", "created_at", "updated_at", "props"?, "deleted"?}
    graph.edge  edge key → {"id", "src", "dst", "type", "weight", "confidence", "ts", "created_at",
                            "updated_at", "since"?, "until"?, "props"?, "custom"?, "deleted"?}
                (src/dst are internal node ids; fields marked ? are optional)
    graph.type  "node:<Name>" / "edge:<Name>" → type id
    graph.dead  "n:<16 hex>" / "e:<16 hex>" → 1: an internal id deleted for good (ids are never reused, so
                a deletion never needs the deleted record's old value, even after it is purged)

A flush writes one `graph.csr` segment (sparse rows, both directions) holding that flush's node states,
live edge versions and deletions, with the types it registered in its meta ("types": {"node:<Name>": id}),
so that a query learns type names without reading (and checksumming) the records segments. A reader stacks the segments and an in-memory part built from its
snapshot's unflushed records; later parts mask earlier ones (view.py). Compaction merges every part into
one dense base holding only live edges, plus the ids of deleted nodes so that they stay deleted; a rebuild
makes that base from the records alone.
"""

from __future__ import annotations

import re

import numpy as np

from engine.arrays import sorted_unique
from engine.errors import CorruptionError
from engine.format import (
    GRAPH_DEAD_TABLE,
    GRAPH_EDGE_COUNTER,
    GRAPH_EDGE_TABLE,
    GRAPH_NODE_COUNTER,
    GRAPH_NODE_TABLE,
    GRAPH_TYPE_TABLE,
)
from engine.graph.keys import edge_key
from engine.graph.csr import index_dtype
from engine.graph.part import GraphPart, build_columns, encode_keys, take_keys
from engine.graph.traverse import EdgeSet, gather
from engine.graph.view import GraphView
from engine.records import TOMBSTONE

KIND_NAME = "graph"
_DEAD_KEY = re.compile("[ne]:[0-9a-f]{16}")  # engine.graph.keys.dead_key
SEGMENT_LABEL = "csr"
_RECORDS_PATH = "<graph records>"


class GraphKind:
    def __init__(self, store, owner: str = KIND_NAME):
        """owner: always KIND_NAME (engine.kinds gives the graph no named instances: its tables are fixed)."""
        self.store = store

    def _bounds(self, parts=()) -> tuple[int, int]:
        node_count = max([self.store.counter(GRAPH_NODE_COUNTER)] + [part.node_count for part in parts])
        edge_count = max([self.store.counter(GRAPH_EDGE_COUNTER)] + [part.edge_count for part in parts])
        return node_count, edge_count

    def flush(self, changes: dict, new_segment) -> None:
        edges, dropped, nodes = records_to_arrays(changes.get(GRAPH_NODE_TABLE, {}),
                                                  changes.get(GRAPH_EDGE_TABLE, {}), changes.get(GRAPH_DEAD_TABLE, {}))
        types = _live_types(changes.get(GRAPH_TYPE_TABLE, {}))
        if not (len(edges["id"]) or len(dropped) or len(nodes["id"]) or types):
            return
        node_count, edge_count = _grow(self._bounds(), edges, dropped, nodes)
        columns, meta = build_columns(edges, dropped, nodes, node_count, edge_count, dense=False)
        _write(new_segment(SEGMENT_LABEL), columns, {**meta, "types": types})

    def compact(self, segments: list, new_segment) -> None:
        parts = [GraphPart.from_segment(segment) for segment in segments]
        node_count, edge_count = self._bounds(parts)
        edges, nodes = merge_parts(parts, node_count, edge_count)
        types = segment_types(segments)
        if len(edges["id"]) or len(nodes["id"]) or types:
            columns, meta = build_columns(edges, [], nodes, node_count, edge_count, dense=True)
            _write(new_segment(SEGMENT_LABEL), columns, {**meta, "types": types})

    def merge_newest(self, segments: list, new_segment) -> None:
        """One sparse segment answering as `segments` do, the newest with older ones below them (a tier merge):
        the latest state of every node they name and the live version of every edge, and, as dropped, every
        other edge they name, so that no older version of it shows again."""
        parts = [GraphPart.from_segment(segment) for segment in segments]
        node_count, edge_count = self._bounds(parts)
        edges, nodes = merge_parts(parts, node_count, edge_count)
        named = np.concatenate([part.edge_id.astype(np.int64) for part in parts] +
                               [part.dropped_edges.astype(np.int64) for part in parts])
        dropped = np.setdiff1d(named, edges["id"])
        columns, meta = build_columns(edges, dropped, nodes, node_count, edge_count, dense=False)
        _write(new_segment(SEGMENT_LABEL), columns, {**meta, "types": segment_types(segments)})

    def rebuild(self, rows: dict, new_segment) -> None:
        """One dense segment of the live graph `rows` holds ({table: {key: value}}: every live graph record),
        as a compaction would write it, built from the records alone (Store.rebuild): every node id a record
        names with its state, every live edge between live nodes, and every type of the graph.type records."""
        edges, _dropped, nodes = records_to_arrays(rows.get(GRAPH_NODE_TABLE, {}), rows.get(GRAPH_EDGE_TABLE, {}),
                                                   rows.get(GRAPH_DEAD_TABLE, {}))
        edges = _edges_between_live_nodes(edges, nodes)
        types = _live_types(rows.get(GRAPH_TYPE_TABLE, {}))
        if len(edges["id"]) or len(nodes["id"]) or types:
            node_count, edge_count = _grow(self._bounds(), edges, [], nodes)
            columns, meta = build_columns(edges, [], nodes, node_count, edge_count, dense=True)
            _write(new_segment(SEGMENT_LABEL), columns, {**meta, "types": types})

    def check(self, segments: list):
        """CorruptionError for every damaged or inconsistent graph segment (used by `memctl check`)."""
        node_count, edge_count = self._bounds()
        for segment in segments:
            try:
                part = GraphPart.from_segment(segment)
                part.verify()
                segment_types([segment])
            except CorruptionError as error:
                yield error
                continue
            if part.node_count > node_count or part.edge_count > edge_count:
                yield CorruptionError(segment.path, None, f"graph segment ids reach {part.node_count} nodes and "
                                                          f"{part.edge_count} edges, beyond the store's counters")

    def open(self, segments: list) -> "GraphSnapshot":
        parts = [GraphPart.from_segment(segment) for segment in segments]
        edges, dropped, nodes = records_to_arrays(self.store.memtable(GRAPH_NODE_TABLE),
                                                  self.store.memtable(GRAPH_EDGE_TABLE),
                                                  self.store.memtable(GRAPH_DEAD_TABLE))
        node_count, edge_count = _grow(self._bounds(parts), edges, dropped, nodes)
        if len(edges["id"]) or len(dropped) or len(nodes["id"]):
            columns, meta = build_columns(edges, dropped, nodes, node_count, edge_count, dense=False)
            parts.append(GraphPart.from_columns(columns, meta))
        return GraphSnapshot(parts, node_count, edge_count, registered_types(self.store))


class GraphSnapshot:
    """The graph at one store snapshot: the merged view plus id → key resolution."""

    def __init__(self, parts: list, node_count: int, edge_count: int, types: dict):
        self.parts = parts
        self.view = GraphView(parts, node_count, edge_count)
        self.edge_type_names = {type_id: key.partition(":")[2] for key, type_id in types.items()
                                if key.startswith("edge:")}

    @property
    def node_count(self) -> int:
        """Every node id is below this bound (ids are dense and never reused; 0: no node was ever written)."""
        return self.view.node_count

    def node_types(self, ids) -> np.ndarray:
        """The type id of each node id, in its latest state (ids below node_count)."""
        return self.view.node_types[np.asarray(ids, dtype=np.int64)]

    def gather(self, nodes, direction: str = "out", types=None) -> EdgeSet:
        """The live edges of `nodes` (ids) in `direction` ("out", "in" or "both"), of the type ids `types`
        (None: all), as arrays: engine.graph.traverse.gather over this snapshot."""
        return gather(self.view, nodes, direction, types)

    def node_id(self, key: str) -> int | None:
        """Internal id of the live node `key`, from the parts alone (no record is read)."""
        encoded = key.encode("utf-8")
        for part in reversed(self.parts):
            row = part.find_node(encoded)
            if row is not None:
                node = int(part.node_id[row])
                return None if part.node_deleted[row] or not self.view.alive(np.array([node]))[0] else node
        return None

    def node_keys(self, ids) -> list:
        """External key of each node id (None for a deleted or unknown id)."""
        result = [None] * len(np.asarray(ids).reshape(-1))
        for part, slots, rows in self._locate("node", ids):
            live = ~part.node_deleted[rows]
            for slot, key in zip(slots[live].tolist(), part.decode_keys("node", rows[live])):
                result[slot] = key
        return result

    def edge_keys(self, ids) -> list:
        """Key of each edge id: its custom key, or the default one built from its ends and type."""
        result = [None] * len(np.asarray(ids).reshape(-1))
        for part, slots, rows in self._locate("edge", ids):
            custom_ids = part.custom_edge_ids
            edge_ids = part.edge_id[rows]
            position = np.searchsorted(custom_ids, edge_ids)
            custom = position < len(custom_ids)
            custom[custom] = custom_ids[position[custom]] == edge_ids[custom]
            for slot, key in zip(slots[custom].tolist(), part.decode_keys("custom", position[custom])):
                result[slot] = key
            source, target, edge_type = part.edge_ends(rows[~custom])
            ends = self.node_keys(np.concatenate([source, target]))
            for slot, source_key, kind, target_key in zip(slots[~custom].tolist(), ends[:len(source)],
                                                          edge_type.tolist(), ends[len(source):]):
                if source_key is not None and target_key is not None:  # else an end is deleted: no live edge
                    result[slot] = edge_key(source_key, self.edge_type_names.get(kind, str(kind)), target_key)
        return result

    def _locate(self, which: str, ids):
        """(part, slots in `ids`, rows in that part) for each part holding the newest version of some ids."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        pending = np.arange(len(ids))
        for part in reversed(self.parts):
            if not len(pending):
                break
            column = part.node_id if which == "node" else part.edge_id
            wanted = ids[pending]
            position = np.searchsorted(column, wanted)
            inside = position < len(column)
            inside[inside] = column[position[inside]] == wanted[inside]
            if inside.any():
                yield part, pending[inside], position[inside]
            pending = pending[~inside]


def registered_types(store) -> dict:
    """{"node:<Name>" / "edge:<Name>": id} from graph segment metas and unflushed graph.type records."""
    types = segment_types(store.kind_segments.get(KIND_NAME, []))
    types.update(_live_types(store.memtable(GRAPH_TYPE_TABLE)))
    return types


def segment_types(segments: list) -> dict:
    types: dict = {}
    for segment in segments:
        found = segment.meta.get("types", {})
        if not isinstance(found, dict) or not all(isinstance(key, str) and isinstance(value, int)
                                                  for key, value in found.items()):
            raise CorruptionError(segment.path, None, "graph segment meta 'types' is not a map of names to ids")
        types.update(found)
    return types


def _edges_between_live_nodes(edges: dict, nodes: dict) -> dict:
    """The edges of `edges` (as records_to_arrays gives them) neither of whose ends `nodes` holds as deleted:
    deleting a node deletes its edges in the same batch, so this drops nothing from a consistent store, but a
    dense part must hold no edge of a deleted node whatever the records say."""
    dead = nodes["id"][nodes["deleted"]]
    keep = ~(np.isin(edges["source"], dead) | np.isin(edges["target"], dead))
    if keep.all():
        return edges
    kept = {name: edges[name][keep] for name in ("id", "source", "target", "type", "weight", "time")}
    custom = np.flatnonzero(np.isin(edges["custom_id"], kept["id"]))
    kept["custom_id"] = edges["custom_id"][custom]
    kept["custom_key_offsets"], kept["custom_keys"] = take_keys(edges["custom_key_offsets"], edges["custom_keys"],
                                                                custom)
    return kept


def _live_types(rows: dict) -> dict:
    return {key: value for key, value in rows.items() if value is not TOMBSTONE}


# --- building parts --------------------------------------------------------------------------------------


def records_to_arrays(node_rows: dict, edge_rows: dict, dead_rows: dict):
    """(edges, dropped edge ids, nodes) of one batch of records, as build_columns takes them."""
    dead_nodes, dropped = set(), set()
    for key, value in dead_rows.items():
        if value is TOMBSTONE:
            continue
        if not _DEAD_KEY.fullmatch(key):
            raise CorruptionError(_RECORDS_PATH, None, f"graph.dead key {key!r} is not n: or e: and 16 lowercase hex "
                                                       "digits")
        (dead_nodes if key[0] == "n" else dropped).add(int(key[2:], 16))
    try:
        node_list = [(value["id"], value["type"], key) for key, value in node_rows.items()
                     if value is not TOMBSTONE and not value.get("deleted") and value["id"] not in dead_nodes]
        edge_list = [(value["id"], value["src"], value["dst"], value["type"], value["weight"], value["ts"],
                      key if value.get("custom") else None)
                     for key, value in edge_rows.items()
                     if value is not TOMBSTONE and not value.get("deleted") and value["id"] not in dropped]
    except (KeyError, TypeError, AttributeError) as error:
        raise CorruptionError(_RECORDS_PATH, None, f"malformed graph record ({error!r})") from None
    dead_list = sorted(dead_nodes)
    node_ids = [row[0] for row in node_list] + dead_list
    node_offsets, node_keys = encode_keys([row[2] for row in node_list] + [""] * len(dead_list))
    nodes = {"id": np.array(node_ids, dtype=np.int64),
             "type": np.array([row[1] for row in node_list] + [0] * len(dead_list), dtype=np.int64),
             "deleted": np.array([False] * len(node_list) + [True] * len(dead_list), dtype=bool),
             "key_offsets": node_offsets, "keys": node_keys}
    custom = [(row[0], row[6]) for row in edge_list if row[6] is not None]
    custom_offsets, custom_keys = encode_keys([key for _, key in custom])
    columns = list(zip(*edge_list)) if edge_list else [()] * 6
    edges = {"id": np.array(columns[0], dtype=np.int64), "source": np.array(columns[1], dtype=np.int64),
             "target": np.array(columns[2], dtype=np.int64), "type": np.array(columns[3], dtype=np.int64),
             "weight": np.array(columns[4], dtype=np.float32), "time": np.array(columns[5], dtype=np.float64),
             "custom_id": np.array([edge_id for edge_id, _ in custom], dtype=np.int64),
             "custom_key_offsets": custom_offsets, "custom_keys": custom_keys}
    _check_record_arrays(edges, nodes)
    return edges, np.array(sorted(dropped), dtype=np.int64), nodes


def _check_record_arrays(edges: dict, nodes: dict) -> None:
    if (edges["id"] < 0).any() or (edges["source"] < 0).any() or (edges["target"] < 0).any() or \
            (nodes["id"] < 0).any():
        raise CorruptionError(_RECORDS_PATH, None, "a graph record holds a negative id")
    if len(sorted_unique(nodes["id"])) != len(nodes["id"]):
        raise CorruptionError(_RECORDS_PATH, None, "two graph.node records share an internal id")
    if not np.isfinite(edges["weight"]).all() or (edges["weight"] < 0).any():
        raise CorruptionError(_RECORDS_PATH, None, "a graph.edge record has a negative or non-finite weight")


def _grow(bounds: tuple[int, int], edges: dict, dropped, nodes: dict) -> tuple[int, int]:
    """Id bounds covering every id the arrays mention (the counters should already)."""
    node_count = max(bounds[0], int(nodes["id"].max(initial=-1)) + 1, int(edges["source"].max(initial=-1)) + 1,
                     int(edges["target"].max(initial=-1)) + 1)
    edge_count = max(bounds[1], int(edges["id"].max(initial=-1)) + 1, int(np.max(dropped, initial=-1)) + 1)
    return node_count, edge_count


def merge_parts(parts: list, node_count: int, edge_count: int) -> tuple[dict, dict]:
    """Every live edge and the latest state of every node, as build_columns takes them."""
    view = GraphView(parts, node_count, edge_count)
    edge_sets = [_live_edges(view, index, part) for index, part in enumerate(parts)]
    edges = {name: np.concatenate([edge_set[name] for edge_set in edge_sets] or [np.zeros(0)])
             for name in ("id", "source", "target", "type", "weight", "time", "custom_id")}
    edges["custom_key_offsets"], edges["custom_keys"] = _concat_keys(
        [(edge_set["custom_key_offsets"], edge_set["custom_keys"]) for edge_set in edge_sets])
    return edges, _latest_nodes(parts)


def _live_edges(view: GraphView, index: int, part) -> dict:
    """The edges of `part` whose live version it holds, ids in the narrowest type that holds them: a merge holds
    every edge of its inputs at once, and build_columns sorts int32 ids as it would int64 ones."""
    adjacency = part.out
    node_ids = index_dtype(view.node_count)
    rows = np.arange(adjacency.row_count, dtype=node_ids) if adjacency.rows is None else \
        adjacency.rows.astype(node_ids)
    source = np.repeat(rows, np.diff(adjacency.indptr))
    edge_row = adjacency.edge_row
    edge_id = part.edge_id[edge_row]
    keep = np.ones(len(edge_row), bool)
    if view.edge_owner is not None:
        keep &= view.edge_owner[edge_id] == index
    if view.node_dead is not None:
        keep &= ~view.node_dead[source] & ~view.node_dead[adjacency.neighbor]
    custom = np.flatnonzero(np.isin(part.custom_edge_ids, edge_id[keep]))
    key_offsets, keys = take_keys(*part.custom_key_columns, custom)
    return {"id": edge_id[keep].astype(index_dtype(view.edge_count)), "source": source[keep],
            "target": adjacency.neighbor[keep].astype(node_ids), "type": adjacency.edge_type[keep].astype(np.uint16),
            "weight": adjacency.weight[keep], "time": part.edge_time[edge_row[keep]],
            "custom_id": part.custom_edge_ids[custom].astype(np.int64), "custom_key_offsets": key_offsets,
            "custom_keys": keys}


def _latest_nodes(parts: list) -> dict:
    ids = np.concatenate([part.node_id for part in parts] or [np.zeros(0, np.int64)])
    owner = np.concatenate([np.full(len(part.node_id), index) for index, part in enumerate(parts)] or [np.zeros(0)])
    order = np.lexsort((owner, ids))
    last = np.ones(len(order), bool)
    last[:-1] = ids[order][1:] != ids[order][:-1]
    chosen = order[last]
    starts = np.cumsum([0] + [len(part.node_id) for part in parts])
    pieces = []
    for index, part in enumerate(parts):
        positions = np.sort(chosen[(chosen >= starts[index]) & (chosen < starts[index + 1])] - starts[index])
        pieces.append((part.node_id[positions], part.node_type[positions], part.node_deleted[positions],
                       take_keys(*part.node_key_columns, positions)))
    key_offsets, keys = _concat_keys([piece[3] for piece in pieces])
    return {"id": np.concatenate([piece[0] for piece in pieces] or [np.zeros(0, np.int64)]),
            "type": np.concatenate([piece[1] for piece in pieces] or [np.zeros(0, np.uint16)]),
            "deleted": np.concatenate([piece[2] for piece in pieces] or [np.zeros(0, bool)]),
            "key_offsets": key_offsets, "keys": keys}


def _concat_keys(pieces: list) -> tuple[np.ndarray, np.ndarray]:
    if not pieces:
        return encode_keys([])
    bases = np.cumsum([0] + [int(offsets[-1]) for offsets, _ in pieces])
    offsets = np.concatenate([offsets[:-1] + np.uint64(base) for (offsets, _), base in zip(pieces, bases)] +
                             [np.array([bases[-1]], np.uint64)])
    return offsets.astype(np.uint64), np.concatenate([keys for _, keys in pieces])


def _write(writer, columns: dict, meta: dict) -> None:
    for name, array in columns.items():
        writer.add_column(name, array)
    writer.set_meta(meta)
