"""What a raw passage is, and its tokens: the analysis of the raw passage index (engine/raw/passage_kind.py).

A passage is a turn's span of its chunk or, for a turn weighing more than PASSAGE_TOKENS (its weight: its CJK
characters and its words, runs of other letters and digits), a window of its sentences (a sentence: characters
other than . ! ? 。 ！ ？ and the line end, then a run of those) weighing at most PASSAGE_TOKENS; a single heavier
sentence is a window of its own. A passage with no token is left out (no query can match it).

Tokens: those of the engine Tokenizer with CJK character bigrams (Tokenizer(cjk="bigram").index_tokens), whatever
a user's `index` settings say, so the index never depends on settings that may change and neither a flush nor a
query loads jieba's dictionary. Positions are token ordinals inside the passage: the index is searched without
phrases.

Speed: index_tokens analyses a text piece by piece (a CJK run, or a chunk of other text between spaces) in a Python
loop. Here a block of passages is folded text by text (NFKC, case, apostrophes: C calls), joined by line ends and
analysed as numpy arrays of code points: CJK bigrams and single characters are coded from pairs of code points,
and only the distinct ones become strings (a stop word is dropped by its string); the other chunks are split at
C speed and each distinct chunk is analysed once per analyzer by the Tokenizer itself (a chat's words repeat).
Tokens of a passage are its CJK terms, then its other terms: the order inside a passage carries no meaning here.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import chain

import numpy as np

from engine.arrays import members, sorted_unique
from engine.text.tokenizer import CJK_MODE_BIGRAM, Tokenizer
from engine.text.tokenizer import _folded as fold

PASSAGE_TOKENS = 96
FIELD = "text"
SENTENCE_END_POINTS = np.array(sorted(ord(mark) for mark in ".!?。！？\n"), dtype=np.uint32)  # sorted: members()
SEPARATOR = "\uffff"
CHUNK_CACHE_LIMIT = 400_000  # distinct chunks remembered; above it the memory starts again
LAST_SPACE = 0x3000
# The Tokenizer's CJK class as code point ranges.
CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F))


class PassageVocabulary:
    """Terms coded 0, 1, 2… in order of first use (what engine.text.pieces.TokenPiece needs of a vocabulary)."""

    def __init__(self):
        self.codes: dict = {}

    @property
    def code_space(self) -> int:
        return len(self.codes)

    def entries(self) -> tuple[np.ndarray, list]:
        return np.arange(len(self.codes), dtype=np.int64), list(self.codes)

    def wait(self) -> None:
        """Codes are ready as soon as they are made."""


class PassageAnalyzer:
    def __init__(self):
        self.tokenizer = Tokenizer(cjk=CJK_MODE_BIGRAM)
        self.vocabulary = PassageVocabulary()
        self._chunk_codes: dict = {}  # a chunk of text outside CJK runs → the codes of its terms

    def signature(self) -> dict:
        return {**self.tokenizer.signature(), "passage_tokens": PASSAGE_TOKENS}

    def analyze(self, texts: list) -> tuple[np.ndarray, np.ndarray]:
        """(tokens of each text, int64; the codes of all their tokens, int32, text after text)."""
        points, text_of = _folded_points(texts)
        cjk = _in_cjk_class(points)
        other = ~cjk & ~_is_space(points)
        streams = [*self._cjk_tokens(points, cjk, text_of), self._other_tokens(points, other, text_of)]
        return _grouped(streams, len(texts))

    def _cjk_tokens(self, points: np.ndarray, cjk: np.ndarray, text_of: np.ndarray) -> list:
        """(codes, texts) of the CJK bigrams, then of the single-character runs, each in text order."""
        before = np.r_[False, cjk[:-1]]
        after = np.r_[cjk[1:], False]
        pairs = np.flatnonzero(cjk & after)
        singles = np.flatnonzero(cjk & ~before & ~after)
        keys = np.concatenate(((points[pairs].astype(np.int64) << 21) | points[pairs + 1], points[singles]))
        distinct = sorted_unique(keys)  # a sort and a search: np.unique's return_inverse costs an argsort
        inverse = np.searchsorted(distinct, keys)
        codes_of, stopwords = self.vocabulary.codes, self.tokenizer.stopwords
        coded = np.fromiter((-1 if term in stopwords else codes_of.setdefault(term, len(codes_of))
                             for term in map(_cjk_term, distinct.tolist())), dtype=np.int64, count=distinct.size)
        codes = coded[inverse]
        streams = []
        for stream_codes, starts in ((codes[:pairs.size], pairs), (codes[pairs.size:], singles)):
            kept = stream_codes >= 0
            streams.append((stream_codes[kept].astype(np.int32), text_of[starts[kept]]))
        return streams

    def _other_tokens(self, points: np.ndarray, other: np.ndarray, text_of: np.ndarray) -> tuple:
        """Codes of the terms of the chunks outside CJK runs, and the text each comes from."""
        spaced = np.where(other, points, np.uint32(32))
        chunks = spaced.tobytes().decode("utf-32-le").split()
        chunk_texts = text_of[np.flatnonzero(other & ~np.r_[False, other[:-1]])]
        distinct = list(dict.fromkeys(chunks))
        known, codes_of = self._chunk_codes, self.vocabulary.codes
        if len(known) + len(distinct) > CHUNK_CACHE_LIMIT:
            known.clear()
        for chunk in distinct:
            if chunk not in known:
                known[chunk] = tuple(codes_of.setdefault(term, len(codes_of))
                                     for term in self.tokenizer.chunk_terms(chunk))
        tuples = list(map(known.__getitem__, distinct))
        sizes = np.fromiter(map(len, tuples), dtype=np.int64, count=len(tuples))
        flat = np.fromiter(chain.from_iterable(tuples), dtype=np.int32, count=int(sizes.sum()))
        starts = np.cumsum(sizes) - sizes
        number = dict(zip(distinct, range(len(distinct))))
        ids = np.fromiter(map(number.__getitem__, chunks), dtype=np.int64, count=len(chunks))
        counts = sizes[ids]
        total = int(counts.sum())
        gather = np.repeat(starts[ids] - (np.cumsum(counts) - counts), counts) + np.arange(total)
        return flat[gather], np.repeat(chunk_texts, counts)


def _folded_points(texts: list) -> tuple[np.ndarray, np.ndarray]:
    """The code points of the texts folded as the Tokenizer folds them, one line end between two texts, and the
    number of the text each belongs to. The texts are folded as one string, joined by U+FFFF (which folding
    keeps, and no other character folds into): normalizing and case folding never join characters across
    it. A text holding U+FFFF itself is folded on its own instead."""
    joined = SEPARATOR.join(texts)
    if joined.count(SEPARATOR) != len(texts) - 1:
        folded = list(map(fold, texts))
        lengths = np.fromiter(map(len, folded), dtype=np.int64, count=len(folded))
        points = np.frombuffer("\n".join(folded).encode("utf-32-le"), dtype=np.uint32)
        return points, np.repeat(np.arange(len(folded), dtype=np.int32), lengths + 1)[:points.size]
    points = np.frombuffer(fold(_widths_folded(joined)).encode("utf-32-le"), dtype=np.uint32).copy()
    separators = points == ord(SEPARATOR)
    text_of = np.cumsum(separators, dtype=np.int32)
    points[separators] = ord("\n")
    return points, text_of


def _widths_folded(text: str) -> str:
    """The text with its full-width ASCII forms and ideographic spaces replaced by what NFKC makes of them (one
    ASCII character each, a compatibility decomposition: normalizing gives the same text after): Chinese text
    is full of them, and NFKC is many times faster on a text that is normalized already but for a few
    characters."""
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    wide = (points >= 0xFF01) & (points <= 0xFF5E)
    ideographic_space = points == 0x3000
    if not (wide.any() or ideographic_space.any()):
        return text
    points = np.where(wide, points - np.uint32(0xFEE0), points)
    points[ideographic_space] = 0x20
    return points.tobytes().decode("utf-32-le")


def _grouped(streams: list, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(tokens of each of `count` texts, their codes grouped text by text) of streams of (codes, texts) pairs,
    each stream in text order: a text's tokens are those of the first stream, then of the second…"""
    per_stream = [np.bincount(texts, minlength=count) for _codes, texts in streams]
    totals = np.sum(per_stream, axis=0, dtype=np.int64)
    place = np.cumsum(totals) - totals
    grouped = np.empty(int(totals.sum()), dtype=np.int32)
    for (codes, texts), counts in zip(streams, per_stream):
        first = np.cumsum(counts) - counts
        grouped[place[texts] + np.arange(texts.size) - first[texts]] = codes
        place += counts
    return totals, grouped


