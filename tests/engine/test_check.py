"""engine.check: clean on healthy stores, every problem reported with its file and offset, nothing modified."""

from __future__ import annotations

import os
import sys
import types

import numpy as np
import pytest

from engine import kinds, manifest as manifest_module, wal
from engine.check import check_store
from engine.codec import pack
from engine.errors import CorruptionError, NoStore
from engine.format import (
    CURRENT_FILE,
    KIND_RECORDS,
    MANIFEST_HEADER_SIZE,
    SEGMENT_DIR,
    SEGMENT_FOOTER_SIZE,
    WAL_DIR,
    WAL_HEADER_SIZE,
)
from engine.manifest import Manifest
from engine.segment import Segment, SegmentWriter
from engine.store import Store
from engine_testkit import flip_byte, store_files

T = "test.item"


def populated(path: str) -> Store:
    store = Store.open(path)
    for index in range(3):
        with store.batch() as batch:
            batch.put(T, f"k{index}", {"n": index, "text": "x" * 50})
            batch.allocate("doc")
        store.flush()
    with store.batch() as batch:
        batch.put(T, "tail", 1)
        batch.delete(T, "k0")
    return store


def problem_files(report) -> list:
    return [(problem["file"], problem["offset"]) for problem in report.problems]


def current_manifest(path: str) -> Manifest:
    return manifest_module.load(path, manifest_module.read_current(path))


def test_a_healthy_store_is_clean_and_check_changes_nothing(store_path):
    store = populated(store_path)
    before = store_files(store_path)
    report = check_store(store_path)
    assert report.clean and report.problems == [] and report.notes == []
    expected = {"manifest": manifest_module.read_current(store_path), "segments": 3, "wal_files": 1, "counters": 1}
    assert report.checked.items() >= expected.items()
    assert report.as_dict()["clean"] is True and report.as_dict()["path"] == os.path.abspath(store_path)
    assert store_files(store_path) == before  # no lock taken, nothing written, even with a writer open
    store.compact()
    store.close()
    assert check_store(store_path).clean


def test_a_fresh_store_is_clean(store_path):
    Store.open(store_path).close()
    assert check_store(store_path).clean


def test_no_store_is_no_report(tmp_path):
    for path in (tmp_path, tmp_path / "missing"):
        with pytest.raises(NoStore, match=f"no memctl store at {path} "):
            check_store(str(path))


def test_a_lost_current_beside_data_is_a_problem(store_path):
    populated(store_path).close()
    os.remove(os.path.join(store_path, CURRENT_FILE))
    report = check_store(store_path)
    assert problem_files(report) == [("CURRENT", None)]
    assert "CURRENT is missing but the store holds" in report.problems[0]["message"]


def test_bad_current(store_path):
    populated(store_path).close()
    with open(os.path.join(store_path, CURRENT_FILE), "wb") as handle:
        handle.write(b"MANIFEST-x\n")
    assert problem_files(check_store(store_path)) == [("CURRENT", 0)]


def test_damaged_manifest(store_path):
    populated(store_path).close()
    name = manifest_module.read_current(store_path)
    flip_byte(os.path.join(store_path, name), os.path.getsize(os.path.join(store_path, name)) - 1)
    report = check_store(store_path)
    assert problem_files(report) == [(name, MANIFEST_HEADER_SIZE)]
    assert "checksum" in report.problems[0]["message"]


def first_segment(path: str) -> str:
    return os.path.join(SEGMENT_DIR, current_manifest(path).segments[0]["name"])


def column_range(path: str, column: str) -> tuple[int, int]:
    segment = Segment.open(path)
    _dtype, _shape, offset, length, _crc = segment._columns[column]
    return offset, offset + length


def test_damaged_segment_footer(store_path):
    populated(store_path).close()
    relative = first_segment(store_path)
    path = os.path.join(store_path, relative)
    flip_byte(path, os.path.getsize(path) - 1)
    report = check_store(store_path)
    assert problem_files(report) == [(relative, os.path.getsize(path) - SEGMENT_FOOTER_SIZE)]


def test_damaged_segment_column_is_reported_at_its_offset(store_path):
    populated(store_path).close()
    relative = first_segment(store_path)
    path = os.path.join(store_path, relative)
    start, end = column_range(path, "blocks")
    flip_byte(path, start + 3)
    report = check_store(store_path)
    assert [problem["file"] for problem in report.problems] == [relative]
    assert report.problems[0]["offset"] is not None and start <= report.problems[0]["offset"] < end


