"""engine.records: the records segment of MANIFEST.spec section 4 in both layouts (blocks, written; hashed, read),
point reads, ordered prefix scans, compaction's merge, and damage detection."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings, strategies as st

from engine.codec import pack, unpack
from engine.errors import CorruptionError, UnsupportedVersion
from engine.format import KIND_RECORDS, RECORD_FLAG_TOMBSTONE, RECORDS_LAYOUT_BLOCKS
from engine.records import TOMBSTONE, BlockCache, Tombstone, composite_key, merge_records, open_segment, write_records
from engine.records import writer as writer_module
from engine.records.blocks import Block, encode_block
from engine.records.rows import key_hash, key_hashes
from engine.records.rows import composite_keys
from engine.segment import Segment, SegmentWriter
from records_layout1 import write_layout1

TABLES = {
    "text.doc": {"b": {"n": 2}, "a": {"n": 1}, "ab": [1, 2], "": "empty key", "gone": TOMBSTONE},
    "text": {"k": "a table whose name prefixes another"},
    "text.docs": {"a": "another table sharing a prefix"},
    "graph.node": {"日本": "cjk", "é": "precomposed", "e\u0301": "combining", "😀": "astral", "a\0b": "nul in key",
                   "Z": "upper"},
}
LAYOUTS = ["blocks", "small blocks", "hashed"]


def build(tmp_path, tables, layout="blocks", name="000003.records.seg", monkeypatch=None):
    path = str(tmp_path / name)
    if layout == "hashed":
        write_layout1(path, tables)
    else:
        with pytest.MonkeyPatch.context() as patch:
            if layout == "small blocks":
                patch.setattr(writer_module, "RECORDS_BLOCK_BYTES", 40)  # a block every row or two
            writer = SegmentWriter(path, KIND_RECORDS)
            write_records(writer, tables)
            writer.finish()
    return open_segment(Segment.open(path))


def get(segment, table: str, key: str):
    composite = composite_key(table, key)
    return segment.get(composite, key_hash(composite))


def get_many(segment, composites: list) -> dict:
    return segment.get_many(composites, key_hashes(composites))


def sorted_rows(tables: dict) -> list:
    return sorted((composite_key(table, key), value) for table, keys in tables.items() for key, value in keys.items())


@pytest.mark.parametrize("keys", [["a", "chat/0000001", "chat/0000002", "x\0y"], ["日本", "a", "é"], []])
def test_keys_of_a_table_are_composed_in_bulk_as_one_by_one(keys):
    assert composite_keys("text.doc", keys) == [composite_key("text.doc", key) for key in keys]


def test_composite_key_and_layout1_hash_follow_the_spec():
    composite = composite_key("text.doc", "日本")
    assert composite == "text.doc\0日本".encode("utf-8")
    assert key_hash(composite) == int.from_bytes(hashlib.blake2b(composite, digest_size=8).digest(), "little")
    assert key_hashes([composite, b"x"]).tolist() == [key_hash(composite), key_hash(b"x")]


def decompressed_blocks(segment) -> list[bytes]:
    column = segment.segment.column
    offsets, blocks = column("block_offsets").tolist(), column("blocks").tobytes()
    return [zstandard.ZstdDecompressor().decompress(blocks[start:end]) for start, end in zip(offsets, offsets[1:])]


@pytest.mark.parametrize("layout", ["blocks", "small blocks"])
def test_block_columns_on_disk(tmp_path, layout):
    """Every byte as section 4 lays it out: the frames decompress to key ends, value ends, flags, keys, values;
    the index gives each block's first row and first key; the meta the tables' row ranges."""
    segment = build(tmp_path, TABLES, layout)
    column = segment.segment.column
    rows = sorted_rows(TABLES)
    assert segment.segment.meta["layout"] == RECORDS_LAYOUT_BLOCKS
    block_rows, key_offsets, first_keys = column("block_rows"), column("first_key_offsets"), column("first_keys")
    assert (column("block_offsets").dtype, block_rows.dtype, key_offsets.dtype) == (np.dtype("<u8"),) * 3
    found = []
    for number, data in enumerate(decompressed_blocks(segment)):
        count = int(block_rows[number + 1] - block_rows[number])
        planes = np.frombuffer(data, np.uint8, 8 * count).reshape(4, 2 * count)
        lengths = (planes.astype(np.int64) << (8 * np.arange(4))[:, None]).sum(axis=0).tolist()
        flags = data[8 * count: 9 * count]
        ends = np.cumsum([9 * count] + lengths).tolist()
        assert ends[-1] == len(data)
        for row in range(count):
            key, value = data[ends[row]: ends[row + 1]], data[ends[count + row]: ends[count + row + 1]]
            found.append((key, TOMBSTONE if flags[row] & RECORD_FLAG_TOMBSTONE else unpack(value)))
            if flags[row] & RECORD_FLAG_TOMBSTONE:
                assert value == b""
        assert first_keys[key_offsets[number]: key_offsets[number + 1]].tobytes() == found[-count][0]
    assert found == rows
    assert segment.segment.meta["count"] == len(rows) == int(block_rows[-1])
    assert segment.segment.meta["blocks"] == len(block_rows) - 1 == (1 if layout == "blocks" else len(block_rows) - 1)
    if layout == "small blocks":
        assert len(block_rows) - 1 >= 4  # several blocks, the lookups cross block boundaries
    for table, (start, end) in segment.segment.meta["tables"].items():
        assert [row[0].split(b"\0", 1)[0] for row in rows[start:end]] == [table.encode()] * len(TABLES[table])


def test_a_block_holds_its_lengths_in_byte_planes():
    data = encode_block([b"t\0a", b"t\0" + b"b" * 300], [pack(1), None])
    assert data[:16] == bytes([3, 46, 1, 0]) + bytes([0, 1, 0, 0]) + bytes(8)  # 3, 302, 1, 0
    assert data[16:] == bytes([0, RECORD_FLAG_TOMBSTONE]) + b"t\0a" + b"t\0" + b"b" * 300 + pack(1)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_point_reads(tmp_path, layout):
    segment = build(tmp_path, TABLES, layout)
    for table, keys in TABLES.items():
        for key, value in keys.items():
            assert get(segment, table, key) == (True, value)
    assert get(segment, "text.doc", "c") == (False, None)
    assert get(segment, "text.do", "c") == (False, None)
    assert get(segment, "absent.table", "a") == (False, None)
    assert get(segment, "Z", "a") == (False, None)  # below every key
    assert get(segment, "text", "doc\0a") == (False, None)  # not a way into another table


@pytest.mark.parametrize("layout", LAYOUTS)
def test_get_many_equals_get_of_each(tmp_path, layout):
    segment = build(tmp_path, TABLES, layout)
    pairs = [(table, key) for table, keys in TABLES.items() for key in keys] + [("text.doc", "c"), ("a", "a"), ("zz", "z")]
    asked = [composite_key(table, key) for table, key in pairs]
    expected = {index: get(segment, table, key)[1] for index, (table, key) in enumerate(pairs) if get(segment, table, key)[0]}
    assert get_many(segment, asked) == expected and len(expected) == len(asked) - 3


@pytest.mark.parametrize("layout", LAYOUTS)
def test_tombstones_are_returned_as_such(tmp_path, layout):
    found, value = get(build(tmp_path, TABLES, layout), "text.doc", "gone")
    assert found and value is TOMBSTONE


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("table", list(TABLES))
def test_iterate_is_in_key_order(tmp_path, table, layout):
    segment = build(tmp_path, TABLES, layout)
    assert list(segment.iterate(table)) == sorted(TABLES[table].items(), key=lambda item: item[0].encode())
    assert [key for key, _value in segment.iterate(table)] == sorted(TABLES[table])  # code points = UTF-8 order


@pytest.mark.parametrize("layout", LAYOUTS)
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
def test_iterate_with_prefix(tmp_path, table, prefix, keys, layout):
    assert [key for key, _value in build(tmp_path, TABLES, layout).iterate(table, prefix)] == keys


def test_layout1_hash_collisions_are_resolved_by_comparing_keys(tmp_path):
    path = str(tmp_path / "000003.records.seg")
    write_layout1(path, TABLES, hashes=lambda composites: np.full(len(composites), 7, np.uint64))
    segment = open_segment(Segment.open(path))
    assert set(segment.segment.column("hashes").tolist()) == {7}
    for table, keys in TABLES.items():
        for key, value in keys.items():
            assert segment.get(composite_key(table, key), 7) == (True, value)
    assert segment.get(composite_key("text.doc", "missing"), 7) == (False, None)
    composites = [composite_key("text.doc", "a"), composite_key("x", "y")]
    assert segment.get_many(composites, np.full(2, 7, np.uint64)) == {0: {"n": 1}}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_empty_segment(tmp_path, layout):
    segment = build(tmp_path, {}, layout)
    assert segment.count == 0
    assert get(segment, "t.x", "a") == (False, None)
    assert list(segment.iterate("t.x")) == [] and list(segment.raw_rows(0)) == []
    segment.check()


def test_tombstone_is_a_singleton():
    assert Tombstone() is TOMBSTONE
    assert repr(TOMBSTONE) == "TOMBSTONE"


@pytest.mark.parametrize("layout", ["blocks", "hashed"])
def test_nothing_is_read_at_open(tmp_path, layout):
    segment = build(tmp_path, TABLES, layout)
    loaded = "_index" if layout == "blocks" else "_columns"
    assert getattr(segment, loaded) is None  # opening a store must not touch every column of every segment
    get(segment, "text", "k")
    assert getattr(segment, loaded) is not None


def test_a_cached_block_is_not_decompressed_again_and_the_cache_keeps_its_budget(tmp_path, monkeypatch):
    tables = {"t.x": {f"k{number:04d}": "v" * 50 for number in range(400)}}
    monkeypatch.setattr(writer_module, "RECORDS_BLOCK_BYTES", 1000)
    writer = SegmentWriter(str(tmp_path / "000003.records.seg"), KIND_RECORDS)
    write_records(writer, tables)
    writer.finish()
    cache = BlockCache(budget=3000)
    segment = open_segment(Segment.open(str(tmp_path / "000003.records.seg")), cache)
    assert segment.block_count > 10
    decompressed = []
    real = segment._frame_size
    monkeypatch.setattr(segment, "_frame_size", lambda *arguments: decompressed.append(1) or real(*arguments))
    assert get(segment, "t.x", "k0003") == (True, "v" * 50)
    assert get(segment, "t.x", "k0004") == (True, "v" * 50)  # the same block
    assert len(decompressed) == 1
    for number in range(400):
        assert get(segment, "t.x", f"k{number:04d}") == (True, "v" * 50)
    assert cache._bytes <= 3000 and len(cache._entries) <= 3
    list(segment.raw_rows(0))  # compaction's read passes the cache by
    assert len(cache._entries) <= 3


def test_layout_above_the_supported_one_is_refused(tmp_path):
    segment = build(tmp_path, TABLES)
    path = str(tmp_path / "000004.records.seg")
    writer = SegmentWriter(path, KIND_RECORDS)
    writer.add_bytes("blocks", b"")
    writer.set_meta({**segment.segment.meta, "layout": RECORDS_LAYOUT_BLOCKS + 1})
    writer.finish()
    with pytest.raises(UnsupportedVersion):
        open_segment(Segment.open(path))


def write_with_meta(tmp_path, tables, meta):
    path = str(tmp_path / "bad.seg")
    writer = SegmentWriter(path, KIND_RECORDS)
    write_records(writer, tables)
    writer.set_meta(meta)
    writer.finish()
    return open_segment(Segment.open(path))


@pytest.mark.parametrize("meta", [{"layout": 2, "tables": {"t.x": [0, 2]}, "count": 3, "blocks": 1},
                                  {"layout": 2, "tables": {"t.x": [0, 2]}, "count": 2, "blocks": 2}])
def test_meta_disagreeing_with_the_index_is_corruption(tmp_path, meta):
    segment = write_with_meta(tmp_path, {"t.x": {"a": 1, "b": 2}}, meta)
    with pytest.raises(CorruptionError) as caught:
        get(segment, "t.x", "a")
    assert caught.value.path == segment.path


def test_meta_tables_disagreeing_with_the_keys_are_found_by_check(tmp_path):
    segment = write_with_meta(tmp_path, {"t.x": {"a": 1}, "t.y": {"b": 2}},
                              {"layout": 2, "tables": {"t.x": [0, 2]}, "count": 2, "blocks": 1})
    with pytest.raises(CorruptionError) as caught:
        segment.check()
    assert "tables" in caught.value.reason


def segment_from_blocks(tmp_path, blocks: list, first_keys: list, rows: list, tables: dict, level=3):
    """A layout-2 segment of hand-made block contents (CRCs all correct): what a buggy writer could leave."""
    path = str(tmp_path / "crafted.records.seg")
    writer = SegmentWriter(path, KIND_RECORDS)
    frames = [zstandard.ZstdCompressor(level=level).compress(block) for block in blocks]
    writer.add_bytes("blocks", b"".join(frames))
    writer.add_column("block_offsets", np.cumsum([0] + [len(frame) for frame in frames]).astype(np.uint64))
    writer.add_column("block_rows", np.cumsum([0] + rows).astype(np.uint64))
    writer.add_column("first_key_offsets", np.cumsum([0] + [len(key) for key in first_keys]).astype(np.uint64))
    writer.add_bytes("first_keys", b"".join(first_keys))
    writer.set_meta({"layout": 2, "tables": tables, "count": sum(rows), "blocks": len(blocks)})
    writer.finish()
    return open_segment(Segment.open(path))


def planes(*lengths) -> bytes:
    """Lengths in the block's four byte planes."""
    return bytes(length >> (8 * plane) & 0xFF for plane in range(4) for length in lengths)


