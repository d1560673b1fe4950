"""GraphStore: the property graph's Python API over one store.

Writes go through a GraphBatch (one store batch: one WAL record, one fsync); `GraphStore.add_node` and the
other single-operation methods open their own. Nodes and edges are addressed by external keys; internal ids
are dense integers allocated from store counters and never reused, so a deleted id stays deleted.

Reads take the store's `graph` kind snapshot (segments + unflushed records) and answer with numpy arrays;
keys are decoded only for the rows a caller asks for, so a hub's million edges never become a million
Python objects.
"""

from __future__ import annotations

import itertools
import math
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from engine.errors import InputError
from engine.format import (
    GRAPH_DEAD_TABLE,
    GRAPH_EDGE_COUNTER,
    GRAPH_EDGE_TABLE,
    GRAPH_EDGE_TYPE_COUNTER,
    GRAPH_MAX_TYPES,
    GRAPH_NODE_COUNTER,
    GRAPH_NODE_TABLE,
    GRAPH_NODE_TYPE_COUNTER,
    GRAPH_TYPE_TABLE,
)
from engine.graph import pagerank, traverse
from engine.graph.kind import KIND_NAME, GraphSnapshot, dead_key, edge_key, registered_types
from engine.graph.traverse import DegreeCap, EdgeSet, Reached

TYPE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
MAX_KEY_BYTES = 1024
_TYPE_COUNTERS = {"node": GRAPH_NODE_TYPE_COUNTER, "edge": GRAPH_EDGE_TYPE_COUNTER}


# --- results --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Neighbors:
    """Edges from one node as arrays (`edges`); `rows()` decodes keys for the first `limit` only."""

    graph: "GraphStore"
    snapshot: GraphSnapshot
    edges: EdgeSet

    def __len__(self) -> int:
        return len(self.edges)

    def rows(self, limit: int | None = None) -> list[dict]:
        edges = self.edges.take(slice(0, limit))
        names = self.graph.type_names("edge")
        return [{"key": key, "edge": edge, "type": names.get(kind, str(kind)), "weight": round(float(weight), 6)}
                for key, edge, kind, weight in zip(self.snapshot.node_keys(edges.neighbor),
                                                   self.snapshot.edge_keys(edges.edge_id),
                                                   edges.edge_type.tolist(), edges.weight.tolist())]


@dataclass(frozen=True)
class KHop:
    """k-hop result as arrays (`reached`); `rows()` decodes keys."""

    snapshot: GraphSnapshot
    reached: Reached

    def __len__(self) -> int:
        return len(self.reached)

    def rows(self, limit: int | None = None) -> list[dict]:
        reached = self.reached
        count = len(reached) if limit is None else min(limit, len(reached))
        nodes = self.snapshot.node_keys(reached.node[:count])
        parents = self.snapshot.node_keys(reached.parent[:count])
        edges = self.snapshot.edge_keys(reached.edge_id[:count])
        return [{"key": node, "hop": hop, "via": edge if hop else None, "parent": parent if hop else None}
                for node, hop, edge, parent in zip(nodes, reached.hop[:count].tolist(), edges, parents)]


# --- writing --------------------------------------------------------------------------------------------


