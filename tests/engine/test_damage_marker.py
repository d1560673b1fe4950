"""engine.damage: the DAMAGE marker (MANIFEST.spec §15). Whoever finds corruption records it; writers refuse the
store until `memctl repair` has run; readers read on."""

from __future__ import annotations

import os
import struct
import zlib

import pytest

from engine import damage, manifest as manifest_module, wal
from engine.check import check_store
from engine.codec import unpack
from engine.errors import CorruptionError, StoreDamaged, UnsupportedVersion
from engine.format import (
    DAMAGE_FILE,
    DAMAGE_MAX_FINDINGS,
    FORMAT_VERSION,
    RAW_CHUNK_TABLE,
    SEGMENT_DIR,
    WAL_DIR,
    WAL_HEADER_SIZE,
    WAL_MAGIC,
)
from engine.raw import RawStore, record_blob_path
from engine.segment import Segment
from engine.store import Store
from engine_testkit import flip_byte, store_files

T = "test.doc"


def populated(path: str) -> None:
    store = Store.open(path)
    for index in range(40):
        with store.batch() as batch:
            batch.put(T, f"k{index:02d}", "v" * 2_000)
    store.flush()
    with store.batch() as batch:
        batch.put(T, "unflushed", 1)
    store.close()


def manifest_of(path: str):
    return manifest_module.load(path, manifest_module.read_current(path))


def records_segment(path: str) -> str:
    return os.path.join(path, SEGMENT_DIR, manifest_of(path).segments[0]["name"])


def inside_rows(segment: str) -> int:
    """The offset of a byte of the segment's compressed rows (the blocks column of records layout 2)."""
    return Segment.open(segment).column_offset("blocks") + 5


def live_wal(path: str) -> str:
    return wal.wal_path(os.path.join(path, WAL_DIR), manifest_of(path).wal_number)


def findings(path: str) -> list:
    return [(found["file"], found["offset"], found["command"]) for found in damage.read(path).findings]


def test_the_marker_bytes_are_as_specified(store_path):
    populated(store_path)
    synced = os.path.getsize(live_wal(store_path))
    flip_byte(live_wal(store_path), WAL_HEADER_SIZE + 20)  # inside its one batch
    with pytest.raises(CorruptionError):
        Store.open(store_path, writable=False, holder="memctl recall")
    with open(os.path.join(store_path, DAMAGE_FILE), "rb") as handle:
        data = handle.read()
    magic, version, length, body_crc, reserved = struct.unpack_from("<8sIIII", data)
    body = data[24:]
    assert (magic, version, reserved, length, body_crc) == (b"MEMCTLDM", FORMAT_VERSION, 0, len(body), zlib.crc32(body))
    [finding] = unpack(body)["findings"]
    assert set(unpack(body)) == {"findings"}
    assert finding == {"file": os.path.join(WAL_DIR, os.path.basename(live_wal(store_path))), "offset": WAL_HEADER_SIZE,
                       "reason": f"valid records end at byte 32, but the MANIFEST recorded {synced} synced bytes: "
                                 "acknowledged batches were cut off", "found_at": finding["found_at"],
                       "command": "memctl recall", "pid": os.getpid()}
    assert isinstance(finding["found_at"], float) and damage.read(store_path).crc == body_crc


def test_a_reader_that_reads_a_damaged_block_marks_the_store_and_writers_refuse_it(store_path):
    populated(store_path)
    segment = records_segment(store_path)
    flip_byte(segment, inside_rows(segment))
    with Store.open(store_path, writable=False) as reader:
        with pytest.raises(CorruptionError) as caught:
            list(reader.scan(T))
    assert findings(store_path) == [(os.path.relpath(segment, store_path), caught.value.offset, "memctl")]
    with pytest.raises(StoreDamaged) as refused:
        Store.open(store_path)
    message = str(refused.value)
    assert os.path.relpath(segment, store_path) in message and "memctl repair" in message
    with Store.open(store_path, writable=False) as reader:  # readers read on
        assert reader.get(T, "unflushed") == 1


def test_check_marks_the_store_with_what_it_found(store_path):
    populated(store_path)
    segment = records_segment(store_path)
    flip_byte(segment, inside_rows(segment))
    report = check_store(store_path)
    assert [(problem["file"], problem["offset"], "memctl check") for problem in report.problems] == \
        findings(store_path)
    again = check_store(store_path)  # a marked store is not clean: the marker is the first problem
    assert again.problems[0]["file"] == DAMAGE_FILE and "memctl repair" in again.problems[0]["message"]
    assert len(damage.read(store_path).findings) == len(report.problems)  # nothing recorded twice


def test_a_damaged_blob_read_marks_the_store(store):
    raw = RawStore(store)
    with raw.batch() as writer:
        raw_id = writer.put(b"chunk bytes", {}).raw_id
    path = os.path.join(store.path, record_blob_path(raw.get(raw_id)))
    with open(path, "wb") as handle:
        handle.write(b"garbage")
    with pytest.raises(CorruptionError):
        raw.read(raw_id)
    assert [found[0] for found in findings(store.path)] == [os.path.relpath(path, store.path)]


