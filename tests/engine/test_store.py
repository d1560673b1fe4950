"""engine.store: batches, reads across memtable and segments, flush, compaction, recovery, reader snapshots."""

from __future__ import annotations

import errno
import os
import shutil
import struct
import sys
import tempfile
import types

import numpy as np
import pytest
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from engine import damage, fs, kinds, manifest as manifest_module, wal
from engine.check import check_store
from engine.codec import crc32, pack, unpack
from engine.errors import CorruptionError, EngineError, InputError, StoreClosed, UnsupportedVersion
from engine.format import (
    CURRENT_FILE,
    DAMAGE_FILE,
    FORMAT_VERSION,
    GC_LOCK_FILE,
    KIND_RECORDS,
    SEGMENT_DIR,
    TEMP_SUFFIX,
    WAL_BLOCK_SIZE,
    WAL_DIR,
    WAL_HEADER_FORMAT,
    WAL_HEADER_SIZE,
    WAL_MAGIC,
    WRITER_LOCK_FILE,
)
from engine.lock import GcLock
from engine.records import TOMBSTONE
from engine.store import Store
from engine_testkit import SimulatedCrash, crash_at, flip_byte, store_files
from tools.testing.plain import files_containing

T = "test.item"
U = "test.other"


def put(store: Store, *items, table=T) -> None:
    with store.batch() as batch:
        for key, value in items:
            batch.put(table, key, value)


def delete(store: Store, *keys, table=T) -> None:
    with store.batch() as batch:
        for key in keys:
            batch.delete(table, key)


def reopen(store: Store, **options) -> Store:
    store.close()
    return Store.open(store.path, **options)


def assert_reads(store: Store, expected: dict, table=T, absent=("absent",)) -> None:
    assert list(store.scan(table)) == sorted(expected.items())
    for key, value in expected.items():
        assert store.get(table, key) == value
    for key in absent:
        assert store.get(table, key) is None
    keys = [*expected, *absent, *expected]
    assert store.get_many(table, keys) == [expected.get(key) for key in keys]


def data_files(path: str) -> dict:
    """Everything but the lock files, whose content names the last writer's pid."""
    return {name: data for name, data in store_files(path).items()
            if name not in (WRITER_LOCK_FILE, GC_LOCK_FILE)}


def wal_files(store: Store) -> list[str]:
    return sorted(os.listdir(os.path.join(store.path, WAL_DIR)))


def segment_files(store: Store) -> list[str]:
    return sorted(os.listdir(os.path.join(store.path, SEGMENT_DIR)))


@pytest.fixture
def store(store_path):
    opened = Store.open(store_path, holder="pytest")
    yield opened
    opened.close()


# --- creating ------------------------------------------------------------------------------------------------


def test_a_new_store_on_disk(store):
    assert sorted(os.listdir(store.path)) == [CURRENT_FILE, WRITER_LOCK_FILE, GC_LOCK_FILE, "MANIFEST-000002",
                                              SEGMENT_DIR, WAL_DIR]
    assert wal_files(store) == ["000001.log"] and segment_files(store) == []
    manifest = manifest_module.load(store.path, manifest_module.read_current(store.path))
    assert (manifest.wal_number, manifest.next_file_number, manifest.segments, manifest.last_sequence) == (1, 3, [], 0)
    with open(os.path.join(store.path, WRITER_LOCK_FILE)) as handle:
        assert handle.read() == f"pid {os.getpid()} (pytest)\n"


def test_one_batch_is_one_wal_record(store):
    with store.batch() as batch:
        batch.put(T, "a", {"n": 1})
        batch.put(U, "b", [1, "two"])
        batch.delete(T, "c")
        first = batch.allocate("doc", 3)
    scan = wal.scan(wal.wal_path(os.path.join(store.path, WAL_DIR), 1))
    assert len(scan.payloads) == 1
    assert unpack(scan.payloads[0]) == [1, [[1, T, "a", {"n": 1}], [1, U, "b", [1, "two"]], [2, T, "c"],
                                            [3, "doc", first + 3]]]


# --- reads across memtable and segments ----------------------------------------------------------------------


def layered(store: Store) -> dict:
    """Two segments and a memtable that override and delete each other's records."""
    put(store, ("a", 1), ("b", 1), ("c", 1), ("d", 1))
    store.flush()
    put(store, ("b", 2), ("e", 2))
    delete(store, "c")
    store.flush()
    put(store, ("a", 3), ("f", 3))
    delete(store, "d", "e", "never-existed")
    return {"a": 3, "b": 2, "f": 3}


def test_put_get_delete_scan_in_the_memtable(store):
    put(store, ("x", "1"), ("y", None), ("z", b"\x00bytes"))
    delete(store, "x")
    assert_reads(store, {"y": None, "z": b"\x00bytes"}, absent=("x", "absent"))
    assert store.get(T, "y") is None  # a stored None reads like absence: scan tells them apart
    assert list(store.scan("no.such")) == []


def test_reads_across_memtable_and_segments(store):
    expected = layered(store)
    assert len(store.records) == 2 and store.tables
    assert_reads(store, expected, absent=("c", "d", "e", "never-existed"))


