"""A small store with known contents, and a way to read any store whole: the oracle of damage tests.

`build` writes batches (plain records, text documents, graph nodes and edges), flushes some of them into
segments and leaves the rest in the WAL, recording the store's answers after every batch (checked against
the workload model), so a test that damages a file knows every answer a correct store may give.
`fingerprint` reads every record of every table (whatever tables the store has), its counters, and what the
derived kinds serve (text search, graph neighbours and k-hop); `files_by_kind` groups a store's files as
damage tests address them: "wal", "segment:<kind>" for each segment kind its MANIFEST names (records,
text.postings, graph.csr), "manifest" and "current".
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field

from engine.format import (
    CURRENT_FILE,
    SEGMENT_DIR,
    WAL_BLOCK_SIZE,
    WAL_DIR,
    WAL_HEADER_SIZE,
    WAL_RECORD_HEADER_FORMAT,
    WAL_RECORD_HEADER_SIZE,
    WAL_TYPE_FIRST,
    WAL_TYPE_FULL,
    WAL_TYPE_LAST,
)
from tools.testing.derived import DERIVED_COUNTERS, read_graph, read_text
from tools.testing.workload import COUNTERS, TABLES, Model, apply_to_store, batch_operations, describe_difference

_record_header = struct.Struct(WAL_RECORD_HEADER_FORMAT)


@dataclass
class Reference:
    path: str
    seed: int
    flushed: int  # batches folded into segments
    states: list = field(default_factory=list)  # states[n] = the fingerprint after n batches
    model: Model = field(default_factory=Model)  # after the last batch

    def final(self) -> dict:
        return self.states[-1]


def build(path: str, seed: int, flushed: int = 10, tail: int = 6, big_tail: bool = False,
          compact: bool = True, unchecked: int = 2) -> Reference:
    """Batches 1..flushed go into segments (a flush halfway, then a compaction, or a second flush without
    `compact`), the next `tail` stay in the WAL; `big_tail` makes the second-to-last tail batch span several WAL blocks.
    Every batch writes text documents and graph changes, so every flush writes a segment of each kind. The last
    `unchecked` batches are written by a writer that dies before it closes: the MANIFEST's WAL checkpoint
    (engine/wal_checkpoint.py), published by the writer before it, covers the batches before them only, so a
    cut among them is a torn tail and a cut below them is damage."""
    from engine.store import Store

    model = Model()
    reference = Reference(os.path.abspath(path), seed, flushed)
    store = Store.open(path, writable=True, holder="reference")
    try:
        reference.states.append(fingerprint(store))
        for number in range(1, flushed + tail + 1):
            if number == flushed + tail - unchecked + 1:
                store.close()  # publishes the checkpoint
                store = Store.open(path, writable=True, holder="reference")
            operations = [operation for operation in batch_operations(seed, number, big_values=False, dense=True)
                          if not operation[0].startswith("raw_")]
            if big_tail and number == flushed + tail - 1:
                operations.append(("put", "test.doc", "big", bytes(range(256)) * (3 * WAL_BLOCK_SIZE // 256)))
            apply_to_store(store, operations)
            model.apply(operations, number)
            reference.states.append(_agreeing(store, fingerprint(store), model, number))
            if number == flushed // 2:
                store.flush()
            elif number == flushed:
                store.compact() if compact else store.flush()
        store.fail(RuntimeError("the reference writer dies before it closes"))  # no checkpoint at close
    finally:
        store.close()
    reference.model = model
    return reference


def _agreeing(store, found: dict, model: Model, number: int) -> dict:
    """`found` (a fingerprint), after checking it holds what the workload model predicts: the reference
    store is the oracle of every damage test, so it must be right before anything is damaged."""
    expected = model.state()
    observed = {"records": {key: value for key, value in found["records"].items() if key[0] in TABLES},
                "counters": {name: found["counters"].get(name, 0) for name in expected["counters"]},
                "raw": expected["raw"], "text": read_text(store), "graph": read_graph(store)}
    if observed != expected:
        raise AssertionError(f"the reference store disagrees with the model after batch {number}:\n"
                             f"{describe_difference(expected, observed)}")
    return found


def fingerprint(store, into: dict | None = None, derived_answers: bool = True) -> dict:
    """Every record of every table the store knows, every counter, and (unless not `derived_answers`) the
    answers of the text and graph kinds: what a correct store answers. Filled into `into` as it is read,
    so that a caller whose read failed part-way knows what was served before the failure."""
    found = {} if into is None else into
    tables = set(store.tables)
    for segment in store.records:
        tables.update(segment.tables)
    found["records"] = records = {}
    for table in sorted(tables):
        for key, value in store.scan(table):
            records[(table, key)] = value
            if store.get(table, key) != value:
                raise AssertionError(f"get({table!r}, {key!r}) disagrees with scan")
    found["counters"] = {name: store.counter(name)
                         for name in set(store.counters) | set(COUNTERS) | set(DERIVED_COUNTERS)}
    if derived_answers:
        # The documents, nodes and edges are records, read above: only what the kinds' segments serve remains.
        read_text(store, found.setdefault("text", {}), records=False)
        read_graph(store, found.setdefault("graph", {}), records=False)
    return found


def records_only(full: dict) -> dict:
    """A fingerprint without the derived answers, as fingerprint(store, derived_answers=False) reads it."""
    return {name: value for name, value in full.items() if name not in ("text", "graph")}


def served_part_of(served: dict, full: dict) -> bool:
    """Whether every answer in `served` (a fingerprint cut short by an error) is the same in `full`."""
    for section, answers in served.items():
        expected = full.get(section, {})
        if section in ("text", "graph"):
            if not all(served_part_of({part: found}, expected) for part, found in answers.items()):
                return False
        elif any(key not in expected or expected[key] != value for key, value in answers.items()):
            return False
    return True


def files_by_kind(path: str) -> dict:
    """{"wal": [...], "segment:<kind>": [...], "manifest": [...], "current": [...]}, paths relative to `path`."""
    from engine import manifest as manifest_module

    name = manifest_module.read_current(path)
    manifest = manifest_module.load(path, name)
    found: dict = {"current": [CURRENT_FILE], "manifest": [name]}
    for entry in manifest.segments:
        found.setdefault(f"segment:{entry['kind']}", []).append(os.path.join(SEGMENT_DIR, entry["name"]))
    wal_files = sorted(item for item in os.listdir(os.path.join(path, WAL_DIR)) if item.endswith(".log"))
    found["wal"] = [os.path.join(WAL_DIR, item) for item in wal_files[-1:]]
    return found


def wal_records(data: bytes) -> list[tuple[int, int]]:
    """(start, end) byte ranges of the logical records of a well-formed WAL file, in order."""
    records = []
    position = WAL_HEADER_SIZE
    start = None
    while position + WAL_RECORD_HEADER_SIZE <= len(data):
        left_in_block = WAL_BLOCK_SIZE - position % WAL_BLOCK_SIZE
        if left_in_block < WAL_RECORD_HEADER_SIZE:
            position += left_in_block
            continue
        _crc, length, record_type = _record_header.unpack_from(data, position)
        if record_type in (WAL_TYPE_FULL, WAL_TYPE_FIRST):
            start = position
        position += WAL_RECORD_HEADER_SIZE + length
        if record_type in (WAL_TYPE_FULL, WAL_TYPE_LAST):
            records.append((start, position))
    return records
