"""Helpers of the raw store tests: hand-made zstd frames (RFC 8878) and blob file listings."""

from __future__ import annotations

import os

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
RLE_BLOCK_BYTES = 128 * 1024


def rle_zero_blocks(total: int) -> bytes:
    """Blocks of type RLE (one byte repeated 128 KiB times): 4 bytes each, so 1 GiB of zeros is 32 KiB."""
    count = total // RLE_BLOCK_BYTES
    blocks = bytearray()
    for index in range(count):
        last = 1 if index == count - 1 else 0
        header = (RLE_BLOCK_BYTES << 3) | (1 << 1) | last
        blocks += header.to_bytes(3, "little") + b"\x00"
    return bytes(blocks)


def frame_declaring(size: int) -> bytes:
    """A frame header claiming `size` bytes (8-byte content size field, single segment), one empty block."""
    return ZSTD_MAGIC + bytes([0xE0]) + size.to_bytes(8, "little") + (1).to_bytes(3, "little")


def zeros_frame(total: int, declare_size: bool) -> bytes:
    if declare_size:  # 4-byte content size field, single segment
        return ZSTD_MAGIC + bytes([0xA0]) + total.to_bytes(4, "little") + rle_zero_blocks(total)
    return ZSTD_MAGIC + bytes([0x00, 0x38]) + rle_zero_blocks(total)  # window descriptor: 128 KiB


def blob_files(store_path: str) -> list[str]:
    found = []
    for directory, _, files in os.walk(os.path.join(store_path, "raw")):
        found += [os.path.relpath(os.path.join(directory, name), store_path).replace(os.sep, "/")
                  for name in files]
    return sorted(found)