def test_every_step_survives_reopen(store):
    expected = layered(store)
    store = reopen(store)
    assert_reads(store, expected, absent=("c", "d", "e"))
    store.flush()
    assert_reads(store, expected, absent=("c", "d", "e"))
    store = reopen(store)
    assert_reads(store, expected, absent=("c", "d", "e"))
    store.compact()
    assert len(store.records) == 1 and not store.tables
    assert_reads(store, expected, absent=("c", "d", "e"))
    store = reopen(store)
    assert_reads(store, expected, absent=("c", "d", "e"))
    store.close()


def test_get_many_searches_segments_only_for_keys_the_memtable_lacks(store):
    put(store, ("flushed", 1), ("replaced", 1), ("deleted", 1))
    store.flush()
    put(store, ("replaced", 2), ("new", 2))
    delete(store, "deleted")
    keys = ["new", "flushed", "replaced", "deleted", "absent"]
    assert store.get_many(T, keys) == [2, 1, 2, None, None]
    assert store.get_many(U, keys) == [None] * 5 and store.get_many(T, []) == []


def test_get_many_over_several_segments_equals_get_of_each_key(store):
    """Newest segment wins and a tombstone in a newer segment hides an older value."""
    rng = np.random.default_rng(5)
    keys = [f"k{number:03d}" for number in range(120)]
    for generation in range(4):
        chosen = rng.choice(len(keys), 50, replace=False).tolist()
        put(store, *[(keys[index], generation * 1000 + index) for index in chosen[:40]])
        delete(store, *[keys[index] for index in chosen[40:]])
        store.flush()
    assert len(store.records) == 4
    asked = keys + ["absent", keys[0]]
    many = store.get_many(T, asked)
    assert many == [store.get(T, key) for key in asked]
    assert None in many and any(value is not None for value in many)


def test_a_key_put_then_deleted_in_the_memtable_is_flushed_as_deleted(store):
    """A delete drops the packed bytes the put left for the flush: no stale value reaches the segment."""
    put(store, ("gone", "secret value"), ("kept", 1))
    store.flush()
    put(store, ("gone", "second secret"), ("twice", 1))
    delete(store, "gone", "twice")
    put(store, ("twice", 2))
    store.flush()
    assert_reads(store, {"kept": 1, "twice": 2}, absent=("gone",))
    store.compact()
    assert files_containing(store.path, b"secret") == []
    assert_reads(reopen(store), {"kept": 1, "twice": 2}, absent=("gone",))


def test_reader_sees_the_same_as_the_writer(store):
    expected = layered(store)
    reader = Store.open(store.path, writable=False)
    assert_reads(reader, expected, absent=("c", "d", "e"))


def test_prefix_scans_merge_every_source(store):
    put(store, ("user:1", 1), ("user:3", 3), ("item:1", 1))
    store.flush()
    put(store, ("user:2", 2), ("user:30", 30))
    store.flush()
    put(store, ("user:4", 4), ("users", "not a user:"))
    delete(store, "user:3")
    assert list(store.scan(T, "user:")) == [("user:1", 1), ("user:2", 2), ("user:30", 30), ("user:4", 4)]
    assert list(store.scan(T, "user:3")) == [("user:30", 30)]
    assert list(store.scan(T, "item")) == [("item:1", 1)]
    assert list(store.scan(T, "zzz")) == []


UNICODE_KEYS = ["", "a", "Z", "é", "e\u0301", "ß", "日本", "日本語", "😀", "\u00a0", "a\0b", "a b", "Ω", "\U0010fffd"]


def test_unicode_keys_keep_code_point_order_across_flushes(store):
    for index, key in enumerate(UNICODE_KEYS):
        put(store, (key, index))
        if index % 4 == 3:
            store.flush()
    expected = {key: index for index, key in enumerate(UNICODE_KEYS)}
    assert_reads(store, expected, absent=("日", "e"))
    store.compact()
    store = reopen(store)
    assert_reads(store, expected, absent=("日", "e"))
    assert list(store.scan(T, "日本")) == [("日本", 6), ("日本語", 7)]
    store.close()


def test_tables_with_shared_prefixes_stay_apart(store):
    put(store, ("k", "short"), table="t")
    put(store, ("k", "dotted"), table="t.x")
    put(store, ("k", "longer"), table="t.xy")
    store.flush()
    put(store, ("j", "memtable"), table="t.x")
    assert list(store.scan("t")) == [("k", "short")]
    assert list(store.scan("t.x")) == [("j", "memtable"), ("k", "dotted")]
    assert list(store.scan("t.xy")) == [("k", "longer")]
    assert store.get("t.x", "k") == "dotted"


def test_values_of_every_msgpack_type_survive_flush(store):
    values = {"none": None, "true": True, "int": -(2**63), "big": 2**64 - 1, "float": 1.5, "text": "é",
              "bytes": b"\xff\x00", "list": [1, [2, [3]]], "map": {"k": {"nested": [None]}, b"bin": "bin key"}}
    put(store, *values.items())
    store = reopen(store)
    store.flush()
    assert_reads(store, values)
    store.close()


# --- batches and counters ------------------------------------------------------------------------------------


