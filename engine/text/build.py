"""Build one text segment's columns (named numpy arrays) and meta: from tokenized documents (flush, and the
in-memory part of a snapshot) or by merging segments (compaction).

The same columns serve a published segment file (engine.segment) and the in-memory part, so one reader
(engine.text.reader) and one search path handle both.

Columns (unsigned integer columns take the smallest dtype that holds them; optional ones are left out
when they would say nothing)
    term_blocks, term_block_offsets, term_first, term_first_offsets      term dictionary (termdict.py)
    postings, postings_offsets, skip_documents, skip_bytes, skip_detail_bytes
    positions, position_offsets, entry_counts                            postings (postings.py)
    document_frequencies  [terms]    optional: absent when the segment has one field (df = entry count)
    docnos            [n]            global document numbers, ascending (local document i ↔ docnos[i]);
                                     absent when they are consecutive from meta["first_docno"]
    key_blocks, key_block_offsets    external keys, front-coded in document order (keys.py)
    field_lengths     [n, F]         tokens per field (fields as meta["fields"], sorted names)
    document_types    [n]            optional: 0 = none, else 1 + index in meta["types"]
    timestamps        float64[n]     optional: seconds since the epoch, NaN = none
    tag_bytes, tag_offsets           optional: tag names (sorted); document_tag_offsets [n + 1], document_tags
    deleted           uint64         optional: document numbers of older segments that this segment deletes
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.format import TEXT_BLOCK_ENTRIES, TEXT_SEGMENT_VERSION, TEXT_TERMS_PER_BLOCK
from engine.text import keys, postings, stored, termdict
from engine.text.postings import narrow


@dataclass
class Document:
    """A tokenized document: fields map a name to its tokens as engine.text.stored.encode keeps them."""

    docno: int
    key: str
    fields: dict
    type: str | None = None
    timestamp: float | None = None
    tags: tuple = field(default_factory=tuple)


@dataclass
class _Entries:
    """Postings of a whole segment: entries sorted by (term, document, field), positions entry by entry."""

    terms: list  # sorted term strings; entry_terms index it
    entry_terms: np.ndarray
    documents: np.ndarray
    fields: np.ndarray
    frequencies: np.ndarray
    positions: np.ndarray


@dataclass
class _DocumentTable:
    docnos: np.ndarray
    keys: list
    types: list
    timestamps: np.ndarray
    tags: list
    lengths: np.ndarray  # int[documents, fields]


def build(documents, deleted=(), signature: dict | None = None) -> tuple[dict, dict]:
    """Columns and meta for `documents` (any order; docnos unique) and the `deleted` docnos."""
    entries, table, field_names = _from_documents(documents)
    return _assemble(entries, table, field_names, deleted, signature)


def build_memory(documents, deleted=(), signature: dict | None = None):
    """A TextSegment over `documents` that stays decoded: no varints, no front coding. A snapshot's
    unflushed documents become one of these on every open, so it must cost little more than sorting."""
    from engine.text.keys import KeyList
    from engine.text.memory import MemoryDictionary, MemoryPostings
    from engine.text.reader import TextSegment

    entries, table, field_names = _from_documents(documents)
    columns, meta = _document_columns(table, field_names, deleted, signature)
    counts = np.bincount(entries.entry_terms, minlength=len(entries.terms))
    columns["entry_counts"] = counts
    first_of_document = postings._run_starts(entries.documents) | postings._run_starts(entries.entry_terms)
    columns["document_frequencies"] = np.bincount(entries.entry_terms[first_of_document], minlength=len(entries.terms))
    meta["terms"] = len(entries.terms)
    return TextSegment(columns.__getitem__, meta, names=columns, dictionary=MemoryDictionary(entries.terms),
                       postings=MemoryPostings(entries, counts, table.docnos.size), keys=KeyList(table.keys))


def _from_documents(documents) -> tuple:
    documents = sorted(documents, key=lambda document: document.docno)
    field_names = sorted({name for document in documents for name in document.fields})
    entries, lengths = _tokens_to_entries(documents, field_names)
    table = _DocumentTable(
        docnos=np.array([document.docno for document in documents], dtype=np.int64),
        keys=[document.key for document in documents],
        types=[document.type for document in documents],
        timestamps=np.array([np.nan if document.timestamp is None else float(document.timestamp)
                             for document in documents], dtype=np.float64),
        tags=[tuple(document.tags) for document in documents],
        lengths=lengths,
    )
    return entries, table, field_names


def merge(segments: list, deleted=(), signature: dict | None = None) -> tuple[dict, dict]:
    """One segment holding every document of `segments` (TextSegment readers) whose docno is not deleted;
    terms left without a live document are dropped, so no deleted text survives a compaction."""
    deleted = np.unique(np.asarray(list(deleted), dtype=np.int64))
    segments = sorted(segments, key=lambda segment: int(segment.docnos[0]) if segment.document_count else -1)
    field_names = sorted({name for segment in segments for name in segment.fields})
    keeps = [~np.isin(segment.docnos, deleted) for segment in segments]
    entries = _merged_entries(segments, keeps, field_names)
    return _assemble(entries, _merged_documents(segments, keeps, field_names), field_names, (), signature)


def _merged_entries(segments: list, keeps: list, field_names: list) -> _Entries:
    """Live entries of all segments, renumbered: documents in segment order, terms and fields re-ranked."""
    term_lists = [segment.dictionary.terms() for segment in segments]
    decoded = [segment.postings.all_entries() for segment in segments]
    live_terms = sorted({term_list[ordinal] for term_list, (terms, documents, *_rest), keep
                         in zip(term_lists, decoded, keeps) for ordinal in np.unique(terms[keep[documents]]).tolist()})
    global_ids = {term: index for index, term in enumerate(live_terms)}
    pieces = []
    base = 0
    for segment, term_list, (terms, documents, fields, frequencies, positions), keep in zip(
            segments, term_lists, decoded, keeps):
        new_numbers = np.where(keep, base + np.cumsum(keep) - 1, -1)
        base += int(keep.sum())
        kept = keep[documents]
        to_global = np.array([global_ids.get(term, -1) for term in term_list], dtype=np.int64)
        field_map = np.array([field_names.index(name) for name in segment.fields] or [0], dtype=np.int64)
        pieces.append((to_global[terms[kept]], new_numbers[documents[kept]], field_map[fields[kept]],
                       frequencies[kept], positions[np.repeat(kept, frequencies)]))
    entry_terms, documents, fields, frequencies, positions = (
        np.concatenate([piece[index] for piece in pieces]) if pieces else np.zeros(0, np.int64) for index in range(5))
    # Segments come in docno order, so a stable sort by term keeps (document, field) order within a term.
    order = np.argsort(entry_terms, kind="stable")
    return _Entries(live_terms, entry_terms[order], documents[order], fields[order], frequencies[order],
                    _gather_runs(positions, postings.run_offsets(frequencies)[order], frequencies[order]))


def _gather_runs(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """values[starts[0]:starts[0]+lengths[0]], then the next run …, concatenated without a Python loop."""
    if lengths.size == 0:
        return values[:0]
    offsets = np.cumsum(lengths) - lengths
    return values[np.repeat(starts - offsets, lengths) + np.arange(int(lengths.sum()))]


def _merged_documents(segments: list, keeps: list, field_names: list) -> _DocumentTable:
    docnos, document_keys, types, timestamps, tags, lengths = [], [], [], [], [], []
    for segment, keep in zip(segments, keeps):
        survivors = np.flatnonzero(keep)
        docnos.append(segment.docnos[survivors])
        timestamps.append(segment.timestamps[survivors])
        segment_keys = segment.keys()
        document_keys += [segment_keys[local] for local in survivors.tolist()]
        types += [segment.document_type(int(local)) for local in survivors]
        tags += [tuple(segment.tags(int(local))) for local in survivors]
        widened = np.zeros((survivors.size, max(1, len(field_names))), dtype=np.uint32)
        for index, name in enumerate(segment.fields):
            widened[:, field_names.index(name)] = segment.field_lengths[survivors, index]
        lengths.append(widened)
    return _DocumentTable(
        docnos=np.concatenate(docnos) if docnos else np.zeros(0, np.int64),
        keys=document_keys, types=types,
        timestamps=np.concatenate(timestamps) if timestamps else np.zeros(0, np.float64),
        tags=tags,
        lengths=np.concatenate(lengths) if lengths else np.zeros((0, max(1, len(field_names))), np.uint32),
    )


def _tokens_to_entries(documents: list, field_names: list) -> tuple[_Entries, np.ndarray]:
    field_ids = {name: index for index, name in enumerate(field_names)}
    stored_fields: list = []
    run_places: list = []  # local document · slots + field of each run of tokens
    slots = max(1, len(field_names))
    lengths = np.zeros((len(documents), slots), dtype=np.uint32)
    for local, document in enumerate(documents):
        for name, tokens in document.fields.items():
            stored_fields.append(tokens)
            run_places.append(local * slots + field_ids[name])
    all_terms, positions, run_lengths = stored.decode_all(stored_fields)
    lengths.flat[run_places] = run_lengths
    sorted_terms = sorted(set(all_terms))
    ids = dict(zip(sorted_terms, range(len(sorted_terms))))
    token_terms = np.fromiter(map(ids.__getitem__, all_terms), dtype=np.int64, count=len(all_terms))
    places = np.repeat(np.asarray(run_places, dtype=np.int64), np.asarray(run_lengths, dtype=np.int64))
    if positions.size and positions.max() >= 1 << 31:
        raise ValueError("token positions must lie in [0, 2**31)")
    order = _token_order(token_terms, places, positions)
    token_terms, places, positions = token_terms[order], places[order], positions[order]
    boundaries = np.flatnonzero(np.r_[True, (token_terms[1:] != token_terms[:-1]) | (places[1:] != places[:-1])]) \
        if token_terms.size else np.zeros(0, np.int64)
    entries = _Entries(sorted_terms, token_terms[boundaries], places[boundaries] // slots, places[boundaries] % slots,
                       np.diff(np.append(boundaries, token_terms.size)), positions)
    return entries, lengths


def _token_order(terms: np.ndarray, places: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Order by (term, place, position): one argsort of a packed key when the three fit in 63 bits (4x
    faster than lexsort on a flush's millions of tokens)."""
    if terms.size == 0:
        return np.zeros(0, dtype=np.int64)
    position_bits = int(positions.max()).bit_length()
    place_bits = int(places.max()).bit_length()
    if int(terms.max()).bit_length() + place_bits + position_bits > 63:
        return np.lexsort((positions, places, terms))
    return np.argsort((terms << (place_bits + position_bits)) | (places << position_bits) | positions)


