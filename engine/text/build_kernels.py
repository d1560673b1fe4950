"""numba kernels of a text segment build (engine.text.build), for processes that have numba loaded.

Importing this module imports numba, so a build uses these only when numba is in the process already (a
writer that asked for numba kernels, a long-lived process); otherwise build.py does the same work with
numpy. Each kernel gives exactly what its numpy counterpart gives, so the segment bytes do not depend on
which ran (tests/text build both ways and compare):

    sorted_entries    tokens → entries in (term, place, position) order   (build._token_order and after)
    encode_postings   entries → the postings columns                      (engine.text.postings.encode)
    shared_prefixes   bytes two strings share at their start               (engine.text.frontcode)

Sorting is by counting (places, then terms: both are small dense numbers) instead of comparison sorts, and
the postings are sized and then written in two passes over the entries, with no temporary array per step.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.format import TEXT_BLOCK_ENTRIES as BLOCK_ENTRIES
from engine.text.postings import EncodedPostings, narrow

INSERTION_SORT_LIMIT = 32  # longer runs out of position order are sorted by a merge sort instead
STATUS_OK, STATUS_MISSING_TERM, STATUS_NEGATIVE_POSITION, STATUS_DESCENDING_POSITIONS = 0, 1, 2, 3
_ERRORS = {STATUS_MISSING_TERM: "every term needs at least one entry",
           STATUS_NEGATIVE_POSITION: "positions must be non-negative",
           STATUS_DESCENDING_POSITIONS: "positions must ascend within an entry"}


def sorted_entries(terms: np.ndarray, places: np.ndarray, positions: np.ndarray, term_count: int,
                   place_count: int) -> tuple:
    """(entry terms, entry places, frequencies, positions in entry order) of tokens given as their term,
    place (document · field slots + field) and position: entries ordered by (term, place), each entry's
    positions ascending, ties kept in token order."""
    return _sorted_entries(np.ascontiguousarray(terms), np.ascontiguousarray(places),
                           np.ascontiguousarray(positions), term_count, place_count)


def encode_postings(term_ids, documents, fields, frequencies, positions, term_count: int, field_slots: int,
                    plain_field: int = 0) -> EncodedPostings:
    """engine.text.postings.encode, the same columns: entries sized in one pass, written in a second."""
    columns = (term_ids, documents, fields, frequencies, positions)
    term_ids, documents, fields, frequencies, positions = (np.ascontiguousarray(values, dtype=np.int64)
                                                           for values in columns)
    status, firsts = _term_firsts(term_ids, term_count)
    if status == STATUS_OK:
        status, postings_offsets, document_bytes, position_offsets, skip_count = _sizes(
            firsts, documents, fields, frequencies, positions, field_slots, plain_field, BLOCK_ENTRIES)
    if status != STATUS_OK:
        raise ValueError(_ERRORS[status])
    postings, position_bytes, entry_counts, document_frequencies, skip_documents, skip_bytes, skip_detail_bytes = \
        _written(firsts, documents, fields, frequencies, positions, field_slots, plain_field, BLOCK_ENTRIES,
                 postings_offsets, document_bytes, position_offsets, skip_count)
    return EncodedPostings(postings=postings, postings_offsets=narrow(postings_offsets), positions=position_bytes,
                           position_offsets=narrow(position_offsets), entry_counts=narrow(entry_counts),
                           document_frequencies=narrow(document_frequencies),
                           skip_documents=narrow(skip_documents), skip_bytes=narrow(skip_bytes),
                           skip_detail_bytes=narrow(skip_detail_bytes))


@njit(cache=True, nogil=True)
def shared_prefixes(data, starts, lengths, left, right):
    shared = np.zeros(left.size, np.int64)
    for pair in range(left.size):
        first, second = starts[left[pair]], starts[right[pair]]
        limit = min(lengths[left[pair]], lengths[right[pair]])
        length = 0
        while length < limit and data[first + length] == data[second + length]:
            length += 1
        shared[pair] = length
    return shared


@njit(cache=True, nogil=True)
def _counting_order(keys, key_count, within):
    """The indexes `within` (a permutation) reordered by keys[index], stably."""
    starts = np.zeros(key_count + 1, np.int64)
    for index in within:
        starts[keys[index] + 1] += 1
    for key in range(key_count):
        starts[key + 1] += starts[key]
    order = np.empty(within.size, np.int64)
    for index in within:
        key = keys[index]
        order[starts[key]] = index
        starts[key] += 1
    return order


@njit(cache=True, nogil=True)
def _sort_runs_by_position(order, places, positions):
    """Within each run of one place in `order`, order by position, stably (runs are short and nearly sorted:
    positions ascend but for a search-mode sub-word, which shares its word's place in the text)."""
    start = 0
    size = order.size
    while start < size:
        end = start + 1
        while end < size and places[order[end]] == places[order[start]]:
            end += 1
        if end - start > INSERTION_SORT_LIMIT:
            run = order[start:end].copy()
            order[start:end] = run[np.argsort(positions[run], kind="mergesort")]
        else:
            for cursor in range(start + 1, end):
                token = order[cursor]
                position = positions[token]
                back = cursor - 1
                while back >= start and positions[order[back]] > position:
                    order[back + 1] = order[back]
                    back -= 1
                order[back + 1] = token
        start = end
    return order


@njit(cache=True, nogil=True)
def _ascending(values):
    for index in range(1, values.size):
        if values[index] < values[index - 1]:
            return False
    return True


@njit(cache=True, nogil=True)
def _sorted_entries(terms, places, positions, term_count, place_count):
    # A flush's tokens come in place order (documents in a row), positions ascending but for sub-words.
    order = np.arange(terms.size)
    if not _ascending(places):
        order = _counting_order(places, place_count, order)
    order = _sort_runs_by_position(order, places, positions)
    # Scattered by term into place and position columns, so that the entries are read off in sequence.
    starts = np.zeros(term_count + 1, np.int64)
    for token in range(terms.size):
        starts[terms[token] + 1] += 1
    for term in range(term_count):
        starts[term + 1] += starts[term]
    cursors = starts[:-1].copy()
    sorted_places = np.empty(terms.size, places.dtype)
    sorted_positions = np.empty(terms.size, np.int32)
    for token in order:
        slot = cursors[terms[token]]
        cursors[terms[token]] += 1
        sorted_places[slot] = places[token]
        sorted_positions[slot] = positions[token]
    entry_count = 0
    for term in range(term_count):
        for slot in range(starts[term], starts[term + 1]):
            if slot == starts[term] or sorted_places[slot] != sorted_places[slot - 1]:
                entry_count += 1
    entry_terms = np.empty(entry_count, np.int64)
    entry_places = np.empty(entry_count, np.int64)
    frequencies = np.zeros(entry_count, np.int64)
    entry = -1
    for term in range(term_count):
        for slot in range(starts[term], starts[term + 1]):
            if slot == starts[term] or sorted_places[slot] != sorted_places[slot - 1]:
                entry += 1
                entry_terms[entry] = term
                entry_places[entry] = sorted_places[slot]
            frequencies[entry] += 1
    return entry_terms, entry_places, frequencies, sorted_positions


@njit(cache=True, nogil=True)
def _varint_length(value):
    length = 1
    while value >= 0x80:
        value >>= 7
        length += 1
    return length


@njit(cache=True, nogil=True)
def _put_varint(out, cursor, value):
    while value >= 0x80:
        out[cursor] = (value & 0x7F) | 0x80
        value >>= 7
        cursor += 1
    out[cursor] = value
    return cursor + 1


@njit(cache=True, nogil=True)
def _entry_values(documents, fields, frequencies, entry, first, field_slots, plain_field):
    """(document value, detail value, plain) of one entry of the term whose first entry is `first`."""
    delta = documents[entry] - (documents[entry - 1] if entry > first else 0)
    detail = (frequencies[entry] - 1) * field_slots + fields[entry]
    plain = detail == plain_field
    return (delta << 1) | plain, detail, plain


@njit(cache=True, nogil=True)
def _term_firsts(term_ids, term_count):
    """(status, the first entry of each term and the entry count after them): the terms must be 0, 1, 2, ...
    in runs."""
    firsts = np.zeros(term_count + 1, np.int64)
    expected = 0
    for entry in range(term_ids.size):
        term = term_ids[entry]
        if entry == 0 or term != term_ids[entry - 1]:
            if term != expected:
                return STATUS_MISSING_TERM, firsts
            firsts[term] = entry
            expected += 1
    firsts[term_count] = term_ids.size
    return (STATUS_OK if expected == term_count else STATUS_MISSING_TERM), firsts


@njit(cache=True, nogil=True)
def _sizes(firsts, documents, fields, frequencies, positions, field_slots, plain_field, block_entries):
    """(status, postings offsets, document bytes per term, position offsets, skip rows): the first pass,
    which also checks the positions."""
    term_count = firsts.size - 1
    postings_offsets = np.zeros(term_count + 1, np.int64)
    document_bytes = np.zeros(term_count, np.int64)
    position_offsets = np.zeros(term_count + 1, np.int64)
    skip_count = 0
    position = 0
    for term in range(term_count):
        first, end = firsts[term], firsts[term + 1]
        if end - first > block_entries:
            skip_count += (end - first + block_entries - 1) // block_entries
        detail_bytes = 0
        position_bytes = 0
        for entry in range(first, end):
            value, detail, plain = _entry_values(documents, fields, frequencies, entry, first, field_slots, plain_field)
            document_bytes[term] += _varint_length(value)
            if not plain:
                detail_bytes += _varint_length(detail)
            previous = 0
            for _repeat in range(frequencies[entry]):
                current = positions[position]
                if current < 0:
                    return STATUS_NEGATIVE_POSITION, postings_offsets, document_bytes, position_offsets, 0
                if current < previous:
                    return STATUS_DESCENDING_POSITIONS, postings_offsets, document_bytes, position_offsets, 0
                position_bytes += _varint_length(current - previous)
                previous = current
                position += 1
        postings_offsets[term + 1] = postings_offsets[term] + document_bytes[term] + detail_bytes
        position_offsets[term + 1] = position_offsets[term] + position_bytes
    return STATUS_OK, postings_offsets, document_bytes, position_offsets, skip_count


@njit(cache=True, nogil=True)
def _written(firsts, documents, fields, frequencies, positions, field_slots, plain_field, block_entries,
             postings_offsets, document_bytes, position_offsets, skip_count):
    """The second pass: the postings and position bytes, and the per-term and per-block columns."""
    term_count = firsts.size - 1
    postings = np.empty(postings_offsets[term_count], np.uint8)
    position_stream = np.empty(position_offsets[term_count], np.uint8)
    entry_counts = np.empty(term_count, np.int64)
    document_frequencies = np.zeros(term_count, np.int64)
    skip_documents = np.empty(skip_count, np.int64)
    skip_bytes = np.empty(skip_count, np.int64)
    skip_detail_bytes = np.empty(skip_count, np.int64)
    skip = 0
    position = 0
    position_cursor = 0
    for term in range(term_count):
        first, end = firsts[term], firsts[term + 1]
        entry_counts[term] = end - first
        base = postings_offsets[term]
        cursor = base
        detail_cursor = base + document_bytes[term]
        for entry in range(first, end):
            if end - first > block_entries and (entry - first) % block_entries == 0:
                skip_documents[skip] = documents[entry]
                skip_bytes[skip] = cursor - base
                skip_detail_bytes[skip] = detail_cursor - base
                skip += 1
            if entry == first or documents[entry] != documents[entry - 1]:
                document_frequencies[term] += 1
            value, detail, plain = _entry_values(documents, fields, frequencies, entry, first, field_slots, plain_field)
            cursor = _put_varint(postings, cursor, value)
            if not plain:
                detail_cursor = _put_varint(postings, detail_cursor, detail)
            previous = 0
            for _repeat in range(frequencies[entry]):
                position_cursor = _put_varint(position_stream, position_cursor, positions[position] - previous)
                previous = positions[position]
                position += 1
    return (postings, position_stream, entry_counts, document_frequencies, skip_documents, skip_bytes,
            skip_detail_bytes)
