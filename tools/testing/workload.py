"""Deterministic workloads, a dict model of the store, and the after-crash verdict (tests only).

A batch is a pure function of (seed, number), so a parent process knows what a killed child was writing from the
last `BEGIN n` / `ACK n` line alone (the RocksDB crash test's expected state, without a file). A batch writes
plain records, counters, raw chunks (some stored with turns, which the raw passage index indexes), and
(tools.testing.derived) text documents and graph nodes and edges in the same store batch, so flushes and
compactions write text.postings, graph.csr and raw.passages segments too. `verify_recovery` is the one rule every
crash test applies: every acknowledged batch present, the batch in flight all or nothing, nothing else (records,
counters, raw chunks, and every text ranking and graph answer and raw passage ranking the model predicts),
`check_store` without problems before and after recovery, and the same records from a second writer open and from
a reader.
"""

from __future__ import annotations

import copy
import hashlib
import os
import random

from engine.format import CURRENT_FILE, GC_LOCK_FILE, WRITER_LOCK_FILE
from tools.testing.derived import (DERIVED_COUNTERS, DerivedModel, apply_derived, derived_operations, expected_passages,
                                   read_graph, read_passages, read_text, turn_chunk)

TABLES = ("test.chunk", "test.doc", "test.edge")
COUNTERS = ("doc", "edge")
KEYS_PER_TABLE = 24
KEYS = tuple(f"k{index:03d}" for index in range(KEYS_PER_TABLE))
# A child killed a moment ago may still hold LOCK while the kernel tears it down.
VERIFY_WAIT_SECONDS = 10.0
BIG_VALUE_BYTES = 40_000
# Recovery's failpoints must be reached whatever the seed (a run of 60 batches without a random reopen
# happens for one seed in eleven).
REOPEN_AT_LEAST_EVERY = 20
REBUILD_AT_LEAST_EVERY = 25  # likewise for the failpoints of a rebuild
TIER_FANOUT = 2  # the workload's segments are tiny: merged two at a time, so that merges happen
RAW_POOL = 12  # larger than a WAL block: the batch is split into FIRST/MIDDLE/LAST fragments
TURN_POOL = 8  # chunks of text stored with turns: the raw passage index (engine/raw/passage_kind.py)


def batch_operations(seed: int, number: int, big_values: bool = True, dense: bool = False) -> list:
    """The operations of batch `number`: ("put", table, key, value) | ("delete", table, key) |
    ("allocate", counter, count, table, key), the last storing the allocated first id under (table, key);
    text and graph operations (tools.testing.derived, `dense` for more); raw chunk puts and releases."""
    rng = random.Random(f"batch:{seed}:{number}")
    operations = []
    for index in range(rng.randint(1, 6)):
        table, key = rng.choice(TABLES), rng.choice(KEYS)
        roll = rng.random()
        if roll < 0.15:
            operations.append(("delete", table, key))
        elif roll < 0.27:
            operations.append(("allocate", rng.choice(COUNTERS), rng.randint(1, 5), table, key))
        else:
            operations.append(("put", table, key, _value(rng, number, index, big_values)))
    operations += derived_operations(rng, number, dense)
    if rng.random() < 0.15:
        # Raw chunks from a small pool (a put of stored bytes adds a reference), so blobs stay few: a blob is
        # made durable before the batch naming it commits, and deleted after the batch releasing it last.
        operations.append(("raw_put", raw_chunk(seed, rng.randrange(RAW_POOL))))
        for _ in range(rng.randint(0, 2)):
            operations.append(("raw_release", raw_chunk(seed, rng.randrange(RAW_POOL))))
    if rng.random() < 0.15:
        operations.append(("raw_turns_put", turn_chunk(seed, rng.randrange(TURN_POOL))))
        if rng.random() < 0.5:
            operations.append(("raw_turns_release", turn_chunk(seed, rng.randrange(TURN_POOL))))
    # Every batch leaves a mark only it can leave, so "present" and "absent" are distinguishable.
    operations.append(("put", "test.doc", "last", {"batch": number}))
    return operations


