"""zstd bombs are refused before allocation; any bytes given to the blob reader raise only CorruptionError."""

import os
import tracemalloc

import pytest
import zstandard
from hypothesis import given, settings, strategies as st

from engine.errors import CorruptionError
from engine.format import RAW_BLOB_MAX_BYTES
from engine.raw import RawStore, decompress_bounded, record_blob_path

from raw_testkit import frame_declaring, zeros_frame

GIB = 1 << 30


def peak_allocation(function) -> tuple[int, CorruptionError]:
    """(peak bytes Python allocated while `function` ran, the CorruptionError it raised)."""
    tracemalloc.start()
    try:
        with pytest.raises(CorruptionError) as raised:
            function()
        return tracemalloc.get_traced_memory()[1], raised.value
    finally:
        tracemalloc.stop()


def test_a_frame_declaring_8_gib_is_refused_before_decompression():
    peak, error = peak_allocation(lambda: decompress_bounded(frame_declaring(8 * GIB), "blob.zst"))
    assert "zstd frame declares 8,589,934,592 bytes, above the 67,108,864-byte blob limit" in str(error)
    assert "refused before decompression" in str(error)
    assert error.path == "blob.zst" and error.offset == 0
    assert peak < 1 << 20


def test_a_1_gib_zeros_bomb_with_declared_size_is_refused_before_decompression():
    bomb = zeros_frame(GIB, declare_size=True)
    assert len(bomb) < 64 * 1024
    peak, error = peak_allocation(lambda: decompress_bounded(bomb, "bomb.zst"))
    assert "declares 1,073,741,824 bytes" in str(error)
    assert peak < 1 << 20


def test_a_1_gib_zeros_bomb_without_declared_size_stops_at_the_limit():
    bomb = zeros_frame(GIB, declare_size=False)
    limit = 4 << 20
    peak, error = peak_allocation(lambda: decompress_bounded(bomb, "bomb.zst", limit=limit))
    assert "without a declared size decompresses past the 4,194,304-byte blob limit" in str(error)
    assert peak < 4 * limit


def test_the_default_limit_stops_a_sizeless_bomb_too():
    with pytest.raises(CorruptionError, match="past the 67,108,864-byte blob limit"):
        decompress_bounded(zeros_frame(GIB, declare_size=False), "bomb.zst")


def test_a_sizeless_frame_within_the_limit_decompresses():
    assert decompress_bounded(zeros_frame(1 << 20, declare_size=False), "ok.zst") == bytes(1 << 20)


def test_a_bomb_in_the_store_is_reported_naming_the_blob_file(store):
    raw = RawStore(store)
    with raw.batch() as writer:
        raw_id = writer.put(b"hello", {}).raw_id
    path = os.path.join(store.path, record_blob_path(raw.get(raw_id)))
    with open(path, "wb") as handle:
        handle.write(frame_declaring(8 * GIB))
    with pytest.raises(CorruptionError, match="declares 8,589,934,592 bytes") as raised:
        raw.read(raw_id)
    assert raised.value.path == path


def test_an_oversized_blob_file_is_refused_unread(store):
    raw = RawStore(store, limit=1000)
    with raw.batch() as writer:
        raw_id = writer.put(b"hello", {}).raw_id
    path = os.path.join(store.path, record_blob_path(raw.get(raw_id)))
    with open(path, "r+b") as handle:
        handle.truncate(RAW_BLOB_MAX_BYTES)
    with pytest.raises(CorruptionError, match="larger than any blob within the limit"):
        raw.read(raw_id)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_raise_only_corruption(data):
    try:
        decompress_bounded(data, "fuzz.zst", limit=1 << 16)
    except CorruptionError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=64), st.integers(min_value=0, max_value=200), st.integers(0, 255))
def test_mutated_valid_frames_raise_only_corruption(payload, position, value):
    frame = bytearray(zstandard.ZstdCompressor().compress(payload * 20))
    frame[position % len(frame)] = value
    try:
        decompress_bounded(bytes(frame), "fuzz.zst", limit=1 << 16)
    except CorruptionError:
        pass
