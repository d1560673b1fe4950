"""memctl's storage engine against SQLite (stdlib sqlite3, journal_mode=WAL, synchronous=FULL), same logical work.

Measured, each repeated (default 5 times, medians reported) into fresh directories:
  (a) one ~300-byte record per commit          rows/s      target >= 0.8x SQLite
  (b) 1000 records per commit                  rows/s      target >= 0.8x SQLite
  reopen with a 10k-record WAL tail             ms          target <= 50 ms (10 x 1000 and 10,000 x 1 batches)
  point read of random keys                     us/read     target <= 20 us (memtable, after flush, compacted)

SQLite holds the same records as `key TEXT PRIMARY KEY, value BLOB` in a WITHOUT ROWID table (its fastest
key-value layout); values are msgpack-packed on write and unpacked on read, as memctl does inside the engine.

    python tools/bench/engine_bench.py                   # full run, writes tools/bench/RESULTS.md
    python tools/bench/engine_bench.py --scale 0.1 --no-results
    python tools/bench/engine_bench.py --profile reopen-singles
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import shutil
import sqlite3
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(os.path.dirname(HERE)), HERE]

import msgpack  # noqa: E402

from common import interleaved, table, write_section  # noqa: E402
from engine.store import Store  # noqa: E402

TABLE = "bench.item"
WORDS = ("memory graph recall episode fact token budget citation segment ingest tenant store snapshot "
         "compaction journal checksum reader writer flush offset column").split()
TARGET_WRITE_RATIO = 0.8
TARGET_REOPEN_MS = 50.0
TARGET_READ_US = 20.0


def make_records(count: int, seed: int) -> list[tuple[str, dict]]:
    """Deterministic records of about 300 bytes: a random 16-hex-digit key and a small document."""
    rng = random.Random(seed)
    records = []
    for number in range(count):
        words = []
        while sum(len(word) + 1 for word in words) < 250:
            words.append(rng.choice(WORDS))
        records.append(("%016x" % rng.getrandbits(64), {"text": " ".join(words), "n": number, "kind": "note"}))
    return records


def record_bytes(records) -> float:
    return sum(len(key) + len(msgpack.packb(value)) for key, value in records) / len(records)


# --- memctl -------------------------------------------------------------------------------------------------


# A writer that leaves its WAL tail behind, as a crash or a long-lived writer does (a normal close would flush it).
KEEP_TAIL = 1 << 62


def memctl_write(directory: str, records, per_commit: int) -> float:
    store = Store.open(directory, close_flush_bytes=KEEP_TAIL)
    started = time.perf_counter()
    for start in range(0, len(records), per_commit):
        with store.batch() as batch:
            for key, value in records[start: start + per_commit]:
                batch.put(TABLE, key, value)
    elapsed = time.perf_counter() - started
    store.close()
    return elapsed


def memctl_open_time(directory: str, writable: bool) -> float:
    started = time.perf_counter()
    store = Store.open(directory, writable=writable, close_flush_bytes=KEEP_TAIL)
    elapsed = time.perf_counter() - started
    store.close()
    return elapsed


def read_time(get, keys) -> float:
    started = time.perf_counter()
    for key in keys:
        get(key)
    return (time.perf_counter() - started) / len(keys)


def memctl_getter(store: Store):
    get = store.get

    def read(key):
        return get(TABLE, key)

    return read


# --- SQLite -------------------------------------------------------------------------------------------------


def sqlite_connect(path: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.execute("CREATE TABLE IF NOT EXISTS item (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID")
    return connection


def sqlite_write(directory: str, records, per_commit: int) -> float:
    connection = sqlite_connect(os.path.join(directory, "bench.db"))
    pack = msgpack.packb
    started = time.perf_counter()
    for start in range(0, len(records), per_commit):
        connection.execute("BEGIN")
        connection.executemany("INSERT OR REPLACE INTO item VALUES (?, ?)",
                               [(key, pack(value)) for key, value in records[start: start + per_commit]])
        connection.execute("COMMIT")
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed


def sqlite_open_time(path: str, key: str) -> float:
    """Connect and answer one query: SQLite's equivalent of opening a store (it reads its WAL index lazily)."""
    started = time.perf_counter()
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("SELECT value FROM item WHERE key = ?", (key,)).fetchone()
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed


def sqlite_getter(connection: sqlite3.Connection):
    execute = connection.execute
    unpack = msgpack.unpackb

    def read(key):
        row = execute("SELECT value FROM item WHERE key = ?", (key,)).fetchone()
        return unpack(row[0]) if row else None

    return read


# --- scenarios ----------------------------------------------------------------------------------------------