def test_damaged_segment_column_is_a_problem(store_path):
    populated(store_path).close()
    relative = first_segment(store_path)
    path = os.path.join(store_path, relative)
    start, _end = column_range(path, "blocks")
    flip_byte(path, start + 3)
    report = check_store(store_path)
    assert [problem["file"] for problem in report.problems] == [relative]


def test_missing_segment(store_path):
    populated(store_path).close()
    relative = first_segment(store_path)
    os.unlink(os.path.join(store_path, relative))
    report = check_store(store_path)
    assert problem_files(report) == [(relative, None)]
    assert "missing" in report.problems[0]["message"]


def test_a_segment_the_manifest_describes_wrongly(store_path):
    populated(store_path).close()
    manifest = current_manifest(store_path)
    manifest.segments[1]["crc"] ^= 1
    manifest.segments[2]["kind"] = "text.postings"
    manifest.segments.append(dict(manifest.segments[0]))
    manifest.number = manifest.next_file_number
    manifest.next_file_number += 1
    manifest_module.publish(store_path, manifest)
    report = check_store(store_path)
    names = [os.path.join(SEGMENT_DIR, entry["name"]) for entry in manifest.segments]
    messages = {(problem["file"], problem["message"].split(" ")[0]) for problem in report.problems}
    assert (names[1], "file") in messages  # "file checksum differs from the MANIFEST's"
    assert (names[2], "kind") in messages
    assert (names[0], "named") in messages  # "named twice in the MANIFEST"


def test_bad_counters_and_file_numbers(store_path):
    populated(store_path).close()
    manifest = current_manifest(store_path)
    manifest.counters["doc"] = -1
    manifest.number = manifest.next_file_number
    manifest.next_file_number = 4  # below the WAL's and the MANIFEST's own numbers
    manifest_module.publish(store_path, manifest)
    messages = " | ".join(problem["message"] for problem in check_store(store_path).problems)
    assert "id counter 'doc' holds -1" in messages
    assert "next_file_number 4 is not above" in messages
    assert "file number is not below next_file_number" in messages


def live_wal(path: str) -> str:
    return os.path.join(WAL_DIR, f"{current_manifest(path).wal_number:06d}.log")


def test_a_torn_wal_tail_is_a_note_not_a_problem(store_path):
    populated(store_path).close()
    relative = live_wal(store_path)
    with open(os.path.join(store_path, relative), "ab") as handle:
        handle.write(b"\x00\x01\x02")
    report = check_store(store_path)
    assert report.clean
    assert [note["file"] for note in report.notes] == [relative]
    assert report.notes[0]["message"].startswith("partial record at the end: 3 bytes from offset ")


def test_wal_damage_before_valid_blocks_is_a_problem_with_offset(store_path):
    store = Store.open(store_path)
    for index in range(30):
        with store.batch() as batch:
            batch.put(T, f"k{index}", "v" * 3_000)
    store.close()
    relative = live_wal(store_path)
    flip_byte(os.path.join(store_path, relative), WAL_HEADER_SIZE + 50)
    assert problem_files(check_store(store_path)) == [(relative, WAL_HEADER_SIZE)]


def test_damaged_wal_header(store_path):
    populated(store_path).close()
    relative = live_wal(store_path)
    flip_byte(os.path.join(store_path, relative), 0)
    assert problem_files(check_store(store_path)) == [(relative, 0)]


def test_missing_live_wal(store_path):
    populated(store_path).close()
    os.unlink(os.path.join(store_path, live_wal(store_path)))
    report = check_store(store_path)
    assert problem_files(report) == [(live_wal(store_path), None)]


def test_a_wal_under_the_wrong_name(store_path):
    populated(store_path).close()
    relative = live_wal(store_path)
    number = current_manifest(store_path).wal_number
    os.rename(os.path.join(store_path, relative), os.path.join(store_path, WAL_DIR, f"{number + 1:06d}.log"))
    messages = [problem["message"] for problem in check_store(store_path).problems]
    assert f"header says WAL number {number}" in messages


