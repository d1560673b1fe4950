"""Term dictionary: sorted UTF-8 terms in front-coded blocks, with a sparse index of each block's first term.

    blocks        uint8   per block, per term: varint(shared prefix bytes with the previous term in the
                          block; 0 for the first) · varint(suffix bytes) · suffix
    block_offsets         [blocks + 1] byte offsets of the blocks
    first_terms   uint8   the first term of every block, concatenated (the sparse index)
    first_offsets         [blocks + 1]

A term's ordinal (block · TERMS_PER_BLOCK + index in block) indexes the per-term columns (postings
offsets, document frequency …). Lookup is a binary search over the first terms and a scan of one block;
decoded blocks are cached for the life of the reader, because query segmentation probes neighbours.
UTF-8 byte order equals code point order, so Python's string sort and the byte comparisons agree.
"""

from __future__ import annotations

import operator
from bisect import bisect_left, bisect_right
from itertools import islice

import numpy as np

from engine.codec import decode_varint
from engine.errors import CorruptionError
from engine.text import varint
from engine.text.frontcode import StringBuffer, gather_runs, shared_prefixes
from engine.text.postings import narrow

from engine.format import TEXT_TERMS_PER_BLOCK as TERMS_PER_BLOCK


def encode(sorted_terms: list) -> dict:
    """Columns for `sorted_terms` (str, strictly ascending)."""
    strings = StringBuffer.of_texts(sorted_terms)
    if not all(map(operator.lt, sorted_terms, islice(sorted_terms, 1, None))):  # str order is UTF-8 byte order
        raise ValueError("terms must be unique and sorted")
    count = len(sorted_terms)
    shared = np.zeros(count, dtype=np.int64)
    followers = np.flatnonzero(np.arange(count) % TERMS_PER_BLOCK)  # every term but the first of a block
    shared[followers] = shared_prefixes(strings, followers - 1, followers)
    suffix_lengths = strings.lengths - shared
    numbers = np.column_stack([shared, suffix_lengths]).ravel()
    number_lengths = varint.encoded_lengths(numbers)
    header_lengths = number_lengths.reshape(-1, 2).sum(axis=1)
    header_starts = strings.data.size + np.cumsum(header_lengths) - header_lengths
    pool = np.concatenate([strings.data, varint.encode(numbers, number_lengths)])
    blocks = gather_runs(pool, np.column_stack([header_starts, strings.starts + shared]).ravel(),
                         np.column_stack([header_lengths, suffix_lengths]).ravel())
    term_ends = np.cumsum(header_lengths + suffix_lengths)
    firsts = np.arange(0, count, TERMS_PER_BLOCK)
    return {
        "term_blocks": blocks,
        "term_block_offsets": narrow(np.append(0, term_ends[np.minimum(firsts + TERMS_PER_BLOCK, count) - 1])),
        "term_first": gather_runs(strings.data, strings.starts[firsts], strings.lengths[firsts]),
        "term_first_offsets": narrow(np.append(0, np.cumsum(strings.lengths[firsts]))),
    }


class TermDictionary:
    """Reads the columns written by `encode`; `column(name)` returns a numpy array."""

    def __init__(self, column, term_count: int, path: str = "<memory>"):
        self._column = column
        self.term_count = term_count
        self.path = path
        self.block_count = -(-term_count // TERMS_PER_BLOCK)
        self._firsts: list | None = None
        self._blocks: dict = {}

    def _first_terms(self) -> list:
        """The sparse index as a list of bytes (one slice per block: ~1 µs each, once per reader)."""
        if self._firsts is None:
            offsets = self._column("term_first_offsets").tolist()
            data = self._column("term_first").tobytes()
            if len(offsets) != self.block_count + 1 or (offsets and offsets[-1] != len(data)):
                raise CorruptionError(self.path, None, "term dictionary index does not match its blocks")
            self._firsts = [data[offsets[index]: offsets[index + 1]] for index in range(self.block_count)]
        return self._firsts

    def _block(self, block: int) -> list:
        terms = self._blocks.get(block)
        if terms is None:
            terms = self._blocks[block] = self._decoded_block(block)
        return terms

    def _decoded_block(self, block: int) -> list:
        offsets = self._column("term_block_offsets")
        start, end = int(offsets[block]), int(offsets[block + 1])
        data = self._column("term_blocks")[start:end].tobytes()
        size = min(TERMS_PER_BLOCK, self.term_count - block * TERMS_PER_BLOCK)
        terms = []
        previous = b""
        cursor = 0
        for _index in range(size):
            shared, cursor = decode_varint(data, cursor, self.path)
            length, cursor = decode_varint(data, cursor, self.path)
            if shared > len(previous) or cursor + length > len(data):
                raise CorruptionError(self.path, start + cursor, "term dictionary block is malformed")
            previous = previous[:shared] + data[cursor: cursor + length]
            cursor += length
            terms.append(previous)
        if cursor != len(data) or (terms and terms[0] != self._first_terms()[block]):
            raise CorruptionError(self.path, start, "term dictionary block disagrees with its index")
        return terms

    def encoded_terms(self):
        """Every term's UTF-8 bytes in order, a block decoded at a time and not kept (a merge walks many
        dictionaries once: caching them would hold every term of every segment)."""
        for block in range(self.block_count):
            yield from self._decoded_block(block)

    def _block_of(self, key: bytes) -> int:
        """Last block whose first term is <= key (-1 if key sorts before every term)."""
        return bisect_right(self._first_terms(), key) - 1

    def ordinal(self, term: str) -> int:
        """The term's ordinal, or -1 when absent."""
        key = term.encode("utf-8")
        block = self._block_of(key)
        if block < 0:
            return -1
        terms = self._block(block)
        index = bisect_left(terms, key)
        if index < len(terms) and terms[index] == key:
            return block * TERMS_PER_BLOCK + index
        return -1

    def __contains__(self, term: str) -> bool:
        return self.ordinal(term) >= 0

    def has_prefix(self, prefix: str) -> bool:
        """Whether any term starts with `prefix`."""
        key = prefix.encode("utf-8")
        block = max(self._block_of(key), 0)
        while block < self.block_count:
            terms = self._block(block)
            index = bisect_left(terms, key)
            if index < len(terms):
                return terms[index].startswith(key)
            block += 1
        return False

    def terms(self) -> list:
        """Every term in order (compaction and checks; decodes the whole dictionary)."""
        return [self._text(data) for block in range(self.block_count) for data in self._block(block)]

    def _text(self, data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptionError(self.path, None, "term dictionary holds a term that is not UTF-8") from None