class GraphBatch:
    """Graph writes collected into one store batch, reading its own pending writes."""

    def __init__(self, graph: "GraphStore", batch, memo: "ImportMemo | None" = None):
        self.graph = graph
        self.store = graph.store
        self.batch = batch
        self.pending: dict = {}  # (table, key) -> value written in this batch (None: purged)
        self.memo = memo
        self._next_ids: dict = {}
        self._first_ids: dict = {}

    def _get(self, table: str, key: str):
        if self.memo is not None:  # what the memo keeps never goes to `pending`
            found, record = self.memo.get(table, key)
            if found:
                return record
        pending = self.pending.get((table, key), _ABSENT)
        return self.store.get(table, key) if pending is _ABSENT else pending

    def _allocate(self, counter: str) -> int:
        """Next id of `counter`; `finish` reserves the whole run with one counter operation."""
        if counter not in self._next_ids:
            self._next_ids[counter] = self._first_ids[counter] = self.batch.allocate(counter, 0)
        allocated = self._next_ids[counter]
        self._next_ids[counter] = allocated + 1
        return allocated

    def finish(self) -> None:
        for counter, first in self._first_ids.items():
            reserved = self.batch.allocate(counter, self._next_ids[counter] - first)
            assert reserved == first, f"counter {counter} was also allocated outside this graph batch"

    def _put(self, table: str, key: str, value) -> None:
        self.batch.put(table, key, value)
        # An import's memo may run ahead of what is committed: a failed batch ends the import and its memo.
        if self.memo is None or not self.memo.remember(table, key, value):
            self.pending[(table, key)] = value

    def _delete(self, table: str, key: str) -> None:
        self.batch.delete(table, key)
        if self.memo is None or not self.memo.remember(table, key, None):
            self.pending[(table, key)] = None

    def type_id(self, kind: str, name: str) -> int:
        """The id of type `name`, registering it in this batch if new."""
        known = self.graph.type_ids(kind).get(name) if isinstance(name, str) else None
        if known is not None:
            return known
        if not isinstance(name, str) or not TYPE_NAME.match(name):
            raise InputError(f"{kind} type {name!r} must be a letter followed by up to 63 letters, digits or _")
        key = f"{kind}:{name}"
        known = self.pending.get((GRAPH_TYPE_TABLE, key))
        if known is None:
            known = self._allocate(_TYPE_COUNTERS[kind])
            if known >= GRAPH_MAX_TYPES:
                raise InputError(f"too many {kind} types (at most {GRAPH_MAX_TYPES})")
            self._put(GRAPH_TYPE_TABLE, key, known)
        return known

    def node(self, key: str):
        record = self._get(GRAPH_NODE_TABLE, key)
        return None if record is None or record.get("deleted") else record

    def add_node(self, key: str, node_type: str, properties: dict | None = None, created_at=None) -> int:
        """Create node `key`, or replace the type and properties of the live node of that key."""
        _check_key(key, "node key")
        now = self.graph.clock()
        existing = self.node(key)
        record = _node_record(existing["id"] if existing else self._allocate(GRAPH_NODE_COUNTER),
                              self.type_id("node", node_type),
                              existing["created_at"] if existing else _time(created_at, now, "created_at"), now,
                              _properties(properties))
        self._put(GRAPH_NODE_TABLE, key, record)
        return record["id"]

    def update_node(self, key: str, node_type: str | None = None, properties: dict | None = None,
                    merge: bool = True) -> int:
        existing = self._require_node(key)
        record = dict(existing)
        if node_type is not None:
            record["type"] = self.type_id("node", node_type)
        if properties is not None:
            record["props"] = {**existing.get("props", {}), **_properties(properties)} if merge else \
                _properties(properties)
        record["updated_at"] = self.graph.clock()
        self._put(GRAPH_NODE_TABLE, key, record)
        return record["id"]

    def delete_node(self, key: str, purge: bool = False) -> int:
        """Delete node `key` and every edge touching it; returns how many edges went with it.

        purge=True also removes the records themselves (forget), instead of keeping them flagged deleted."""
        record = self._require_node(key)
        removed = 0
        for incident in self.graph.incident_edge_keys(record["id"], self.pending):
            if self.edge(incident) is not None:
                self.delete_edge(incident, purge)
                removed += 1
        self._put(GRAPH_DEAD_TABLE, dead_key("n", record["id"]), 1)
        if purge:
            self._delete(GRAPH_NODE_TABLE, key)
        else:
            self._put(GRAPH_NODE_TABLE, key, {**record, "deleted": True, "updated_at": self.graph.clock()})
        return removed

    def _require_node(self, key: str) -> dict:
        _check_key(key, "node key")
        record = self.node(key)
        if record is None:
            raise InputError(f"no node {key!r}")
        return record

    def add_edge(self, source: str, edge_type: str, target: str, weight: float = 1.0, confidence: float = 1.0,
                 ts=None, since=None, until=None, properties: dict | None = None, key: str | None = None) -> str:
        """Create the edge (or update the live edge with the same key); returns its key."""
        source_record, target_record = self._require_node(source), self._require_node(target)
        default_key = edge_key(source, edge_type, target) if isinstance(edge_type, str) else None
        key = default_key if key is None else key
        _check_key(key, "edge key")
        now = self.graph.clock()
        existing = self.edge(key)
        if existing and (existing["src"], existing["dst"]) != (source_record["id"], target_record["id"]):
            raise InputError(f"edge {key!r} already joins other nodes; delete it first")
        record = _edge_record(existing["id"] if existing else self._allocate(GRAPH_EDGE_COUNTER),
                              source_record["id"], target_record["id"], self.type_id("edge", edge_type),
                              _number(weight, "weight", 0.0, math.inf), _number(confidence, "confidence", 0.0, 1.0),
                              _time(ts, now, "ts"), existing["created_at"] if existing else now, now,
                              _time(since, None, "since"), _time(until, None, "until"), _properties(properties),
                              key != default_key)
        self._put(GRAPH_EDGE_TABLE, key, record)
        return key

    def edge(self, key: str):
        record = self._get(GRAPH_EDGE_TABLE, key)
        return None if record is None or record.get("deleted") else record

    def update_edge(self, key: str, **fields) -> str:
        existing = self._require_edge(key)
        record = dict(existing)
        for name, value in fields.items():
            if name == "weight":
                record["weight"] = _number(value, "weight", 0.0, math.inf)
            elif name == "confidence":
                record["confidence"] = _number(value, "confidence", 0.0, 1.0)
            elif name in ("ts", "since", "until"):
                record[name] = _time(value, None, name)
            elif name == "properties":
                record["props"] = {**existing.get("props", {}), **_properties(value)}
            elif name == "type":
                record["type"] = self.type_id("edge", value)
                record["custom"] = True  # the key no longer follows from the ends and the new type
            else:
                raise InputError(f"an edge has no field {name!r} to update")
        record["updated_at"] = self.graph.clock()
        self._put(GRAPH_EDGE_TABLE, key, record)
        return key

    def delete_edge(self, key: str, purge: bool = False) -> None:
        record = self._require_edge(key)
        self._put(GRAPH_DEAD_TABLE, dead_key("e", record["id"]), 1)
        if purge:
            self._delete(GRAPH_EDGE_TABLE, key)
        else:
            self._put(GRAPH_EDGE_TABLE, key, {**record, "deleted": True, "updated_at": self.graph.clock()})

    def _require_edge(self, key: str) -> dict:
        _check_key(key, "edge key")
        record = self.edge(key)
        if record is None:
            raise InputError(f"no edge {key!r}")
        return record

    # --- bulk: an import's runs of node lines and of edge lines --------------------------------------------

    def add_new_nodes(self, rows: list) -> bool:
        """add_node(*row) for every (key, type, properties, created_at) row at once, when each creates a new,
        well-formed node (what an import mostly holds); otherwise False, having written nothing, and the
        caller goes row by row, which names the problem."""
        memo, now = self.memo, self.graph.clock()
        if memo is None or not rows:
            return False
        keys, node_types, properties, created = zip(*rows)
        if not (_plain_keys(keys, distinct=True) and memo.all_absent(memo.nodes, keys)
                and _plain_properties(properties)):
            return False
        times = _plain_numbers(created, -math.inf, math.inf, now)
        type_ids = None if times is None else self._type_ids_at_once("node", node_types)  # registers new types
        if type_ids is None:
            return False
        first = self._allocate_run(GRAPH_NODE_COUNTER, len(rows))
        records = [_node_record(first + index, type_ids[node_type], moment, now, dict(value) if value else None)
                   for index, (node_type, moment, value) in enumerate(zip(node_types, times, properties))]
        self.batch.put_many(GRAPH_NODE_TABLE, keys, records)
        memo.nodes.update(zip(keys, [(record["id"], record["created_at"]) for record in records]))
        return True

    def add_new_edges(self, rows: list) -> bool:
        """add_edge(*row) for every (source, type, target, weight, confidence, ts, since, until, properties,
        key) row at once, when each creates a new edge under its default key between live nodes, with plain
        numbers; otherwise False, having written nothing (see add_new_nodes)."""
        memo, now = self.memo, self.graph.clock()
        if memo is None or not rows:
            return False
        sources, edge_types, targets, weights, confidences, times, since, until, properties, keys = zip(*rows)
        if keys.count(None) != len(rows) or since.count(None) != len(rows) or until.count(None) != len(rows):
            return False
        if not (_plain_keys(sources) and _plain_keys(targets) and _all_of_type(edge_types, str)):
            return False
        ends = list(map(memo.nodes.get, sources)), list(map(memo.nodes.get, targets))  # (id, created_at)
        if None in ends[0] or None in ends[1]:
            return False
        keys = list(map(edge_key, sources, edge_types, targets))
        if not (_plain_keys(keys, distinct=True) and memo.all_absent(memo.edges, keys)
                and _plain_properties(properties)):
            return False
        weights, confidences = _plain_numbers(weights, 0.0, math.inf), _plain_numbers(confidences, 0.0, 1.0)
        times = _plain_numbers(times, -math.inf, math.inf, now)
        if weights is None or confidences is None or times is None:
            return False
        type_ids = self._type_ids_at_once("edge", edge_types)  # registers new types: the last check
        if type_ids is None:
            return False
        first = self._allocate_run(GRAPH_EDGE_COUNTER, len(rows))
        records = [_edge_record(first + index, source[0], target[0], type_ids[name], weight, confidence, moment, now,
                                now, None, None, dict(value) if value else None, False)
                   for index, (source, target, name, weight, confidence, moment, value)
                   in enumerate(zip(*ends, edge_types, weights, confidences, times, properties))]
        self.batch.put_many(GRAPH_EDGE_TABLE, keys, records)
        memo.edges.update(zip(keys, [(record["id"], record["src"], record["dst"], now) for record in records]))
        return True

    def _type_ids_at_once(self, kind: str, names) -> dict | None:
        """{name: id} for `names`, registering new ones in order of first use; None if one is not a valid name
        or they would be too many (nothing registered then)."""
        if not _all_of_type(names, str):
            return None
        known = self.graph.type_ids(kind)
        new = [name for name in dict.fromkeys(names) if name not in known]
        if not all(TYPE_NAME.match(name) for name in new):
            return None
        counter = _TYPE_COUNTERS[kind]
        if self._next_ids.get(counter, self.store.counter(counter)) + len(new) > GRAPH_MAX_TYPES:
            return None
        return {**known, **{name: self.type_id(kind, name) for name in new}}

    def _allocate_run(self, counter: str, count: int) -> int:
        first = self._allocate(counter)
        self._next_ids[counter] = first + count
        return first


