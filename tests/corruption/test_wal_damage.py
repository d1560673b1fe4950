"""Damage that loses acknowledged batches of the WAL (issue 17): detected, refused to writers, never a torn tail.

The store of the issue: three ingests, each its own writer, so each closed with a WAL checkpoint in the MANIFEST
(engine/wal_checkpoint.py). A cut anywhere below what the last checkpoint recorded, a deleted live WAL, or
batches that stop below a sequence the MANIFEST recorded are corruption (exit 3); only a cut among the batches
of a writer that died before it closed looks like what a crash mid-append leaves, and is dropped as a torn tail.
"""

from __future__ import annotations

import os

import pytest

from engine import damage, fs, manifest as manifest_module, wal
from engine.check import check_store
from engine.codec import pack
from engine.errors import CorruptionError, StoreDamaged
from engine.format import DAMAGE_FILE, GC_LOCK_FILE, WAL_DIR, WAL_HEADER_SIZE, WRITER_LOCK_FILE
from engine.store import Store
from engine_testkit import SimulatedCrash, crash_at, store_files
from memctl.paths import tenant_dir
from tools.testing.reference import wal_records

T = "test.doc"


@pytest.fixture
def store_path(tmp_path) -> str:
    return str(tmp_path / "store")


def manifest_of(path: str):
    return manifest_module.load(path, manifest_module.read_current(path))


def live_wal(path: str) -> str:
    return wal.wal_path(os.path.join(path, WAL_DIR), manifest_of(path).wal_number)


def newest_wal(path: str) -> str:
    return os.path.join(path, WAL_DIR, max(os.listdir(os.path.join(path, WAL_DIR))))


def data_files(path: str) -> dict:
    return {name: data for name, data in store_files(path).items()
            if name not in (WRITER_LOCK_FILE, GC_LOCK_FILE, DAMAGE_FILE)}


def three_ingests(cli) -> str:
    """The issue's store: three ingests of a line each, the WAL holding their three batches."""
    for number in (1, 2, 3):
        assert cli("ingest", "--raw", "-", input=f"user: batch {number} hello about topic {number}\n").exit_code == 0
    return tenant_dir(None, "default")


def cut(path: str, size: int) -> None:
    os.truncate(path, size)


# The cuts of an 848-byte WAL whose batches span bytes 32..304, 304..576 and 576..848, as offsets from
# those boundaries: inside the second batch (559, 400), inside the first (298, 100), inside the header (16), empty.
CUTS = {"559": lambda batches: batches[1][1] - 17, "400": lambda batches: batches[1][0] + 96,
        "298": lambda batches: batches[0][1] - 6, "100": lambda batches: batches[0][0] + 68,
        "16": lambda batches: 16, "0": lambda batches: 0}


@pytest.mark.parametrize("case", sorted(CUTS))
def test_a_wal_cut_below_its_checkpoint_is_corruption_that_writers_refuse(cli, case):
    path = three_ingests(cli)
    log = live_wal(path)
    with open(log, "rb") as handle:
        batches = wal_records(handle.read())
    assert len(batches) == 3 and manifest_of(path).wal_size == batches[-1][1]  # the last writer's checkpoint
    cut(log, CUTS[case](batches))
    before = data_files(path)

    [problem] = check_store(path).problems
    assert problem["file"] == os.path.join(WAL_DIR, os.path.basename(log))
    assert "acknowledged batches were cut off" in problem["message"] or "no complete header" in problem["message"]
    with pytest.raises(CorruptionError) as caught:
        Store.open(path, writable=False)
    assert caught.value.path == log
    result = cli("ingest", "--raw", "-", input="user: one more\n")
    assert result.exit_code == 3 and "memctl repair" in result.stderr
    assert data_files(path) == before  # nothing truncated, nothing recreated: the damage stays to be repaired
    assert [found["file"] for found in damage.read(path).findings] == [problem["file"]]


def test_a_cut_among_the_batches_of_a_writer_that_died_is_a_torn_tail(store_path):
    """Nothing recorded these batches but the WAL: a cut there is what a crash mid-append leaves (MANIFEST.spec
    §2), so the batches after it are dropped, as a crash would have, and the rest is served."""
    store = Store.open(store_path)
    with store.batch() as batch:
        batch.put(T, "checkpointed", 1)
    store.close()
    store = Store.open(store_path)
    for key in ("died-1", "died-2"):
        with store.batch() as batch:
            batch.put(T, key, 2)
    store.fail(RuntimeError("killed before it closed"))  # no checkpoint at close
    store.close()
    log = live_wal(store_path)
    with open(log, "rb") as handle:
        batches = wal_records(handle.read())
    assert manifest_of(store_path).wal_size == batches[0][1]
    cut(log, batches[1][1] + 5)
    report = check_store(store_path)
    assert report.problems == [] and "partial record at the end" in report.notes[0]["message"]
    with Store.open(store_path) as store:
        assert (store.get(T, "checkpointed"), store.get(T, "died-1"), store.get(T, "died-2")) == (1, 2, None)