def test_allocate_is_consecutive_and_persistent(store):
    with store.batch() as batch:
        assert batch.allocate("doc") == 0
        assert batch.allocate("doc", 10) == 1
        assert batch.allocate("edge", 2) == 0
    assert (store.counter("doc"), store.counter("edge"), store.counter("new")) == (11, 2, 0)
    store = reopen(store)
    assert store.counter("doc") == 11
    store.flush()  # a flush with only counter changes still publishes them
    assert manifest_module.load(store.path, manifest_module.read_current(store.path)).counters == {"doc": 11,
                                                                                                    "edge": 2}
    store = reopen(store)
    with store.batch() as batch:
        assert batch.allocate("doc") == 11
    store.compact()
    store = reopen(store)
    assert store.counter("doc") == 12
    store.close()


def test_a_batch_that_raises_writes_nothing(store):
    put(store, ("kept", 1))
    before = data_files(store.path)
    with pytest.raises(RuntimeError):
        with store.batch() as batch:
            batch.put(T, "lost", 1)
            batch.allocate("doc", 5)
            raise RuntimeError("caller changed its mind")
    assert data_files(store.path) == before
    assert store.get(T, "lost") is None and store.counter("doc") == 0
    with store.batch() as batch:
        assert batch.allocate("doc") == 0


def test_an_empty_batch_writes_nothing(store):
    before = data_files(store.path)
    with store.batch():
        pass
    assert data_files(store.path) == before and store.sequence == 0


@pytest.mark.parametrize(
    "table, key, value",
    [
        (T, "k", {1, 2}),
        (T, "k", object()),
        (T, "k", 2**64),
        (T, "k", -(2**63) - 1),
        (T, "k", {"nested": [1, {"bad": {3}}]}),
        (T, "\ud800", 1),
        (T, "k", "\udcff"),
        (T, 7, 1),
        (T, b"k", 1),
        (None, "k", 1),
        ("", "k", 1),
        ("t\0x", "k", 1),
    ],
    ids=["set", "object", "uint64-overflow", "int64-underflow", "nested-set", "surrogate-key", "surrogate-value",
         "int-key", "bytes-key", "no-table", "empty-table", "nul-table"],
)
def test_bad_input_is_refused_and_changes_nothing(store, table, key, value):
    put(store, ("kept", 1))
    before = data_files(store.path)
    sequence = store.sequence
    with pytest.raises(InputError):
        with store.batch() as batch:
            batch.put(T, "innocent", 2)
            batch.put(table, key, value)
    assert data_files(store.path) == before
    assert store.sequence == sequence
    assert store.get(T, "innocent") is None
    put(store, ("after", 3))
    store = reopen(store)
    assert_reads(store, {"kept": 1, "after": 3}, absent=("innocent",))
    store.close()


def test_the_memtable_holds_what_a_reopen_would_read(store):
    value = {"list": [1, 2]}
    put(store, ("aliased", value), ("tuple", (1, 2)))
    value["list"].append(3)  # the caller reuses its dict after the batch
    before = {key: store.get(T, key) for key in ("aliased", "tuple")}
    store = reopen(store)
    after = {key: store.get(T, key) for key in ("aliased", "tuple")}
    store.close()
    assert before == after


# --- flush and compaction ------------------------------------------------------------------------------------


def test_flush_writes_a_segment_rotates_the_wal_and_deletes_the_old_one(store):
    put(store, ("a", 1))
    store.flush()
    assert segment_files(store) == ["000003.records.seg"]
    assert wal_files(store) == ["000004.log"]
    assert manifest_module.read_current(store.path) == "MANIFEST-000005"
    assert not [name for name in os.listdir(store.path) if name.startswith("MANIFEST-") and name != "MANIFEST-000005"]
    assert store.tables == {} and store.memtable_bytes == 0
    store.flush()  # nothing to do
    assert manifest_module.read_current(store.path) == "MANIFEST-000005"


def test_memtable_past_flush_bytes_is_flushed_by_the_commit(store_path):
    store = Store.open(store_path, flush_bytes=2_000)
    for index in range(50):
        put(store, (f"k{index:03d}", "v" * 100))
    assert len(store.records) >= 2
    assert store.memtable_bytes < 2_000
    expected = {f"k{index:03d}": "v" * 100 for index in range(50)}
    assert_reads(store, expected)
    assert_reads(reopen(store), expected)


def wal_records(store: Store) -> list:
    """The batches of every live WAL file, as their sequence and operations."""
    directory = os.path.join(store.path, WAL_DIR)
    return [unpack(payload) for name in wal_files(store)
            for payload in wal.scan(os.path.join(directory, name)).payloads]


