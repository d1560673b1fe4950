"""Unsigned LEB128 varints, encoded and decoded for whole arrays at once with numpy.

Decoding finds the terminator bytes (high bit clear) with one comparison, then assembles the values one
7-bit group at a time (at most 10 vectorized passes, usually 2): no per-byte Python. A value of more than 10 bytes, or one whose
10th byte carries bits beyond 64, is a CorruptionError, as is a buffer that ends inside a value.
"""

from __future__ import annotations

import numpy as np

from engine.errors import CorruptionError

MAX_VARINT_BYTES = 10
_SEVEN = np.uint64(7)


def _unsigned(values) -> np.ndarray:
    """An integer array as it is (any width: the encoders shift by Python ints, which keep it), else uint64.
    Values must be non-negative."""
    values = np.asarray(values)
    return values if values.dtype.kind in "ui" else values.astype(np.uint64)


def encoded_lengths(values) -> np.ndarray:
    """Bytes each value takes (1..10): one more for every power of 128 it reaches, one whole-array comparison
    per byte the largest value needs (a postings stream needs two or three)."""
    values = _unsigned(values)
    lengths = np.ones(values.shape, dtype=np.int64)
    if values.size:
        top, threshold = int(values.max()), 0x80
        while top >= threshold:  # threshold <= top: representable in the values' dtype
            lengths += values >= threshold
            threshold <<= 7
    return lengths


def encode(values, lengths: np.ndarray | None = None) -> np.ndarray:
    """uint8 array holding every value as LEB128, in order; `lengths`: their encoded_lengths, when known."""
    values = _unsigned(values).ravel()
    if values.size == 0:
        return np.zeros(0, dtype=np.uint8)
    continued = values >= 0x80
    if not continued.any():
        return values.astype(np.uint8)
    if lengths is None:
        lengths = encoded_lengths(values)
    places = np.cumsum(lengths) - lengths
    out = np.empty(int(places[-1] + lengths[-1]), dtype=np.uint8)
    out[places] = (values & 0x7F).astype(np.uint8) | (continued.view(np.uint8) << 7)
    longer = np.flatnonzero(continued)
    remaining, places = values[longer] >> 7, places[longer] + 1
    while longer.size:
        continued = remaining >= 0x80
        out[places] = (remaining & 0x7F).astype(np.uint8) | (continued.view(np.uint8) << 7)
        longer = np.flatnonzero(continued)
        remaining, places = remaining[longer] >> 7, places[longer] + 1
    return out


def decode(data, path: str = "<buffer>", offset: int = 0) -> np.ndarray:
    """uint64 array of every varint in `data` (which must end exactly at a value's end).

    `path` and `offset` (of data[0] in that file) only name the place in a CorruptionError.
    """
    return decode_with_ends(data, path, offset)[0]


def decode_with_ends(data, path: str = "<buffer>", offset: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`decode`, and the index in `data` of each value's last byte (callers that split the values by byte
    ranges need it, and it falls out of the decoding)."""
    data = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data
    if data.size == 0:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    terminators = data < 0x80
    ends = terminators.nonzero()[0]
    if ends.size == data.size:
        return data.astype(np.uint64), ends
    if not terminators[-1]:
        raise CorruptionError(path, offset + data.size - 1, "varint runs past the end of its block")
    lengths = np.empty_like(ends)  # np.diff(prepend=) costs more than the decoding around it
    lengths[0] = ends[0] + 1
    np.subtract(ends[1:], ends[:-1], out=lengths[1:])
    longest = int(lengths.max())
    if longest > MAX_VARINT_BYTES:
        bad = int(ends[np.argmax(lengths > MAX_VARINT_BYTES)] - MAX_VARINT_BYTES)
        raise CorruptionError(path, offset + bad + 1, "varint longer than 10 bytes")
    if longest == MAX_VARINT_BYTES:
        last = data[ends[lengths == MAX_VARINT_BYTES]]
        if (last > 1).any():
            bad = int(ends[lengths == MAX_VARINT_BYTES][np.argmax(last > 1)]) - MAX_VARINT_BYTES + 1
            raise CorruptionError(path, offset + bad, "varint overflows 64 bits")
    # Horner from each value's last (most significant) byte back to its first, whole arrays per step.
    values = data[ends].astype(np.uint64)
    for index in range(1, longest):
        longer = lengths > index
        groups = data[ends - index] & 0x7F
        values = np.where(longer, (values << _SEVEN) | groups, values)
    return values, ends
