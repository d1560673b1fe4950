"""Search over several text segments (published ones plus the in-memory part) as one collection.

Statistics are those of the live documents of all parts together: N counts every document not deleted,
avgl_f sums field lengths over live documents, and df_t counts live documents holding t, so a query scores
the same whether its documents sit in one segment or many, before or after a flush or a compaction.
Filters (type, time window, tags) and quoted phrases restrict the candidates before the top-k cut; they do
not change the statistics.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

import numpy as np

from engine.arrays import members, sorted_unique
from engine.text import bm25, kernels_module
from engine.text.postings import run_offsets
from engine.text.tokenizer import CJK_MODE_BIGRAM, CJK_MODE_JIEBA, Vocabulary

# Decode only the skip blocks that can hold filtered candidates when they are this much rarer than entries.
_SKIP_RATIO = 8
# Entries of decoded terms a searcher keeps: 16 MiB on the numpy path (document + contribution), 24 on numba's.
_CACHED_ENTRIES = 1 << 20
# Entries of terms decoded with their fields (matched_fields: which fields of a result matched), 4 MiB.
_CACHED_FIELD_ENTRIES = 1 << 18
# Query-segmentation lookups (term → ordinals, document frequency), and keys of returned documents, a
# searcher keeps before starting over.
_CACHED_LOOKUPS = 1 << 16


@dataclass
class Hit:
    key: str
    docno: int
    score: float
    terms: list = field(default_factory=list)
    type: str | None = None
    timestamp: float | None = None


@dataclass
class _Decoded:
    """One term's live entries in one part. The numba path keeps them per entry (fields, frequencies);
    the numpy path per document, as `contributions`, (k1 + 1) · tf~ / (k1 + tf~) + δ (bm25), which a query
    only multiplies by the term's weight. partial: only the skip blocks holding filtered candidates."""

    ordinal: int
    documents: np.ndarray
    partial: bool
    fields: np.ndarray | None = None
    frequencies: np.ndarray | None = None
    contributions: np.ndarray | None = None


class _DecodedCache:
    """Least recently used decoded terms, bounded by the entries they hold: a long-lived searcher answers
    queries sharing terms without decoding (and, on the numpy path, normalising) their postings again, which
    is most of a query's cost. Values depend on the searcher's statistics and kernels, so the cache belongs
    to one searcher."""

    def __init__(self, capacity: int):
        self._items: OrderedDict = OrderedDict()
        self._held = 0
        self._capacity = capacity
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key, decoded: _Decoded) -> None:
        size = decoded.documents.size
        with self._lock:
            if size > self._capacity or key in self._items:
                return
            self._items[key] = decoded
            self._held += size
            while self._held > self._capacity:
                self._held -= self._items.popitem(last=False)[1].documents.size


@dataclass
class _Part:
    segment: object
    live: np.ndarray
    has_deleted: bool
    averages: np.ndarray | None = None  # per field of the segment: avgl_f, w_f, b_f
    weights: np.ndarray | None = None
    slopes: np.ndarray | None = None
    norms: np.ndarray | None = None  # bm25.length_norms of the segment, computed on its first numpy search