def test_a_deleted_live_wal_is_refused_and_never_recreated(cli):
    path = three_ingests(cli)
    log = live_wal(path)
    os.unlink(log)
    missing = (os.path.relpath(log, path), None, True)
    assert [(problem["file"], problem["offset"], "is missing" in problem["message"])
            for problem in check_store(path).problems] == [missing]
    result = cli("ingest", "--raw", "-", input="user: one more\n")
    assert result.exit_code == 3 and "memctl repair" in result.stderr
    assert not os.path.exists(log)
    # Still reported after the refused ingest, beside the marker the first check left.
    marker, *problems = check_store(path).problems
    assert marker["file"] == DAMAGE_FILE
    assert [(problem["file"], problem["offset"], "is missing" in problem["message"]) for problem in problems] == \
        [missing]


def interrupted_flush(store_path: str) -> str:
    """A store of one batch whose flush a crash cut short after it created the next WAL; returns that WAL's path
    (no MANIFEST names it yet)."""
    store = Store.open(store_path)
    with store.batch() as batch:
        batch.put(T, "a", 1)
    crash_at("flush.after_new_wal")
    with pytest.raises(SimulatedCrash):
        store.flush()
    store.close()
    fs.disarm_all()
    unnamed = newest_wal(store_path)
    assert unnamed != live_wal(store_path)
    return unnamed


def test_a_torn_tail_of_a_wal_the_manifest_does_not_name_yet_names_its_offset(store_path):
    """A crash between creating the next WAL and publishing the MANIFEST naming it; the file then lost its header
    (not damage: nothing was written to it). The note says where and why, not "offset None ()"."""
    unnamed = interrupted_flush(store_path)
    cut(unnamed, 16)
    report = check_store(store_path)
    assert report.problems == []
    [note] = [note["message"] for note in report.notes
              if note["file"] == os.path.relpath(unnamed, store_path) and note["message"].startswith("partial header")]
    assert note.startswith("partial header (16 bytes) left by an interrupted creation")


def test_batches_that_end_below_a_recorded_sequence_are_corruption(store_path):
    """After an interrupted flush the writer appends to the next WAL, which no MANIFEST names yet: its size is
    not recorded, but the sequence its batches reached is (wal_sequence), so a cut there is detected too."""
    unnamed = interrupted_flush(store_path)
    store = Store.open(store_path)
    with store.batch() as batch:
        batch.put(T, "b", 2)  # appended to the unnamed WAL
    store.close()
    assert manifest_of(store_path).wal_sequence == 2
    cut(unnamed, WAL_HEADER_SIZE)
    with pytest.raises(CorruptionError, match="end at batch sequence 1, but the MANIFEST recorded batches through 2"):
        Store.open(store_path, writable=False)
    assert check_store(store_path).problems
    with pytest.raises(StoreDamaged):
        Store.open(store_path)


@pytest.mark.parametrize("sequences, message", [
    ([1, 2, 4], "batch sequence 4 follows 2: batches 3..3 are missing"),
    ([1, 2, 2], "batch sequence 2 follows 2: sequences never repeat"),
])
def test_batches_that_do_not_follow_each_other_are_corruption(store_path, sequences, message):
    """A WAL whose records are valid one by one but skip or repeat a sequence lost or gained a batch between
    them (a block cut out, a file spliced): replay refuses it, whatever the checkpoint says."""
    Store.open(store_path).close()
    data = bytearray(wal.encode_header(1, 77))
    for sequence in sequences:
        data += wal.frame(pack([sequence, [[1, T, f"k{sequence}", sequence]]]), 77, len(data))
    with open(live_wal(store_path), "wb") as handle:
        handle.write(data)
    with pytest.raises(CorruptionError, match=message):
        Store.open(store_path, writable=False)


def test_a_writer_that_closes_records_its_batches_and_keeps_them_in_the_wal(store_path):
    store = Store.open(store_path)
    with store.batch() as batch:
        batch.put(T, "a", 1)
    store.close()
    manifest = manifest_of(store_path)
    assert (manifest.wal_size, manifest.wal_sequence, manifest.last_sequence) == \
        (os.path.getsize(live_wal(store_path)), 1, 0)  # recorded, not folded into segments
    with Store.open(store_path, writable=False) as reader:
        assert reader.get(T, "a") == 1
    published = manifest_module.read_current(store_path)
    Store.open(store_path).close()  # nothing appended: nothing to record
    assert manifest_module.read_current(store_path) == published