def _node_record(node_id: int, type_id: int, created_at, now: float, properties) -> dict:
    record = {"id": node_id, "type": type_id, "created_at": created_at, "updated_at": now}
    if properties:
        record["props"] = properties
    return record


def _edge_record(edge_id: int, source: int, target: int, type_id: int, weight: float, confidence: float, ts,
                 created_at, now: float, since, until, properties, custom: bool) -> dict:
    record = {"id": edge_id, "src": source, "dst": target, "type": type_id, "weight": weight,
              "confidence": confidence, "ts": ts, "created_at": created_at, "updated_at": now}
    # Absent rather than null or empty: every byte of a record is written twice (WAL, then segment).
    if since:
        record["since"] = since
    if until:
        record["until"] = until
    if properties:
        record["props"] = properties
    if custom:
        record["custom"] = custom
    return record


def _all_of_type(values, *types) -> bool:
    return set(map(type, values)) <= set(types)


def _plain_keys(keys, distinct: bool = False) -> bool:
    """Keys that _check_key accepts without measuring their UTF-8 (others go row by row)."""
    return (_all_of_type(keys, str) and 0 < min(map(len, keys)) and max(map(len, keys)) <= MAX_KEY_BYTES // 4
            and "\0" not in "".join(keys) and (not distinct or len(set(keys)) == len(keys)))