class Searcher:
    """parts: TextSegment readers; tokenizer: the analysis chain of the index; deleted: extra deleted docnos
    (besides those every part's `deleted` column names); kernels: "numpy" (no numba import: the CLI),
    "numba" (engine.text.kernels: several times faster per query, 0.4 s+ to import), or "auto" (numba
    when some other part of the process has already imported it). Threads may search concurrently: each
    has its own scratch arrays."""

    def __init__(self, parts, tokenizer, parameters: bm25.BM25Parameters | None = None, deleted=(),
                 kernels: str = "numpy"):
        self.kernels = kernels_module(kernels, "kernels")
        self.tokenizer = tokenizer
        self.parameters = parameters or bm25.BM25Parameters()
        dead = [np.asarray(list(deleted), dtype=np.int64)] + [part.deleted for part in parts]
        self.deleted = sorted_unique(np.concatenate(dead))
        self._parts = []
        for segment in parts:
            live = ~members(self.deleted, segment.docnos)
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
        self.forget()
        modes = {part.segment.cjk_mode for part in self._parts} - {None}
        self.cjk_mode = CJK_MODE_BIGRAM if modes == {CJK_MODE_BIGRAM} else CJK_MODE_JIEBA

    def forget(self) -> None:
        """Drop what the searcher remembers between queries (decoded terms, term lookups, keys of hits):
        memory back, and the next queries decode from the segments again."""
        self._decoded = _DecodedCache(_CACHED_ENTRIES)
        self._fields = _DecodedCache(_CACHED_FIELD_ENTRIES)
        self._terms: dict = {}
        self._prefixes: dict = {}
        self._keys: dict = {}  # (part, local document) → key, of documents returned before

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
                total += int(sorted_unique(documents[part.live[documents]]).size)
        return total

    def vocabulary(self, ordinals: dict | None = None) -> Vocabulary:
        """Index terms for query segmentation (stored df, deletions ignored: it only ranks segmentations).

        ordinals: filled with term → [ordinal per part (-1: absent)] of every term looked up, so that the
        search does not look the query's terms up a second time."""
        ordinals = {} if ordinals is None else ordinals

        def frequency(term: str) -> int:
            found, value = self._look_up(term)
            ordinals[term] = found
            return value

        def has_prefix(prefix: str) -> bool:
            found = self._prefixes.get(prefix)
            if found is None:
                found = any([part.segment.dictionary.has_prefix(prefix) for part in self._parts])
                _remember(self._prefixes, prefix, found)
            return found

        return Vocabulary(frequency, self.document_count, has_prefix)

    def _look_up(self, term: str) -> tuple[list, int]:
        """(ordinal per part, -1 when absent; stored document frequency) of a term, remembered: queries
        segment the same CJK runs into the same candidate words again and again."""
        found = self._terms.get(term)
        if found is None:
            segments = [part.segment for part in self._parts]
            ordinals = [segment.dictionary.ordinal(term) for segment in segments]
            frequency = sum([segment.document_frequency(ordinal)
                             for segment, ordinal in zip(segments, ordinals) if ordinal >= 0])
            found = _remember(self._terms, term, (ordinals, frequency))
        return found

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
            result = self._score_part(index, part, weights, [decoded[t][index] for t in terms], allowed[index],
                                      parsed.phrases)
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

    def matched_fields(self, docnos, terms) -> dict:
        """{docno: {term: [field names]}} of the live documents `docnos` (hits' docnos) for those of `terms` each
        holds: which field of a result matched, to show it. A term's postings are read once for all of them,
        only the blocks that can hold them."""
        wanted = sorted_unique(np.asarray(list(docnos), dtype=np.int64))
        found: dict = {}
        for index, part in enumerate(self._parts):
            segment = part.segment
            locals_ = np.flatnonzero(members(wanted, segment.docnos) & part.live)
            if locals_.size == 0:
                continue
            names = segment.fields or [""]
            for term in terms:
                ordinal = segment.dictionary.ordinal(term)
                if ordinal < 0:
                    continue
                documents, fields = self._term_fields(index, ordinal)
                held = members(locals_, documents)
                for local, field in zip(documents[held].tolist(), fields[held].tolist()):
                    places = found.setdefault(segment.docno(local), {}).setdefault(term, [])
                    if names[field] not in places:
                        places.append(names[field])
        return found

    def _term_fields(self, index: int, ordinal: int) -> tuple:
        """(documents, fields) of every entry of a term in part `index`, remembered: the same few terms (a
        speaker's name) are in most queries of a conversation."""
        decoded = self._fields.get((index, ordinal))
        if decoded is None:
            documents, fields, _frequencies = self._parts[index].segment.postings.entries(ordinal)
            decoded = _Decoded(ordinal, documents, False, fields=fields)
            self._fields.put((index, ordinal), decoded)
        return decoded.documents, decoded.fields

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
        """term → per part: its _Decoded live entries, or None.

        allowed_documents: per part, the filtered candidates (None: no filter, or a part with deletions);
        few candidates mean only the skip blocks holding them are decoded (partial). ordinals: term →
        ordinal per part, as far as the query parsing looked them up."""
        decoded = {term: [None] * len(self._parts) for term in terms}
        for index, (part, candidates) in enumerate(zip(self._parts, allowed_documents)):
            postings = part.segment.postings
            pending = []  # (term, ordinal): decoded together on the numpy path
            for term in terms:
                found = ordinals.get(term)
                ordinal = found[index] if found is not None else part.segment.dictionary.ordinal(term)
                if ordinal < 0:
                    continue
                partial = candidates is not None and \
                    candidates.size * _SKIP_RATIO < part.segment.entry_count(ordinal)
                if not partial:
                    decoded[term][index] = self._decoded.get((index, ordinal))
                    if decoded[term][index] is not None:
                        continue
                if partial or self.kernels is not None:
                    entries = _live(part, *postings.entries(ordinal, candidates if partial else None, self.kernels))
                    decoded[term][index] = _Decoded(ordinal, entries[0], partial, *entries[1:]) \
                        if self.kernels is not None else self._decoded_of(part, [ordinal], entries, None, partial)[0]
                    if not partial:
                        self._decoded.put((index, ordinal), decoded[term][index])
                else:
                    pending.append((term, ordinal))
            if pending:
                wanted = [ordinal for _term, ordinal in pending]
                *entries, counts = postings.entries_of(wanted)
                if part.has_deleted:
                    counts = np.add.reduceat(part.live[entries[0]].astype(np.int64), run_offsets(counts))
                for (term, ordinal), found in zip(pending, self._decoded_of(part, wanted, _live(part, *entries),
                                                                            counts, False)):
                    decoded[term][index] = found
                    self._decoded.put((index, ordinal), found)
        return decoded

    def _decoded_of(self, part: _Part, ordinals: list, entries: tuple, counts, partial: bool) -> list:
        """_Decoded of the numpy path for each of `ordinals`, from their live entries concatenated
        (counts: entries per term; None for one term)."""
        documents, fields, frequencies = entries
        counts = np.array([documents.size]) if counts is None else counts
        bounds = np.append(0, np.cumsum(counts))
        if documents.size:
            rows, pseudo = bm25.pseudo_frequencies(documents, fields, frequencies, counts, self._norms(part),
                                                   part.weights)
            contributions = bm25.saturate(pseudo, self.parameters.k1, self.parameters.delta)
            if rows is not None:
                documents = documents[rows]
                bounds = np.searchsorted(rows, bounds)
        else:
            contributions = np.zeros(0)
        bounds = bounds.tolist()
        return [_Decoded(ordinal, documents[first:last], partial, contributions=contributions[first:last])
                for ordinal, first, last in zip(ordinals, bounds, bounds[1:])]

    @staticmethod
    def _live_df(part: _Part, entries: _Decoded | None) -> int:
        if entries is None:
            return 0
        if entries.partial or not part.has_deleted:
            return part.segment.document_frequency(entries.ordinal)
        documents = entries.documents
        return int(np.count_nonzero(np.r_[True, documents[1:] != documents[:-1]])) if documents.size else 0

    def _score_part(self, index: int, part: _Part, weights: dict, entries_by_term, allowed, phrases):
        """(documents, scores) of the part's matching documents that pass the filters, or None.

        Scores accumulate in per-thread scratch arrays that are cleared again where they were touched, so a
        query costs O(its postings), not O(documents)."""
        scores, seen, fresh_buffer = self._scratch_for(index, part.segment.document_count)
        if self.kernels is not None:
            documents = self._accumulate_jit(part, weights, entries_by_term, scores, seen, fresh_buffer)
            if documents is None:
                return None
            seen[documents] = False
            return self._filter(part, documents, _take(scores, documents), allowed, phrases)
        present = [(weight, entries) for weight, entries in zip(weights.values(), entries_by_term)
                   if entries is not None and entries.documents.size]
        if not present:
            return None
        if len(present) == 1:
            # One term: its documents are distinct, and 0 + x is x, the sum the jitted path makes.
            weight, entries = present[0]
            return self._filter(part, entries.documents, weight * entries.contributions, allowed, phrases)
        documents = np.concatenate([entries.documents for _weight, entries in present])
        term_weights = np.repeat([weight for weight, _entries in present],
                                 [entries.documents.size for _weight, entries in present])
        # Term by term, as the jitted path adds them: the same floats in the same order.
        np.add.at(scores, documents, term_weights * np.concatenate([entries.contributions for _w, entries in present]))
        documents = _distinct(documents, fresh_buffer)
        return self._filter(part, documents, _take(scores, documents), allowed, phrases)

    def _norms(self, part: _Part) -> np.ndarray:
        if part.norms is None:
            part.norms = bm25.length_norms(part.segment.field_lengths, part.averages, part.slopes)
        return part.norms

    def _accumulate_jit(self, part: _Part, weights: dict, entries_by_term, scores, seen, fresh_buffer):
        fresh_count = 0
        parameters = self.parameters
        for weight, entries in zip(weights.values(), entries_by_term):
            if entries is not None:
                fresh_count = self.kernels.accumulate(
                    entries.documents, entries.fields, entries.frequencies, part.segment.field_lengths, part.averages, part.weights,
                    part.slopes, parameters.k1, parameters.delta, weight, scores, seen, fresh_buffer, fresh_count)
        return fresh_buffer[:fresh_count].copy() if fresh_count else None

    def _filter(self, part: _Part, documents, values, allowed, phrases):
        """The documents (and their scores) passing filters and phrases, or None."""
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
            keys = term_keys if keys is None else keys[members(term_keys, keys)]
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
            key = self._keys.get((index, local))
            if key is None:  # decoding it from its front-coded block is most of what a hit costs (5 µs)
                key = _remember(self._keys, (index, local), segment.key(local))
            hits.append(Hit(key, segment.docno(local), score, matched, segment.document_type(local),
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
                for row, found in zip(rows, members(entries.documents, locals_here).tolist()):
                    if found:
                        holders[row].append(term)
    return holders


def _remember(cache: dict, key, value):
    """cache[key] = value, starting over when the cache is full (a bounded memo of query lookups)."""
    if len(cache) >= _CACHED_LOOKUPS:
        cache.clear()
    cache[key] = value
    return value


def _live(part: _Part, documents, fields, frequencies) -> tuple:
    """The entries of live documents."""
    if part.has_deleted:
        keep = part.live[documents]
        return documents[keep], fields[keep], frequencies[keep]
    return documents, fields, frequencies


def _take(scores: np.ndarray, documents: np.ndarray) -> np.ndarray:
    """The scores of `documents`, cleared in the scratch array for the next query."""
    values = scores[documents]
    scores[documents] = 0.0
    return values


def _distinct(documents: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """Each document of `documents` once, without sorting: `slots` (scratch, one per document of the part)
    remembers the last place each document was written to, and only that place keeps it."""
    places = np.arange(documents.size)
    slots[documents] = places
    return documents[slots[documents] == places]


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
