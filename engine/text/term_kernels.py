"""numba kernels of TermTable (engine.text.term_table): an open-addressing hash table over UTF-8 term bytes.

Importing this module imports numba (0.2-0.5 s), so only a writer that asked for the numba kernels (or runs
where numba is loaded already) uses it; engine.text.pieces.Vocabulary does the same coding with a dict.

The table's state is plain arrays: `slots` (int32, -1 = empty, else a term number; its size a power of two),
`hashes` (uint64 per term), `offsets` (int64 per term and one more: term t is bytes[offsets[t]:offsets[t+1]-1],
each term followed by one separator byte, so that all terms decode at once by one split).
"""

from __future__ import annotations

import numpy as np
from numba import njit

FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)
STATUS_DONE, STATUS_FULL = 0, 1


@njit(cache=True, nogil=True)
def code_terms(data, separator, codes, token, cursor, slots, hashes, offsets, term_bytes, term_count):
    """Code the tokens of `data` (terms joined by the byte `separator`) from byte `cursor` on, writing the
    term number of token i to codes[i] (from i = `token` on); a new term is appended to the table.

    Returns (status, token, cursor, term_count): STATUS_DONE when every token is coded; STATUS_FULL when the
    next new term would not fit (slots half full, or hashes, offsets or term_bytes full): the caller grows
    the arrays and calls again with the returned token, cursor and term_count."""
    mask = slots.size - 1
    end = data.size
    while cursor <= end:
        start = cursor
        value = FNV_OFFSET
        while cursor < end and data[cursor] != separator:
            value = (value ^ np.uint64(data[cursor])) * FNV_PRIME
            cursor += 1
        length = cursor - start
        slot = value & mask
        while True:
            term = slots[slot]
            if term < 0:
                break
            if hashes[term] == value and offsets[term + 1] - offsets[term] - 1 == length:
                base = offsets[term]
                same = True
                for index in range(length):
                    if term_bytes[base + index] != data[start + index]:
                        same = False
                        break
                if same:
                    break
            slot = (slot + 1) & mask
        if term < 0:
            base = offsets[term_count]
            if 2 * (term_count + 1) > slots.size or term_count + 2 > offsets.size \
                    or base + length + 1 > term_bytes.size:
                return STATUS_FULL, token, start, term_count
            term_bytes[base:base + length] = data[start:start + length]
            term_bytes[base + length] = separator
            offsets[term_count + 1] = base + length + 1
            hashes[term_count] = value
            slots[slot] = term_count
            term = term_count
            term_count += 1
        codes[token] = term
        token += 1
        cursor += 1  # past the separator (or past the end: the loop stops)
    return STATUS_DONE, token, cursor, term_count


@njit(cache=True, nogil=True)
def fill_slots(slots, hashes, term_count):
    """Place terms 0..term_count-1 into empty `slots` by their hashes (after the table grew)."""
    mask = slots.size - 1
    for term in range(term_count):
        slot = hashes[term] & mask
        while slots[slot] >= 0:
            slot = (slot + 1) & mask
        slots[slot] = term
