"""Search over several text segments (published ones plus the in-memory part) as one collection.

Statistics are those of the live documents of all parts together: N counts every document not deleted,
avgl_f sums field lengths over live documents, and df_t counts live documents holding t, so a query scores
the same whether its documents sit in one segment or many, before or after a flush or a compaction.
Filters (type, time window, tags) and quoted phrases restrict the candidates before the top-k cut; they do
not change the statistics.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from engine.text import bm25
from engine.text.tokenizer import CJK_MODE_BIGRAM, CJK_MODE_JIEBA, Vocabulary

# Decode only the skip blocks that can hold filtered candidates when they are this much rarer than entries.
_SKIP_RATIO = 8


@dataclass
class Hit:
    key: str
    docno: int
    score: float
    terms: list = field(default_factory=list)
    type: str | None = None
    timestamp: float | None = None


@dataclass
class _Part:
    segment: object
    live: np.ndarray
    has_deleted: bool
    averages: np.ndarray | None = None  # per field of the segment: avgl_f, w_f, b_f
    weights: np.ndarray | None = None
    slopes: np.ndarray | None = None


class Searcher:
    """parts: TextSegment readers; tokenizer: the analysis chain of the index; deleted: extra deleted docnos
    (besides those every part's `deleted` column names); kernels: "numpy" (no numba import: the CLI),
    "numba" (engine.text.kernels: several times faster per query, 0.4 s+ to import), or "auto" (numba
    when some other part of the process has already imported it). Threads may search concurrently: each
    has its own scratch arrays."""

    def __init__(self, parts, tokenizer, parameters: bm25.BM25Parameters | None = None, deleted=(),
                 kernels: str = "numpy"):
        self.kernels = _load_kernels(kernels)
        self.tokenizer = tokenizer
        self.parameters = parameters or bm25.BM25Parameters()
        dead = [np.asarray(list(deleted), dtype=np.int64)] + [part.deleted for part in parts]
        self.deleted = _sorted_unique(np.concatenate(dead))
        self._parts = []
        for segment in parts:
            live = ~_members(self.deleted, segment.docnos)
            self._parts.append(_Part(segment, live, not bool(live.all())))
        self.fields = sorted({name for part in self._parts for name in part.segment.fields})
        self.document_count = int(sum(int(part.live.sum()) for part in self._parts))
        self.average_lengths = _average_lengths(self._parts, self.fields, self.document_count)
        for part in self._parts:
            names = part.segment.fields or [""]
            part.averages = np.array([self.average_lengths.get(name, 0.0) for name in names])
            part.weights = np.array([self.parameters.weight(name) for name in names])
            part.slopes = np.array([self.parameters.field_slope(name) for name in names])
        self._scratch = threading.local()
        modes = {part.segment.cjk_mode for part in self._parts} - {None}
        self.cjk_mode = CJK_MODE_BIGRAM if modes == {CJK_MODE_BIGRAM} else CJK_MODE_JIEBA

    # --- statistics ------------------------------------------------------------------------------------

    def statistics(self) -> dict:
        return {
            "documents": self.document_count,
            "deleted": int(sum(int((~part.live).sum()) for part in self._parts)),
            "parts": len(self._parts),
            "fields": self.fields,
            "average_lengths": dict(self.average_lengths),
            "cjk": self.cjk_mode,
        }

    def document_frequency(self, term: str) -> int:
        """Live documents holding `term` (exact, after deletions)."""
        total = 0
        for part in self._parts:
            ordinal = part.segment.dictionary.ordinal(term)
            if ordinal >= 0:
                documents = part.segment.postings.entries(ordinal)[0]
                total += int(_sorted_unique(documents[part.live[documents]]).size)
        return total

    def vocabulary(self, ordinals: dict | None = None) -> Vocabulary:
        """Index terms for query segmentation (stored df, deletions ignored: it only ranks segmentations).

        ordinals: filled with term → [ordinal per part (-1: absent)] of every term looked up, so that the
        search does not look the query's terms up a second time."""
        cache: dict = {}
        ordinals = {} if ordinals is None else ordinals

        def frequency(term: str) -> int:
            value = cache.get(term)
            if value is None:
                value = 0
                found = ordinals[term] = [part.segment.dictionary.ordinal(term) for part in self._parts]
                for part, ordinal in zip(self._parts, found):
                    if ordinal >= 0:
                        value += part.segment.document_frequency(ordinal)
                cache[term] = value
            return value

        def has_prefix(prefix: str) -> bool:
            return any(part.segment.dictionary.has_prefix(prefix) for part in self._parts)

        return Vocabulary(frequency, self.document_count, has_prefix)

    # --- search --------------------------------------------------------------------------------------

    def search(self, query: str, top: int = 10, *, types=None, since=None, until=None, tags=None,
               recency_tau: float | None = None, recency_weight: float = 0.3, now: float | None = None) -> list:
        """Best `top` live documents for `query`, best first (ties: lower docno first).

        types: document types to keep; since/until: inclusive time window (seconds), documents without a
        time are dropped when a window is given; tags: every tag listed must be present; recency_tau
        (seconds): multiply scores by (1 − w) + w · exp(−age/τ) with w = recency_weight."""
        ordinals: dict = {}
        parsed = self.tokenizer.parse_query(query, self.vocabulary(ordinals), self.cjk_mode)
        query_counts = Counter(parsed.terms)
        if not query_counts or not self._parts or top <= 0:
            return []
        allowed = [self._allowed(part, types, since, until, tags) for part in self._parts]
        allowed_documents = [None if mask is None or part.has_deleted else np.flatnonzero(mask)
                             for part, mask in zip(self._parts, allowed)]
        terms = sorted(query_counts)
        decoded = self._decode(terms, allowed_documents, ordinals)
        weights = {}
        for term in terms:
            frequency = sum(self._live_df(part, entries) for part, entries in zip(self._parts, decoded[term]))
            weights[term] = query_counts[term] * bm25.idf(frequency, self.document_count)
        candidates = []
        for index, part in enumerate(self._parts):
            result = self._score_part(index, part, weights, [decoded[t][index] for t in terms],
                                      allowed[index], parsed.phrases)
            if result is not None:
                candidates.append((index,) + result)
        if not candidates:
            return []
        if recency_tau:
            moment = time.time() if now is None else now
            candidates = [(index, documents, scores * bm25.recency_factors(
                self._parts[index].segment.timestamps[documents], moment, recency_tau, recency_weight))
                for index, documents, scores in candidates]
        return self._hits(candidates, terms, decoded, top)

    def _allowed(self, part: _Part, types, since, until, tags):
        """Live documents passing the filters: a boolean mask, or None when no filter is set."""
        if types is None and since is None and until is None and not tags:
            return None
        segment = part.segment
        mask = part.live.copy()
        if types is not None:
            kept = np.zeros(segment.document_count, dtype=bool)
            for code, name in enumerate(segment.meta["types"], start=1):
                if name in set(types):
                    kept |= segment.document_types == code
            mask &= kept
        if since is not None:
            mask &= segment.timestamps >= since
        if until is not None:
            mask &= segment.timestamps <= until
        for tag in tags or ():
            mask &= segment.documents_with_tag(tag)
        return mask

    def _decode(self, terms: list, allowed_documents: list, ordinals: dict) -> dict:
        """term → per part: (ordinal, documents, fields, frequencies, partial) of live entries, or None.

        allowed_documents: per part, the filtered candidates (None: no filter, or a part with deletions);
        few candidates mean only the skip blocks holding them are decoded (partial=True). ordinals: term →
        ordinal per part, as far as the query parsing looked them up."""
        decoded = {}
        for term in terms:
            found = ordinals.get(term)
            per_part = []
            for index, (part, candidates) in enumerate(zip(self._parts, allowed_documents)):
                ordinal = found[index] if found is not None else part.segment.dictionary.ordinal(term)
                if ordinal < 0:
                    per_part.append(None)
                    continue
                within = None
                if candidates is not None and candidates.size * _SKIP_RATIO < part.segment.entry_count(ordinal):
                    within = candidates
                documents, fields, frequencies = part.segment.postings.entries(ordinal, within, self.kernels)
                if part.has_deleted:
                    keep = part.live[documents]
                    documents, fields, frequencies = documents[keep], fields[keep], frequencies[keep]
                per_part.append((ordinal, documents, fields, frequencies, within is not None))
            decoded[term] = per_part
        return decoded

    @staticmethod
    def _live_df(part: _Part, entries) -> int:
        if entries is None:
            return 0
        ordinal, documents, _fields, _frequencies, partial = entries
        if partial or not part.has_deleted:
            return part.segment.document_frequency(ordinal)
        return int(np.count_nonzero(np.r_[True, documents[1:] != documents[:-1]])) if documents.size else 0

    def _score_part(self, index: int, part: _Part, weights: dict, entries_by_term, allowed, phrases):
        """(documents, scores) of the part's matching documents that pass the filters, or None.

        Scores accumulate in per-thread scratch arrays that are cleared again where they were touched, so a
        query costs O(its postings), not O(documents)."""
        segment = part.segment
        scores, seen, fresh_buffer = self._scratch_for(index, segment.document_count)
        if self.kernels is not None:
            documents = self._accumulate_jit(part, weights, entries_by_term, scores, seen, fresh_buffer)
            return None if documents is None else self._filter(part, documents, scores, seen, allowed, phrases)
        fresh_documents = []
        for (term, weight), entries in zip(weights.items(), entries_by_term):
            if entries is None:
                continue
            _ordinal, documents, fields, frequencies, _partial = entries
            distinct, pseudo = bm25.pseudo_frequencies(documents, fields, frequencies, segment.field_lengths,
                                                       part.averages, part.weights, part.slopes)
            scores[distinct] += weight * bm25.saturate(pseudo, self.parameters.k1, self.parameters.delta)
            fresh = distinct[~seen[distinct]]
            seen[fresh] = True
            fresh_documents.append(fresh)
        if not fresh_documents:
            return None
        documents = np.concatenate(fresh_documents) if len(fresh_documents) > 1 else fresh_documents[0]
        return self._filter(part, documents, scores, seen, allowed, phrases)

    def _accumulate_jit(self, part: _Part, weights: dict, entries_by_term, scores, seen, fresh_buffer):
        fresh_count = 0
        parameters = self.parameters
        for weight, entries in zip(weights.values(), entries_by_term):
            if entries is not None:
                _ordinal, documents, fields, frequencies, _partial = entries
                fresh_count = self.kernels.accumulate(
                    documents, fields, frequencies, part.segment.field_lengths, part.averages, part.weights,
                    part.slopes, parameters.k1, parameters.delta, weight, scores, seen, fresh_buffer, fresh_count)
        return fresh_buffer[:fresh_count].copy() if fresh_count else None

    def _filter(self, part: _Part, documents, scores, seen, allowed, phrases):
        """Read and clear the scratch arrays at `documents`; keep those passing filters and phrases."""
        values = scores[documents]
        scores[documents] = 0.0
        seen[documents] = False
        keep = None
        if allowed is not None:
            keep = allowed[documents]
        for phrase in phrases:
            inside = self._phrase_mask(part, phrase)[documents]
            keep = inside if keep is None else keep & inside
        if keep is not None:
            documents, values = documents[keep], values[keep]
        if documents.size == 0:
            return None
        return documents, values

    def _scratch_for(self, index: int, size: int):
        buffers = getattr(self._scratch, "buffers", None)
        if buffers is None:
            buffers = self._scratch.buffers = {}
        scratch = buffers.get(index)
        if scratch is None:
            scratch = buffers[index] = (np.zeros(size, dtype=np.float64), np.zeros(size, dtype=bool),
                                        np.zeros(size, dtype=np.int64))
        return scratch

    def _phrase_mask(self, part: _Part, phrase) -> np.ndarray:
        """Documents where the phrase's terms stand at their relative positions within one field."""
        segment = part.segment
        mask = np.zeros(segment.document_count, dtype=bool)
        keys = None
        for term, offset in phrase:
            ordinal = segment.dictionary.ordinal(term)
            if ordinal < 0:
                return mask
            documents, fields, frequencies = segment.postings.entries(ordinal)
            positions = segment.postings.positions(ordinal, frequencies)
            places = np.repeat(documents * segment.field_slots + fields, frequencies)
            term_keys = (places << 32) + (positions - offset + (1 << 31))
            keys = term_keys if keys is None else keys[_members(term_keys, keys)]
            if keys.size == 0:
                return mask
        mask[(keys >> 32) // segment.field_slots] = True
        return mask

    def _hits(self, candidates, terms, decoded, top: int) -> list:
        if len(candidates) == 1:
            index, locals_, scores = candidates[0]
            # Within one part local order is docno order, so local numbers break ties like docnos.
            chosen = bm25.top_k(scores, locals_, top)
            parts = [index] * chosen.size
        else:
            all_parts = np.concatenate([np.full(documents.size, index) for index, documents, _ in candidates])
            locals_ = np.concatenate([documents for _, documents, _ in candidates])
            scores = np.concatenate([values for _, _, values in candidates])
            docnos = np.concatenate([self._parts[index].segment.docnos[documents]
                                     for index, documents, _ in candidates])
            chosen = bm25.top_k(scores, docnos, top)
            parts = all_parts[chosen].tolist()
        best_locals = locals_[chosen]
        holders = _matched_terms(terms, decoded, parts, best_locals)
        hits = []
        for index, local, score, matched in zip(parts, best_locals.tolist(), scores[chosen].tolist(), holders):
            segment = self._parts[index].segment
            hits.append(Hit(segment.key(local), segment.docno(local), score, matched, segment.document_type(local),
                            segment.timestamp(local)))
        return hits


def _matched_terms(terms: list, decoded: dict, parts: list, best_locals: np.ndarray) -> list:
    """Per hit, the query terms its document holds (in query-term order)."""
    holders = [[] for _ in parts]
    rows_of_part: dict = {}
    for row, index in enumerate(parts):
        rows_of_part.setdefault(index, []).append(row)
    for index, rows in rows_of_part.items():
        locals_here = best_locals if len(rows_of_part) == 1 else best_locals[rows]
        for term in terms:
            entries = decoded[term][index]
            if entries is not None:
                for row, found in zip(rows, _members(entries[1], locals_here).tolist()):
                    if found:
                        holders[row].append(term)
    return holders


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """np.unique without its cost on the cold path (np.unique and np.isin import numpy.ma: 50 ms)."""
    values = np.sort(values)
    if values.size < 2:
        return values
    keep = np.empty(values.size, dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _members(sorted_values: np.ndarray, probes: np.ndarray) -> np.ndarray:
    """Which probes occur in `sorted_values`, by binary search (see _sorted_unique for why not np.isin)."""
    if sorted_values.size == 0:
        return np.zeros(probes.size, dtype=bool)
    places = np.minimum(np.searchsorted(sorted_values, probes), sorted_values.size - 1)
    return sorted_values[places] == probes


def _average_lengths(parts: list, fields: list, document_count: int) -> dict:
    """avgl_f over live documents, from integer sums (exact, so any segmentation gives the same floats)."""
    totals = dict.fromkeys(fields, 0)
    for part in parts:
        for index, name in enumerate(part.segment.fields):
            total = part.segment.meta["length_sums"][index]
            if part.has_deleted:
                total -= int(part.segment.field_lengths[~part.live, index].sum(dtype=np.int64))
            totals[name] += total
    return {name: totals[name] / document_count if document_count else 0.0 for name in fields}


def _load_kernels(choice: str):
    if choice not in ("numpy", "numba", "auto"):
        raise ValueError(f"kernels must be 'numpy', 'numba' or 'auto', not {choice!r}")
    if choice == "numpy" or (choice == "auto" and "numba" not in sys.modules):
        return None
    try:
        from engine.text import kernels
    except ImportError:
        if choice == "numba":
            raise
        return None
    return kernels
