"""numba kernels for the search hot path, for long-lived processes (the Python API, benchmarks).

Importing this module imports numba (0.4 s and more), so the CLI's cold `memctl search` never does: the
Searcher uses these only when asked (kernels="numba") or when numba is already loaded (kernels="auto").
Each kernel does in one pass what the numpy path does in a dozen array operations; both paths compute the
same numbers (tests/text compare them).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def decode_entries(data, start, end, count, field_slots, plain_field, document_count):
    """One term's postings (see engine.text.postings) → (documents, fields, frequencies); status 0 = ok,
    1 = a malformed varint, 2 = the entries do not fit the segment."""
    documents = np.empty(count, np.int64)
    fields = np.empty(count, np.int64)
    frequencies = np.empty(count, np.int64)
    cursor = start
    document = 0
    for index in range(count):
        value, cursor, status = _varint(data, cursor, end)
        if status:
            return documents, fields, frequencies, 1
        document += value >> 1
        documents[index] = document
        if value & 1:
            fields[index] = plain_field
            frequencies[index] = 1
        else:
            fields[index] = -1
    if count and (documents[count - 1] >= document_count or documents[count - 1] < 0):
        return documents, fields, frequencies, 2
    for index in range(count):
        if fields[index] < 0:
            detail, cursor, status = _varint(data, cursor, end)
            if status or detail < 0:
                return documents, fields, frequencies, 1
            fields[index] = detail % field_slots
            frequencies[index] = detail // field_slots + 1
    if cursor != end:
        return documents, fields, frequencies, 2
    return documents, fields, frequencies, 0


@njit(cache=True)
def _varint(data, cursor, end):
    value = 0
    shift = 0
    for _index in range(10):
        if cursor >= end:
            return value, cursor, 1
        byte = data[cursor]
        cursor += 1
        if shift == 63 and byte > 1:
            return value, cursor, 1
        value |= np.int64(byte & 0x7F) << shift
        if byte < 0x80:
            return value, cursor, 0
        shift += 7
    return value, cursor, 1


@njit(cache=True)
def accumulate(documents, fields, frequencies, lengths, averages, weights, slopes, k1, delta, term_weight,
               scores, seen, fresh, fresh_count):
    """Add one term's BM25F+ contribution (engine.text.bm25) to `scores`; documents seen for the first
    time are appended to `fresh`. Returns the new fresh count."""
    count = documents.size
    index = 0
    while index < count:
        document = documents[index]
        pseudo = 0.0
        while index < count and documents[index] == document:
            field = fields[index]
            average = averages[field] if averages[field] > 0 else 1.0
            norm = (1.0 - slopes[field]) + slopes[field] * lengths[document, field] / average
            pseudo += weights[field] * frequencies[index] / norm
            index += 1
        scores[document] += term_weight * ((k1 + 1.0) * pseudo / (k1 + pseudo) + delta)
        if not seen[document]:
            seen[document] = True
            fresh[fresh_count] = document
            fresh_count += 1
    return fresh_count
