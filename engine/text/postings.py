"""Postings: per term, the (document, field, term frequency) entries as varints, plus a positions stream.

One term's postings are the bytes `postings[postings_offsets[t]:postings_offsets[t+1]]`, entries in
(document, field) order, as two runs of varints:

    documents  per entry: (document − previous entry's document) · 2 + plain; the first delta is from 0;
               plain = 1 when tf = 1 and field = plain_field (the segment's largest field): the common case
    details    per entry that is not plain: (tf − 1) · field_slots + field

Entries form blocks of BLOCK_ENTRIES. A term of more than one block has one skip entry per block, rows
`skip_rows(t)` of `skip_documents` (first document of the block), `skip_bytes` (where the block's document
varints start) and `skip_detail_bytes` (where its detail varints start), offsets from the term's first
byte, so that a filtered search decodes only the blocks that can hold its candidates. A term's skip rows
follow from the entry counts (the terms before it with more than one block), so they are not stored.

Positions, `positions[position_offsets[t]:position_offsets[t+1]]`: per entry, its tf positions as varint
deltas, the first from 0.

Everything is encoded for all terms at once and decoded with vectorized numpy (engine.text.varint): per term,
or for a query's terms together (`entries_of`), since numpy's cost per call outweighs its cost per entry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import CorruptionError
from engine.format import TEXT_BLOCK_ENTRIES as BLOCK_ENTRIES
from engine.text import varint


@dataclass
class EncodedPostings:
    postings: np.ndarray  # uint8
    postings_offsets: np.ndarray  # [terms + 1]
    positions: np.ndarray  # uint8
    position_offsets: np.ndarray  # [terms + 1]
    entry_counts: np.ndarray  # [terms]
    document_frequencies: np.ndarray  # [terms]
    skip_documents: np.ndarray
    skip_bytes: np.ndarray
    skip_detail_bytes: np.ndarray


def narrow(values) -> np.ndarray:
    """The values in the smallest unsigned dtype that holds them (columns shrink by 2-8x)."""
    values = np.asarray(values)
    top = int(values.max()) if values.size else 0
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values.astype(np.uint64)


def blocks_per_term(entry_counts: np.ndarray) -> np.ndarray:
    """Skip entries of each term: one per block for terms of more than one block, else none."""
    counts = np.asarray(entry_counts, dtype=np.int64)
    return np.where(counts > BLOCK_ENTRIES, -(-counts // BLOCK_ENTRIES), 0)


def encode(term_ids, documents, fields, frequencies, positions, term_count: int, field_slots: int,
           plain_field: int = 0) -> EncodedPostings:
    """Entries sorted by (term, document, field), every term in range(term_count) present; `positions`
    holds each entry's `frequencies[i]` positions, ascending, entry after entry."""
    # Only the documents need 64 bits (their deltas are shifted); the rest keep their width (often 32 bits).
    term_ids, fields, frequencies = np.asarray(term_ids), np.asarray(fields), np.asarray(frequencies)
    documents = np.asarray(documents, dtype=np.int64)
    entry_count = term_ids.size
    first_entries = np.flatnonzero(_run_starts(term_ids))
    if first_entries.size != term_count:
        raise ValueError("every term needs at least one entry")
    counts = np.diff(np.append(first_entries, entry_count))

    deltas = np.diff(documents, prepend=0)
    deltas[first_entries] = documents[first_entries]
    details = (frequencies - 1) * field_slots + fields
    plain = details == plain_field
    detailed = np.flatnonzero(~plain)
    document_values = (deltas << 1) | plain
    document_lengths = varint.encoded_lengths(document_values)
    detail_lengths = varint.encoded_lengths(details[detailed])
    detail_counts = np.diff(np.searchsorted(detailed, np.append(first_entries, entry_count)))
    term_document_bytes = _sums(document_lengths, first_entries)
    term_detail_bytes = np.zeros(term_count, dtype=np.int64)
    has_details = detail_counts > 0
    term_detail_bytes[has_details] = _sums(detail_lengths, run_offsets(detail_counts)[has_details])
    skip_rows, skip_terms = _skip_rows(first_entries, counts)
    skip_starts = first_entries[skip_terms]
    new_document = _run_starts(documents)
    new_document[first_entries] = True

    position_values = _position_deltas(np.asarray(positions), frequencies)
    position_lengths = varint.encoded_lengths(position_values)
    position_term_bytes = _sums(position_lengths, run_offsets(frequencies)[first_entries])
    return EncodedPostings(
        postings=_term_streams(document_values, document_lengths, details[detailed], detail_lengths,
                               term_document_bytes, term_detail_bytes),
        postings_offsets=narrow(np.append(0, np.cumsum(term_document_bytes + term_detail_bytes))),
        positions=varint.encode(position_values, position_lengths),
        position_offsets=narrow(np.append(0, np.cumsum(position_term_bytes))),
        entry_counts=narrow(counts),
        document_frequencies=narrow(_sums(new_document.astype(np.int64), first_entries)),
        skip_documents=narrow(documents[skip_rows]),
        skip_bytes=narrow(_bytes_before(document_lengths, np.arange(entry_count), skip_rows, skip_starts)),
        skip_detail_bytes=narrow(term_document_bytes[skip_terms] +
                                 _bytes_before(detail_lengths, detailed, skip_rows, skip_starts)),
    )


