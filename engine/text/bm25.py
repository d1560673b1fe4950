"""BM25+ with BM25F field weighting: pure functions over numpy arrays.

For a query q, a document d with fields f (weight w_f, length l_{d,f}), and collection statistics over the
live documents (N documents, average field length avgl_f, document frequency df_t = documents with t in any
field):

    B_{d,f}   = (1 − b_f) + b_f · l_{d,f} / avgl_f
    tf~_{t,d} = Σ_f  w_f · tf_{t,d,f} / B_{d,f}                         (BM25F pseudo-frequency)
    idf_t     = ln((N + 1) / df_t)
    score     = Σ_{t ∈ q}  qtf_t · idf_t · ( (k1 + 1) · tf~_{t,d} / (k1 + tf~_{t,d}) + δ )

BM25F: S. Robertson, H. Zaragoza, M. Taylor, "Simple BM25 extension to multiple weighted fields", CIKM 2004
(per-field length normalization as in H. Zaragoza et al., "Microsoft Cambridge at TREC-13", 2004).
BM25+ (the δ lower bound and its idf): Y. Lv, C. Zhai, "Lower-bounding term frequency normalization",
CIKM 2011; variant naming as in C. Kamphuis et al., "Which BM25 do you mean? A large-scale reproducibility
study of scoring variants", ECIR 2020 (bm25s's `_score_tfc_bm25plus` / `_score_idf_bm25plus`). With one field
of weight 1 this is exactly that BM25+. δ is added once per matched query term, not per field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

DEFAULT_FIELD_WEIGHTS = {"title": 2.0, "text": 1.0, "keywords": 1.5, "entities": 1.5}


@dataclass(frozen=True)
class BM25Parameters:
    """k1, b, δ and field weights; a field missing from `field_weights` weighs `default_weight`, and
    `field_b` overrides b per field."""

    k1: float = 1.2
    b: float = 0.75
    delta: float = 1.0
    field_weights: dict = field(default_factory=lambda: dict(DEFAULT_FIELD_WEIGHTS))
    default_weight: float = 1.0
    field_b: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.k1 < 0 or not 0 <= self.b <= 1 or self.delta < 0:
            raise ValueError("BM25 needs k1 >= 0, 0 <= b <= 1 and delta >= 0")
        if any(weight < 0 for weight in self.field_weights.values()) or self.default_weight < 0:
            raise ValueError("field weights must be >= 0")

    def weight(self, field_name: str) -> float:
        return float(self.field_weights.get(field_name, self.default_weight))

    def field_slope(self, field_name: str) -> float:
        return float(self.field_b.get(field_name, self.b))


def idf(document_frequency: int, document_count: int) -> float:
    """BM25+ idf, ln((N + 1) / df); df = 0 gives 0 (the term matches nothing)."""
    if document_frequency <= 0:
        return 0.0
    return math.log((document_count + 1.0) / document_frequency)


def saturate(pseudo_frequency, k1: float, delta: float):
    """(k1 + 1) · tf~ / (k1 + tf~) + δ."""
    pseudo_frequency = np.asarray(pseudo_frequency, dtype=np.float64)
    return (k1 + 1.0) * pseudo_frequency / (k1 + pseudo_frequency) + delta


def length_norms(lengths, average_lengths, slopes) -> np.ndarray:
    """B_{d,f} of every document and field: float64[documents, fields] (a searcher computes it once per part).

    lengths: int[documents, fields]; average_lengths, slopes (b_f): float64[fields]."""
    averages = np.where(average_lengths > 0, average_lengths, 1.0)
    return (1.0 - slopes) + slopes * lengths / averages


def pseudo_frequencies(documents, fields, frequencies, term_counts, norms, weights):
    """Σ_f w_f · tf_{t,d,f} / B_{d,f} per (term, document), for the entries of several terms concatenated
    (term_counts: entries per term), each term's sorted by document.

    norms: length_norms(); weights: float64[fields]. Returns (rows, tf~): rows, the first entry of each
    (term, document), or None when every entry is one (a single field)."""
    if weights.size == 1:
        return None, (weights[0] * frequencies) / norms[:, 0][documents]
    per_entry = weights[fields] * frequencies / norms[documents, fields]
    starts = _starts_of_runs(documents)
    boundaries = np.cumsum(term_counts)[:-1]
    starts[boundaries[boundaries < documents.size]] = True
    firsts = np.flatnonzero(starts)
    return firsts, np.add.reduceat(per_entry, firsts)


def _starts_of_runs(values: np.ndarray) -> np.ndarray:
    starts = np.empty(values.size, dtype=bool)
    starts[0] = True
    np.not_equal(values[1:], values[:-1], out=starts[1:])
    return starts


def recency_factors(timestamps, now: float, tau: float, weight: float):
    """(1 − weight) + weight · exp(−max(0, now − ts) / τ); a document without a time (NaN) gets 1 − weight."""
    age = np.maximum(now - np.asarray(timestamps, dtype=np.float64), 0.0)
    decay = np.exp(-age / tau)
    return (1.0 - weight) + weight * np.nan_to_num(decay, nan=0.0)


def top_k(scores, tie_breakers, k: int):
    """Indices of the k best scores, best first; equal scores order by ascending tie breaker.

    np.partition finds the k-th best score in linear time; everything tied with it is kept so that the
    tie breaker, not the partition's arbitrary order, decides who makes the cut."""
    scores = np.asarray(scores)
    if k <= 0 or scores.size == 0:
        return np.zeros(0, dtype=np.int64)
    if scores.size > k:
        chosen = _at_least_kth(scores, k)
    else:
        chosen = np.arange(scores.size)
    order = np.lexsort((np.asarray(tie_breakers)[chosen], -scores[chosen]))
    return chosen[order[:k]]


# Candidate lists longer than this are first cut at the k-th best score of their first _SAMPLE entries.
_SAMPLE = 512


def _at_least_kth(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the scores at or above the k-th best. The k-th best of any subset is a lower bound of the
    k-th best of all, so one comparison pass drops most candidates before the partition (which costs 50 µs on
    20,000 scores, the comparison a tenth of that)."""
    if scores.size >= 4 * _SAMPLE and k <= _SAMPLE // 4:
        floor = np.partition(scores[:_SAMPLE], _SAMPLE - k)[_SAMPLE - k]
        survivors = np.flatnonzero(scores >= floor)
        kept = scores[survivors]
        threshold = np.partition(kept, kept.size - k)[kept.size - k]
        return survivors[kept >= threshold]
    threshold = np.partition(scores, scores.size - k)[scores.size - k]
    return np.flatnonzero(scores >= threshold)