def test_leftover_files_are_notes(store_path):
    store = populated(store_path)
    store.close()
    with open(os.path.join(store_path, SEGMENT_DIR, "000099.records.seg"), "wb") as handle:
        handle.write(b"orphan")
    with open(wal.wal_path(os.path.join(store_path, WAL_DIR), 1), "wb") as handle:
        handle.write(b"old")
    report = check_store(store_path)
    assert report.clean
    assert sorted(note["file"] for note in report.notes) == [os.path.join(SEGMENT_DIR, "000099.records.seg"),
                                                             os.path.join(WAL_DIR, "000001.log")]


def publish_extra_segment(store_path: str, kind: str, owner: str, columns: dict, meta: dict) -> str:
    """Write a segment by hand and publish a MANIFEST naming it, as a buggy writer could."""
    manifest = current_manifest(store_path)
    name = f"{manifest.next_file_number:06d}.{kind}.seg"
    writer = SegmentWriter(os.path.join(store_path, SEGMENT_DIR, name), kind)
    for column, array in columns.items():
        writer.add_column(column, array)
    writer.set_meta(meta)
    entry = writer.finish()
    entry["owner"] = owner
    manifest.segments.append(entry)
    manifest.number = manifest.next_file_number + 1
    manifest.next_file_number += 2
    manifest_module.publish(store_path, manifest)
    return os.path.join(SEGMENT_DIR, name)


def records_columns(keys: list[bytes], hashes: list[int], key_offsets=None) -> dict:
    values = pack(1) * len(keys)
    return {
        "hashes": np.array(hashes, dtype=np.uint64),
        "hash_rows": np.arange(len(keys), dtype=np.uint32),
        "key_offsets": np.array(key_offsets or [0] + list(np.cumsum([len(key) for key in keys])), dtype=np.uint64),
        "keys": np.frombuffer(b"".join(keys), dtype=np.uint8),
        "value_offsets": np.arange(len(keys) + 1, dtype=np.uint64),
        "values": np.frombuffer(values, dtype=np.uint8),
        "flags": np.zeros(len(keys), dtype=np.uint8),
    }


@pytest.mark.parametrize(
    "keys, hashes, key_offsets, tables, reason",
    [
        ([b"t.x\0a", b"t.x\0b"], [2, 1], None, {"t.x": [0, 2]}, "hashes are not sorted"),
        ([b"t.x\0b", b"t.x\0a"], [1, 2], None, {"t.x": [0, 2]}, "not strictly sorted"),
        ([b"t.x\0a", b"t.x\0a"], [1, 1], None, {"t.x": [0, 2]}, "not strictly sorted"),
        ([b"t.x\0a", b"t.x\0b"], [1, 2], [0, 12, 10], {"t.x": [0, 2]}, "key offsets decrease"),
        ([b"t.x\0a", b"t.x\0b"], [1, 2], None, {"t.x": [0, 3]}, "out of range"),
    ],
)
def test_records_invariants(store_path, keys, hashes, key_offsets, tables, reason):
    populated(store_path).close()
    columns = records_columns(keys, hashes, key_offsets)
    relative = publish_extra_segment(store_path, KIND_RECORDS, KIND_RECORDS, columns,
                                     {"tables": tables, "count": len(keys)})
    report = check_store(store_path)
    assert [problem["file"] for problem in report.problems] == [relative]
    assert reason in report.problems[0]["message"]


class CheckedKind:
    def __init__(self, store, owner):
        self.store = store

    def check(self, segments):
        return [CorruptionError(segment.path, 7, "postings out of order") for segment in segments]


@pytest.fixture
def checked_kind(monkeypatch):
    module = types.ModuleType("engine_test_checked_kind")
    module.CheckedKind = CheckedKind
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(kinds._REGISTRY, "checked", f"{module.__name__}:CheckedKind")


def test_derived_kinds_check_their_own_segments(store_path, checked_kind):
    populated(store_path).close()
    relative = publish_extra_segment(store_path, "checked.postings", "checked", {"a": np.arange(3)}, {})
    report = check_store(store_path)
    assert [(problem["file"], problem["offset"], problem["message"]) for problem in report.problems] == [
        (relative, 7, "postings out of order")]


def test_segments_of_an_unknown_kind(store_path):
    populated(store_path).close()
    publish_extra_segment(store_path, "mystery.x", "mystery", {"a": np.arange(3)}, {})
    messages = [problem["message"] for problem in check_store(store_path).problems]
    assert messages == ["segments of 'mystery': no derived segment kind named 'mystery'"]
