"""Compressed segment columns (engine.column_codec, MANIFEST.spec section 3): the filters round-trip every dtype,
a reader decompresses only the frames a read needs, damage is found before decompression, and a column that
does not pay is stored as is."""

from __future__ import annotations

import numpy as np
import pytest
import zstandard
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as numpy_strategies

from engine.column_codec import (
    COLUMN_FRAME_BYTES,
    FILTER_DELTA,
    FILTER_SHUFFLE,
    apply_filter,
    compress_column,
    undo_filter,
)
from engine.errors import CorruptionError
from engine.segment import Segment, SegmentWriter
from engine_testkit import flip_byte

DTYPES = ["<i4", "<i8", "<u2", "<u8", "|u1", "<f4", "<f8"]


def written(tmp_path, columns: dict, level=3) -> Segment:
    path = str(tmp_path / "000001.test.seg")
    writer = SegmentWriter(path, "test", compression=level)
    for name, array in columns.items():
        writer.add_column(name, array)
    writer.finish()
    return Segment.open(path)


@settings(max_examples=80, deadline=None)
@given(array=st.sampled_from(DTYPES).flatmap(lambda dtype: numpy_strategies.arrays(
    np.dtype(dtype), st.integers(0, 300), elements=numpy_strategies.from_dtype(np.dtype(dtype), allow_nan=False))),
       filter_bits=st.sampled_from([0, FILTER_DELTA, FILTER_SHUFFLE, FILTER_DELTA | FILTER_SHUFFLE]))
def test_every_filter_round_trips_every_dtype(array, filter_bits):
    if filter_bits & FILTER_DELTA and array.dtype.kind not in "iu":
        return  # delta is for integers only
    stored = apply_filter(array, filter_bits)
    assert len(stored) == array.nbytes
    assert undo_filter(stored, array.dtype, filter_bits).tobytes() == array.tobytes()


def test_the_filters_store_what_the_spec_example_says():
    column = np.array([5, 6, 7, 9], "<i4")
    assert apply_filter(column, FILTER_DELTA) == bytes.fromhex("05000000 01000000 01000000 02000000")
    assert apply_filter(column, FILTER_DELTA | FILTER_SHUFFLE) == bytes.fromhex("05010102" + "00" * 12)


def test_delta_wraps_around_in_the_dtype():
    column = np.array([2**63 - 1, -(2**63), 0, 2**63 - 1], "<i8")
    assert undo_filter(apply_filter(column, FILTER_DELTA), column.dtype, FILTER_DELTA).tolist() == column.tolist()


def test_columns_are_compressed_with_the_best_filter_and_read_back(tmp_path):
    ids = np.arange(100_000, dtype="<i4")
    floats = np.repeat(np.array([0.25, 0.5, 0.75], "<f4"), 40_000)
    random = np.random.default_rng(1).integers(0, 2**63, 20_000, dtype=np.int64)
    small = np.arange(10, dtype="<u8")
    segment = written(tmp_path, {"ids": ids, "floats": floats, "random": random, "small": small,
                                 "matrix": np.arange(6000, dtype="<u2").reshape(2000, 3)})
    assert segment._compressed["ids"].filter_bits & FILTER_DELTA
    assert segment._columns["ids"][3] < ids.nbytes // 50  # stored bytes
    assert "random" not in segment._compressed and "small" not in segment._compressed  # neither pays
    assert not segment._compressed["matrix"].filter_bits & FILTER_DELTA  # not for a column of two dimensions
    for name, expected in (("ids", ids), ("floats", floats), ("random", random), ("small", small)):
        assert segment.column(name).tolist() == expected.tolist()
    assert segment.column("matrix").shape == (2000, 3)
    assert segment.column("matrix").tolist() == np.arange(6000).reshape(2000, 3).tolist()
    segment.verify()


