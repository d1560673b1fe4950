"""GraphBatch: the graph writes of one store batch (one WAL record, one fsync), reading its own pending writes,
and the bulk paths an import's runs of new nodes and edges take."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

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
from engine.graph.keys import dead_key, edge_key
from engine.graph.model import edge_record, node_record
from engine.graph.validate import (
    all_of_type,
    check_key,
    epoch_seconds,
    finite_number,
    plain_keys,
    plain_numbers,
    plain_properties,
    property_map,
)

if TYPE_CHECKING:
    from engine.graph.api import GraphStore
    from engine.graph.memo import ImportMemo

TYPE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_TYPE_COUNTERS = {"node": GRAPH_NODE_TYPE_COUNTER, "edge": GRAPH_EDGE_TYPE_COUNTER}
_ID_COUNTERS = {"node": GRAPH_NODE_COUNTER, "edge": GRAPH_EDGE_COUNTER}
_ABSENT = object()


class GraphBatch:
    """Graph writes collected into one store batch, reading its own pending writes."""

    def __init__(self, graph: GraphStore, batch, memo: ImportMemo | None = None):
        self.graph = graph
        self.store = graph.store
        self.batch = batch
        self.pending: dict = {}  # (table, key) -> value written in this batch (None: purged)
        self.memo = memo
        self._next_ids: dict = {}
        self._first_ids: dict = {}

    def _get(self, table: str, key: str):
        if self.memo is not None:  # what the memo keeps never goes to `pending`
            found, record = self._memo_record(table, key)
            if found:
                return record
        pending = self.pending.get((table, key), _ABSENT)
        return self.store.get(table, key) if pending is _ABSENT else pending

    def _memo_record(self, table: str, key: str) -> tuple[bool, dict | None]:
        """(known, record) of a node or edge key from the memo, the record reduced to the fields add_node and
        add_edge read back; known is False when only the store can tell."""
        if table == GRAPH_NODE_TABLE:
            known, entry = self.memo.node(key)
            return known, None if entry is None else {"id": entry[0], "created_at": entry[1]}
        if table == GRAPH_EDGE_TABLE:
            known, entry = self.memo.edge(key)
            return known, None if entry is None else {"id": entry[0], "src": entry[1], "dst": entry[2],
                                                      "created_at": entry[3]}
        return False, None

    def _remember(self, table: str, key: str, value) -> bool:
        """Tell the memo what a record written now means for later lines; False when it does not keep it."""
        if table == GRAPH_NODE_TABLE:
            return self.memo.remember_node(key, (value["id"], value["created_at"]) if _live(value) else None)
        if table == GRAPH_EDGE_TABLE:
            return self.memo.remember_edge(key, (value["id"], value["src"], value["dst"], value["created_at"])
                                           if _live(value) else None)
        return False

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

    def created_ids(self, kind: str) -> range:
        """The internal ids of the nodes ("node") or edges ("edge") this batch has created so far: ids are
        allocated for new records only and never reused, so they are one run, whatever else the batch
        updated."""
        counter = _ID_COUNTERS[kind]
        first = self._first_ids.get(counter)
        return range(0) if first is None else range(first, self._next_ids[counter])

    def _put(self, table: str, key: str, value) -> None:
        self.batch.put(table, key, value)
        # An import's memo may run ahead of what is committed: a failed batch ends the import and its memo.
        if self.memo is None or not self._remember(table, key, value):
            self.pending[(table, key)] = value

    def _delete(self, table: str, key: str) -> None:
        self.batch.delete(table, key)
        if self.memo is None or not self._remember(table, key, None):
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
        check_key(key, "node key")
        now = self.graph.clock()
        existing = self.node(key)
        record = node_record(existing["id"] if existing else self._allocate(GRAPH_NODE_COUNTER),
                              self.type_id("node", node_type),
                              existing["created_at"] if existing else epoch_seconds(created_at, now, "created_at"),
                              now, property_map(properties))
        self._put(GRAPH_NODE_TABLE, key, record)
        return record["id"]

    def update_node(self, key: str, node_type: str | None = None, properties: dict | None = None,
                    merge: bool = True) -> int:
        existing = self._require_node(key)
        record = dict(existing)
        if node_type is not None:
            record["type"] = self.type_id("node", node_type)
        if properties is not None:
            record["props"] = {**existing.get("props", {}), **property_map(properties)} if merge else \
                property_map(properties)
            if not record["props"]:
                del record["props"]  # none is written as no field, as node_record writes it
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
        check_key(key, "node key")
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
        check_key(key, "edge key")
        now = self.graph.clock()
        existing = self.edge(key)
        if existing and (existing["src"], existing["dst"]) != (source_record["id"], target_record["id"]):
            raise InputError(f"edge {key!r} already joins other nodes; delete it first")
        record = edge_record(existing["id"] if existing else self._allocate(GRAPH_EDGE_COUNTER),
                              source_record["id"], target_record["id"], self.type_id("edge", edge_type),
                              finite_number(weight, "weight", 0.0, math.inf),
                              finite_number(confidence, "confidence", 0.0, 1.0), epoch_seconds(ts, now, "ts"),
                              existing["created_at"] if existing else now, now, epoch_seconds(since, None, "since"),
                              epoch_seconds(until, None, "until"), property_map(properties), key != default_key)
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
                record["weight"] = finite_number(value, "weight", 0.0, math.inf)
            elif name == "confidence":
                record["confidence"] = finite_number(value, "confidence", 0.0, 1.0)
            elif name == "ts":
                record["ts"] = epoch_seconds(value, self.graph.clock(), name)  # as add_edge: now when none
            elif name in ("since", "until"):
                moment = epoch_seconds(value, None, name)
                if moment is None:
                    record.pop(name, None)  # cleared: no field, as edge_record writes a time there is none of
                else:
                    record[name] = moment
            elif name == "properties":
                record["props"] = {**existing.get("props", {}), **property_map(value)}
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
        check_key(key, "edge key")
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
        if not (plain_keys(keys, distinct=True) and memo.all_absent(memo.nodes, keys)
                and plain_properties(properties)):
            return False
        times = plain_numbers(created, -math.inf, math.inf, now)
        type_ids = None if times is None else self._type_ids_at_once("node", node_types)  # registers new types
        if type_ids is None:
            return False
        first = self._allocate_run(GRAPH_NODE_COUNTER, len(rows))
        records = [node_record(first + index, type_ids[node_type], moment, now, dict(value) if value else None)
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
        if not (plain_keys(sources) and plain_keys(targets) and all_of_type(edge_types, str)):
            return False
        ends = list(map(memo.nodes.get, sources)), list(map(memo.nodes.get, targets))  # (id, created_at)
        if None in ends[0] or None in ends[1]:
            return False
        keys = list(map(edge_key, sources, edge_types, targets))
        if not (plain_keys(keys, distinct=True) and memo.all_absent(memo.edges, keys)
                and plain_properties(properties)):
            return False
        weights, confidences = plain_numbers(weights, 0.0, math.inf), plain_numbers(confidences, 0.0, 1.0)
        times = plain_numbers(times, -math.inf, math.inf, now)
        if weights is None or confidences is None or times is None:
            return False
        type_ids = self._type_ids_at_once("edge", edge_types)  # registers new types: the last check
        if type_ids is None:
            return False
        first = self._allocate_run(GRAPH_EDGE_COUNTER, len(rows))
        records = [edge_record(first + index, source[0], target[0], type_ids[name], weight, confidence, moment, now,
                                now, None, None, dict(value) if value else None, False)
                   for index, (source, target, name, weight, confidence, moment, value)
                   in enumerate(zip(*ends, edge_types, weights, confidences, times, properties))]
        self.batch.put_many(GRAPH_EDGE_TABLE, keys, records)
        memo.edges.update(zip(keys, [(record["id"], record["src"], record["dst"], now) for record in records]))
        return True

    def _type_ids_at_once(self, kind: str, names) -> dict | None:
        """{name: id} for `names`, registering new ones in order of first use; None if one is not a valid name
        or they would be too many (nothing registered then)."""
        if not all_of_type(names, str):
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


def _live(record: dict | None) -> bool:
    return record is not None and not record.get("deleted")