def raw_chunk(seed: int, number: int) -> bytes:
    """Raw chunk `number` of the seed's pool (the same bytes in every process)."""
    rng = random.Random(f"raw:{seed}:{number}")
    return f"chunk {number}: ".encode() + rng.randbytes(rng.randint(16, 2048))


def turn_spans(data: bytes) -> list:
    """The turns of a chunk of turn_chunk: one per line."""
    turns, offset = [], 0
    for number, line in enumerate(data.split(b"\n")[:-1]):
        turns.append({"speaker": None, "ts": None, "source_id": f"crash:{number}", "offset": offset,
                      "length": len(line), "extra": None})
        offset += len(line) + 1
    return turns


def raw_id(data: bytes) -> str:
    from engine.raw import raw_id_for

    return raw_id_for(hashlib.sha256(data).hexdigest())


def _value(rng: random.Random, number: int, index: int, big_values: bool):
    kind = rng.random()
    if big_values and kind < 0.04:
        return {"batch": number, "blob": rng.randbytes(BIG_VALUE_BYTES)}
    if kind < 0.3:
        return {"batch": number, "index": index, "text": "记忆 memory " * rng.randint(0, 20)}
    if kind < 0.5:
        return [number, index, rng.random(), -rng.randint(0, 1 << 40), None, True]
    if kind < 0.7:
        return rng.randbytes(rng.randint(0, 300))
    if kind < 0.8:
        return f"batch {number}"
    if kind < 0.9:
        return number * 1000 + index
    return None


def apply_to_store(store, operations: list, joined: bool = False) -> None:
    """One batch of `operations`; joined: as two batches committed by one Store.transaction (as `memctl
    remember` commits its ingest and its conversion), which must be just as atomic."""
    if not any(operation[0].startswith("raw_") for operation in operations):
        if joined and len(operations) > 1:
            half = len(operations) // 2
            with store.transaction():
                apply_to_store(store, operations[:half])
                apply_to_store(store, operations[half:])
            return
        with store.batch() as batch:
            _apply_operations(store, batch, None, operations)
        return
    from engine.raw import RawStore

    with RawStore(store).batch() as writer:
        _apply_operations(store, writer.batch, writer, operations)


def _apply_operations(store, batch, raw_writer, operations: list) -> None:
    for operation in operations:
        if apply_derived(store, batch, operation):
            continue
        if operation[0] == "put":
            batch.put(operation[1], operation[2], operation[3])
        elif operation[0] == "delete":
            batch.delete(operation[1], operation[2])
        elif operation[0] == "allocate":
            first = batch.allocate(operation[1], operation[2])
            batch.put(operation[3], operation[4], {"id": first, "counter": operation[1]})
        elif operation[0] == "raw_put":
            raw_writer.put(operation[1], {"source": "crash workload"})
        elif operation[0] == "raw_turns_put":
            raw_writer.put_turns(operation[1], {}, "crash", turn_spans(operation[1]))
        elif operation[0] == "raw_turns_release":  # every reference: a chunk's turns each hold one
            record = raw_writer.get(raw_id(operation[1]))
            if record is not None:
                raw_writer.release(raw_id(operation[1]), record["refcount"])
        elif raw_writer.get(raw_id(operation[1])) is not None:
            raw_writer.release(raw_id(operation[1]))