def _skip_rows(first_entries: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The entries starting a block of the terms of more than one block, and the term of each."""
    terms = np.flatnonzero(counts > BLOCK_ENTRIES)
    blocks = -(-counts[terms] // BLOCK_ENTRIES)
    skip_terms = np.repeat(terms, blocks)
    block_numbers = np.arange(int(blocks.sum())) - np.repeat(run_offsets(blocks), blocks)
    return first_entries[skip_terms] + block_numbers * BLOCK_ENTRIES, skip_terms


def _bytes_before(lengths: np.ndarray, owners: np.ndarray, rows: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per row, the bytes of the values (value i: lengths[i] bytes, of entry owners[i], ascending) of the
    entries from `starts` up to the row, excluded."""
    before = np.append(0, np.cumsum(lengths))
    return before[np.searchsorted(owners, rows)] - before[np.searchsorted(owners, starts)]


def _term_streams(document_values, document_lengths, detail_values, detail_lengths, term_document_bytes,
                  term_detail_bytes):
    """Varints term after term: the term's document values, then its detail values. Both are encoded as
    streams of their own; the few detail bytes are then inserted after their term's document bytes (a pass
    over bytes, not over 64-bit values)."""
    documents = varint.encode(document_values, document_lengths)
    if not detail_values.size:
        return documents
    insert_at = np.repeat(np.cumsum(term_document_bytes), term_detail_bytes)
    return np.insert(documents, insert_at, varint.encode(detail_values, detail_lengths))


def _run_starts(values: np.ndarray) -> np.ndarray:
    starts = np.ones(values.size, dtype=bool)
    if values.size:
        np.not_equal(values[1:], values[:-1], out=starts[1:])
    return starts


def _sums(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Sums of values over the runs beginning at `starts` (every run non-empty)."""
    if starts.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.add.reduceat(np.asarray(values, dtype=np.int64), starts)


def run_offsets(lengths: np.ndarray) -> np.ndarray:
    """Where each run of the given lengths begins, runs laid end to end."""
    return np.cumsum(lengths) - lengths


def _position_deltas(positions: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """Each entry's positions as its first one, then differences to the previous; only entries of more than
    one position (few: a term seldom repeats in a field) have differences to take."""
    if positions.size == 0:
        return positions
    if positions.min() < 0:
        raise ValueError("positions must be non-negative")
    deltas = positions.copy()
    repeated = np.flatnonzero(frequencies > 1)
    if repeated.size:
        counts = frequencies[repeated] - 1  # the positions after each repeated entry's first
        following = run_offsets(frequencies)[repeated] + 1
        places = np.repeat(following - run_offsets(counts), counts) + np.arange(int(counts.sum()))
        deltas[places] = positions[places] - positions[places - 1]
        if deltas[places].min() < 0:
            raise ValueError("positions must ascend within an entry")
    return deltas


class PostingsReader:
    """Decodes one segment's postings; `column(name)` returns the arrays named like EncodedPostings', and
    `items(name, start, stop)` a range of one (a published segment checks only the blocks holding it:
    a query reads a few terms' bytes of the postings and positions streams, not megabytes)."""

    def __init__(self, column, field_slots: int, document_count: int, path: str = "<memory>", plain_field: int = 0,
                 items=None):
        self._column = column
        self._checked_items = items or (lambda name, start, stop: column(name)[start:stop])
        self.plain_field = plain_field
        self.field_slots = field_slots
        self.document_count = document_count
        self.path = path
        self._skip_starts = None

    def _items(self, name: str, start: int, stop: int) -> np.ndarray:
        if not 0 <= start <= stop:
            raise CorruptionError(self.path, None, f"{name} offsets are not ascending")
        return self._checked_items(name, start, stop)

    def skip_rows(self, term: int) -> tuple[int, int]:
        if self._skip_starts is None:
            self._skip_starts = np.append(0, np.cumsum(blocks_per_term(self._column("entry_counts"))))
        return int(self._skip_starts[term]), int(self._skip_starts[term + 1])

    def entries(self, term: int, within: np.ndarray | None = None, kernels=None):
        """(documents, fields, frequencies) as int64 arrays of a term's entries, in document order.

        within: sorted local document numbers the caller cares about; when given, only the blocks that
        can hold them are decoded (entries of other documents may still be returned). kernels: the
        engine.text.kernels module to decode with, or None for numpy."""
        offsets = self._column("postings_offsets")
        start, end = int(offsets[term]), int(offsets[term + 1])
        count = int(self._column("entry_counts")[term])
        if within is not None and count > BLOCK_ENTRIES:
            return self._blocks(term, start, end, count, within)
        data = self._items("postings", start, end)
        if kernels is not None:
            documents, fields, frequencies, status = kernels.decode_entries(
                data, 0, end - start, count, self.field_slots, self.plain_field, self.document_count)
            if status:
                raise CorruptionError(self.path, start, "postings of a term are malformed")
            return documents, fields, frequencies
        values = varint.decode(data, self.path, start)
        return self._assemble(values[:count], values[count:], None, start)

    def entries_of(self, terms: list) -> tuple:
        """The entries of several terms (the numpy search path): (documents, fields, frequencies) of all of
        them, term after term, and each term's entry count. One decode for a query's few thousand entries,
        whose cost is numpy's per call, not per entry."""
        offsets = self._column("postings_offsets")
        entry_counts = self._column("entry_counts")
        ranges = [(int(offsets[term]), int(offsets[term + 1])) for term in terms]
        counts = np.array([int(entry_counts[term]) for term in terms], dtype=np.int64)
        pieces = [self._items("postings", start, end) for start, end in ranges]
        chunk = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
        lengths = np.array([end - start for start, end in ranges], dtype=np.int64)
        return self._decode_runs(chunk, lengths, counts, ranges[0][0]) + (counts,)

    def _assemble(self, document_values: np.ndarray, detail_values: np.ndarray, first_document, start: int):
        values = document_values.view(np.int64)
        if values.size and (int(values.min()) < 0 or int(values.max()) >> 1 >= self.document_count):
            raise CorruptionError(self.path, start, "postings name a document beyond the segment")
        plain = (values & 1).astype(bool)
        documents = np.cumsum(values >> 1)
        if first_document is not None and documents.size:
            documents += first_document - documents[0]
        if documents.size and documents[-1] >= self.document_count:
            raise CorruptionError(self.path, start, "postings name a document beyond the segment")
        if detail_values.size != plain.size - int(np.count_nonzero(plain)):
            raise CorruptionError(self.path, start, "postings hold the wrong number of entry details")
        details = np.full(plain.size, self.plain_field, dtype=np.int64)
        if detail_values.size:
            detail_values = detail_values.view(np.int64)
            if int(detail_values.min()) < 0:
                raise CorruptionError(self.path, start, "postings hold an invalid entry detail")
            details[~plain] = detail_values
        if self.field_slots == 1:
            return documents, np.zeros(plain.size, dtype=np.int64), details + 1
        return documents, details % self.field_slots, details // self.field_slots + 1

    def _blocks(self, term: int, start: int, end: int, count: int, within: np.ndarray):
        first_skip, end_skip = self.skip_rows(term)
        block_documents = self._column("skip_documents")[first_skip:end_skip].astype(np.int64)
        document_bytes = self._column("skip_bytes")[first_skip:end_skip].astype(np.int64)
        detail_bytes = self._column("skip_detail_bytes")[first_skip:end_skip].astype(np.int64)
        document_limits = np.append(document_bytes, detail_bytes[0])
        detail_limits = np.append(detail_bytes, end - start)
        # `within` is sorted, so the blocks holding it come in order: keep each once.
        wanted = sorted(set((np.searchsorted(block_documents, within, side="right") - 1).tolist()))
        pieces = []
        for block in (block for block in wanted if block >= 0):
            document_values = varint.decode(self._items("postings", start + int(document_limits[block]),
                                                        start + int(document_limits[block + 1])), self.path, start)
            detail_values = varint.decode(self._items("postings", start + int(detail_limits[block]),
                                                      start + int(detail_limits[block + 1])), self.path, start)
            if document_values.size != min(BLOCK_ENTRIES, count - block * BLOCK_ENTRIES):
                raise CorruptionError(self.path, start, "a postings block holds the wrong number of entries")
            pieces.append(self._assemble(document_values, detail_values, int(block_documents[block]), start))
        if not pieces:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        return tuple(np.concatenate(parts) for parts in zip(*pieces))

    def positions(self, term: int, frequencies: np.ndarray) -> np.ndarray:
        """Absolute positions of every entry of `term` (all entries, as returned by `entries(term)`)."""
        offsets = self._column("position_offsets")
        start, end = int(offsets[term]), int(offsets[term + 1])
        deltas = varint.decode(self._items("positions", start, end), self.path, start).astype(np.int64)
        if deltas.size != int(frequencies.sum()):
            raise CorruptionError(self.path, start, "positions do not match the term frequencies")
        return _segmented_cumsum(deltas, frequencies)

    def entry_counts(self) -> np.ndarray:
        """Entries of each term."""
        return self._column("entry_counts")

    def all_entries(self):
        """Every entry of the segment at once: (terms, documents, fields, frequencies, positions), term order
        (checks; a merge reads `term_range` by term runs instead)."""
        counts = self._column("entry_counts")
        offsets = self._column("postings_offsets")
        if offsets.size != counts.size + 1 or (offsets.size and offsets[0] != 0):
            raise CorruptionError(self.path, None, "postings offsets are not ascending")
        return self.term_range(0, counts.size)

    def term_range(self, first: int, end: int):
        """The entries of terms [first, end): (terms counted from `first`, documents, fields, frequencies,
        positions), term order. One decode of their postings bytes and one of their positions bytes."""
        counts = self._column("entry_counts")[first:end].astype(np.int64)
        offsets = self._column("postings_offsets")[first:end + 1].astype(np.int64)
        if offsets.size != counts.size + 1 or (np.diff(offsets) < 0).any():
            raise CorruptionError(self.path, None, "postings offsets are not ascending")
        start = int(offsets[0]) if offsets.size else 0
        chunk = self._items("postings", start, int(offsets[-1]) if offsets.size else 0)
        documents, fields, frequencies = self._decode_runs(chunk, np.diff(offsets), counts, start)
        position_offsets = self._column("position_offsets")
        position_start, position_end = (int(position_offsets[first]), int(position_offsets[end])) \
            if position_offsets.size else (0, 0)
        deltas = varint.decode(self._items("positions", position_start, position_end), self.path,
                               position_start).astype(np.int64)
        if deltas.size != int(frequencies.sum()):
            raise CorruptionError(self.path, position_start, "positions do not match the term frequencies")
        terms = np.repeat(np.arange(counts.size), counts)
        return terms, documents, fields, frequencies, _segmented_cumsum(deltas, frequencies)

    def _decode_runs(self, chunk: np.ndarray, lengths: np.ndarray, counts: np.ndarray, offset: int):
        """Decode the postings of consecutive terms whose bytes are `chunk` (term i: lengths[i] bytes holding
        counts[i] entries; `offset` places chunk in the file for errors) → documents, fields, frequencies."""
        if counts.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        if (counts <= 0).any():
            raise CorruptionError(self.path, offset, "a term of the dictionary has no postings")
        values, value_ends = varint.decode_with_ends(chunk, self.path, offset)
        term_ends = np.cumsum(lengths)
        if (lengths <= 0).any() or (chunk[term_ends - 1] >= 0x80).any():
            raise CorruptionError(self.path, offset, "a varint runs from one term's postings into the next")
        # Value index where each term starts: how many varints end before its first byte.
        value_starts = np.searchsorted(value_ends, term_ends - lengths)
        entry_starts = run_offsets(counts)
        document_index = np.arange(int(entry_starts[-1] + counts[-1])) + np.repeat(value_starts - entry_starts, counts)
        document_values = values[document_index].view(np.int64)
        plain = document_values & 1
        # Per term, the values after its entries' document values are the details of its non-plain entries.
        bounds = value_starts.tolist() + [values.size]
        detail_counts = [end - start - count for start, end, count in zip(bounds, bounds[1:], counts.tolist())]
        if detail_counts != (counts - np.add.reduceat(plain, entry_starts)).tolist():
            raise CorruptionError(self.path, offset, "postings hold the wrong number of entry details")
        documents = _segmented_cumsum(document_values >> 1, counts, entry_starts)
        # Non-negative deltas (no value of 2**63 or more) make ascending documents: the last bounds them all.
        if int(document_values.min()) < 0 or int(documents.max()) >= self.document_count:
            raise CorruptionError(self.path, offset, "postings name a document beyond the segment")
        details = np.full(plain.size, self.plain_field, dtype=np.int64)
        if values.size > document_values.size:
            is_detail = np.ones(values.size, dtype=bool)
            is_detail[document_index] = False
            detail_values = values[is_detail].view(np.int64)
            if int(detail_values.min()) < 0:
                raise CorruptionError(self.path, offset, "postings hold an invalid entry detail")
            details[plain == 0] = detail_values
        if self.field_slots == 1:
            return documents, np.zeros(plain.size, dtype=np.int64), details + 1
        return documents, details % self.field_slots, details // self.field_slots + 1


def _segmented_cumsum(values: np.ndarray, run_lengths: np.ndarray, starts: np.ndarray | None = None) -> np.ndarray:
    """Running sums that restart at every run (runs of the given lengths, in order); `starts`: where the runs
    begin, when every run is known to be non-empty."""
    running = np.cumsum(values)
    if run_lengths.size == 1:
        return running
    if starts is None:
        nonempty = run_lengths > 0
        starts, run_lengths = run_offsets(run_lengths)[nonempty], run_lengths[nonempty]
    return running - np.repeat(running[starts] - values[starts], run_lengths)
