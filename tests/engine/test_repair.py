"""engine.repair (memctl repair): every readable record kept, what was lost reported exactly, the indexes rebuilt
from the records, the result published atomically; a sound store left as it is. The crash sweep of a repair is
tools/crash/failpoint_sweep.py's "repair" workload (tests/crash/test_failpoints.py)."""

from __future__ import annotations

import os
import random
import string

import pytest

from engine import damage, manifest as manifest_module, wal
from engine.check import check_store
from engine.errors import CorruptionError, InputError, StoreBusy
from engine.format import (
    DAMAGE_FILE,
    FORMAT_VERSION,
    GC_LOCK_FILE,
    RAW_CHUNK_TABLE,
    RAW_TURNS_TABLE,
    SEGMENT_CHECKSUM_BLOCK_BYTES,
    SEGMENT_DIR,
    WAL_DIR,
    WAL_RECORD_HEADER_SIZE,
    WRITER_LOCK_FILE,
)
from engine.raw import RawStore, record_blob_path
from engine.records import open_segment
from engine.repair import repair_store
from engine.segment import Segment
from engine.store import Store
from engine.text.index import TextIndex
from engine_testkit import flip_byte, store_files
from tools.testing import repair as fixture
from tools.testing.migration import copy_fixture
from tools.testing.reference import wal_records

T = "test.doc"


def data_files(path: str) -> dict:
    return {name: data for name, data in store_files(path).items() if name not in (WRITER_LOCK_FILE, GC_LOCK_FILE)}


def manifest_of(path: str):
    return manifest_module.load(path, manifest_module.read_current(path))


def records_segments(path: str) -> list:
    return [os.path.join(path, SEGMENT_DIR, entry["name"]) for entry in manifest_of(path).segments
            if entry["kind"] == "records"]


def live_wal(path: str) -> str:
    return wal.wal_path(os.path.join(path, WAL_DIR), manifest_of(path).wal_number)


def put(store, **records) -> None:
    with store.batch() as batch:
        for key, value in records.items():
            batch.put(T, key, value)


def served(path: str) -> dict:
    with Store.open(path, writable=False) as store:
        return dict(store.scan(T))


def assert_repaired(path: str) -> None:
    assert check_store(path).problems == []
    assert damage.read(path) is None
    Store.open(path).close()  # writers welcome


def flushed_and_logged(store_path: str, flushed: dict, logged: dict) -> None:
    store = Store.open(store_path)
    put(store, **flushed)
    store.flush()
    put(store, **logged)
    store.close()


def test_a_sound_store_is_left_as_it_is(store_path):
    flushed_and_logged(store_path, {"a": 1}, {"b": 2})
    before = data_files(store_path)
    report = repair_store(store_path)
    assert (report["found"], report["repaired"], report["marker_cleared"], "lost" in report) == ([], False, False, False)
    assert data_files(store_path) == before


def test_the_marker_of_a_sound_store_is_removed_and_nothing_else_changes(store_path):
    """What a reader found may be gone (a transient read error, a file put back): check decides."""
    store = Store.open(store_path)
    put(store, a=1)
    store.close()
    damage.record(store_path, [CorruptionError(live_wal(store_path), 0, "transient")], "test")
    before = data_files(store_path)
    assert repair_store(store_path, dry_run=True)["marker_cleared"] is False
    assert data_files(store_path) == before
    assert repair_store(store_path)["marker_cleared"] is True
    assert data_files(store_path) == {name: data for name, data in before.items() if name != DAMAGE_FILE}
    assert_repaired(store_path)


def block_frame(path: str, number: int) -> tuple:
    """(file offset of records block `number`'s frame, its end, its rows) in the layout-2 segment at `path`."""
    segment = Segment.open(path)
    offsets, rows = segment.column("block_offsets"), segment.column("block_rows")
    start = segment.column_offset("blocks")
    return start + int(offsets[number]), start + int(offsets[number + 1]), range(int(rows[number]),
                                                                               int(rows[number + 1]))


