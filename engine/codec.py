"""Byte-level helpers shared by every file format: masked CRCs, varints, msgpack with safe limits."""

from __future__ import annotations

import zlib

import msgpack

from engine.errors import CorruptionError
from engine.format import CRC_MASK_DELTA

_MASK32 = 0xFFFFFFFF


def crc32(data, start: int = 0) -> int:
    return zlib.crc32(data, start) & _MASK32


def mask_crc(crc: int) -> int:
    """LevelDB's masking: a CRC stored inside data that is itself checksummed stays meaningful."""
    return ((((crc >> 15) | (crc << 17)) & _MASK32) + CRC_MASK_DELTA) & _MASK32


def unmask_crc(masked: int) -> int:
    rotated = (masked - CRC_MASK_DELTA) & _MASK32
    return ((rotated >> 17) | (rotated << 15)) & _MASK32


def masked_crc32(data, start: int = 0) -> int:
    return mask_crc(crc32(data, start))


def encode_varint(value: int) -> bytes:
    """Unsigned LEB128."""
    if value < 0:
        raise ValueError("varint must be non-negative")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_varint(data, offset: int, path: str = "<buffer>") -> tuple[int, int]:
    """Return (value, next offset); at most 10 bytes and 64 bits, else CorruptionError."""
    result = 0
    for index in range(10):
        position = offset + index
        if position >= len(data):
            raise CorruptionError(path, offset, "varint runs past the end of the data")
        byte = data[position]
        result |= (byte & 0x7F) << (7 * index)
        if byte < 0x80:
            if result >= 1 << 64:
                raise CorruptionError(path, offset, "varint overflows 64 bits")
            return result, position + 1
    raise CorruptionError(path, offset, "varint longer than 10 bytes")


def pack(value) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def unpack(data, path: str = "<buffer>", offset: int | None = None):
    """Decode msgpack written by `pack`; any malformation is corruption of `path`, never a bare exception."""
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as error:
        raise CorruptionError(path, offset, f"undecodable msgpack ({error.__class__.__name__})") from None
