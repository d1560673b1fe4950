"""Keys a conversion run has written, in bounded memory: what tells a first run that a key it never wrote is
absent, with no store lookup, however long the run (a set of every key grew with the run: 120 MB of node keys
on a 32 MB transcript).

A Bloom filter of SEEN_BITS bits and SEEN_PROBES probes over Python's own str hash (stable within a process,
which is all a run needs). `key not in seen` is exact for a key never added; a key never added still reads as
present about once in a million lookups at a million keys, once in 200 at ten million, and then costs a store
lookup (never a wrong answer). Its bytes are taken from the system as they are first set.
"""

from __future__ import annotations

import numpy as np

SEEN_BITS = 1 << 27  # 16 MiB; a power of two
SEEN_PROBES = 4


class SeenKeys:
    def __init__(self, bits: int = SEEN_BITS):
        self._mask = bits - 1
        self._bytes = memoryview(np.zeros(bits // 8, np.uint8))

    def add_all(self, keys) -> None:
        data, mask = self._bytes, self._mask
        for key in keys:
            hashed = hash(key)
            step = (hashed >> 32) | 1
            for probe in range(SEEN_PROBES):
                position = (hashed + probe * step) & mask
                data[position >> 3] |= 1 << (position & 7)

    def __contains__(self, key: str) -> bool:
        data, mask = self._bytes, self._mask
        hashed = hash(key)
        step = (hashed >> 32) | 1
        for probe in range(SEEN_PROBES):
            position = (hashed + probe * step) & mask
            if not data[position >> 3] >> (position & 7) & 1:
                return False
        return True