@pytest.mark.parametrize("rows, content, reason", [
    (1, planes(3, 9) + b"\0" + b"t\0a", "add up"),  # the value runs past the bytes
    (1, planes(4, 0) + b"\0" + b"t\0a", "add up"),  # the key runs past the bytes
    (1, planes(3, 0) + b"\0" + b"t\0a" + b"extra", "add up"),  # bytes left over
    (2, planes(3, 0) + b"\0" + b"t\0a", "cannot hold"),  # two rows' header in fewer bytes
    (1, planes(3, 1) + b"\0" + b"t\0b" + pack(1), "first key"),  # not the index's first key
    (1, b"", "cannot hold"),
])
def test_a_block_that_does_not_decode_is_corruption(tmp_path, rows, content, reason):
    segment = segment_from_blocks(tmp_path, [content], [b"t\0a"], [rows], {"t.x": [0, rows]})
    with pytest.raises(CorruptionError) as caught:
        get(segment, "t", "a")
    assert reason in caught.value.reason and caught.value.path == segment.path
    with pytest.raises(CorruptionError):
        segment.check()


def test_keys_out_of_order_across_blocks_are_found_by_check(tmp_path):
    blocks = [encode_block([b"t\0b"], [pack(1)]), encode_block([b"t\0a"], [pack(2)])]
    segment = segment_from_blocks(tmp_path, blocks, [b"t\0b", b"t\0a"], [1, 1], {"t": [0, 2]})
    with pytest.raises(CorruptionError) as caught:
        segment.check()
    assert "ascend" in caught.value.reason