def test_a_damaged_records_block_loses_the_rows_it_holds_and_no_other(store_path):
    """The unit of loss is the column checksum block (64 KiB of compressed rows): every records block with a
    byte in it is lost, rows and keys, and no other."""
    generator = random.Random(17)
    store = Store.open(store_path)
    values = {f"k{index:03d}": "".join(generator.choices(string.ascii_letters, k=900)) for index in range(400)}
    put(store, **values)
    store.flush()
    store.close()
    [path] = records_segments(store_path)
    records = open_segment(Segment.open(path))
    blocks_offset = Segment.open(path).column_offset("blocks")
    damaged = blocks_offset + SEGMENT_CHECKSUM_BLOCK_BYTES + 10
    checked = range(blocks_offset + SEGMENT_CHECKSUM_BLOCK_BYTES, blocks_offset + 2 * SEGMENT_CHECKSUM_BLOCK_BYTES)
    lost = sorted(records.key_of(row).split(b"\0")[1].decode() for number in range(records.block_count)
                  for start, end, rows in [block_frame(path, number)] if start < checked.stop and end > checked.start
                  for row in rows)
    assert 0 < len(lost) < 200
    flip_byte(path, damaged)

    report = repair_store(store_path)
    assert report["found"][0]["file"] == os.path.relpath(path, store_path)
    # A block's keys are compressed with its values: the rows are counted, their keys are unknown.
    assert report["lost"]["records"] == {"segments": [], "tables": {T: {"rows": len(lost), "known_keys": 0,
                                                                        "keys": []}}}
    assert report["kept"] == {"records": 400 - len(lost), "wal_batches": 0}
    assert served(store_path) == {key: value for key, value in values.items() if key not in lost}
    assert_repaired(store_path)


def test_a_lost_newest_version_is_dropped_not_replaced_by_an_older_one(store_path):
    """The lost row may have been a deletion or an update made to take something back: an older value coming
    back would undo it. Which keys a lost block held is unknown, so every older key from its first key to the
    next block's (here: to the end) goes, each reported by name."""
    flushed_and_logged(store_path, {"k": "old", "a_other": "kept", "z_older": "in the lost range"}, {"k": "new"})
    with Store.open(store_path) as store:
        store.flush()
    newer = records_segments(store_path)[-1]
    flip_byte(newer, block_frame(newer, 0)[0] + 5)
    report = repair_store(store_path)
    assert report["lost"]["records"]["tables"] == {T: {"rows": 3, "known_keys": 2, "keys": ["k", "z_older"]}}
    assert served(store_path) == {"a_other": "kept"}
    assert_repaired(store_path)


def test_damage_in_the_middle_of_the_wal_loses_that_batch_and_keeps_the_later_ones(store_path):
    store = Store.open(store_path)
    for index in range(6):
        put(store, **{f"b{index}": index})
    store.close()
    log = live_wal(store_path)
    with open(log, "rb") as handle:
        start, end = wal_records(handle.read())[2]
    flip_byte(log, start + WAL_RECORD_HEADER_SIZE + 1)

    report = repair_store(store_path)
    batches = report["lost"]["wal_batches"]
    assert (batches["sequences"], batches["count"], batches["files"]) == ([[3, 3]], 1, [])
    assert batches["skipped_bytes"] == [{"file": os.path.relpath(log, store_path), "start": start, "end": end,
                                         "reason": "record checksum mismatch"}]
    assert report["kept"]["wal_batches"] == 5
    assert served(store_path) == {f"b{index}": index for index in (0, 1, 3, 4, 5)}
    assert_repaired(store_path)
    with Store.open(store_path) as writer:  # sequences go on above every one handed out
        assert writer.commit([[1, T, ["next"], [6]]]) == 7


def test_a_missing_records_segment_is_lost_whole_and_the_wal_kept(store_path):
    flushed_and_logged(store_path, {"flushed": 1}, {"logged": 2})
    [path] = records_segments(store_path)
    os.unlink(path)
    report = repair_store(store_path)
    assert report["lost"]["records"]["segments"] == [
        {"file": os.path.relpath(path, store_path), "reason": "segment file named by the MANIFEST is missing"}]
    assert served(store_path) == {"logged": 2}
    assert_repaired(store_path)