def _plain_properties(values) -> bool:
    present = [value for value in values if value is not None]
    return _all_of_type(present, dict) and _all_of_type(itertools.chain.from_iterable(present), str)


def _plain_numbers(values, low: float, high: float, default: float | None = None) -> list | None:
    """`values` as floats when each is a finite int or float within [low, high] (or None, given a `default`
    for it), else None."""
    if not _all_of_type(values, float, int, *(() if default is None else (type(None),))):
        return None
    numbers = [default if value is None else float(value) for value in values]
    array = np.array(numbers, dtype=np.float64)
    if not (np.isfinite(array).all() and (array >= low).all() and (array <= high).all()):
        return None
    return numbers


class ImportMemo:
    """What a bulk import's earlier batches wrote, reduced to the fields add_node and add_edge read back.

    When the graph was empty before the import began, a key the memo lacks is known to be absent, which
    saves a store lookup per line."""

    def __init__(self, store_is_empty: bool):
        self.store_is_empty = store_is_empty
        self.nodes: dict = {}  # key -> (id, created_at), or None once deleted
        self.edges: dict = {}  # key -> (id, src, dst, created_at), or None once deleted

    def get(self, table: str, key: str) -> tuple[bool, dict | None]:
        """(known, record): known is False when only the store can tell."""
        if table == GRAPH_NODE_TABLE:
            found = self.nodes.get(key, _ABSENT)
            if found is _ABSENT or found is None:
                return found is None or self.store_is_empty, None
            return True, {"id": found[0], "created_at": found[1], "deleted": False}
        if table == GRAPH_EDGE_TABLE:
            found = self.edges.get(key, _ABSENT)
            if found is _ABSENT or found is None:
                return found is None or self.store_is_empty, None
            return True, {"id": found[0], "src": found[1], "dst": found[2], "created_at": found[3], "deleted": False}
        return False, None

    def all_absent(self, known: dict, keys) -> bool:
        """Whether none of `keys` has a live record in `known` (self.nodes or self.edges) nor, as far as the
        memo can tell, in the store."""
        if self.store_is_empty:
            return not any(map(known.get, keys))
        return all(known.get(key, _ABSENT) is None for key in keys)

    def remember(self, table: str, key: str, value) -> bool:
        """Keep what a record written now means for later lines; False for tables the memo does not keep."""
        if table == GRAPH_NODE_TABLE:
            live = value is not None and not value.get("deleted")
            self.nodes[key] = (value["id"], value["created_at"]) if live else None
        elif table == GRAPH_EDGE_TABLE:
            live = value is not None and not value.get("deleted")
            self.edges[key] = (value["id"], value["src"], value["dst"], value["created_at"]) if live else None
        else:
            return False
        return True