def test_a_refused_writer_changes_nothing(store_path):
    populated(store_path)
    flip_byte(live_wal(store_path), WAL_HEADER_SIZE + 20)
    with pytest.raises(CorruptionError):
        Store.open(store_path)
    before = store_files(store_path)
    for _attempt in range(2):
        with pytest.raises(StoreDamaged):
            Store.open(store_path)
        with pytest.raises(CorruptionError):
            Store.open(store_path, writable=False)  # the same finding: not written again
    assert {name: data for name, data in store_files(store_path).items() if not name.startswith("LOCK")} == \
        {name: data for name, data in before.items() if not name.startswith("LOCK")}


def test_a_file_of_another_format_is_no_damage(store_path):
    populated(store_path)
    log = live_wal(store_path)
    with open(log, "r+b") as handle:
        header = bytearray(handle.read(WAL_HEADER_SIZE))
        struct.pack_into("<I", header, len(WAL_MAGIC), FORMAT_VERSION + 1)
        struct.pack_into("<I", header, WAL_HEADER_SIZE - 4, zlib.crc32(bytes(header[:-4])))
        handle.seek(0)
        handle.write(header)
    with pytest.raises(UnsupportedVersion):
        Store.open(store_path, writable=False)
    assert check_store(store_path).problems
    assert damage.read(store_path) is None


def test_an_unreadable_marker_still_refuses_writers(store_path):
    populated(store_path)
    with open(os.path.join(store_path, DAMAGE_FILE), "wb") as handle:
        handle.write(b"MEMCTLDM and then garbage")
    with pytest.raises(StoreDamaged, match="the marker itself is unreadable"):
        Store.open(store_path)


def test_findings_beyond_the_limit_are_counted(store_path):
    populated(store_path)
    errors = [CorruptionError(os.path.join(store_path, f"seg/{index}"), index, "bad") for index in range(70)]
    damage.record(store_path, errors, "test")
    damage.record(store_path, errors[:3], "test")  # known: nothing changes
    marker = damage.read(store_path)
    assert (len(marker.findings), marker.more) == (DAMAGE_MAX_FINDINGS, 70 - DAMAGE_MAX_FINDINGS)
    assert "and 69 more finding(s)" in marker.summary()


def test_a_marker_the_manifest_resolved_is_removed_by_the_next_writer(store_path):
    """A repair publishes a MANIFEST naming the marker it resolved, then deletes the marker; a crash in between
    leaves a marker that no longer counts."""
    populated(store_path)
    damage.record(store_path, [CorruptionError(os.path.join(store_path, "seg/x"), 0, "bad")], "test")
    crc = damage.read(store_path).crc
    store = Store.open(store_path, writable=False)
    manifest = manifest_of(store_path)
    store.close()
    manifest.resolved_damage = crc
    manifest.number = manifest.next_file_number
    manifest.next_file_number += 1
    manifest_module.publish(store_path, manifest)
    report = check_store(store_path)
    assert report.problems == [] and [note["file"] for note in report.notes] == [DAMAGE_FILE]
    with Store.open(store_path) as writer:
        assert writer.get(T, "unflushed") == 1
    assert damage.read(store_path) is None
    damage.record(store_path, [CorruptionError(os.path.join(store_path, "seg/y"), 0, "bad")], "test")
    with pytest.raises(StoreDamaged):  # a new marker counts again
        Store.open(store_path)


def test_nothing_is_recorded_while_quiet_or_without_a_store(store_path, tmp_path):
    populated(store_path)
    error = CorruptionError(os.path.join(store_path, "seg/x"), 0, "bad")
    with damage.quiet():
        damage.record(store_path, [error], "test")
    assert damage.read(store_path) is None
    damage.record(str(tmp_path), [error], "test")  # no CURRENT: not a store
    assert not os.path.exists(os.path.join(tmp_path, DAMAGE_FILE))


def test_a_reader_without_permission_to_write_still_fails_with_what_it_found(store_path, monkeypatch):
    populated(store_path)
    flip_byte(live_wal(store_path), WAL_HEADER_SIZE + 20)

    def read_only(*_arguments, **_keywords):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(damage.fs, "atomic_write", read_only)
    with pytest.raises(CorruptionError, match="acknowledged batches were cut off"):
        Store.open(store_path, writable=False)
    assert damage.read(store_path) is None


def test_the_marker_names_records_by_their_label(store):
    raw = RawStore(store)
    with raw.batch() as writer:
        raw_id = writer.put(b"chunk bytes", {}).raw_id
    with store.batch() as batch:
        batch.put(RAW_CHUNK_TABLE, raw_id, {**raw.get(raw_id), "refcount": 0})
    check_store(store.path)
    assert [found[0] for found in findings(store.path)] == [f"{RAW_CHUNK_TABLE}/{raw_id}"]
