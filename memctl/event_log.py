"""The event log (seed 001 §9.3): what changed in the memory, in commit order, for another agent to tail.

An event is written by `append` into the store batch of the change it describes, so both are durable together
or neither is (one WAL record). Table `event.log`: key = the event's sequence number as 12 decimal digits
(key order is sequence order), value = [type, at (store time, epoch seconds), payload]; counter `event.seq`
hands the numbers out, so they increase by one per event across processes (one writer at a time).

Events stay small (the store's size counts every byte): one NodeCreated and one EdgeCreated per commit, each
naming the internal ids the commit created as one run, {"first": id, "count": n} (`read` adds their keys when
asked). MANIFEST.spec §16 gives the layout.
"""

from __future__ import annotations

import time
from typing import NamedTuple

LOG_TABLE = "event.log"
SEQUENCE_COUNTER = "event.seq"
SEQUENCE_DIGITS = 12

EVENT_TYPES = ("NodeCreated", "EdgeCreated", "WeightUpdated", "ConflictDetected", "FactPromoted", "FactDemoted",
               "Consolidated", "Archived")
CREATED_KINDS = {"NodeCreated": "node", "EdgeCreated": "edge"}


class Event(NamedTuple):
    sequence: int
    type: str
    at: float
    payload: dict

    def as_dict(self) -> dict:
        from datetime import datetime, timezone

        moment = datetime.fromtimestamp(self.at, timezone.utc).isoformat(timespec="milliseconds")
        return {"seq": self.sequence, "type": self.type, "at": moment.replace("+00:00", "Z"),
                "payload": self.payload}


def append(batch, event_type: str, payload: dict, at: float | None = None) -> int:
    """Add an event to `batch` (the engine store batch of the change it describes; a GraphBatch's .batch);
    returns its sequence number. at: the store time, by default now."""
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r} (known: {', '.join(EVENT_TYPES)})")
    sequence = batch.allocate(SEQUENCE_COUNTER) + 1
    moment = time.time() if at is None else at
    batch.put(LOG_TABLE, f"{sequence:0{SEQUENCE_DIGITS}d}", [event_type, round(moment, 3), payload])
    return sequence


def append_created(writer) -> None:
    """NodeCreated and EdgeCreated for what the GraphBatch `writer` created (nothing for none), at its clock."""
    for event_type, kind in CREATED_KINDS.items():
        ids = writer.created_ids(kind)
        if ids:
            append(writer.batch, event_type, {"first": ids.start, "count": len(ids)}, writer.graph.clock())


def check_types(types) -> None:
    """InputError naming an unknown event type of `types` (None: all)."""
    from engine.errors import InputError

    unknown = [name for name in types or () if name not in EVENT_TYPES]
    if unknown:
        raise InputError(f"unknown event type {unknown[0]!r} (known: {', '.join(EVENT_TYPES)})", where="--type")


def last_sequence(store) -> int:
    """The sequence number of the newest event (0: none yet)."""
    return store.counter(SEQUENCE_COUNTER)


def read(store, after: int = 0, since: float | None = None, types=None, keys: bool = False):
    """The events of a store snapshot with a sequence number above `after`, recorded at `since` or later,
    of `types` (None: all), in sequence order; keys: NodeCreated / EdgeCreated name their keys as well."""
    wanted = None if types is None else set(types)
    start = f"{after:0{SEQUENCE_DIGITS}d}"
    graph = None
    for key, (event_type, at, payload) in store.scan(LOG_TABLE):
        if key <= start or (since is not None and at < since) or (wanted is not None and event_type not in wanted):
            continue
        event = Event(int(key), event_type, at, payload)
        if keys and event_type in CREATED_KINDS:
            if graph is None:
                from engine.graph.api import GraphStore

                graph = GraphStore(store)
            event = _with_keys(graph, event)
        yield event


def follow(open_reader, after: int = 0, since: float | None = None, types=None, keys: bool = False,
           interval: float = 0.5, sleep=time.sleep):
    """read() from a fresh reader snapshot every `interval` seconds, forever: the events committed since the
    last poll, in order. open_reader() opens a reader Store (no lock: the writer is never blocked)."""
    while True:
        store = open_reader()
        try:
            newest = last_sequence(store)
            if newest > after:
                yield from read(store, after, since, types, keys)
                after = newest
        finally:
            store.close()
        sleep(interval)


def _with_keys(graph, event: Event) -> Event:
    """The event with the keys of the nodes or edges it names under payload["keys"] (None for one deleted
    since)."""
    ids = list(range(event.payload["first"], event.payload["first"] + event.payload["count"]))
    rows = graph.nodes_by_id(ids) if CREATED_KINDS[event.type] == "node" else graph.edges_by_id(ids)
    return event._replace(payload={**event.payload, "keys": [None if row is None else row.key for row in rows]})