_ABSENT = object()


# --- the store-level API -----------------------------------------------------------------------------


class GraphStore:
    def __init__(self, store, clock=time.time):
        self.store = store
        self.clock = clock
        self._types_generation = None
        self._types: dict = {}

    @contextmanager
    def batch(self, memo: "ImportMemo | None" = None, owned: bool = False):
        """`with graph.batch() as writer:` several writes, one WAL record and one fsync. owned=True: every
        property value comes from a JSON decoder (no tuples, nothing the caller keeps), see Store.commit."""
        with self.store.batch(owned) as batch:
            writer = GraphBatch(self, batch, memo)
            yield writer
            writer.finish()

    # one-operation writes
    def add_node(self, key, node_type, properties=None, created_at=None) -> int:
        with self.batch() as writer:
            return writer.add_node(key, node_type, properties, created_at)

    def update_node(self, key, node_type=None, properties=None, merge=True) -> int:
        with self.batch() as writer:
            return writer.update_node(key, node_type, properties, merge)

    def delete_node(self, key, purge=False) -> int:
        with self.batch() as writer:
            return writer.delete_node(key, purge)

    def add_edge(self, source, edge_type, target, **fields) -> str:
        with self.batch() as writer:
            return writer.add_edge(source, edge_type, target, **fields)

    def update_edge(self, key, **fields) -> str:
        with self.batch() as writer:
            return writer.update_edge(key, **fields)

    def delete_edge(self, key, purge=False) -> None:
        with self.batch() as writer:
            writer.delete_edge(key, purge)

    # types
    def type_ids(self, kind: str) -> dict:
        """{type name: id} of node or edge types."""
        if self._types_generation != self.store.generation:
            types = {"node": {}, "edge": {}}
            for key, type_id in registered_types(self.store).items():
                kind_name, _, name = key.partition(":")
                types.setdefault(kind_name, {})[name] = type_id
            self._types, self._types_generation = types, self.store.generation
        return self._types.get(kind, {})

    def type_names(self, kind: str) -> dict:
        return {type_id: name for name, type_id in self.type_ids(kind).items()}

    def _type_filter(self, types):
        """Edge type names → ids; an unknown name matches nothing rather than everything."""
        if types is None:
            return None
        if isinstance(types, str):
            types = [types]
        known = self.type_ids("edge")
        return [known[name] for name in types if name in known]

    # reads
    def snapshot(self) -> GraphSnapshot:
        return self.store.kind(KIND_NAME)

    def get_node(self, key: str) -> dict | None:
        record = self.store.get(GRAPH_NODE_TABLE, key)
        if record is None or record.get("deleted"):
            return None
        return {"key": key, "id": record["id"], "type": self.type_names("node").get(record["type"]),
                "props": record.get("props", {}), "created_at": record["created_at"],
                "updated_at": record["updated_at"]}

    def get_edge(self, key: str) -> dict | None:
        record = self.store.get(GRAPH_EDGE_TABLE, key)
        if record is None or record.get("deleted"):
            return None
        source, target = self.snapshot().node_keys([record["src"], record["dst"]])
        return {"key": key, "id": record["id"], "src": source, "dst": target,
                "type": self.type_names("edge").get(record["type"]), "weight": record["weight"],
                "confidence": record["confidence"], "ts": record["ts"],
                "temporal": {"since": record.get("since"), "until": record.get("until")},
                "props": record.get("props", {}),
                "created_at": record["created_at"], "updated_at": record["updated_at"]}

    def node_id(self, key: str, snapshot: GraphSnapshot | None = None) -> int:
        _check_key(key, "node key")
        found = (snapshot or self.snapshot()).node_id(key)
        if found is None:
            raise InputError(f"no node {key!r}")
        return found

    def neighbors(self, key: str, direction: str = "out", types=None, limit: int | None = None,
                  cap: DegreeCap | None = None) -> Neighbors:
        snapshot = self.snapshot()
        _check_direction(direction)
        edges = traverse.neighbors(snapshot.view, self.node_id(key, snapshot), direction,
                                   self._type_filter(types), limit, self._cap(cap))
        return Neighbors(self, snapshot, edges)

    def khop(self, keys, k: int = 2, types=None, direction: str = "out", max_nodes: int | None = None,
             cap: DegreeCap | None = None) -> KHop:
        snapshot = self.snapshot()
        _check_direction(direction)
        if not isinstance(k, int) or k < 0:
            raise InputError(f"k must be a non-negative integer, not {k!r}")
        seeds = [self.node_id(key, snapshot) for key in ([keys] if isinstance(keys, str) else keys)]
        reached = traverse.khop(snapshot.view, seeds, k, self._type_filter(types), direction, max_nodes,
                                self._cap(cap))
        return KHop(snapshot, reached)

    def personalized_pagerank(self, seeds, k: int | None = 2, types=None, direction: str = "out",
                              weights: dict | None = None, damping: float = pagerank.DAMPING,
                              iterations: int = 100, tolerance: float = 1e-6, max_nodes: int | None = None,
                              top: int | None = 20) -> list[tuple[str, float]]:
        """PPR from `seeds` (keys, or {key: weight}) over their k-hop subgraph (k=None: the whole graph).

        weights: {edge type name: weight}; seed 001 appendix A by default, 0.5 for any other type."""
        snapshot = self.snapshot()
        _check_direction(direction)
        seed_map = {seeds: 1.0} if isinstance(seeds, str) else dict(seeds) if isinstance(seeds, dict) else \
            {key: 1.0 for key in seeds}
        seed_ids = [self.node_id(key, snapshot) for key in seed_map]
        type_ids = self._type_filter(types)
        nodes = None
        if k is not None:
            nodes = traverse.khop(snapshot.view, seed_ids, k, type_ids, direction, max_nodes).node
        try:
            ranking = pagerank.personalized_pagerank(
                snapshot.view, seed_ids, list(seed_map.values()), nodes,
                pagerank.type_weights(self.type_ids("edge"), weights), damping, iterations, tolerance, direction,
                type_ids)
        except ValueError as error:
            raise InputError(str(error)) from None
        node_ids, scores = ranking.top(len(ranking.node) if top is None else top)
        return list(zip(snapshot.node_keys(node_ids), scores.tolist()))

    def node_degrees(self, key: str) -> dict:
        """{"out": {type: count}, "in": {type: count}} of one node."""
        snapshot = self.snapshot()
        view, node = snapshot.view, self.node_id(key, snapshot)
        names = self.type_names("edge")
        return {direction: {names.get(kind, str(kind)): count
                            for kind, count in traverse.type_degrees(view, node, direction).items()}
                for direction in ("out", "in")}

    def degree_statistics(self, direction: str = "out") -> dict:
        """Per edge type name: edges, nodes, mean and max degree, and the key of the top node."""
        _check_direction(direction)
        snapshot = self.snapshot()
        names = self.type_names("edge")
        statistics = traverse.type_statistics(snapshot.view, direction)
        tops = snapshot.node_keys([entry["max_node"] for entry in statistics.values()])
        return {names.get(kind, str(kind)): {**{name: value for name, value in entry.items() if name != "max_node"},
                                             "max_node": top}
                for (kind, entry), top in zip(statistics.items(), tops)}

    def nodes_of_type(self, node_type: str, limit: int | None = None) -> list[str]:
        type_id = self.type_ids("node").get(node_type)
        if type_id is None:
            return []
        snapshot = self.snapshot()
        return snapshot.node_keys(snapshot.view.nodes_of_type(type_id)[:limit])

    def edges_of(self, edge_type: str, source: str | None = None, target: str | None = None,
                 limit: int | None = None) -> Neighbors:
        """Edges of one type from `source` or into `target`: the (type, src) and (type, dst) indexes."""
        if (source is None) == (target is None):
            raise InputError("give exactly one of source and target")
        return self.neighbors(source if source is not None else target, "out" if source is not None else "in",
                              [edge_type], limit)

    def incident_edge_keys(self, node_id: int, pending: dict | None = None) -> list[str]:
        """Keys of every live edge touching `node_id`, including edges written in a pending batch."""
        snapshot = self.snapshot()
        edges = traverse.gather(snapshot.view, np.array([node_id], np.int64), "both")
        keys = set(snapshot.edge_keys(np.unique(edges.edge_id)))
        for (table, key), value in (pending or {}).items():
            if table == GRAPH_EDGE_TABLE and value and node_id in (value["src"], value["dst"]):
                keys.add(key)
        return sorted(key for key in keys if key is not None)

    def _cap(self, cap):
        """A DegreeCap given with type names becomes one with type ids."""
        if cap is None:
            return None
        known = self.type_ids("edge")
        limits = {known[name] if isinstance(name, str) else name: limit for name, limit in cap.limits.items()
                  if not isinstance(name, str) or name in known}
        return DegreeCap(limits, cap.now, cap.tau_days)