class Bench:
    """One run: every measurement in order, collecting table rows and notes for RESULTS.md."""

    def __init__(self, root: str, repeat_count: int, scale: float):
        self.root = root
        self.repeat_count = repeat_count
        self.single_commits = max(int(2_000 * scale), 10)
        self.batched_records = max(int(200_000 * scale) // 1000 * 1000, 1000)
        self.tail_records = max(int(10_000 * scale) // 1000 * 1000, 1000)
        self.read_records = max(int(100_000 * scale), 1000)
        self.read_count = 20_000
        self.records = make_records(max(self.batched_records, self.read_records, self.single_commits), seed=1)
        self.rows: list[list] = []
        self.notes: list[str] = []

    def fresh(self) -> str:
        return tempfile.mkdtemp(prefix="engine-bench-", dir=self.root)

    def in_fresh_directory(self, write, records, per_commit):
        def run(directory):
            try:
                return write(directory, records, per_commit)
            finally:
                shutil.rmtree(directory, ignore_errors=True)

        return run, self.fresh

    def writes(self, label: str, count: int, per_commit: int) -> None:
        records = self.records[:count]
        timings = interleaved({
            "memctl": self.in_fresh_directory(lambda d, r, p: memctl_write(os.path.join(d, "store"), r, p),
                                              records, per_commit),
            "sqlite": self.in_fresh_directory(sqlite_write, records, per_commit),
        }, self.repeat_count)
        memctl, sqlite = timings["memctl"], timings["sqlite"]
        memctl_rate, sqlite_rate = count / memctl.median, count / sqlite.median
        ratio = memctl_rate / sqlite_rate
        self.rows.append([label, f"{memctl_rate:,.0f} rows/s", f"{sqlite_rate:,.0f} rows/s", f"{ratio:.2f}x",
                          f">= {TARGET_WRITE_RATIO}x", _met(ratio >= TARGET_WRITE_RATIO)])

    def reopen(self, per_commit: int) -> None:
        records = self.records[: self.tail_records]
        directory = self.fresh()
        store_path = os.path.join(directory, "store")
        memctl_write(store_path, records, per_commit)
        sqlite_write(directory, records, per_commit)
        timings = interleaved({
            "writer": lambda: memctl_open_time(store_path, True),
            "reader": lambda: memctl_open_time(store_path, False),
            "sqlite": lambda: sqlite_open_time(os.path.join(directory, "bench.db"), records[0][0]),
        }, self.repeat_count)
        writer, reader, sqlite = timings["writer"], timings["reader"], timings["sqlite"]
        wal_bytes = sum(os.path.getsize(os.path.join(store_path, "wal", name))
                        for name in os.listdir(os.path.join(store_path, "wal")))
        shutil.rmtree(directory, ignore_errors=True)
        batches = len(records) // per_commit
        label = f"reopen, WAL tail of {len(records):,} records as {batches:,} x {per_commit:,}"
        milliseconds = writer.median * 1000
        self.rows.append([label + " (writer)", f"{milliseconds:.1f} ms", f"{sqlite.median * 1000:.2f} ms",
                          f"{writer.median / sqlite.median:.0f}x", f"<= {TARGET_REOPEN_MS:.0f} ms",
                          _met(milliseconds <= TARGET_REOPEN_MS)])
        self.rows.append([label + " (reader)", f"{reader.median * 1000:.1f} ms", "", "", "", ""])
        self.notes.append(f"WAL tail of {len(records):,} records as {batches:,} batches: {wal_bytes / 2**20:.1f} MiB.")

    def reads(self) -> None:
        rng = random.Random(2)
        directory = self.fresh()
        store_path = os.path.join(directory, "store")
        records = self.records[: self.read_records]
        memtable_records = self.records[: self.tail_records]

        memctl_write(store_path, memtable_records, 1000)
        store = Store.open(store_path)
        keys = [rng.choice(memtable_records)[0] for _ in range(self.read_count)]
        self._read_row("point read, memtable", memctl_getter(store), keys, None)
        store.close()
        shutil.rmtree(store_path)

        memctl_write(store_path, records, 1000)
        store = Store.open(store_path)
        store.flush()
        keys = [rng.choice(records)[0] for _ in range(self.read_count)]
        sqlite_write(directory, records, 1000)
        connection = sqlite3.connect(os.path.join(directory, "bench.db"), isolation_level=None)
        sqlite = sqlite_getter(connection)
        segments = len(store.records)
        self._read_row(f"point read, after flush ({segments} segment{'s' if segments > 1 else ''})", memctl_getter(store), keys, sqlite)
        store.compact()
        self._read_row("point read, after compaction (1 segment)", memctl_getter(store), keys, sqlite)
        missing = ["%016x" % rng.getrandbits(64) for _ in range(self.read_count)]
        self._read_row("point read of a missing key, 1 segment", memctl_getter(store), missing, sqlite)
        connection.close()
        store.close()
        shutil.rmtree(directory, ignore_errors=True)
        self.notes.append(f"Point reads: {self.read_count:,} random keys per repetition over {len(records):,} "
                          f"records (memtable: {len(memtable_records):,}); Python call overhead included on both "
                          "sides; SQLite reads by primary key and unpacks the msgpack value.")

    def _read_row(self, label: str, memctl_read, keys, sqlite_read) -> None:
        memctl_read(keys[0])  # the first read of a segment verifies its column CRCs: not a steady-state cost
        contenders = {"memctl": lambda: read_time(memctl_read, keys)}
        if sqlite_read is not None:
            contenders["sqlite"] = lambda: read_time(sqlite_read, keys)
        timings = interleaved(contenders, self.repeat_count)
        memctl = timings["memctl"]
        row = [label, f"{memctl.median * 1e6:.1f} us"]
        if sqlite_read is None:
            row += ["", ""]
        else:
            sqlite = timings["sqlite"]
            row += [f"{sqlite.median * 1e6:.1f} us", f"{memctl.median / sqlite.median:.2f}x"]
        self.rows.append(row + [f"<= {TARGET_READ_US:.0f} us", _met(memctl.median * 1e6 <= TARGET_READ_US)])

    def disk_sync_rate(self) -> None:
        """Appends of 300 bytes + fdatasync per second on this disk now: what bounds (a) on both sides."""
        directory = self.fresh()
        fd = os.open(os.path.join(directory, "probe"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        count = 200
        started = time.perf_counter()
        for _ in range(count):
            os.write(fd, bytes(300))
            os.fdatasync(fd)
        rate = count / (time.perf_counter() - started)
        os.close(fd)
        shutil.rmtree(directory, ignore_errors=True)
        self.notes.append(f"Disk during this run: {rate:,.0f} append+fdatasync/s (issue 2 measured 3,400-5,000 "
                          "fsyncs/s on a quiet machine); (a) is bound by it on both sides.")

    def run(self) -> str:
        self.disk_sync_rate()
        self.writes(f"(a) 1 record per commit, {self.single_commits:,} commits", self.single_commits, 1)
        self.writes(f"(b) 1000 records per commit, {self.batched_records:,} records", self.batched_records, 1000)
        self.reopen(1000)
        self.reopen(1)
        self.reads()
        self.notes.insert(0, f"Records: {record_bytes(self.records[:1000]):.0f} bytes on average (key + msgpack "
                             f"value); medians of {self.repeat_count} repetitions; memctl/SQLite is the ratio of "
                             "throughputs for writes and of times for opens and reads.")
        headers = ["measurement", "memctl", "SQLite (WAL, synchronous=FULL)", "memctl/SQLite", "target", "met"]
        return table(headers, self.rows) + "\n\n" + "\n".join(f"- {note}" for note in self.notes)


def _met(condition: bool) -> str:
    return "yes" if condition else "NO"


# --- profiling ----------------------------------------------------------------------------------------------


def profile(scenario: str, root: str) -> None:
    """cProfile one memctl scenario (untimed setup excluded) and print where the time goes."""
    count = {"write-batch": 200_000, "read-segments": 100_000}.get(scenario, 10_000)
    records = make_records(count, seed=1)
    directory = tempfile.mkdtemp(prefix="engine-profile-", dir=root)
    store_path = os.path.join(directory, "store")
    profiler = cProfile.Profile()
    if scenario in ("write-single", "write-batch"):
        profiler.runcall(memctl_write, store_path, records[:2_000] if scenario == "write-single" else records,
                         1 if scenario == "write-single" else 1000)
    elif scenario in ("reopen-batches", "reopen-singles"):
        memctl_write(store_path, records, 1000 if scenario == "reopen-batches" else 1)
        profiler.runcall(memctl_open_time, store_path, True)
    elif scenario in ("read-memtable", "read-segments"):
        memctl_write(store_path, records, 1000)
        store = Store.open(store_path)
        if scenario == "read-segments":
            store.flush()  # several segments, as the write left them
        keys = [key for key, _value in random.Random(2).sample(records, 20_000)]
        profiler.runcall(read_time, memctl_getter(store), keys)
        store.close()
    else:
        raise SystemExit(f"unknown scenario {scenario!r}")
    shutil.rmtree(directory, ignore_errors=True)
    statistics = pstats.Stats(profiler)
    statistics.sort_stats("tottime").print_stats(15)
    statistics.sort_stats("cumulative").print_stats(15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="repetitions per measurement (median reported)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply record counts (0.1 for a smoke run)")
    parser.add_argument("--dir", default=None, help="where fresh stores are made (default: the temp directory)")
    parser.add_argument("--no-results", action="store_true", help="print only; do not update RESULTS.md")
    parser.add_argument("--profile", choices=["write-single", "write-batch", "reopen-batches", "reopen-singles",
                                              "read-memtable", "read-segments"],
                        help="cProfile one memctl scenario instead of benchmarking")
    arguments = parser.parse_args()
    root = arguments.dir or tempfile.gettempdir()
    if arguments.profile:
        profile(arguments.profile, root)
        return
    report = Bench(root, arguments.repeat, arguments.scale).run()
    print(report)
    if not arguments.no_results:
        write_section("engine_bench", report)


if __name__ == "__main__":
    main()
