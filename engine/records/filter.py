"""The Bloom filter of a records segment's keys (layout 2, MANIFEST.spec section 4): a read of a key the segment
does not hold is answered without decompressing a block, as LevelDB's filter blocks answer it. A store that
grows by many flushes (a bulk R2G run) looks every new key up in every segment before the compaction.

The filter is m bits (FILTER_BITS_PER_KEY per row, m a multiple of 8, at least 64); a key sets the bits
(h1 + i·h2) mod m for i < FILTER_PROBES, where h1 and h2 are the low and high 32 bits of its BLAKE2b-64 hash
(Conventions; rows.key_hashes). Bit j is bit j mod 8 (least significant first) of byte j div 8. About 1% of
absent keys pass.
"""

from __future__ import annotations

import numpy as np

FILTER_BITS_PER_KEY = 10
FILTER_PROBES = 7
_PROBES = np.arange(FILTER_PROBES, dtype=np.uint64)


def _positions(hashes: np.ndarray, bits: int) -> np.ndarray:
    """The FILTER_PROBES bit positions of each hash: an array [len(hashes), FILTER_PROBES]."""
    low, high = hashes & np.uint64(0xFFFFFFFF), hashes >> np.uint64(32)
    return (low[:, None] + _PROBES[None, :] * high[:, None]) % np.uint64(bits)


_BUILD_STEP = 1 << 16  # hashes whose bit positions are computed at once


def build_filter(parts: list) -> bytes:
    """The filter bytes of the keys whose hashes are the arrays `parts`. The bits are set in the filter's bytes
    a step of keys at a time: a tier merge of millions of rows held ten times the filter's bytes and more in
    positions and a bit per byte (150 MiB for a million keys)."""
    bits = max(64, -(-sum(map(len, parts)) * FILTER_BITS_PER_KEY // 8) * 8)
    packed = np.zeros(bits // 8, np.uint8)
    for hashes in parts:
        for start in range(0, len(hashes), _BUILD_STEP):
            positions = _positions(hashes[start: start + _BUILD_STEP], bits).reshape(-1)
            masks = np.left_shift(np.uint8(1), (positions & np.uint64(7)).astype(np.uint8))
            np.bitwise_or.at(packed, (positions >> np.uint64(3)).astype(np.intp), masks)
    return packed.tobytes()


def may_contain(filter_bytes: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """For each hash: False when its key is certainly absent, True when it may be present."""
    bits = len(filter_bytes) * 8
    positions = _positions(hashes, bits).astype(np.int64)
    found = (filter_bytes[positions >> 3] >> (positions & 7).astype(np.uint8)) & 1
    return found.all(axis=1)


def may_contain_one(filter_bytes: memoryview, hashed: int) -> bool:
    """may_contain of one hash, in plain Python (a point read's filter check costs no numpy call)."""
    bits = len(filter_bytes) * 8
    low, high = hashed & 0xFFFFFFFF, hashed >> 32
    for probe in range(FILTER_PROBES):
        position = (low + probe * high) % bits
        if not filter_bytes[position >> 3] >> (position & 7) & 1:
            return False
    return True
