"""engine.segment: the container of MANIFEST.spec section 3, zero-copy columns and lazily checked CRCs."""

from __future__ import annotations

import mmap
import os
import struct
import warnings

import numpy as np
import pytest

from engine import segment as segment_module
from engine.codec import crc32, pack, unpack
from engine.errors import CorruptionError, UnsupportedVersion
from engine.format import (
    FORMAT_VERSION,
    SEGMENT_CHECKSUM_BLOCK_BYTES,
    SEGMENT_COLUMN_ALIGNMENT,
    SEGMENT_FOOTER_FORMAT,
    SEGMENT_FOOTER_MAGIC,
    SEGMENT_FOOTER_SIZE,
    SEGMENT_HEADER_FORMAT,
    SEGMENT_HEADER_SIZE,
    SEGMENT_KIND_BYTES,
    SEGMENT_MAGIC,
    TEMP_SUFFIX,
)
from engine.segment import Segment, SegmentWriter
from engine_testkit import flip_byte

# Field offsets inside the footer, from its struct format: directory offset u64 | length u32 | CRC u32 | version u32
FOOTER_LENGTH_OFFSET = struct.calcsize(SEGMENT_FOOTER_FORMAT[:2])
FOOTER_VERSION_OFFSET = struct.calcsize(SEGMENT_FOOTER_FORMAT[:4])

COLUMNS = {
    "int8": np.arange(-5, 5, dtype=np.int8),
    "uint8": np.arange(250, 256, dtype=np.uint8),
    "int16": np.arange(-300, 300, 7, dtype=np.int16),
    "uint16": np.array([0, 65535], dtype=np.uint16),
    "int32": np.arange(-(2**31), 2**31 - 1, 2**28, dtype=np.int32),
    "uint32": np.array([0, 2**32 - 1], dtype=np.uint32),
    "int64": np.array([-(2**63), 0, 2**63 - 1], dtype=np.int64),
    "uint64": np.array([0, 2**64 - 1], dtype=np.uint64),
    "float16": np.linspace(-1, 1, 9, dtype=np.float16),
    "float32": np.array([np.inf, -0.0, 1e-38], dtype=np.float32),
    "float64": np.array([np.pi, np.nan, -np.inf]),
    "complex128": np.array([1 + 2j, -3.5j]),
    "bool": np.array([True, False, True]),
    "big_endian_u32": np.arange(6, dtype=">u4"),
    "fixed_bytes": np.array([b"ab", b"", b"xyz"], dtype="S3"),
    "fixed_unicode": np.array(["é", "日本", ""], dtype="U2"),
    "matrix": np.arange(24, dtype=np.float32).reshape(4, 6),
    "cube": np.arange(60, dtype=np.int16).reshape(3, 4, 5),
    "empty": np.zeros(0, dtype=np.uint64),
    "empty_rows": np.zeros((0, 5), dtype=np.int32),
    "fortran_input": np.asfortranarray(np.arange(12, dtype=np.int64).reshape(3, 4)),
    "strided_input": np.arange(20, dtype=np.int32)[::3],
}


def little_endian(array: np.ndarray) -> np.ndarray:
    """The array as a segment stores it: multi-byte values little-endian."""
    return array.astype(array.dtype.newbyteorder("<")) if array.dtype.str.startswith(">") else array


def write_segment(path, columns: dict, kind="test.kind", meta=None) -> dict:
    writer = SegmentWriter(str(path), kind)
    for name, array in columns.items():
        writer.add_column(name, array)
    if meta is not None:
        writer.set_meta(meta)
    return writer.finish()


