"""Processes for the multi-process tests: a writer, a snapshot-checking reader, a lock holder (tests only).

    python -m tools.testing.rwchild writer STORE SECONDS      commit, flush, compact until SECONDS pass
    python -m tools.testing.rwchild reader STORE STOP_FILE    open, check the snapshot, repeat until STOP_FILE
    python -m tools.testing.rwchild hold STORE HOLDER         take the writer lock, print HOLDING, sleep

The writer's batch n adds `1 + n % 5` records that only it writes and sets test.meta/last to n, so a reader
that sees last = S knows the exact records its snapshot must hold: those of batches 1..S, no more, no
fewer. Every reader open must see exactly that, with S never decreasing from one open to the next.
"""

from __future__ import annotations

import os
import sys
import time

TABLE = "test.rw"
META = "test.meta"
FLUSH_EVERY = 40
COMPACT_EVERY = 150


def records_of(number: int) -> dict:
    return {f"r{number:07d}-{index}": {"batch": number, "index": index, "pad": "x" * (number % 50)}
            for index in range(1 + number % 5)}


def expected_count(last: int) -> int:
    return sum(1 + number % 5 for number in range(1, last + 1))


def writer(path: str, seconds: float) -> int:
    from engine.store import Store

    store = Store.open(path, writable=True, wait=10.0, holder="memctl rw writer")
    deadline = time.monotonic() + seconds
    number = 0
    while time.monotonic() < deadline:
        number += 1
        with store.batch() as batch:
            for key, value in records_of(number).items():
                batch.put(TABLE, key, value)
            batch.put(META, "last", number)
        if number % COMPACT_EVERY == 0:
            store.compact()
        elif number % FLUSH_EVERY == 0:
            store.flush()
    store.close()
    print(f"DONE {number}", flush=True)
    return 0


def reader(path: str, stop_file: str) -> int:
    from engine.store import Store

    previous = 0
    opens = 0
    while not os.path.exists(stop_file):
        store = Store.open(path, writable=False)
        try:
            last = store.get(META, "last") or 0
            problem = _check_snapshot(store, last, previous)
        finally:
            store.close()
        if problem:
            print(f"BAD after {opens} opens: {problem}", flush=True)
            return 1
        previous = last
        opens += 1
    print(f"OK {opens} {previous}", flush=True)
    return 0


def _check_snapshot(store, last: int, previous: int) -> str:
    if last < previous:
        return f"snapshot went back from batch {previous} to {last}"
    found = dict(store.scan(TABLE))
    if len(found) != expected_count(last):
        return f"snapshot at batch {last} holds {len(found)} records, expected {expected_count(last)}"
    for key, value in found.items():
        if value["batch"] > last or records_of(value["batch"]).get(key) != value:
            return f"record {key}={value!r} is outside the snapshot at batch {last}"
    if last and store.get(TABLE, f"r{last:07d}-0") != records_of(last)[f"r{last:07d}-0"]:
        return f"get misses the snapshot's last batch {last}"
    if store.get(TABLE, f"r{last + 1:07d}-0") is not None:
        return f"get sees batch {last + 1}, after the snapshot"
    return ""


def hold(path: str, holder: str) -> int:
    from engine.store import Store

    store = Store.open(path, writable=True, holder=holder)
    print("HOLDING", flush=True)
    sys.stdin.read()  # until the parent closes our stdin (or kills us)
    store.close()
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    role, path = argv[0], argv[1]
    if role == "writer":
        return writer(path, float(argv[2]))
    if role == "reader":
        return reader(path, argv[2])
    return hold(path, argv[2])


if __name__ == "__main__":
    sys.exit(main())
