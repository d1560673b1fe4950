"""The decoded in-memory part of a snapshot: the same interface as TermDictionary and PostingsReader,
over plain arrays (entries sorted by term, document, field) instead of front-coded blocks and varints."""

from __future__ import annotations

from bisect import bisect_left

import numpy as np


class MemoryDictionary:
    def __init__(self, sorted_terms: list):
        self._terms = sorted_terms
        self._ordinals = dict(zip(sorted_terms, range(len(sorted_terms))))
        self.term_count = len(sorted_terms)

    def ordinal(self, term: str) -> int:
        return self._ordinals.get(term, -1)

    def __contains__(self, term: str) -> bool:
        return term in self._ordinals

    def has_prefix(self, prefix: str) -> bool:
        index = bisect_left(self._terms, prefix)
        return index < len(self._terms) and self._terms[index].startswith(prefix)

    def terms(self) -> list:
        return list(self._terms)


class MemoryPostings:
    def __init__(self, entries, entry_counts: np.ndarray, document_count: int):
        self._entries = entries
        self._starts = np.append(0, np.cumsum(entry_counts))
        self._position_starts = np.append(0, np.cumsum(entries.frequencies))
        self.document_count = document_count

    def entries(self, term: int, within=None, kernels=None):
        start, end = int(self._starts[term]), int(self._starts[term + 1])
        entries = self._entries
        return entries.documents[start:end], entries.fields[start:end], entries.frequencies[start:end]

    def entries_of(self, terms: list) -> tuple:
        found = [self.entries(term) for term in terms]
        counts = np.array([documents.size for documents, _fields, _frequencies in found], dtype=np.int64)
        return tuple(np.concatenate(column) for column in zip(*found)) + (counts,)

    def positions(self, term: int, frequencies: np.ndarray) -> np.ndarray:
        first, last = int(self._starts[term]), int(self._starts[term + 1])
        return self._entries.positions[int(self._position_starts[first]): int(self._position_starts[last])]

    def all_entries(self):
        entries = self._entries
        return entries.entry_terms, entries.documents, entries.fields, entries.frequencies, entries.positions