# --- validation helpers ---------------------------------------------------------------------------------


def _check_direction(direction: str) -> None:
    if direction not in traverse.DIRECTIONS:
        raise InputError(f"direction must be one of {', '.join(traverse.DIRECTIONS)}, not {direction!r}")


def _check_key(key, what: str) -> None:
    if not isinstance(key, str) or not key or "\0" in key:
        raise InputError(f"{what} must be non-empty text without NUL, not {key!r}")
    # UTF-8 takes at most 4 bytes a character: short keys need no encoding to be measured.
    if len(key) * 4 > MAX_KEY_BYTES and len(key.encode("utf-8")) > MAX_KEY_BYTES:
        raise InputError(f"{what} is longer than {MAX_KEY_BYTES} bytes")


def _number(value, name: str, low: float, high: float) -> float:
    if type(value) is float and math.isfinite(value) and low <= value <= high:  # the common case, at once
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or \
            not low <= value <= high:
        raise InputError(f"{name} must be a finite number in [{low}, {high}], not {value!r}")
    return float(value)


def _time(value, default, name: str):
    """Seconds since the epoch from a number or an ISO 8601 string; `default` when None."""
    if value is None:
        return default
    if type(value) is float and math.isfinite(value):
        return value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise InputError(f"{name} {value!r} is not an ISO 8601 time") from None
        # A time without a zone is taken as UTC, not as this machine's local time.
        return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()
    return _number(value, name, -math.inf, math.inf)


def _properties(properties) -> dict:
    if properties is None:
        return {}
    if not isinstance(properties, dict) or not all(isinstance(name, str) for name in properties):
        raise InputError("properties must be a mapping with text keys")
    return dict(properties)
