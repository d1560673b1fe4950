"""Byte-level helpers shared by every file format: masked CRCs, varints, msgpack with safe limits."""

from __future__ import annotations

import zlib

import msgpack

from engine.errors import CorruptionError
from engine.format import CRC_MASK_DELTA

_MASK32 = 0xFFFFFFFF


def crc32(data, start: int = 0) -> int:
    return zlib.crc32(data, start) & _MASK32


def crc32_combine(first: int, second: int, second_length: int) -> int:
    """crc32(a + b) from crc32(a), crc32(b) and len(b), without reading a or b (zlib's crc32_combine, which
    Python's zlib does not expose): a segment writer checksums a column's blocks once and derives the file's
    CRC from them instead of a second pass over the bytes. Appending n zero bytes to a CRC register is a
    linear map over GF(2); the maps for 2^k bytes are squared from one another once and kept."""
    for power in range(second_length.bit_length()):
        if second_length >> power & 1:
            first = _gf2_times(_zero_bytes_operator(power), first)
    return first ^ second


_ZERO_OPERATORS: list = []  # [k]: the 32 columns of the map that appends 2^k zero bytes to a CRC register


def _zero_bytes_operator(power: int) -> list:
    if not _ZERO_OPERATORS:
        one_bit = [0xEDB88320] + [1 << row for row in range(31)]  # one zero bit (the reflected polynomial)
        _ZERO_OPERATORS.append(_gf2_square(_gf2_square(_gf2_square(one_bit))))  # eight bits: one byte
    while len(_ZERO_OPERATORS) <= power:
        _ZERO_OPERATORS.append(_gf2_square(_ZERO_OPERATORS[-1]))
    return _ZERO_OPERATORS[power]


def _gf2_times(matrix: list, vector: int) -> int:
    total, row = 0, 0
    while vector:
        if vector & 1:
            total ^= matrix[row]
        vector >>= 1
        row += 1
    return total


def _gf2_square(matrix: list) -> list:
    return [_gf2_times(matrix, column) for column in matrix]


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
    """msgpack of the profile in MANIFEST.spec's Conventions (what it writes, and what `unpack` accepts)."""
    return msgpack.packb(value, use_bin_type=True)


def unpack(data, path: str = "<buffer>", offset: int | None = None):
    """Decode msgpack written by `pack`; any malformation is corruption of `path`, never a bare exception. What
    `pack` never writes is refused too: an ext type, and a map key that is not str (msgpack-python's
    strict_map_key lets a bin key through, which no check here catches without a call per map)."""
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=True, ext_hook=_refuse_ext)
    except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as error:
        raise CorruptionError(path, offset, f"undecodable msgpack ({error})") from None


def _refuse_ext(code: int, _data: bytes):
    raise ValueError(f"ext type {code} is outside memctl's msgpack profile")