@pytest.mark.parametrize("owned", [False, True])
def test_the_batch_that_fills_the_memtable_is_committed_by_its_flush_not_the_wal(store_path, owned):
    store = Store.open(store_path, flush_bytes=2_000)
    put(store, ("small", 1))
    with store.batch(owned) as batch:
        for index in range(30):
            batch.put(T, f"k{index:03d}", {"text": "v" * 100, "list": [index]})
    assert wal_records(store) == [], "its bytes went to a segment once, not to the WAL first"
    assert store.tables == {} and store.memtable_bytes == 0 and len(store.records) == 1
    assert store.manifest.last_sequence == store.sequence == 2
    expected = {"small": 1, **{f"k{index:03d}": {"text": "v" * 100, "list": [index]} for index in range(30)}}
    assert_reads(store, expected)
    put(store, ("after", 2))  # the next batch goes to the new WAL and carries on the sequence
    assert [record[0] for record in wal_records(store)] == [3]
    assert_reads(reopen(store), {**expected, "after": 2})


BY_FLUSH_POINTS = ["commit.by_flush.before_flush", "flush.start", "segment.before_rename", "flush.after_segments",
                   "flush.after_new_wal", "manifest.before_current", "manifest.after_rename.before_dirsync"]


@pytest.mark.parametrize("failpoint", BY_FLUSH_POINTS)
def test_a_crash_in_a_commit_by_flush_keeps_all_or_none_of_the_batch(store_path, failpoint):
    """Before CURRENT is replaced the batch never happened, earlier batches stay (in the old WAL); after, all of
    it is there."""
    store = Store.open(store_path, flush_bytes=2_000)
    put(store, ("earlier", 1))
    crash_at(failpoint)
    with pytest.raises(SimulatedCrash):
        put(store, *((f"k{index:03d}", "v" * 100) for index in range(30)))
    fs.disarm_all()
    store = reopen(store)
    committed = failpoint == "manifest.after_rename.before_dirsync"
    expected = {"earlier": 1, **({f"k{index:03d}": "v" * 100 for index in range(30)} if committed else {})}
    assert_reads(store, expected, absent=("k000", "k029") if not committed else ("absent",))
    report = check_store(store.path)
    assert report.clean, report.problems
    store.close()


def test_a_failed_commit_by_flush_refuses_further_writes_and_reopens_without_the_batch(store_path, monkeypatch):
    store = Store.open(store_path, flush_bytes=2_000)
    put(store, ("earlier", 1))

    def full_disk(self, *arguments):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fs.FileOps, "fsync", full_disk)
    with pytest.raises(OSError):
        put(store, *((f"k{index:03d}", "v" * 100) for index in range(30)))
    monkeypatch.undo()
    with pytest.raises(StoreClosed):
        put(store, ("later", 1))
    assert_reads(reopen(store), {"earlier": 1}, absent=("k000", "later"))


def test_compaction_leaves_no_byte_of_a_deleted_record(store):
    secret_key, secret_value = "key-9f1c2e", "value-7d3b0a"
    put(store, ("keep", "kept-value"), (secret_key, secret_value))
    store.flush()
    put(store, ("other", 1))
    store.flush()
    delete(store, secret_key)
    store.flush()
    assert files_containing(store.path, secret_value.encode())  # the old segment still holds it
    store.compact()
    assert files_containing(store.path, secret_value.encode()) == []
    assert files_containing(store.path, secret_key.encode()) == []
    assert len(segment_files(store)) == 1
    assert_reads(store, {"keep": "kept-value", "other": 1}, absent=(secret_key,))
    assert_reads(reopen(store), {"keep": "kept-value", "other": 1}, absent=(secret_key,))


def test_compaction_of_a_store_whose_records_are_all_deleted(store):
    put(store, ("a", 1), ("b", 2))
    store.flush()
    delete(store, "a", "b")
    store.compact()
    assert store.manifest.segments == [] and segment_files(store) == []
    assert_reads(store, {}, absent=("a", "b"))
    assert_reads(reopen(store), {}, absent=("a", "b"))


def test_compaction_of_an_empty_store(store):
    store.compact()
    assert store.manifest.segments == [] and check_store(store.path).clean


# --- reader snapshots ----------------------------------------------------------------------------------------


def test_a_reader_sees_its_snapshot_through_writes_flushes_and_compaction(store):
    put(store, ("a", 1))
    store.flush()
    put(store, ("b", 1))
    reader = Store.open(store.path, writable=False)
    mapped = [segment.path for segment in reader.records]
    put(store, ("c", 1), ("a", "changed"))
    delete(store, "b")
    assert_reads(reader, {"a": 1, "b": 1}, absent=("c",))
    store.flush()
    store.compact()
    assert not any(os.path.exists(path) for path in mapped)  # deleted under the reader, which keeps its map
    assert_reads(reader, {"a": 1, "b": 1}, absent=("c",))
    assert_reads(Store.open(store.path, writable=False), {"a": "changed", "c": 1}, absent=("b",))


def test_a_reader_of_a_missing_store_is_empty_and_creates_nothing(tmp_path):
    reader = Store.open(str(tmp_path / "none"), writable=False)
    assert reader.get(T, "a") is None and list(reader.scan(T)) == []
    assert not (tmp_path / "none").exists()


def test_a_reader_cannot_write(store):
    put(store, ("a", 1))
    reader = Store.open(store.path, writable=False)
    with pytest.raises(EngineError):
        put(reader, ("b", 1))
    with pytest.raises(EngineError):
        reader.flush()
    assert store.get(T, "b") is None


