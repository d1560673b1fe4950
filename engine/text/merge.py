"""Merge text segments into one (compaction, tier merges), a run of terms at a time.

The segments' term dictionaries are walked together in term order; the terms are cut into runs of about
RUN_ENTRIES postings entries (a run holds whole terms, so a term with more entries is a run of its own), and
each run's postings are decoded from every segment, renumbered, encoded and appended to the output columns
before the next run is read. A merge so holds the decoded entries of one run, not of every segment at once
(a 32 MiB store's 23 million entries took 5 GB decoded together), next to the output's encoded bytes.

Runs change nothing in the output: postings columns hold each term's bytes on their own (offsets, skip rows
from the term's first byte), so the runs' columns laid end to end are the columns of one encode of all the
entries (tests/text/test_text_merge.py checks runs of every size against one run).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from engine.text import chosen_build_kernels, keys, postings, termdict
from engine.text.build import DocumentTable, document_columns
from engine.text.frontcode import gather_runs
from engine.text.postings import narrow

RUN_ENTRIES = 1 << 18  # postings entries decoded at once: tens of MB as int64 columns and their sort

# EncodedPostings columns that lay runs end to end as they are, and the offsets columns with their stream.
_APPENDED = ("entry_counts", "document_frequencies", "skip_documents", "skip_bytes", "skip_detail_bytes")
_STREAMS = (("postings", "postings_offsets"), ("positions", "position_offsets"))


@dataclass
class Run:
    """Consecutive terms of the merged dictionary, their live entries in (term, document, field) order."""

    terms: list  # str, ascending; entry_terms index it
    entry_terms: np.ndarray
    documents: np.ndarray
    fields: np.ndarray
    frequencies: np.ndarray
    positions: np.ndarray


def merge(segments: list, deleted=(), signature: dict | None = None, deleted_below=(),
          run_entries: int | None = None) -> tuple[dict, dict]:
    """One segment holding every document of `segments` (TextSegment readers of published segments) whose
    docno is not deleted; terms left without a live document are dropped, so no deleted text survives a
    compaction. deleted_below: retired docnos of older segments than these, kept in the new segment's
    `deleted` column (a tier merge). run_entries: RUN_ENTRIES unless given."""
    deleted = np.unique(np.asarray(list(deleted), dtype=np.int64))
    segments = sorted(segments, key=lambda segment: int(segment.docnos[0]) if segment.document_count else -1)
    field_names = sorted({name for segment in segments for name in segment.fields})
    keeps = [~np.isin(segment.docnos, deleted) for segment in segments]
    table = _merged_documents(segments, keeps, field_names)
    columns, meta = document_columns(table, field_names, deleted_below, signature)
    columns.update(keys.encode(table.keys))
    del table
    output = _PostingsOutput(meta["field_slots"], meta["plain_field"])
    terms: list = []
    for run in runs(segments, keeps, field_names, run_entries):
        output.add(run)
        terms += run.terms
    columns.update(termdict.encode(terms))
    columns.update(output.columns())
    if meta["field_slots"] == 1:
        del columns["document_frequencies"]  # one field: every entry is its own document
    meta["terms"] = len(terms)
    return columns, meta


def runs(segments: list, keeps: list, field_names: list, run_entries: int | None = None):
    """The live entries of `segments` (in docno order; keeps[i]: which documents of segment i survive) as Runs
    in term order, documents renumbered in segment order and fields ranked in `field_names`. A run is cut
    after the term that brings its entries (live or not) to `run_entries` or more."""
    renumbered, base = [], 0
    for keep in keeps:
        renumbered.append(np.where(keep, base + np.cumsum(keep) - 1, -1))
        base += int(keep.sum())
    field_maps = [np.array([field_names.index(name) for name in segment.fields] or [0], dtype=np.int64)
                  for segment in segments]
    for ranges in _term_ranges(segments, run_entries or RUN_ENTRIES):
        run = _run(segments, ranges, keeps, renumbered, field_maps)
        if run.terms:
            yield run


def _term_ranges(segments: list, run_entries: int):
    """Per run of merged terms, per segment: (first ordinal, its terms' UTF-8 bytes) of the terms it holds
    in the run (UTF-8 byte order is the terms' order)."""
    streams = [_ordinals(number, segment) for number, segment in enumerate(segments)]
    firsts = [0] * len(segments)
    held: list = [[] for _segment in segments]
    entries, previous = 0, None
    for term, number, count in heapq.merge(*streams):
        if entries >= run_entries and term != previous:
            yield list(zip(firsts, held))
            firsts = [first + len(terms) for first, terms in zip(firsts, held)]
            held = [[] for _segment in segments]
            entries = 0
        held[number].append(term)
        entries += count
        previous = term
    if entries:
        yield list(zip(firsts, held))


def _ordinals(number: int, segment):
    """(term bytes, segment number, entry count) of each term of a segment, in order."""
    counts = segment.postings.entry_counts().tolist()
    return ((term, number, count) for term, count in zip(segment.dictionary.encoded_terms(), counts))


def _run(segments: list, ranges: list, keeps: list, renumbered: list, field_maps: list) -> Run:
    """The live entries of one run: of segment i, those of its terms ranges[i]."""
    parts = []
    for segment, (first, held), keep, new_numbers, field_map in zip(segments, ranges, keeps, renumbered, field_maps):
        if held:
            terms, documents, fields, frequencies, positions = segment.postings.term_range(first, first + len(held))
            kept = keep[documents]
            parts.append((held, terms[kept], new_numbers[documents[kept]], field_map[fields[kept]],
                          frequencies[kept], positions[np.repeat(kept, frequencies)]))
    live_terms = sorted({held[ordinal] for held, terms, *_rest in parts for ordinal in np.unique(terms).tolist()})
    run_ids = {term: index for index, term in enumerate(live_terms)}
    renamed = [(np.array([run_ids.get(term, -1) for term in held], dtype=np.int64)[terms], *rest)
               for held, terms, *rest in parts]
    entry_terms, documents, fields, frequencies, positions = (
        np.concatenate([part[index] for part in renamed]) if renamed else np.zeros(0, np.int64) for index in range(5))
    # Segments come in docno order, so a stable sort by term keeps (document, field) order within a term.
    order = np.argsort(entry_terms, kind="stable")
    return Run([term.decode("utf-8") for term in live_terms], entry_terms[order], documents[order], fields[order],
               frequencies[order], gather_runs(positions, postings.run_offsets(frequencies)[order], frequencies[order]))


class _PostingsOutput:
    """The postings columns of the runs added so far, laid end to end: the bytes streams grow in place, the
    per-term and per-block columns as int64 parts narrowed at the end."""

    def __init__(self, field_slots: int, plain_field: int):
        self.field_slots, self.plain_field = field_slots, plain_field
        kernels = chosen_build_kernels()
        self._encode = kernels.encode_postings if kernels else postings.encode
        self._streams = {name: bytearray() for name, _offsets in _STREAMS}
        self._offsets = {offsets: [np.zeros(1, np.int64)] for _name, offsets in _STREAMS}
        self._parts: dict = {name: [] for name in _APPENDED}

    def add(self, run: Run) -> None:
        encoded = self._encode(run.entry_terms, run.documents, run.fields, run.frequencies, run.positions,
                               len(run.terms), self.field_slots, self.plain_field)
        for name, offsets in _STREAMS:
            self._offsets[offsets].append(getattr(encoded, offsets)[1:].astype(np.int64) + len(self._streams[name]))
            self._streams[name] += getattr(encoded, name).tobytes()
        for name in _APPENDED:
            self._parts[name].append(getattr(encoded, name).astype(np.int64))

    def columns(self) -> dict:
        columns = {name: np.frombuffer(stream, dtype=np.uint8) for name, stream in self._streams.items()}
        for name, parts in (*self._offsets.items(), *self._parts.items()):
            columns[name] = narrow(np.concatenate(parts) if parts else np.zeros(0, np.int64))
        return columns


def _merged_documents(segments: list, keeps: list, field_names: list) -> DocumentTable:
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
    return DocumentTable(
        docnos=np.concatenate(docnos) if docnos else np.zeros(0, np.int64),
        keys=document_keys, types=types,
        timestamps=np.concatenate(timestamps) if timestamps else np.zeros(0, np.float64),
        tags=tags,
        lengths=np.concatenate(lengths) if lengths else np.zeros((0, max(1, len(field_names))), np.uint32),
    )