def test_a_read_decompresses_only_the_frames_it_needs(tmp_path):
    ids = np.arange(200_000, dtype="<i8")  # 1.6 MB: 25 frames
    segment = written(tmp_path, {"ids": ids})
    compressed = segment._compressed["ids"]
    assert len(compressed.filled) == -(-ids.nbytes // COLUMN_FRAME_BYTES)
    assert segment.items("ids", 150_000, 150_010).tolist() == list(range(150_000, 150_010))
    per_frame = COLUMN_FRAME_BYTES // 8
    assert [index for index, filled in enumerate(compressed.filled) if filled] == [150_000 // per_frame]
    segment.verify_items("ids", 0, 1)
    assert sum(compressed.filled) == 2
    assert segment.column("ids").tolist() == ids.tolist() and all(compressed.filled)


def test_a_column_that_does_not_compress_is_stored_as_is(tmp_path):
    data = np.frombuffer(np.random.default_rng(2).bytes(50_000), np.uint8)
    segment = written(tmp_path, {"noise": data})
    assert "noise" not in segment._compressed and segment._columns["noise"][3] == 50_000
    assert compress_column(data, 3) is None


def test_without_a_level_nothing_is_compressed(tmp_path):
    segment = written(tmp_path, {"ids": np.arange(100_000, dtype="<i4")}, level=None)
    assert segment._compressed == {} and segment._columns["ids"][3] == 400_000


def test_a_flipped_stored_byte_fails_the_reads_of_its_frames_only(tmp_path):
    data = np.frombuffer(np.random.default_rng(3).bytes(400_000), np.uint8) & np.uint8(0x0F)  # compresses to half
    segment = written(tmp_path, {"nibbles": data})
    compressed = segment._compressed["nibbles"]
    assert segment._columns["nibbles"][3] > 2 * 65536
    last = len(compressed.filled) - 1
    offset = segment.column_offset("nibbles")
    flip_byte(segment.path, offset + compressed.starts[last] + 10)
    damaged = Segment.open(segment.path)
    assert damaged.items("nibbles", 0, 100).tolist() == data[:100].tolist()
    with pytest.raises(CorruptionError) as caught:
        damaged.items("nibbles", len(data) - 1, len(data))
    assert caught.value.path == segment.path and "'nibbles' checksum mismatch" in caught.value.reason
    with pytest.raises(CorruptionError):
        Segment.open(segment.path).verify()


def crafted(tmp_path, frames: list, codec: dict, shape: int, dtype="<i4") -> Segment:
    """A segment whose one column is `frames` under the entry `codec` (checksums correct)."""
    path = str(tmp_path / "000002.test.seg")
    writer = SegmentWriter(path, "test")
    writer.add_bytes("column", b"".join(frames))
    writer._columns[-1][1:3] = [dtype, [shape]]
    writer._columns[-1].append(codec)
    writer.finish()
    return Segment.open(path)


def sizes(frames: list) -> bytes:
    return np.array([len(frame) for frame in frames], "<u4").tobytes()


def test_a_frame_declaring_another_size_is_corruption(tmp_path):
    frames = [zstandard.ZstdCompressor().compress(bytes(12))]
    segment = crafted(tmp_path, frames, {"codec": "zstd", "filter": 0, "frame": 65536, "frames": sizes(frames)}, 4)
    with pytest.raises(CorruptionError, match="declares 12 bytes, not 16"):
        segment.column("column")


def test_a_frame_that_does_not_decompress_is_corruption(tmp_path):
    frames = [b"\x28\xb5\x2f\xfd" + bytes(12)]
    segment = crafted(tmp_path, frames, {"codec": "zstd", "filter": 0, "frame": 65536, "frames": sizes(frames)}, 4)
    with pytest.raises(CorruptionError):
        segment.column("column")


@pytest.mark.parametrize("codec", [
    {"codec": "lz4", "filter": 0, "frame": 65536},
    {"codec": "zstd", "filter": 9, "frame": 65536},
    {"codec": "zstd", "filter": 0, "frame": 6},  # not a multiple of the item size
    {"codec": "zstd", "filter": 0, "frame": 8},  # two frames for the 16 bytes, one listed
    {"codec": "zstd", "filter": 0},
])
def test_a_malformed_codec_entry_is_corruption_at_open(tmp_path, codec):
    frames = [zstandard.ZstdCompressor().compress(bytes(16))]
    with pytest.raises(CorruptionError):
        crafted(tmp_path, frames, {**codec, "frames": sizes(frames)}, 4)