def test_a_tombstone_holding_a_value_is_found_by_check(tmp_path):
    block = planes(3, 1) + bytes([RECORD_FLAG_TOMBSTONE]) + b"t\0a" + pack(1)
    segment = segment_from_blocks(tmp_path, [block], [b"t\0a"], [1], {"t": [0, 1]})
    assert get(segment, "t", "a") == (True, TOMBSTONE)
    with pytest.raises(CorruptionError) as caught:
        segment.check()
    assert "tombstone" in caught.value.reason


def test_a_bit_flip_in_a_compressed_block_is_named_never_served(tmp_path):
    tables = {"t.x": {f"k{number:04d}": f"value {number}" for number in range(2000)}}
    segment = build(tmp_path, tables)
    start = segment.segment.column_offset("blocks")
    length = int(segment.segment.column("block_offsets")[-1])
    with open(segment.path, "r+b") as handle:
        handle.seek(start + length // 2)
        byte = handle.read(1)[0]
        handle.seek(start + length // 2)
        handle.write(bytes((byte ^ 0x10,)))
    damaged = open_segment(Segment.open(segment.path))
    failures = 0
    for number in range(2000):
        try:
            assert get(damaged, "t.x", f"k{number:04d}") == (True, f"value {number}")
        except CorruptionError as error:
            assert error.path == segment.path and "checksum mismatch" in error.reason
            assert start <= error.offset <= start + length
            failures += 1
    assert failures  # the damaged checksum block's rows fail, every other row reads
    with pytest.raises(CorruptionError):
        list(damaged.raw_rows(0))


def test_byte_stream_columns_equal_whole_columns(tmp_path, monkeypatch):
    """A streamed column's bytes and block CRCs are those of the same bytes added at once."""
    data = bytes(range(256)) * 1000 + b"tail"
    paths = [str(tmp_path / "whole.seg"), str(tmp_path / "streamed.seg")]
    writer = SegmentWriter(paths[0], KIND_RECORDS)
    writer.add_bytes("column", data)
    writer.finish()
    writer = SegmentWriter(paths[1], KIND_RECORDS)
    stream = writer.byte_stream("column")
    for start in range(0, len(data), 7777):
        stream.write(data[start: start + 7777])
    stream.close()
    writer.finish()
    with open(paths[0], "rb") as first, open(paths[1], "rb") as second:
        assert first.read() == second.read()


def test_merge_over_both_layouts_keeps_the_newest_live_version(tmp_path):
    old = str(tmp_path / "000003.records.seg")
    write_layout1(old, {"t.x": {"a": 1, "b": 2, "c": 3}, "t.y": {"z": 0}})
    newer = build(tmp_path, {"t.x": {"a": 10, "b": TOMBSTONE, "d": 4}}, name="000004.records.seg")
    writer = SegmentWriter(str(tmp_path / "000005.records.seg"), KIND_RECORDS)
    assert merge_records(writer, [open_segment(Segment.open(old)), newer]) == 4
    writer.finish()
    merged = open_segment(Segment.open(str(tmp_path / "000005.records.seg")))
    assert merged.segment.meta["layout"] == RECORDS_LAYOUT_BLOCKS
    assert list(merged.iterate("t.x")) == [("a", 10), ("c", 3), ("d", 4)]
    assert list(merged.iterate("t.y")) == [("z", 0)]
    merged.check()


keys_strategy = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)
values_strategy = st.one_of(st.integers(-5, 5), st.text(max_size=4), st.just(TOMBSTONE))
tables_strategy = st.dictionaries(st.sampled_from(["a", "a.b", "a.bc", "b.x"]),
                                  st.dictionaries(keys_strategy, values_strategy, max_size=8), max_size=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tables=tables_strategy, prefix=keys_strategy, layout=st.sampled_from(LAYOUTS))
def test_reads_match_a_dict(tmp_path_factory, tables, prefix, layout):
    segment = build(tmp_path_factory.mktemp("records"), tables, layout)
    for table, rows in tables.items():
        for key, value in rows.items():
            assert get(segment, table, key) == (True, value)
        expected = sorted((key, value) for key, value in rows.items() if key.startswith(prefix))
        assert list(segment.iterate(table, prefix)) == expected
    assert [(composite, packed) for composite, _rank, packed in segment.raw_rows(0)] == \
        [(composite, None if value is TOMBSTONE else pack(value)) for composite, value in sorted_rows(tables)]
    segment.check()


def test_a_point_read_decompresses_a_block_only_as_far_as_the_rows_it_reads(tmp_path, monkeypatch):
    tables = {"t.x": {f"k{number:05d}": f"value {number} " * 20 for number in range(3000)}}
    monkeypatch.setattr(writer_module, "RECORDS_BLOCK_BYTES", 16 << 20)
    segment = build(tmp_path, tables)
    assert segment.block_count == 1
    assert get(segment, "t.x", "k00000") == (True, tables["t.x"]["k00000"])
    assert get(segment, "t.x", "k01500a") == (False, None)  # absent: the keys a bisection compares, no value
    block = segment.block(0)
    assert len(block.data) < block.size / 4
    assert get(segment, "t.x", "k02999") == (True, tables["t.x"]["k02999"])  # the last value: all of it
    assert len(block.data) == block.size and segment.block(0) is block
    assert list(segment.iterate("t.x")) == sorted(tables["t.x"].items())


def test_get_many_of_a_few_keys_reads_a_few_first_keys_not_every_block_s(tmp_path):
    tables = {"t.x": {f"k{number:04d}": number for number in range(1000)}}
    segment = build(tmp_path, tables, "small blocks")
    wanted = [composite_key("t.x", key) for key in ("k0007", "k0500", "k0500a")]
    assert get_many(segment, wanted) == {0: 7, 1: 500}
    assert segment._first_keys is None
    everything = composite_keys("t.x", list(tables["t.x"]))
    assert get_many(segment, everything) == dict(enumerate(range(1000)))
    assert len(segment._first_keys) == segment.block_count


def test_a_partly_read_frame_that_ends_early_is_corruption():
    composites = [composite_key("t.x", f"k{number:05d}") for number in range(3000)]
    values = [pack(hashlib.sha256(key).hexdigest() * 3) for key in composites]  # frames as long as blocks
    content = encode_block(composites, values)
    frame = zstandard.ZstdCompressor().compress(content)
    block = Block(frame[:len(frame) // 2], len(content), 3000, "crafted.seg", 4096, partial=True)
    assert block.key(0) == composites[0]  # the lengths and the first keys are there
    with pytest.raises(CorruptionError) as caught:
        block.packed(2999)
    assert (caught.value.path, caught.value.offset) == ("crafted.seg", 4096)


def test_a_flush_writes_a_filter_that_spares_absent_keys_a_block_and_a_compaction_none(tmp_path, monkeypatch):
    tables = {"t.x": {f"k{number:05d}": number for number in range(3000)}}
    flushed = build(tmp_path, tables, "small blocks")
    assert flushed.segment.meta["filter_probes"] == 7 and flushed.segment.has("filter")
    decompressed = []
    real = flushed._frame_size
    monkeypatch.setattr(flushed, "_frame_size", lambda *arguments: decompressed.append(1) or real(*arguments))
    absent = [composite_key("t.x", f"k{number:05d}a") for number in range(1000)]  # inside the key range
    assert get_many(flushed, absent) == {} and all(get(flushed, "t.x", f"k{number:05d}a") == (False, None)
                                                    for number in range(1000))
    assert len(decompressed) < 40  # about 1% pass the filter, each a block
    assert [get(flushed, "t.x", f"k{number:05d}") for number in (0, 1500, 2999)] == [(True, 0), (True, 1500),
                                                                                       (True, 2999)]
    writer = SegmentWriter(str(tmp_path / "000009.records.seg"), KIND_RECORDS)
    merge_records(writer, [flushed])
    writer.finish()
    compacted = open_segment(Segment.open(str(tmp_path / "000009.records.seg")))
    assert not compacted.segment.has("filter") and "filter_probes" not in compacted.segment.meta
    assert get(compacted, "t.x", "k00001a") == (False, None) and get(compacted, "t.x", "k00001") == (True, 1)


def test_a_filter_that_rules_out_a_key_the_segment_holds_is_found_by_check(tmp_path):
    segment = build(tmp_path, {"t.x": {"a": 1, "b": 2}})
    path = str(tmp_path / "000004.records.seg")
    writer = SegmentWriter(path, KIND_RECORDS)
    for name in segment.segment.names():
        column = segment.segment.column(name)
        writer.add_column(name, np.zeros_like(column) if name == "filter" else column)
    writer.set_meta(segment.segment.meta)
    writer.finish()
    damaged = open_segment(Segment.open(path))
    assert get(damaged, "t.x", "a") == (False, None)  # what a wrong filter hides (checksums are all valid)
    with pytest.raises(CorruptionError, match="filter rules out"):
        damaged.check()


def test_a_compaction_keeps_the_point_read_tables_in_small_blocks_and_the_rest_in_large_ones(tmp_path, monkeypatch):
    """graph.node's rows (read one by one across the key range) go into blocks of the small mark, the other
    tables' into blocks of the large one, and no block holds rows of both marks."""
    tables = {table: {f"k{number:04d}": "v" * 50 for number in range(200)} for table in ("a.x", "graph.node", "z.x")}
    monkeypatch.setattr(writer_module, "RECORDS_COMPACTION_BLOCK_BYTES", 4000)
    monkeypatch.setattr(writer_module, "RECORDS_POINT_READ_BLOCK_BYTES", 500)
    flushed = build(tmp_path, tables, name="000003.records.seg")
    writer = SegmentWriter(str(tmp_path / "000004.records.seg"), KIND_RECORDS)
    merge_records(writer, [flushed])
    writer.finish()
    merged = open_segment(Segment.open(str(tmp_path / "000004.records.seg")))
    blocks: dict = {}  # table -> [rows' key and value bytes of each of its blocks]
    for number in range(merged.block_count):
        block = merged.block(number)
        block_tables = {block.key(row).split(b"\0")[0].decode() for row in range(block.rows)}
        assert len(block_tables) == 1, f"block {number} mixes {block_tables}"
        blocks.setdefault(block_tables.pop(), []).append(block.size - 9 * block.rows)
    row_bytes = len(composite_key("a.x", "k0000")) + len(pack("v" * 50))
    assert all(size < 500 + row_bytes + 7 for size in blocks["graph.node"]) and len(blocks["graph.node"]) > 10
    assert all(4000 <= size < 4000 + row_bytes for size in blocks["a.x"][:-1] + blocks["z.x"][:-1])
    assert dict(merged.iterate("graph.node")) == tables["graph.node"]