class Model:
    """What the store must hold: records {(table, key): value}, counters, raw chunks, text and graph."""

    def __init__(self):
        self.records: dict = {}
        self.counters: dict = {name: 0 for name in COUNTERS}
        self.raw: dict = {}  # raw_id -> [bytes, reference count]
        self.turn_chunks: set = set()  # raw_ids of those stored with turns
        self.derived = DerivedModel(self.counters)
        self.applied: list = []  # batch numbers, in order

    def copy(self) -> "Model":
        return copy.deepcopy(self)

    def apply(self, operations: list, number: int | None = None) -> None:
        for operation in operations:
            if self.derived.apply(operation, self.counters):
                continue
            if operation[0] == "put":
                self.records[(operation[1], operation[2])] = operation[3]
            elif operation[0] == "delete":
                self.records.pop((operation[1], operation[2]), None)
            elif operation[0] == "raw_put":
                self.raw.setdefault(raw_id(operation[1]), [operation[1], 0])[1] += 1
            elif operation[0] == "raw_turns_put":
                identifier = raw_id(operation[1])
                if identifier not in self.turn_chunks:  # stored again: the writer adds nothing
                    self.raw.setdefault(identifier, [operation[1], 0])[1] += len(turn_spans(operation[1]))
                    self.turn_chunks.add(identifier)
            elif operation[0] == "raw_turns_release":
                if self.raw.pop(raw_id(operation[1]), None) is not None:
                    self.turn_chunks.discard(raw_id(operation[1]))
            elif operation[0] == "raw_release":
                entry = self.raw.get(raw_id(operation[1]))
                if entry is not None:
                    entry[1] -= 1
                    if entry[1] == 0:
                        del self.raw[raw_id(operation[1])]
            else:
                first = self.counters[operation[1]]
                self.counters[operation[1]] = first + operation[2]
                self.records[(operation[3], operation[4])] = {"id": first, "counter": operation[1]}
        if number is not None:
            self.applied.append(number)

    def digest(self) -> str:
        """Identifies what the model holds (equal digests: equal states)."""
        content = (sorted(self.records.items(), key=repr), sorted(self.counters.items()),
                   sorted((identifier, entry[1]) for identifier, entry in self.raw.items()), sorted(self.turn_chunks),
                   sorted(self.derived.documents.items()), sorted(self.derived.nodes.items()),
                   sorted(self.derived.edges.items()))
        return hashlib.sha256(repr(content).encode()).hexdigest()

    def state(self) -> dict:
        return {"records": dict(self.records), "counters": dict(self.counters),
                "raw": {identifier: tuple(entry) for identifier, entry in self.raw.items()},
                "text": self.derived.text_state(), "graph": self.derived.graph_state(),
                "passages": expected_passages({identifier: self.raw[identifier][0] for identifier in self.turn_chunks})}


def read_state(store, derived_answers: bool = True) -> dict:
    """Everything a reader can observe through scan, get, counters, raw chunks, text search and graph
    traversals (unless not `derived_answers`); get and scan must agree."""
    records = {}
    for table in TABLES:
        previous = None
        for key, value in store.scan(table):
            if previous is not None and key <= previous:
                raise AssertionError(f"scan of {table} out of order: {previous!r} then {key!r}")
            previous = key
            records[(table, key)] = value
    for table in TABLES:
        for key in KEYS + ("last",):
            value = store.get(table, key)
            expected = records.get((table, key))
            if value != expected:
                raise AssertionError(f"get({table!r}, {key!r}) = {_short(value)} but scan says {_short(expected)}")
    state = {"records": records, "counters": {name: store.counter(name) for name in COUNTERS + DERIVED_COUNTERS},
             "raw": read_raw(store), "text": {}, "graph": {}, "passages": {}}
    if derived_answers:
        state["text"], state["graph"], state["passages"] = read_text(store), read_graph(store), read_passages(store)
    return state


def read_raw(store) -> dict:
    """{raw_id: (bytes, reference count)}: every chunk a record names must read back whole."""
    from engine.raw import RawStore

    raw = RawStore(store)
    return {identifier: (raw.read(identifier), record["refcount"]) for identifier, record in raw.scan()}


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 120 else text[:117] + "..."