def test_a_missing_live_wal_reports_the_batches_the_manifest_recorded(store_path):
    for index in range(3):
        store = Store.open(store_path)
        put(store, **{f"b{index}": index})
        store.close()
    log = live_wal(store_path)
    os.unlink(log)
    report = repair_store(store_path)
    batches = report["lost"]["wal_batches"]
    assert (batches["sequences"], batches["files"]) == ([[1, 3]], [{"file": os.path.relpath(log, store_path),
                                                                     "reason": "missing"}])
    assert served(store_path) == {}
    assert_repaired(store_path)


TEXT = "user: 蓝牙打不开\nassistant: 试试重启\n".encode()
TURNS = [{"speaker": "user", "ts": None, "source_id": "t#1", "offset": 6, "length": 15, "extra": {}},
         {"speaker": "assistant", "ts": None, "source_id": "t#2", "offset": 33, "length": 12, "extra": {}}]


def test_a_chunk_whose_blob_is_damaged_is_dropped_and_its_blob_left_to_raw_gc(store):
    raw = RawStore(store)
    with raw.batch() as writer:
        damaged = writer.put_turns(TEXT, {}, "c", TURNS).raw_id
        intact = writer.put(b"another chunk", {}).raw_id
    blob = os.path.join(store.path, record_blob_path(raw.get(damaged)))
    store.close()
    with open(blob, "wb") as handle:
        handle.write(b"not zstd")
    report = repair_store(store.path)
    assert report["lost"]["raw_chunks"] == [
        {"raw_id": damaged, "turns": 2, "reason": "not a zstd frame (error when determining content size)"}]
    with Store.open(store.path, writable=False) as reader:
        assert reader.get(RAW_CHUNK_TABLE, damaged) is None and reader.get(RAW_TURNS_TABLE, damaged) is None
        assert RawStore(reader).read(intact) == b"another chunk"
    report = check_store(store.path)
    assert report.problems == [] and [note["file"] for note in report.notes] == [os.path.relpath(blob, store.path)]


def test_the_damaged_fixture_repaired_serves_rebuilt_indexes_and_repairs_no_more(tmp_path):
    path = str(tmp_path / "store")
    fixture.copy_damaged(path)
    damaged = data_files(path)
    dry = repair_store(path, dry_run=True)
    assert data_files(path) == damaged  # nothing written
    report = repair_store(path)
    assert {key: value for key, value in dry.items() if key not in ("dry_run", "repaired", "marker_cleared")} == \
        {key: value for key, value in report.items() if key not in ("dry_run", "repaired", "marker_cleared")}
    lost = report["lost"]
    assert lost["records"]["tables"] and lost["wal_batches"]["count"] == 1 and lost["raw_chunks"]
    assert report["rebuilt"] == ["graph", "raw", "text:crash"] and len(report["marker"]) >= 2
    assert_repaired(path)
    with Store.open(path, writable=False) as reader:
        documents = dict(reader.scan("text:crash.doc"))
        hits = TextIndex(reader, owner="text:crash").search("memory", top=100)
        assert documents and {hit.key for hit in hits} <= set(documents)
    assert repair_store(path)["found"] == []


def test_a_store_of_an_older_format_is_migrated_on_the_way(tmp_path):
    path = str(tmp_path / "store")
    copy_fixture(path)
    log = os.path.join(path, WAL_DIR, "000006.log")
    with open(log, "rb") as handle:
        start, _end = wal_records(handle.read())[2]
    flip_byte(log, start + WAL_RECORD_HEADER_SIZE + 1)
    report = repair_store(path, hooks=_migration_hooks())
    assert report["format"] == 3 and [step["name"] for step in report["migration_steps"]] == \
        ["split_text_index", "turn_fields", "raw_passages", "fact_chains"]
    assert report["lost"]["wal_batches"]["count"] == 1
    assert manifest_of(path).version == FORMAT_VERSION
    assert_repaired(path)


def _migration_hooks() -> dict:
    from memctl.ingest.format3 import migration_hooks

    return migration_hooks()


def test_no_store_is_bad_input_and_a_busy_store_is_busy(tmp_path, store_path):
    with pytest.raises(InputError, match="no memctl store"):
        repair_store(str(tmp_path / "nothing"))
    store = Store.open(store_path)
    try:
        with pytest.raises(StoreBusy):
            repair_store(store_path)
    finally:
        store.close()