def read_bytes(path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def parse(path) -> dict:
    """Header, footer and directory decoded from the spec, without engine.segment."""
    data = read_bytes(path)
    header = struct.unpack_from(SEGMENT_HEADER_FORMAT, data, 0)
    footer = struct.unpack_from(SEGMENT_FOOTER_FORMAT, data, len(data) - SEGMENT_FOOTER_SIZE)
    directory_offset, directory_length = footer[0], footer[1]
    directory = unpack(data[directory_offset: directory_offset + directory_length])
    return {"data": data, "header": header, "footer": footer, "directory": directory}


@pytest.fixture
def full_segment(tmp_path):
    path = tmp_path / "000009.test.seg"
    entry = write_segment(path, COLUMNS, meta={"note": "é", "count": 3})
    return path, entry


# --- bytes on disk ----------------------------------------------------------------------------------------


def test_header_bytes(full_segment):
    path, _entry = full_segment
    parsed = parse(path)
    magic, version, kind, header_crc = parsed["header"]
    assert (magic, version) == (SEGMENT_MAGIC, FORMAT_VERSION)
    assert kind == b"test.kind".ljust(SEGMENT_KIND_BYTES, b"\0")
    assert header_crc == crc32(parsed["data"][: SEGMENT_HEADER_SIZE - 4])


def test_footer_and_directory_bytes(full_segment):
    path, _entry = full_segment
    parsed = parse(path)
    data = parsed["data"]
    offset, length, directory_crc, version, reserved, magic = parsed["footer"]
    assert (version, reserved, magic) == (FORMAT_VERSION, 0, SEGMENT_FOOTER_MAGIC)
    assert offset + length == len(data) - SEGMENT_FOOTER_SIZE
    assert directory_crc == crc32(data[offset: offset + length])
    directory = parsed["directory"]
    assert directory["kind"] == "test.kind"
    assert directory["checksum_block"] == SEGMENT_CHECKSUM_BLOCK_BYTES
    assert directory["meta"] == {"note": "é", "count": 3}
    assert [column[0] for column in directory["columns"]] == list(COLUMNS)


def test_columns_are_aligned_and_described_exactly(full_segment):
    path, _entry = full_segment
    parsed = parse(path)
    data = parsed["data"]
    previous_end = SEGMENT_HEADER_SIZE
    for name, dtype, shape, offset, length, crcs in parsed["directory"]["columns"]:
        array = np.ascontiguousarray(little_endian(COLUMNS[name]))
        assert offset % SEGMENT_COLUMN_ALIGNMENT == 0
        assert data[previous_end:offset] == bytes(offset - previous_end), "padding must be zeros"
        assert (dtype, tuple(shape), length) == (array.dtype.str, array.shape, array.nbytes)
        assert data[offset: offset + length] == array.tobytes()
        assert crcs == (struct.pack("<I", crc32(array.tobytes())) if length else b"")
        previous_end = offset + length


@pytest.mark.parametrize("dtype", [">u4", ">i8", ">f8", ">u2"])
def test_a_big_endian_column_is_stored_little_endian(tmp_path, dtype):
    """The spec's columns are little-endian: a big-endian array (native on such a host) is converted, so the
    directory never names another byte order and the bytes are the same on every host."""
    values = np.array([1, 2, 300, 65535], dtype=dtype)
    path = tmp_path / "000009.test.seg"
    write_segment(path, {"values": values})
    parsed = parse(path)
    name, stored_dtype, _shape, offset, length, _crcs = parsed["directory"]["columns"][0]
    assert stored_dtype == "<" + dtype[1:]
    assert parsed["data"][offset: offset + length] == values.astype(stored_dtype).tobytes()
    assert Segment.open(str(path)).column("values").tolist() == values.tolist()


@pytest.mark.parametrize("items", [SEGMENT_CHECKSUM_BLOCK_BYTES // 4, 5 * SEGMENT_CHECKSUM_BLOCK_BYTES // 8 + 3])
def test_a_large_column_has_one_crc_per_block(tmp_path, items):
    """The file's CRC (the MANIFEST entry's) is derived from the block CRCs: it must still be the bytes' CRC."""
    path = tmp_path / "big.seg"
    array = np.arange(items, dtype=np.int64)  # two blocks, the second half full; or five and a bit
    entry = write_segment(path, {"small": np.arange(3, dtype=np.uint8), "big": array})
    parsed = parse(path)
    name, _dtype, _shape, offset, length, crcs = parsed["directory"]["columns"][1]
    block = SEGMENT_CHECKSUM_BLOCK_BYTES
    data = parsed["data"][offset: offset + length]
    assert length == 8 * items
    assert crcs == b"".join(struct.pack("<I", crc32(data[start: start + block])) for start in range(0, length, block))
    assert entry["crc"] == crc32(parsed["data"]) and entry["size"] == len(parsed["data"])


def test_finish_returns_the_manifest_entry_and_leaves_no_temp(full_segment):
    path, entry = full_segment
    data = read_bytes(path)
    assert entry == {"name": "000009.test.seg", "kind": "test.kind", "size": len(data), "crc": crc32(data)}
    assert os.listdir(path.parent) == [path.name]


def test_abort_publishes_nothing(tmp_path):
    writer = SegmentWriter(str(tmp_path / "000001.x.seg"), "x")
    writer.add_column("a", np.arange(3))
    writer.abort()
    assert os.listdir(tmp_path) == []


def test_a_stale_temp_file_is_replaced(tmp_path):
    path = tmp_path / "000001.x.seg"
    (tmp_path / ("000001.x.seg" + TEMP_SUFFIX)).write_bytes(b"left by a crash")
    write_segment(path, {"a": np.arange(3)}, kind="x")
    assert Segment.open(str(path)).column("a").tolist() == [0, 1, 2]
    assert os.listdir(tmp_path) == [path.name]


# --- reading ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(COLUMNS))
def test_column_round_trips(full_segment, name):
    path, _entry = full_segment
    column = Segment.open(str(path)).column(name)
    expected = little_endian(COLUMNS[name])
    assert column.dtype == expected.dtype
    assert column.shape == expected.shape
    np.testing.assert_array_equal(column, expected)


def mapped_base(array):
    base = array
    while isinstance(base, np.ndarray):
        base = base.base
    return base.obj if isinstance(base, memoryview) else base


@pytest.mark.parametrize("name", ["int64", "matrix", "fixed_unicode", "big_endian_u32"])
def test_columns_are_read_only_views_of_the_map(full_segment, name):
    path, _entry = full_segment
    segment = Segment.open(str(path))
    column = segment.column(name)
    assert isinstance(mapped_base(column), mmap.mmap), "a column must be a view, not a copy"
    assert not column.flags.writeable
    with pytest.raises(ValueError):
        column[...] = column
    assert np.shares_memory(column, segment.column(name))


def test_meta_names_kind(full_segment):
    path, _entry = full_segment
    segment = Segment.open(str(path))
    assert segment.kind == "test.kind"
    assert segment.meta == {"note": "é", "count": 3}
    assert segment.names() == list(COLUMNS)
    assert segment.has("int8") and not segment.has("absent")
    assert segment.bytes("uint8").tobytes() == COLUMNS["uint8"].tobytes()


def test_segment_without_columns(tmp_path):
    path = tmp_path / "empty.seg"
    write_segment(path, {}, kind="k")
    segment = Segment.open(str(path))
    assert (segment.names(), segment.meta, segment.kind) == ([], {}, "k")
    segment.verify()


def test_missing_column_is_an_error_naming_the_file(full_segment):
    path, _entry = full_segment
    with pytest.raises(CorruptionError) as caught:
        Segment.open(str(path)).column("absent")
    assert caught.value.path == str(path)


def test_kind_longer_than_the_header_field_is_refused(tmp_path):
    SegmentWriter(str(tmp_path / "ok.seg"), "k" * SEGMENT_KIND_BYTES).abort()
    with pytest.raises(ValueError):
        SegmentWriter(str(tmp_path / "long.seg"), "k" * (SEGMENT_KIND_BYTES + 1))


def test_object_columns_are_refused(tmp_path):
    writer = SegmentWriter(str(tmp_path / "x.seg"), "x")
    with pytest.raises(TypeError):
        writer.add_column("objects", np.array([{"a": 1}, None], dtype=object))
    writer.abort()


def test_datetime_column_round_trips(tmp_path):
    times = np.array(["2024-01-01T00:00", "2025-06-30T12:34"], dtype="datetime64[s]")
    write_segment(tmp_path / "t.seg", {"times": times})
    np.testing.assert_array_equal(Segment.open(str(tmp_path / "t.seg")).column("times"), times)


def test_structured_column_is_refused_rather_than_stored_without_its_fields(tmp_path):
    rows = np.array([(1, 2.5), (3, -1.0)], dtype=[("id", "<i4"), ("score", "<f8")])
    writer = SegmentWriter(str(tmp_path / "s.seg"), "test")
    with pytest.raises(TypeError, match="one column per field"):
        writer.add_column("rows", rows)
    writer.abort()


def test_zero_dimensional_column_keeps_its_shape(tmp_path):
    write_segment(tmp_path / "z.seg", {"scalar": np.array(7, dtype=np.int64)})
    assert Segment.open(str(tmp_path / "z.seg")).column("scalar").shape == ()


# --- checksums, lazily ------------------------------------------------------------------------------------


def column_offset(path, name) -> int:
    return next(column[3] for column in parse(path)["directory"]["columns"] if column[0] == name)


def test_damaged_column_fails_only_when_read(full_segment):
    path, _entry = full_segment
    offset = column_offset(path, "int64")
    flip_byte(str(path), offset + 3)
    segment = Segment.open(str(path))  # header, footer and directory are intact
    np.testing.assert_array_equal(segment.column("float32"), COLUMNS["float32"])
    with pytest.raises(CorruptionError) as caught:
        segment.column("int64")
    assert (caught.value.path, caught.value.offset) == (str(path), offset)
    assert "int64" in caught.value.reason
    with pytest.raises(CorruptionError):
        segment.column("int64")  # a failed column stays failed
    with pytest.raises(CorruptionError):
        segment.verify()


def test_column_crc_is_computed_once_per_process(full_segment, monkeypatch):
    path, _entry = full_segment
    sizes = []

    def counting_crc32(data, start=0):
        sizes.append(len(data))
        return crc32(data, start)

    monkeypatch.setattr(segment_module, "crc32", counting_crc32)
    segment = Segment.open(str(path))
    opened = len(sizes)  # header and directory only: no column is touched by open
    assert COLUMNS["matrix"].nbytes not in sizes
    segment.column("matrix")
    segment.column("matrix")
    segment.column("matrix")
    assert sizes[opened:] == [COLUMNS["matrix"].nbytes]


BLOCK_ITEMS = SEGMENT_CHECKSUM_BLOCK_BYTES // 8


@pytest.fixture
def three_blocks(tmp_path):
    """A 1-D int64 column of two and a half checksum blocks, after a small column."""
    path = tmp_path / "000003.test.seg"
    column = np.arange(BLOCK_ITEMS * 5 // 2, dtype=np.int64)
    write_segment(path, {"small": np.arange(3), "values": column})
    return path, column, column_offset(path, "values")


@pytest.mark.parametrize("block", [0, 1, 2])
def test_a_damaged_block_fails_only_the_reads_that_touch_it(three_blocks, block):
    path, column, offset = three_blocks
    damaged = offset + block * SEGMENT_CHECKSUM_BLOCK_BYTES + 5
    flip_byte(str(path), damaged)
    segment = Segment.open(str(path))
    for other in {0, 1, 2} - {block}:
        start = other * BLOCK_ITEMS
        np.testing.assert_array_equal(segment.items("values", start, start + 10), column[start: start + 10])
    block_start = offset + block * SEGMENT_CHECKSUM_BLOCK_BYTES
    reads = [lambda: segment.items("values", block * BLOCK_ITEMS + 1, block * BLOCK_ITEMS + 2),
             lambda: segment.verify_items("values", 0, column.size),
             lambda: segment.column("values"),
             segment.verify]
    for read in reads:
        with pytest.raises(CorruptionError) as caught:
            read()
        assert (caught.value.path, caught.value.offset) == (str(path), block_start)
        assert "'values'" in caught.value.reason and f"block {block}" in caught.value.reason


def test_items_are_zero_copy_views_and_verify_each_block_once(three_blocks, monkeypatch):
    path, column, _offset = three_blocks
    segment = Segment.open(str(path))
    sizes = []

    def counting_crc32(data, start=0):
        sizes.append(len(data))
        return crc32(data, start)

    monkeypatch.setattr(segment_module, "crc32", counting_crc32)
    view = segment.items("values", BLOCK_ITEMS - 1, BLOCK_ITEMS + 1)  # straddles blocks 0 and 1
    np.testing.assert_array_equal(view, column[BLOCK_ITEMS - 1: BLOCK_ITEMS + 1])
    assert isinstance(mapped_base(view), mmap.mmap) and not view.flags.writeable
    assert sizes == [SEGMENT_CHECKSUM_BLOCK_BYTES] * 2
    segment.items("values", 0, 2 * BLOCK_ITEMS)
    segment.verify_items("values", 3, 3)  # an empty range touches nothing
    assert len(sizes) == 2
    segment.column("values")  # only the last, shorter block is left
    assert sizes[2:] == [SEGMENT_CHECKSUM_BLOCK_BYTES // 2]
    segment.items("values", 0, column.size)
    assert len(sizes) == 3
    with pytest.raises(ValueError):
        segment.items("values", -1, 2)  # would wrap to the column's end, outside the checked blocks


@pytest.mark.parametrize("position, damaged, caught", [(100, 2, False), (100, 1, True), (100, 0, True),
                                                       (BLOCK_ITEMS * 5 // 2 - 3, 0, False),
                                                       (BLOCK_ITEMS * 5 // 2 - 3, 2, True)])
def test_a_binary_search_checks_the_blocks_it_probed(three_blocks, position, damaged, caught):
    path, column, offset = three_blocks
    flip_byte(str(path), offset + damaged * SEGMENT_CHECKSUM_BLOCK_BYTES + 9)
    segment = Segment.open(str(path))
    assert int(np.searchsorted(segment.column("values", verify=False), column[position])) == position
    if caught:
        with pytest.raises(CorruptionError) as error:
            segment.verify_bisect("values", position)
        assert error.value.offset == offset + damaged * SEGMENT_CHECKSUM_BLOCK_BYTES
    else:
        segment.verify_bisect("values", position)


def test_a_version_1_column_with_one_crc_is_still_read(tmp_path):
    path = tmp_path / "v1.seg"
    array = np.arange(BLOCK_ITEMS * 3, dtype=np.int64)
    write_segment(path, {"a": array})
    name, dtype, shape, offset, length, _crcs = parse(path)["directory"]["columns"][0]
    whole = crc32(parse(path)["data"][offset: offset + length])
    rewrite_directory(path, {"kind": "test.kind", "columns": [[name, dtype, shape, offset, length, whole]], "meta": {}})
    np.testing.assert_array_equal(Segment.open(str(path)).items("a", 5, 6), [5])
    flip_byte(str(path), offset + length - 1)
    with pytest.raises(CorruptionError) as caught:
        Segment.open(str(path)).items("a", 5, 6)  # one block: any read checks the whole column
    assert caught.value.offset == offset


def test_verify_false_skips_the_check(full_segment):
    path, _entry = full_segment
    flip_byte(str(path), column_offset(path, "uint8"))
    column = Segment.open(str(path)).column("uint8", verify=False)
    assert column[0] == COLUMNS["uint8"][0] ^ 1


# --- damaged files ----------------------------------------------------------------------------------------


def damage(path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(data)


def rewrite_directory(path, directory: dict) -> None:
    """Replace the directory and the footer consistently (CRC valid), as a buggy or hostile writer could."""
    parsed = parse(path)
    offset = parsed["footer"][0]
    body = parsed["data"][:offset]
    raw = pack(directory)
    footer = struct.pack(SEGMENT_FOOTER_FORMAT, offset, len(raw), crc32(raw), FORMAT_VERSION, 0,
                         SEGMENT_FOOTER_MAGIC)
    with open(path, "wb") as handle:
        handle.write(body + raw + footer)


def test_damage_is_reported_with_file_and_offset(tmp_path):
    def fresh():
        path = tmp_path / "000001.k.seg"
        write_segment(path, {"a": np.arange(10)}, kind="k")
        return path

    size = os.path.getsize(fresh())
    footer_offset = size - SEGMENT_FOOTER_SIZE
    directory_offset = parse(fresh())["footer"][0]
    cases = [
        (lambda p: damage(p, 0, b"X"), 0, "bad magic"),
        (lambda p: damage(p, 13, b"Q"), 0, "header checksum"),
        (lambda p: damage(p, size - 1, b"X"), footer_offset, "footer magic"),
        (lambda p: damage(p, footer_offset + FOOTER_LENGTH_OFFSET, struct.pack("<I", 2**31)), footer_offset, "bounds"),
        (lambda p: damage(p, footer_offset, struct.pack("<Q", 0)), footer_offset, "bounds"),
        (lambda p: damage(p, footer_offset - 3, b"\xff"), directory_offset, "directory checksum"),
        (lambda p: os.truncate(p, size - 1), footer_offset - 1, "footer magic"),
        (lambda p: os.truncate(p, 40), 0, "shorter than header"),
    ]
    for harm, offset, reason in cases:
        path = fresh()
        harm(path)
        with pytest.raises(CorruptionError) as caught:
            Segment.open(str(path))
        assert (caught.value.path, caught.value.offset) == (str(path), offset), reason
        assert reason in caught.value.reason


@pytest.mark.parametrize("where", ["header", "footer"])
def test_newer_version_is_refused(tmp_path, where):
    path = tmp_path / "v.seg"
    write_segment(path, {"a": np.arange(3)})
    data = bytearray(read_bytes(path))
    if where == "header":
        struct.pack_into("<I", data, len(SEGMENT_MAGIC), FORMAT_VERSION + 1)
        struct.pack_into("<I", data, SEGMENT_HEADER_SIZE - 4, crc32(bytes(data[: SEGMENT_HEADER_SIZE - 4])))
    else:
        struct.pack_into("<I", data, len(data) - SEGMENT_FOOTER_SIZE + FOOTER_VERSION_OFFSET, FORMAT_VERSION + 1)
    path.write_bytes(bytes(data))
    with pytest.raises(UnsupportedVersion):
        Segment.open(str(path))


def test_size_other_than_the_manifest_says_is_corruption(full_segment):
    path, entry = full_segment
    Segment.open(str(path), expected_size=entry["size"])
    with pytest.raises(CorruptionError) as caught:
        Segment.open(str(path), expected_size=entry["size"] + 1)
    assert "MANIFEST says" in caught.value.reason


def test_missing_file_is_corruption(tmp_path):
    with pytest.raises(CorruptionError) as caught:
        Segment.open(str(tmp_path / "gone.seg"))
    assert caught.value.offset is None and "missing" in caught.value.reason


@pytest.mark.parametrize(
    "block, columns, reason",
    [
        (None, [["a", "<i8", [10], 0, 80, 0]], "outside"),  # overlaps the header
        (None, [["a", "<i8", [10], 64, 10**9, 0]], "outside"),  # runs into the directory
        (None, [["a", "<i8", [11], 64, 80, 0]], "needs 88 bytes"),
        (None, [["a", "|O", [10], 64, 80, 0]], "outside"),
        (None, [["a", "<i8"]], "malformed"),
        (None, [["a", "not a dtype", [10], 64, 80, 0]], "malformed"),
        (None, [["a", "|a8", [10], 64, 80, 0]], "malformed"),  # numpy's deprecated alias of |S8
        (None, [["a", "(2,)<i4", [10], 64, 80, 0]], "malformed"),  # a dtype expression, not a dtype.str
        (None, [["a", "<i8", [10], 64, 80, b"\0" * 4]], "do not cover"),  # block CRCs without a block size
        (1024, [["a", "<i8", [10], 64, 80, b"\0" * 8]], "do not cover"),
        (1024, [["a", "<i8", [10], 64, 80, 0]], "do not cover"),  # one whole-column CRC
        (0, [["a", "<i8", [10], 64, 80, b""]], "checksum block"),
        ("64", [["a", "<i8", [10], 64, 80, b""]], "checksum block"),
    ],
)
def test_inconsistent_directory_entries_are_corruption(tmp_path, block, columns, reason):
    path = tmp_path / "d.seg"
    write_segment(path, {"a": np.arange(10, dtype=np.int64)})
    directory = {"kind": "test.kind", "columns": columns, "meta": {}}
    rewrite_directory(path, directory if block is None else {**directory, "checksum_block": block})
    with pytest.raises(CorruptionError) as caught:
        Segment.open(str(path))
    assert reason in caught.value.reason


def test_a_deprecated_dtype_alias_never_reaches_numpy(tmp_path):
    path = tmp_path / "d.seg"
    write_segment(path, {"a": np.zeros(8, dtype="S1")})
    rewrite_directory(path, {"kind": "test.kind", "columns": [["a", "|a1", [8], 64, 8, 0]], "meta": {}})
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(CorruptionError, match="malformed"):
            Segment.open(str(path))


def test_directory_that_is_not_a_map_is_corruption(tmp_path):
    path = tmp_path / "d.seg"
    write_segment(path, {"a": np.arange(3)})
    parsed = parse(path)
    offset = parsed["footer"][0]
    raw = pack([1, 2, 3])
    footer = struct.pack(SEGMENT_FOOTER_FORMAT, offset, len(raw), crc32(raw), FORMAT_VERSION, 0,
                         SEGMENT_FOOTER_MAGIC)
    path.write_bytes(parsed["data"][:offset] + raw + footer)
    with pytest.raises(CorruptionError) as caught:
        Segment.open(str(path))
    assert "not a map" in caught.value.reason