def describe_difference(expected: dict, found: dict) -> str:
    lines = []
    for key in sorted(set(expected["records"]) | set(found["records"]), key=repr):
        want, got = expected["records"].get(key, "<absent>"), found["records"].get(key, "<absent>")
        if want != got:
            lines.append(f"  {key}: expected {_short(want)}, found {_short(got)}")
    if expected["counters"] != found["counters"]:
        lines.append(f"  counters: expected {expected['counters']}, found {found['counters']}")
    for identifier in sorted(set(expected["raw"]) | set(found["raw"])):
        want, got = expected["raw"].get(identifier), found["raw"].get(identifier)
        if want != got:
            lines.append(f"  raw {identifier}: expected refcount {want and want[1]}, found {got and got[1]}")
    for section in ("text", "graph"):
        for part in sorted(set(expected[section]) | set(found[section])):
            want, got = expected[section].get(part, {}), found[section].get(part, {})
            for key in sorted(set(want) | set(got), key=repr):
                if want.get(key, "<absent>") != got.get(key, "<absent>"):
                    lines.append(f"  {section} {part} {key!r}: expected {_short(want.get(key, '<absent>'))}, "
                                 f"found {_short(got.get(key, '<absent>'))}")
    for label in sorted(set(expected["passages"]) | set(found["passages"])):
        want, got = expected["passages"].get(label, "<absent>"), found["passages"].get(label, "<absent>")
        if want != got:
            lines.append(f"  passages {label!r}: expected {_short(want)}, found {_short(got)}")
    return "\n".join(lines[:12]) + (f"\n  … {len(lines) - 12} more" if len(lines) > 12 else "")


class RecoveryFailure(AssertionError):
    pass


def verify_recovery(path: str, acknowledged: Model, pending: list | None = None,
                    pending_number: int | None = None, check_before: bool = True,
                    verdicts: dict | None = None) -> Model:
    """Open `path` after a crash and apply the crash-test rule. Returns the model the store matched
    (`acknowledged`, or it plus the pending batch)."""
    candidates = [acknowledged]
    if pending is not None:
        with_pending = acknowledged.copy()
        with_pending.apply(pending, pending_number)
        candidates.append(with_pending)
    return verify_alternatives(path, candidates, check_before, verdicts)


def verify_alternatives(path: str, candidates: list, check_before: bool = True,
                        verdicts: dict | None = None) -> Model:
    """The crash-test rule with the allowed outcomes spelled out: the store must equal one of `candidates`
    (models; the first is the one without anything in flight).

    `verdicts`: a dict kept across the calls of a sweep whose stores are thrown away after verification.
    The same bytes on disk with the same allowed outcomes get the verdict they got before, so the many
    cases that leave identical stores (most injected errors, most damage variants of one crash point)
    are verified once."""
    if verdicts is None:
        return _verify(path, candidates, check_before)
    key = (_directory_digest(path), tuple(model.digest() for model in candidates), check_before)
    if key not in verdicts:
        try:
            verdicts[key] = [model.digest() for model in candidates].index(
                _verify(path, candidates, check_before).digest())
        except Exception as error:  # the same failure for the same bytes
            verdicts[key] = error
    if isinstance(verdicts[key], Exception):
        raise verdicts[key]
    return candidates[verdicts[key]]


def _directory_digest(path: str) -> str:
    """sha256 over the names and contents of every file under `path` but the lock files."""
    digest = hashlib.sha256()
    for directory, subdirectories, files in sorted(os.walk(path)):
        subdirectories.sort()
        for name in sorted(files):
            if directory == path and name in (WRITER_LOCK_FILE, GC_LOCK_FILE):
                continue
            full = os.path.join(directory, name)
            digest.update(os.path.relpath(full, path).encode() + b"\0")
            with open(full, "rb") as handle:
                digest.update(hashlib.sha256(handle.read()).digest())
    return digest.hexdigest()