def _cjk_term(key: int) -> str:
    return chr(key >> 21) + chr(key & 0x1FFFFF) if key >= 1 << 21 else chr(key)


def _in_cjk_class(points: np.ndarray) -> np.ndarray:
    inside = np.zeros(points.shape, dtype=bool)
    for low, high in CJK_RANGES:
        inside |= (points >= low) & (points <= high)
    return inside


@lru_cache(maxsize=1)
def _space_table() -> np.ndarray:
    """Whether each code point up to the last Unicode space (U+3000) is one, as the Tokenizer's \\s reads it."""
    return np.array([chr(point).isspace() for point in range(LAST_SPACE + 1)], dtype=bool)


def _is_space(points: np.ndarray) -> np.ndarray:
    return (points <= LAST_SPACE) & _space_table()[np.minimum(points, LAST_SPACE)]


def weights(texts: list) -> np.ndarray:
    """The window weight of each text: its CJK characters and its words (runs of other letters and digits)."""
    if not texts:
        return np.zeros(0, dtype=np.int64)
    points = np.frombuffer("\n".join(texts).encode("utf-32-le"), dtype=np.uint32)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    text_of = np.repeat(np.arange(len(texts), dtype=np.int32), lengths + 1)[:points.size]
    marks = _weight_marks(points)
    return np.bincount(text_of[marks], minlength=len(texts)).astype(np.int64)