def _assemble(entries: _Entries, table: _DocumentTable, field_names: list, deleted, signature) -> tuple[dict, dict]:
    columns, meta = _document_columns(table, field_names, deleted, signature)
    columns.update(keys.encode(table.keys))
    encoded = postings.encode(entries.entry_terms, entries.documents, entries.fields, entries.frequencies,
                              entries.positions, len(entries.terms), meta["field_slots"], meta["plain_field"])
    columns.update(termdict.encode(entries.terms))
    columns.update(vars(encoded))
    if meta["field_slots"] == 1:
        del columns["document_frequencies"]  # one field: every entry is its own document
    meta["terms"] = len(entries.terms)
    return columns, meta


def _document_columns(table: _DocumentTable, field_names: list, deleted, signature) -> tuple[dict, dict]:
    if table.docnos.size and (np.diff(table.docnos) <= 0).any():
        raise ValueError("document numbers must be unique")
    length_sums = [int(total) for total in table.lengths.sum(axis=0, dtype=np.int64)][:len(field_names)]
    columns = {}
    contiguous = bool(table.docnos.size) and int(table.docnos[-1] - table.docnos[0]) == table.docnos.size - 1
    if not contiguous:
        columns["docnos"] = narrow(table.docnos)
    columns["field_lengths"] = narrow(table.lengths)
    if len(deleted):
        columns["deleted"] = np.unique(np.asarray(list(deleted), dtype=np.uint64))
    if not np.isnan(table.timestamps).all():
        columns["timestamps"] = table.timestamps.astype(np.float64)
    type_names = sorted({name for name in table.types if name is not None})
    if type_names:
        type_codes = {name: code + 1 for code, name in enumerate(type_names)}
        columns["document_types"] = narrow(np.array([type_codes.get(name, 0) for name in table.types]))
    if any(table.tags):
        columns.update(_tag_columns(table.tags))
    meta = {
        "version": TEXT_SEGMENT_VERSION,
        "documents": int(table.docnos.size),
        "terms": 0,
        "fields": field_names,
        "field_slots": max(1, len(field_names)),
        "plain_field": int(np.argmax(length_sums)) if length_sums else 0,
        "first_docno": int(table.docnos[0]) if contiguous else None,
        "length_sums": length_sums,
        "types": type_names,
        "block_entries": TEXT_BLOCK_ENTRIES,
        "terms_per_block": TEXT_TERMS_PER_BLOCK,
        "tokenizer": signature or {},
    }
    return columns, meta


def _tag_columns(tags_per_document: list) -> dict:
    names = sorted({tag for tags in tags_per_document for tag in tags})
    ids = {name: index for index, name in enumerate(names)}
    per_document = [sorted({ids[tag] for tag in tags}) for tags in tags_per_document]
    columns = {}
    columns["tag_bytes"], columns["tag_offsets"] = encode_strings(names)
    columns["document_tag_offsets"] = narrow(np.cumsum([0] + [len(tags) for tags in per_document]))
    columns["document_tags"] = narrow(np.array([tag for tags in per_document for tag in tags]))
    return columns


def encode_strings(strings: list) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 blob and uint64[n + 1] offsets."""
    encoded = [text.encode("utf-8") for text in strings]
    offsets = narrow(np.cumsum([0] + [len(data) for data in encoded], dtype=np.int64))
    return np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), offsets
