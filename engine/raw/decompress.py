"""Bounded zstd decompression of a blob: never more output than the limit, whatever the frame claims.

The frame's declared content size is checked against the limit and the chunk record before any allocation,
the window size is capped, and a frame without a declared size is decompressed in pieces with a byte counter.
Any mismatch is a CorruptionError naming the blob (or record) it came from.
"""

from __future__ import annotations

import zstandard

from engine.errors import CorruptionError
from engine.format import RAW_BLOB_MAX_BYTES, RAW_ZSTD_MAX_WINDOW_BYTES

STREAM_READ_BYTES = 1 << 20
# zstd never expands its input by more than about 1/128 plus a frame header; a bigger blob file is damaged.
COMPRESSED_SLACK = RAW_BLOB_MAX_BYTES // 128 + 4096


def decompress_bounded(blob: bytes, path: str, limit: int = RAW_BLOB_MAX_BYTES,
                       expected_length: int | None = None) -> bytes:
    """Decompress one zstd frame without ever holding more than `limit` output bytes."""
    try:
        declared = zstandard.frame_content_size(blob)
    except zstandard.ZstdError as error:
        raise CorruptionError(path, 0, f"not a zstd frame ({error})") from None
    if declared > limit:
        raise CorruptionError(path, 0, f"zstd frame declares {declared:,} bytes, above the {limit:,}-byte "
                                       "blob limit; refused before decompression")
    if expected_length is not None and declared >= 0 and declared != expected_length:
        raise CorruptionError(path, 0, f"zstd frame declares {declared:,} bytes, the record says "
                                       f"{expected_length:,}")
    decompressor = zstandard.ZstdDecompressor(max_window_size=RAW_ZSTD_MAX_WINDOW_BYTES)
    try:
        if declared >= 0:
            return decompressor.decompress(blob, max_output_size=declared)
        return _decompress_streamed(decompressor, blob, path, limit)
    except zstandard.ZstdError as error:
        raise CorruptionError(path, None, f"zstd frame does not decompress ({error})") from None


def _decompress_streamed(decompressor, blob: bytes, path: str, limit: int) -> bytes:
    output = bytearray()
    with decompressor.stream_reader(blob) as reader:
        while piece := reader.read(STREAM_READ_BYTES):
            output += piece
            if len(output) > limit:
                raise CorruptionError(path, None, f"zstd frame without a declared size decompresses past the "
                                                  f"{limit:,}-byte blob limit; stopped there")
    return bytes(output)