def windows(text: str) -> list:
    """Character ranges (start, end) of the windows of a long turn's text: consecutive, from its start to its end.
    A window closes before the sentence that would take its weight past PASSAGE_TOKENS."""
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    ends_sentence = members(SENTENCE_END_POINTS, points)
    starts = np.flatnonzero(~ends_sentence & np.r_[True, ends_sentence[:-1]])
    if not starts.size:
        return []
    sentence_weights = np.add.reduceat(_weight_marks(points).astype(np.int64), starts).tolist()
    sentence_ends = starts[1:].tolist() + [points.size]
    found = []
    start = end = size = 0
    for first, last, weight in zip(starts.tolist(), sentence_ends, sentence_weights):
        if size and size + weight > PASSAGE_TOKENS:
            found.append((start, end))
            start, size = first, 0
        end = last
        size += weight
    found.append((start, points.size))
    return found


def _weight_marks(points: np.ndarray) -> np.ndarray:
    """True at each CJK character and at the first character of each word (letters and digits but CJK)."""
    cjk = _in_cjk_class(points)
    word = _is_alphanumeric(points) & ~cjk
    return cjk | (word & ~np.r_[False, word[:-1]])


@lru_cache(maxsize=1)
def _alphanumeric_table() -> np.ndarray:
    """str.isalnum of every code point of the basic plane (what a regular expression's [^\\W_] matches)."""
    return np.array([chr(point).isalnum() for point in range(0x10000)], dtype=bool)


def _is_alphanumeric(points: np.ndarray) -> np.ndarray:
    found = _alphanumeric_table()[np.minimum(points, 0xFFFF)] & (points <= 0xFFFF)
    astral = np.flatnonzero(points > 0xFFFF)
    if astral.size:
        found[astral] = [chr(point).isalnum() for point in points[astral].tolist()]
    return found