def _verify(path: str, candidates: list, check_before: bool) -> Model:
    from engine.check import check_store
    from engine.store import Store

    if not os.path.exists(os.path.join(path, CURRENT_FILE)):
        # A crash while the store was being created: acceptable only if nothing was ever acknowledged.
        if candidates[0].applied:
            raise RecoveryFailure(f"CURRENT is gone but batches {candidates[0].applied[:5]}… were acknowledged")
    elif check_before:
        _require_clean(check_store(path), "check_store before recovery")
    store = Store.open(path, writable=True, wait=VERIFY_WAIT_SECONDS, holder="crash verifier")
    try:
        found = read_state(store)
        _collect_raw_garbage(store, found)
        judged = _segment_names(store)
    finally:
        store.close()
    matched = next((model for model in candidates if model.state() == found), None)
    if matched is None:
        closest = min(candidates, key=lambda model: abs(len(model.records) - len(found["records"])))
        raise RecoveryFailure(
            f"recovered state matches none of the allowed ones (batches {[m.applied[-2:] for m in candidates]}):\n"
            f"{describe_difference(closest.state(), found)}")
    _require_clean(check_store(path), "check_store after recovery")
    # Every record again. The text and graph answers are a function of the records and the segments, both
    # judged by the first read: a second open over the same segments asks the derived kinds nothing.
    for writable in (True, False):
        again = Store.open(path, writable=writable, wait=VERIFY_WAIT_SECONDS, holder="crash verifier (second open)")
        try:
            derived_answers = _segment_names(again) != judged
            expected = found if derived_answers else {**found, "text": {}, "graph": {}, "passages": {}}
            second = read_state(again, derived_answers)
        finally:
            again.close()
        if second != expected:
            raise RecoveryFailure(f"a second {'writer' if writable else 'reader'} open answers differently:\n"
                                  f"{describe_difference(expected, second)}")
    return matched


def _segment_names(store) -> list:
    return [entry["name"] for entry in store.manifest.segments]


def _collect_raw_garbage(store, found: dict) -> None:
    """Blobs a crash orphaned go; every blob a record names must stay."""
    from engine.raw import RawStore

    RawStore(store).gc()
    if read_raw(store) != found["raw"]:
        raise RecoveryFailure("raw gc changed what the raw chunks read")


def _require_clean(report, label: str) -> None:
    if report.problems:
        raise RecoveryFailure(f"{label}: {report.problems}")


def schedule(seed: int, start: int, count: int):
    """Steps after batch numbers start..start+count-1: ("batch", n) | ("flush",) | ("merge_tiers", fanout)
    | ("compact",) | ("rebuild",) | ("reopen",)."""
    for number in range(start, start + count):
        yield ("batch", number)
        roll = random.Random(f"step:{seed}:{number}").random()
        if roll < 0.10:  # a tier merge follows each flush step
            yield ("flush",)
            yield ("merge_tiers", TIER_FANOUT)
        elif roll < 0.20:
            yield ("compact",)
        elif roll < 0.24 or number % REOPEN_AT_LEAST_EVERY == 0:
            yield ("reopen",)
        elif roll < 0.28 or number % REBUILD_AT_LEAST_EVERY == 0:
            yield ("rebuild",)


class Progress:
    """Follows a child's `BEGIN n` / `ACK n` lines: the acknowledged model and the batch in flight."""

    def __init__(self, seed: int, model: Model | None = None):
        self.seed = seed
        self.model = model if model is not None else Model()
        self.pending: list | None = None
        self.pending_number: int | None = None

    def emit(self, line: str) -> None:
        word, _, rest = line.partition(" ")
        if word == "BEGIN":
            self.pending_number = int(rest)
            self.pending = batch_operations(self.seed, self.pending_number)
        elif word == "ACK":
            if int(rest) != self.pending_number:
                raise AssertionError(f"ACK {rest} without BEGIN {rest}")
            self.model.apply(self.pending, self.pending_number)
            self.pending = self.pending_number = None

    def next_number(self) -> int:
        return (self.model.applied[-1] if self.model.applied else 0) + 1