def test_a_reader_ignores_a_torn_tail_and_leaves_it_to_the_writer(store):
    put(store, ("a", 1))
    store.close()
    log = wal.wal_path(os.path.join(store.path, WAL_DIR), 1)
    intact = os.path.getsize(log)
    with open(log, "ab") as handle:
        handle.write(b"\x12\x34\x56\x78\x20\x00\x01half a record")
    assert_reads(Store.open(store.path, writable=False), {"a": 1})
    assert os.path.getsize(log) > intact
    writer = Store.open(store.path)
    assert os.path.getsize(log) == intact
    put(writer, ("b", 2))
    assert_reads(reopen(writer), {"a": 1, "b": 2})


# --- refusing damaged or foreign stores ----------------------------------------------------------------------


def test_missing_current_next_to_a_manifest_is_refused_unchanged(store):
    put(store, ("a", 1))
    store.flush()
    store.close()
    os.unlink(os.path.join(store.path, CURRENT_FILE))
    before = data_files(store.path)
    for writable in (True, False):
        with pytest.raises(CorruptionError) as caught:
            Store.open(store.path, writable=writable)
        assert "CURRENT is missing" in caught.value.reason
    assert data_files(store.path) == before


def test_a_store_from_a_newer_format_is_refused_unchanged(store):
    put(store, ("a", 1))
    store.close()
    log = wal.wal_path(os.path.join(store.path, WAL_DIR), 1)
    with open(log, "r+b") as handle:
        header = bytearray(handle.read(WAL_HEADER_SIZE))
        struct.pack_into("<I", header, len(WAL_MAGIC), FORMAT_VERSION + 1)
        struct.pack_into("<I", header, WAL_HEADER_SIZE - 4, crc32(bytes(header[:-4])))
        handle.seek(0)
        handle.write(header)
    assert struct.unpack(WAL_HEADER_FORMAT, bytes(header))[1] == FORMAT_VERSION + 1
    before = data_files(store.path)
    for writable in (True, False, True):  # the second writer is refused again, not busy: the lock was freed
        with pytest.raises(UnsupportedVersion):
            Store.open(store.path, writable=writable, wait=0)
    assert data_files(store.path) == before


def test_damage_in_the_middle_of_the_wal_refuses_open_unchanged(store):
    for index in range(30):
        put(store, (f"k{index}", "v" * 3_000))  # about 2.8 blocks
    store.close()
    log = wal.wal_path(os.path.join(store.path, WAL_DIR), 1)
    flip_byte(log, WAL_HEADER_SIZE + 100)
    before = data_files(store.path)
    for writable in (True, False):
        with pytest.raises(CorruptionError) as caught:
            Store.open(store.path, writable=writable)
        assert (caught.value.path, caught.value.offset) == (log, WAL_HEADER_SIZE)
    # Unchanged but for the DAMAGE marker, which records what the first open found.
    after = data_files(store.path)
    assert [(found["file"], found["offset"]) for found in damage.read(store.path).findings] == \
        [(os.path.join(WAL_DIR, "000001.log"), WAL_HEADER_SIZE)]
    assert {name: data for name, data in after.items() if name != DAMAGE_FILE} == before


def test_damage_in_a_short_wal_refuses_open_instead_of_dropping_batches(store):
    for index in range(10):
        put(store, (f"k{index}", index))
    store.close()
    log = wal.wal_path(os.path.join(store.path, WAL_DIR), 1)
    assert os.path.getsize(log) < WAL_BLOCK_SIZE
    flip_byte(log, WAL_HEADER_SIZE + 10)
    with pytest.raises(CorruptionError):
        Store.open(store.path).close()


