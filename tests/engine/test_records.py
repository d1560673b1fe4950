"""engine.records: the records segment of MANIFEST.spec section 4, point reads and ordered prefix scans."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine import records as records_module
from engine.codec import pack, unpack
from engine.errors import CorruptionError
from engine.format import KIND_RECORDS, RECORD_FLAG_TOMBSTONE
from engine.records import TOMBSTONE, RecordsSegment, Tombstone, composite_key, key_hash, write_records
from engine.segment import Segment, SegmentWriter

TABLES = {
    "text.doc": {"b": {"n": 2}, "a": {"n": 1}, "ab": [1, 2], "": "empty key", "gone": TOMBSTONE},
    "text": {"k": "a table whose name prefixes another"},
    "text.docs": {"a": "another table sharing a prefix"},
    "graph.node": {"日本": "cjk", "é": "precomposed", "e\u0301": "combining", "😀": "astral", "a\0b": "nul in key",
                   "Z": "upper"},
}


def build(tmp_path, tables, name="000003.records.seg") -> RecordsSegment:
    path = str(tmp_path / name)
    writer = SegmentWriter(path, KIND_RECORDS)
    write_records(writer, tables)
    writer.finish()
    return RecordsSegment(Segment.open(path))


def get(segment: RecordsSegment, table: str, key: str):
    composite = composite_key(table, key)
    return segment.get(composite, key_hash(composite))


@pytest.mark.parametrize("keys", [["a", "chat/0000001", "chat/0000002", "x\0y"], ["日本", "a", "é"], []])
def test_keys_of_a_table_are_composed_and_hashed_in_bulk_as_one_by_one(keys):
    composites = records_module._composite_keys("text.doc", keys)
    assert composites == [composite_key("text.doc", key) for key in keys]
    assert records_module.key_hashes(composites).tolist() == [key_hash(composite) for composite in composites]


def test_composite_key_and_hash_follow_the_spec():
    composite = composite_key("text.doc", "日本")
    assert composite == "text.doc\0日本".encode("utf-8")
    assert key_hash(composite) == int.from_bytes(hashlib.blake2b(composite, digest_size=8).digest(), "little")


def test_columns_on_disk(tmp_path):
    segment = build(tmp_path, TABLES)
    column = segment.segment.column
    rows = sorted(composite_key(table, key) for table, keys in TABLES.items() for key in keys)
    count = len(rows)
    keys, key_offsets = column("keys"), column("key_offsets")
    assert [keys[key_offsets[row]: key_offsets[row + 1]].tobytes() for row in range(count)] == rows
    assert key_offsets[0] == 0 and key_offsets[-1] == len(keys)
    hashes, hash_rows = column("hashes"), column("hash_rows")
    assert hashes.dtype == np.dtype("<u8") and hash_rows.dtype == np.dtype("<u4")
    assert list(hashes) == sorted(hashes)
    assert sorted(hash_rows) == list(range(count))
    assert [int(hashes[index]) for index in range(count)] == [key_hash(rows[row]) for row in hash_rows]
    flags, values, value_offsets = column("flags"), column("values"), column("value_offsets")
    for row, composite in enumerate(rows):
        table, key = composite.decode("utf-8").split("\0", 1)
        value = TABLES[table][key]
        raw = values[value_offsets[row]: value_offsets[row + 1]].tobytes()
        if value is TOMBSTONE:
            assert (flags[row] & RECORD_FLAG_TOMBSTONE, raw) == (RECORD_FLAG_TOMBSTONE, b"")
        else:
            assert (flags[row], unpack(raw)) == (0, value)
    assert segment.segment.meta["count"] == count
    for table, (start, end) in segment.segment.meta["tables"].items():
        assert [row.split(b"\0", 1)[0] for row in rows[start:end]] == [table.encode()] * len(TABLES[table])


def test_point_reads(tmp_path):
    segment = build(tmp_path, TABLES)
    for table, keys in TABLES.items():
        for key, value in keys.items():
            assert get(segment, table, key) == (True, value)
    assert get(segment, "text.doc", "c") == (False, None)
    assert get(segment, "text.do", "c") == (False, None)
    assert get(segment, "absent.table", "a") == (False, None)
    assert get(segment, "text", "doc\0a") == (False, None)  # not a way into another table


def test_tombstones_are_returned_as_such(tmp_path):
    found, value = get(build(tmp_path, TABLES), "text.doc", "gone")
    assert found and value is TOMBSTONE


@pytest.mark.parametrize("table", list(TABLES))
def test_iterate_is_in_key_order(tmp_path, table):
    segment = build(tmp_path, TABLES)
    assert list(segment.iterate(table)) == sorted(TABLES[table].items(), key=lambda item: item[0].encode())
    assert [key for key, _value in segment.iterate(table)] == sorted(TABLES[table])  # code points = UTF-8 order


@pytest.mark.parametrize(
    "table, prefix, keys",
    [
        ("text.doc", "a", ["a", "ab"]),
        ("text.doc", "ab", ["ab"]),
        ("text.doc", "abc", []),
        ("text.doc", "", ["", "a", "ab", "b", "gone"]),
        ("text.doc", "z", []),
        ("text", "", ["k"]),
        ("graph.node", "e", ["e\u0301"]),
        ("graph.node", "a\0", ["a\0b"]),
        ("graph.node", "日", ["日本"]),
        ("nope", "", []),
    ],
)
def test_iterate_with_prefix(tmp_path, table, prefix, keys):
    assert [key for key, _value in build(tmp_path, TABLES).iterate(table, prefix)] == keys


def test_hash_collisions_are_resolved_by_comparing_keys(tmp_path, monkeypatch):
    monkeypatch.setattr(records_module, "key_hash", lambda composite: 7)
    monkeypatch.setattr(records_module, "key_hashes", lambda composites: np.full(len(composites), 7, np.uint64))
    segment = build(tmp_path, TABLES)
    assert set(segment.segment.column("hashes").tolist()) == {7}
    for table, keys in TABLES.items():
        for key, value in keys.items():
            assert segment.get(composite_key(table, key), 7) == (True, value)
    assert segment.get(composite_key("text.doc", "missing"), 7) == (False, None)


def test_empty_segment(tmp_path):
    segment = build(tmp_path, {})
    assert segment.count == 0
    assert get(segment, "t.x", "a") == (False, None)
    assert list(segment.iterate("t.x")) == []


def test_tombstone_is_a_singleton():
    assert Tombstone() is TOMBSTONE
    assert repr(TOMBSTONE) == "TOMBSTONE"


def test_columns_are_loaded_lazily(tmp_path):
    segment = build(tmp_path, TABLES)
    assert segment._columns is None  # opening a store must not touch every column of every segment
    get(segment, "text", "k")
    assert segment._columns is not None


def write_with_meta(tmp_path, tables, meta) -> RecordsSegment:
    path = str(tmp_path / "bad.seg")
    writer = SegmentWriter(path, KIND_RECORDS)
    write_records(writer, tables)
    writer.set_meta(meta)
    writer.finish()
    return RecordsSegment(Segment.open(path))


def test_count_disagreeing_with_the_columns_is_corruption(tmp_path):
    segment = write_with_meta(tmp_path, {"t.x": {"a": 1, "b": 2}}, {"tables": {"t.x": [0, 2]}, "count": 3})
    with pytest.raises(CorruptionError) as caught:
        get(segment, "t.x", "a")
    assert "record count" in caught.value.reason


def test_offsets_outside_their_columns_are_corruption(tmp_path):
    path = str(tmp_path / "bad.seg")
    writer = SegmentWriter(path, KIND_RECORDS)
    writer.add_column("hashes", np.array([key_hash(composite_key("t.x", "a"))], dtype=np.uint64))
    writer.add_column("hash_rows", np.array([0], dtype=np.uint32))
    writer.add_column("key_offsets", np.array([0, 99], dtype=np.uint64))
    writer.add_bytes("keys", composite_key("t.x", "a"))
    writer.add_column("value_offsets", np.array([0, 1], dtype=np.uint64))
    writer.add_bytes("values", pack(1))
    writer.add_column("flags", np.zeros(1, dtype=np.uint8))
    writer.set_meta({"tables": {"t.x": [0, 1]}, "count": 1})
    writer.finish()
    with pytest.raises(CorruptionError) as caught:
        get(RecordsSegment(Segment.open(path)), "t.x", "a")
    assert "outside" in caught.value.reason


def test_damaged_value_bytes_are_corruption_not_data(tmp_path):
    segment = build(tmp_path, {"t.x": {"a": {"big": "v" * 100}}})
    offset = segment.segment._columns["values"][2]
    with open(segment.path, "r+b") as handle:
        handle.seek(offset + 5)
        handle.write(b"\xc1")
    with pytest.raises(CorruptionError) as caught:
        get(RecordsSegment(Segment.open(segment.path)), "t.x", "a")
    assert caught.value.path == segment.path


keys_strategy = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)
values_strategy = st.one_of(st.integers(-5, 5), st.text(max_size=4), st.just(TOMBSTONE))
tables_strategy = st.dictionaries(st.sampled_from(["a", "a.b", "a.bc", "b.x"]),
                                  st.dictionaries(keys_strategy, values_strategy, max_size=8), max_size=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tables=tables_strategy, prefix=keys_strategy)
def test_reads_match_a_dict(tmp_path_factory, tables, prefix):
    segment = build(tmp_path_factory.mktemp("records"), tables)
    for table, rows in tables.items():
        for key, value in rows.items():
            assert get(segment, table, key) == (True, value)
        expected = sorted((key, value) for key, value in rows.items() if key.startswith(prefix))
        assert list(segment.iterate(table, prefix)) == expected