def test_a_segment_of_the_wrong_size_refuses_open(store):
    put(store, ("a", 1))
    store.flush()
    store.close()
    segment = os.path.join(store.path, SEGMENT_DIR, "000003.records.seg")
    with open(segment, "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(CorruptionError) as caught:
        Store.open(store.path)
    assert caught.value.path == segment and "MANIFEST says" in caught.value.reason


def test_a_missing_segment_refuses_open(store):
    put(store, ("a", 1))
    store.flush()
    store.close()
    os.unlink(os.path.join(store.path, SEGMENT_DIR, "000003.records.seg"))
    with pytest.raises(CorruptionError) as caught:
        Store.open(store.path, writable=False)
    assert "missing" in caught.value.reason


def append_raw_batch(store_path: str, payload: bytes) -> str:
    """Append a validly framed WAL record whose payload the store never writes."""
    log = wal.wal_path(os.path.join(store_path, WAL_DIR), current_wal_number(store_path))
    scan = wal.scan(log)
    writer = wal.WalWriter(log, scan.number, scan.salt, scan.valid_end)
    writer.append(payload)
    writer.close()
    return log


def current_wal_number(store_path: str) -> int:
    return manifest_module.load(store_path, manifest_module.read_current(store_path)).wal_number


@pytest.mark.parametrize(
    "payload, reason",
    [(pack(5), "not [sequence, operations]"), (pack([1]), "not [sequence, operations]"),
     (pack([2, [[9, T, "k"]]]), "unknown WAL operation code 9"), (b"\xc1", "undecodable")],
)
def test_a_wal_batch_of_the_wrong_shape_is_corruption(store, payload, reason):
    put(store, ("a", 1))
    store.close()
    log = append_raw_batch(store.path, payload)
    for writable in (True, False):
        with pytest.raises(CorruptionError) as caught:
            Store.open(store.path, writable=writable)
        assert reason in caught.value.reason
        assert caught.value.path in (log, store.path)


def test_a_segment_of_another_kind_than_the_manifest_says_refuses_open(store):
    put(store, ("a", 1))
    store.flush()
    store.close()
    manifest = manifest_module.load(store.path, manifest_module.read_current(store.path))
    manifest.segments[0]["kind"] = "text.postings"
    manifest.number = manifest.next_file_number
    manifest.next_file_number += 1
    manifest_module.publish(store.path, manifest)
    with pytest.raises(CorruptionError) as caught:
        Store.open(store.path, writable=False)
    assert "MANIFEST says 'text.postings'" in caught.value.reason


def test_a_wal_left_half_created_is_recreated_by_the_writer(store):
    put(store, ("a", 1))
    store.close()
    half = wal.wal_path(os.path.join(store.path, WAL_DIR), 2)
    with open(half, "wb") as handle:
        handle.write(bytes(10))  # a crash while creating WAL 2, before its header reached the disk
    assert_reads(Store.open(store.path, writable=False), {"a": 1})
    store = Store.open(store.path)
    assert wal.read_header(open(half, "rb").read(), half)[0] == 2
    put(store, ("b", 2))
    assert_reads(reopen(store), {"a": 1, "b": 2})


def test_a_reader_of_an_empty_directory_sees_an_empty_store(tmp_path):
    reader = Store.open(str(tmp_path), writable=False)
    assert list(reader.scan(T)) == []
    assert set(os.listdir(tmp_path)) <= {GC_LOCK_FILE}  # no CURRENT, WAL or segment directory appears


def test_the_store_is_a_context_manager(store_path):
    with Store.open(store_path) as store:
        put(store, ("a", 1))
    with pytest.raises(StoreClosed):
        put(store, ("b", 1))
    with Store.open(store_path) as store:
        assert store.get(T, "a") == 1


# --- crashes and I/O errors ------------------------------------------------------------------------------------


FLUSH_POINTS = [
    "flush.start", "segment.write.before_fsync", "segment.before_rename", "segment.after_publish",
    "flush.after_segments", "wal.create.write.before_fsync", "wal.create.before_rename", "wal.create.after_rename.before_dirsync",
    "flush.after_new_wal", "manifest.file.write.before_fsync", "manifest.file.before_rename",
    "manifest.file.after_rename.before_dirsync", "manifest.before_current", "manifest.write.before_fsync",
    "manifest.before_rename", "manifest.after_rename.before_dirsync", "compact.after_manifest.before_unlink",
]
COMPACT_POINTS = [("compact.start", 1), ("segment.before_rename", 2), ("compact.after_segments", 1),
                  ("manifest.before_current", 2), ("manifest.after_rename.before_dirsync", 2),
                  ("compact.after_manifest.before_unlink", 2)]


@pytest.mark.parametrize("operation, failpoint, hit", [("flush", point, 1) for point in FLUSH_POINTS]
                         + [("compact", point, hit) for point, hit in COMPACT_POINTS])
def test_a_crash_during_flush_or_compaction_loses_nothing(store, operation, failpoint, hit):
    expected = layered(store)
    crash_at(failpoint, hit)
    with pytest.raises(SimulatedCrash):
        getattr(store, operation)()
    fs.disarm_all()
    store = reopen(store)  # the abandoned object is closed only to free its lock, as process exit would
    assert_reads(store, expected, absent=("c", "d", "e"))
    assert not [name for name in store.obsolete_files()], "the next writer removes what the crash left"
    put(store, ("after", 1))
    store.compact()
    expected["after"] = 1
    assert_reads(reopen(store), expected, absent=("c", "d", "e"))
    report = check_store(store.path)
    assert report.clean, report.problems


def test_a_crash_while_appending_leaves_an_all_or_nothing_batch(store):
    put(store, ("a", 1))
    crash_at("wal.append.before_fsync")
    with pytest.raises(SimulatedCrash):
        put(store, ("b", 2), ("c", 3))
    store = reopen(store)
    assert list(store.scan(T)) in ([("a", 1)], [("a", 1), ("b", 2), ("c", 3)])
    store.close()


def test_a_batch_acknowledged_after_an_interrupted_append_survives_reopen(store):
    put(store, ("a", 1))
    crash_at("wal.append.before_fsync")
    with pytest.raises(SimulatedCrash):
        put(store, ("interrupted", 1))
    fs.disarm_all()
    try:
        put(store, ("acknowledged", 1))
    except StoreClosed:
        return  # refusing further writes until reopen is a correct answer too
    store = reopen(store)
    try:
        assert store.get(T, "acknowledged") == 1
    finally:
        store.close()


def test_two_crashes_at_the_same_flush_point_lose_nothing(store):
    """The WAL a crashed flush created must never be recreated (renamed over) by the next flush."""
    put(store, ("a", 1))
    crash_at("flush.after_new_wal")
    with pytest.raises(SimulatedCrash):
        store.flush()
    fs.disarm_all()
    store = reopen(store)
    put(store, ("b", 2))  # appended to the WAL the crashed flush created
    crash_at("flush.after_new_wal")
    with pytest.raises(SimulatedCrash):
        store.flush()
    fs.disarm_all()
    store = reopen(store)
    try:
        assert_reads(store, {"a": 1, "b": 2})
    finally:
        store.close()


class FailingOps(fs.FileOps):
    """The real filesystem, except one operation fails with EIO the `countdown`-th time it is called."""

    def __init__(self, operation: str, countdown: int = 1, after_rename_of: str | None = None):
        self.operation = operation
        self.countdown = countdown
        self.after_rename_of = after_rename_of
        self.last_rename = ""

    def _maybe_fail(self, operation: str) -> None:
        if operation != self.operation:
            return
        if self.after_rename_of and not self.last_rename.endswith(self.after_rename_of):
            return
        self.countdown -= 1
        if self.countdown == 0:
            raise OSError(errno.EIO, "injected I/O error")

    def fsync(self, fd):
        self._maybe_fail("fsync")
        super().fsync(fd)

    def rename(self, source, target):
        self.last_rename = target
        super().rename(source, target)

    def fsync_dir(self, path):
        self._maybe_fail("fsync_dir")
        super().fsync_dir(path)


@pytest.fixture
def failing_ops():
    installed = []

    def install(*args, **kwargs):
        installed.append(fs.set_ops(FailingOps(*args, **kwargs)))

    yield install
    for previous in installed:
        fs.set_ops(previous)


def test_a_failed_fsync_poisons_the_store_until_reopen(store, failing_ops):
    put(store, ("a", 1))
    failing_ops("fsync")
    with pytest.raises(OSError):
        put(store, ("b", 2))
    with pytest.raises(StoreClosed):
        put(store, ("c", 3))  # fsyncgate: never retried on the same file
    with pytest.raises(StoreClosed):
        store.flush()
    fs.set_ops(fs.FileOps())
    store = reopen(store)
    assert store.get(T, "a") == 1 and store.get(T, "c") is None
    put(store, ("d", 4))
    assert reopen(store).get(T, "d") == 4


def test_an_io_error_after_current_moved_loses_no_later_batch(store, failing_ops):
    """CURRENT renamed but its directory fsync failed: the published MANIFEST may already declare the WAL this
    handle appends to obsolete, so further writes must be refused (or survive a reopen)."""
    put(store, ("a", 1))
    failing_ops("fsync_dir", after_rename_of=CURRENT_FILE)
    with pytest.raises(OSError):
        store.flush()
    fs.set_ops(fs.FileOps())
    try:
        put(store, ("acknowledged", 1))
    except StoreClosed:
        return
    store = reopen(store)
    try:
        assert store.get(T, "acknowledged") == 1
    finally:
        store.close()


def test_a_closed_store_refuses_writes(store):
    store.close()
    with pytest.raises(StoreClosed):
        put(store, ("a", 1))
    store.close()  # closing twice is harmless


# --- obsolete files ------------------------------------------------------------------------------------------


def test_orphans_and_leftovers_are_removed_by_the_next_writer(store):
    put(store, ("a", 1))
    store.flush()
    put(store, ("b", 2))
    store.close()
    live_manifest = manifest_module.read_current(store.path)
    junk = [
        os.path.join(SEGMENT_DIR, "000099.records.seg"),
        os.path.join(SEGMENT_DIR, "000100.records.seg" + TEMP_SUFFIX),
        os.path.join(WAL_DIR, "000001.log"),  # below wal_number
        os.path.join(WAL_DIR, "000098.log" + TEMP_SUFFIX),
        "MANIFEST-000001",
        "MANIFEST-000097",
        CURRENT_FILE + TEMP_SUFFIX,
    ]
    for name in junk:
        with open(os.path.join(store.path, name), "wb") as handle:
            handle.write(b"junk")
    assert sorted(Store.open(store.path, writable=False).obsolete_files()) == sorted(junk)
    store = Store.open(store.path)
    assert store.obsolete_files() == []
    assert not any(os.path.exists(os.path.join(store.path, name)) for name in junk)
    assert manifest_module.read_current(store.path) == live_manifest
    assert_reads(store, {"a": 1, "b": 2})


def test_deletion_waits_while_a_reader_is_opening(store):
    put(store, ("a", 1))
    opening_reader = GcLock(store.path)
    opening_reader.acquire_shared()
    try:
        store.flush()
        store.compact()
        leftovers = store.obsolete_files()
        assert os.path.join(WAL_DIR, "000001.log") in leftovers
        assert os.path.join(SEGMENT_DIR, "000003.records.seg") in leftovers
        assert os.path.exists(os.path.join(store.path, WAL_DIR, "000001.log"))
    finally:
        opening_reader.release()
    assert check_store(store.path).clean
    store = reopen(store)
    assert store.obsolete_files() == []
    assert_reads(store, {"a": 1})


# --- derived kinds -------------------------------------------------------------------------------------------


class KeyListKind:
    """A minimal derived kind: one segment listing the live keys of its tables."""

    def __init__(self, store, owner):
        self.store = store

    def flush(self, changes, new_segment):
        keys = sorted(key for rows in changes.values() for key, value in rows.items() if value is not TOMBSTONE)
        writer = new_segment("keys")
        writer.add_bytes("keys", "\n".join(keys).encode())

    def compact(self, segments, new_segment):
        keys = [key for key, _value in self.store.scan("keylist.items")]
        writer = new_segment("keys")
        writer.add_bytes("keys", "\n".join(keys).encode())

    def open(self, segments):
        keys = [segment.bytes("keys").tobytes().decode() for segment in segments]
        return {"segments": keys, "memtable": sorted(self.store.memtable("keylist.items"))}


@pytest.fixture
def keylist_kind(monkeypatch):
    module = types.ModuleType("engine_test_keylist_kind")
    module.KeyListKind = KeyListKind
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(kinds._REGISTRY, "keylist", f"{module.__name__}:KeyListKind")


def test_a_derived_kind_gets_its_tables_at_flush_and_compaction(store, keylist_kind):
    put(store, ("a", 1), ("b", 2), table="keylist.items")
    put(store, ("x", 1))
    assert store.kind("keylist") == {"segments": [], "memtable": ["a", "b"]}
    store.flush()
    assert segment_files(store) == ["000003.records.seg", "000004.keylist.keys.seg"]
    owners = [(entry["kind"], entry["owner"]) for entry in store.manifest.segments]
    assert owners == [(KIND_RECORDS, KIND_RECORDS), ("keylist.keys", "keylist")]
    assert store.kind("keylist") == {"segments": ["a\nb"], "memtable": []}
    put(store, ("c", 3), table="keylist.items")
    delete(store, "a", table="keylist.items")
    view = store.kind("keylist")
    assert view == {"segments": ["a\nb"], "memtable": ["a", "c"]}
    assert store.kind("keylist") is view  # cached until the next change
    store.compact()
    assert store.kind("keylist") == {"segments": ["b\nc"], "memtable": []}
    store = reopen(store)
    assert store.kind("keylist") == {"segments": ["b\nc"], "memtable": []}
    assert list(store.scan("keylist.items")) == [("b", 2), ("c", 3)]
    assert check_store(store.path).clean
    store.close()


# --- a model-based check -------------------------------------------------------------------------------------

TABLES = ["m.a", "m.b", "m.ab"]
KEYS = ["", "a", "ab", "b", "é", "日本", "k1", "k10", "k2"]
VALUES = st.one_of(st.integers(-3, 3), st.text(max_size=3), st.lists(st.integers(0, 2), max_size=2))


class StoreMachine(RuleBasedStateMachine):
    """Random put/delete/allocate/flush/compact/reopen against a dict; every read must agree, and so must a
    reader opened at any point."""

    def __init__(self):
        super().__init__()
        self.directory = tempfile.mkdtemp(prefix="memctl-store-model-")
        self.store = Store.open(self.directory, flush_bytes=600)  # small: commits also flush on their own
        self.model: dict = {}
        self.counters: dict = {}

    @rule(operations=st.lists(st.tuples(st.sampled_from(TABLES), st.sampled_from(KEYS), st.none() | VALUES),
                              min_size=1, max_size=4))
    def write(self, operations):
        with self.store.batch() as batch:
            for table, key, value in operations:
                if value is None:
                    batch.delete(table, key)
                    self.model.pop((table, key), None)
                else:
                    batch.put(table, key, value)
                    self.model[(table, key)] = value

    @rule(name=st.sampled_from(["doc", "edge"]), count=st.integers(1, 3))
    def allocate(self, name, count):
        with self.store.batch() as batch:
            assert batch.allocate(name, count) == self.counters.get(name, 0)
        self.counters[name] = self.counters.get(name, 0) + count

    @rule()
    def flush(self):
        self.store.flush()

    @precondition(lambda self: self.model)
    @rule()
    def compact(self):
        self.store.compact()

    @rule()
    def reopen(self):
        self.store.close()
        self.store = Store.open(self.directory, flush_bytes=600)

    @rule()
    def a_reader_agrees(self):
        self.check(Store.open(self.directory, writable=False))

    @invariant()
    def reads_agree(self):
        self.check(self.store)

    def check(self, store: Store) -> None:
        for table in TABLES:
            expected = sorted((key, value) for (owner, key), value in self.model.items() if owner == table)
            assert list(store.scan(table)) == expected
            assert list(store.scan(table, "k1")) == [item for item in expected if item[0].startswith("k1")]
            for key in KEYS:
                assert store.get(table, key) == self.model.get((table, key))
        for name, value in self.counters.items():
            assert store.counter(name) == value

    def teardown(self):
        self.store.close()
        assert check_store(self.directory).clean
        shutil.rmtree(self.directory, ignore_errors=True)


StoreMachine.TestCase.settings = settings(max_examples=30, stateful_step_count=25, deadline=None)
test_store_matches_a_dict = StoreMachine.TestCase
