"""Text → index terms with positions (Chinese and Latin script), and query parsing that never loads jieba.

Positions count *units*: one per CJK character and one per Latin word part. jieba's overlapping
`cut_for_search` words sit at the unit of their first character, and a code-like token sits at the unit of
its first part, with its parts on the following units (``EventID=17`` → ``eventid=17``@p, ``eventid``@p,
``17``@p+1). Queries are tokenized onto the same grid, so a quoted phrase matches by relative positions alone.

Latin text: NFKC, case-folded, split at whitespace into chunks, each chunk into alphanumeric parts (Unicode
word characters without ``_``). A chunk of several parts (URL, path, UUID, ``v2.3.1``, ``a_b``) is indexed
whole and by its parts; a part mixing letters and digits is indexed whole and split at the letter/digit
boundaries (``win11`` → ``win11``, ``win``, ``11``) unless it is hex (``0x8007045d`` → also ``8007045d``;
a hex run of 6+ characters stays whole). Alphabetic parts are Snowball-stemmed (English).

Chinese: indexing uses jieba's search mode (imported on first use, with an optional user dictionary); if
jieba cannot be imported, CJK runs become character bigrams and `cjk_mode` says "bigram". Queries against a
jieba-built index are segmented by dynamic programming over the index's own terms weighted by document
frequency (jieba's own route search with the corpus as its dictionary), which costs microseconds instead of
jieba's 0.6 s dictionary load.
"""

from __future__ import annotations

import math
import os
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from engine.errors import InputError

CJK_MODE_JIEBA = "jieba"
CJK_MODE_BIGRAM = "bigram"
STEMMER_LANGUAGE = "english"

# Longer tokens are dropped (their position is still consumed): they are blobs, not words.
MAX_TERM_CHARS = 128
# Chat repeats its words and short CJK runs: analyzed pieces are remembered, up to this many per tokenizer.
_ANALYZED_LIMIT = 200_000
# The longest word the query segmenter tries; jieba's dictionary words and user words are shorter.
MAX_QUERY_WORD_CHARS = 16

_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_PIECE = re.compile(rf"(?P<cjk>[{_CJK_CLASS}]+)|(?P<chunk>[^\s{_CJK_CLASS}]+)")
_PART = re.compile(r"[^\W_]+")
_LETTERS_OR_DIGITS = re.compile(r"[^\W\d_]+|\d+")
_HEX_PREFIXED = re.compile(r"0x[0-9a-f]+")
_HEX_RUN = re.compile(r"[0-9a-f]{6,}")
_APOSTROPHES = ("'", "\u2019", "\u2018", "\u02bc")  # split words, as spaces do
_QUOTE_MARKS = str.maketrans({mark: " " for mark in "\"\u201c\u201d\u300c\u300d"})
_QUOTED = re.compile(r"\"([^\"]*)\"|\u201c([^\u201d]*)\u201d|\u300c([^\u300d]*)\u300d")

_DATA = Path(__file__).with_name("data")


@lru_cache(maxsize=None)
def default_stopwords(language: str) -> frozenset:
    """The packaged list for "en" or "zh" (data/stopwords_<language>.txt)."""
    lines = (_DATA / f"stopwords_{language}.txt").read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _folded(text: str) -> str:
    """normalize(text) with each apostrophe made a space (one replace per mark found: a translation table costs a
    lookup per character, more than normalizing)."""
    text = normalize(text)
    for mark in _APOSTROPHES:
        if mark in text:
            text = text.replace(mark, " ")
    return text


@dataclass
class ParsedQuery:
    """Query terms (with repeats: a repeated term counts twice) and quoted phrases as (term, offset) lists."""

    terms: list = field(default_factory=list)
    phrases: list = field(default_factory=list)


class Tokenizer:
    """One configuration of the analysis chain. Index and query must use equal configurations.

    stopwords_en / stopwords_zh: iterables replacing the packaged lists (None keeps them).
    user_dictionary: path of a jieba user dictionary (word [freq [tag]] per line), indexing only.
    cjk: "auto" (jieba if importable, else bigrams), "jieba" or "bigram".
    """

    def __init__(self, *, stopwords_en=None, stopwords_zh=None, user_dictionary=None, stem: bool = True,
                 cjk: str = "auto"):
        english = default_stopwords("en") if stopwords_en is None else frozenset(map(normalize, stopwords_en))
        chinese = default_stopwords("zh") if stopwords_zh is None else frozenset(map(normalize, stopwords_zh))
        self.stopwords = english | chinese
        self.user_dictionary = None if user_dictionary is None else str(user_dictionary)
        self.stem = stem
        if cjk not in ("auto", CJK_MODE_JIEBA, CJK_MODE_BIGRAM):
            raise ValueError(f"cjk must be 'auto', 'jieba' or 'bigram', not {cjk!r}")
        self._cjk_choice = cjk
        self._jieba = None
        self._stems: dict = {}
        self._stemmer = None
        self._analyzed: dict = {}

    # --- configuration -------------------------------------------------------------------------------

    @property
    def cjk_mode(self) -> str:
        """How CJK text is indexed; resolving "auto" imports jieba (not its dictionary)."""
        if self._cjk_choice == "auto":
            self._cjk_choice = CJK_MODE_JIEBA if _jieba_importable() else CJK_MODE_BIGRAM
        return self._cjk_choice

    def signature(self) -> dict:
        """What a segment records so that a reader can tell which analysis built it ("stopwords": the
        stop-word hash of MANIFEST.spec's Conventions)."""
        import hashlib

        digest = hashlib.sha256("\n".join(sorted(self.stopwords)).encode("utf-8")).hexdigest()[:16]
        return {
            "cjk": self.cjk_mode,
            "stemmer": STEMMER_LANGUAGE if self.stem else None,
            "stopwords": digest,
            "user_dictionary": self.user_dictionary,
        }

    # --- indexing --------------------------------------------------------------------------------------

    def index_tokens(self, text: str) -> tuple[list, list]:
        """Terms and their unit positions, in text order (several terms may share a position)."""
        terms: list = []
        positions: list = []
        unit = 0
        analyzed = self._analyzed
        for match in _PIECE.finditer(_folded(text)):
            piece = match.group()
            result = analyzed.get(piece)
            if result is None:
                result = self._analyze(piece, match.group("cjk") is not None)
                if len(analyzed) >= _ANALYZED_LIMIT:
                    analyzed.clear()
                analyzed[piece] = result
            piece_terms, offsets, units = result
            terms.extend(piece_terms)
            positions.extend(map(unit.__add__, offsets))
            unit += units
        return terms, positions

    def _analyze(self, piece: str, cjk: bool) -> tuple:
        """(terms, offsets, units) of one CJK run or one chunk of other text, at unit 0. The terms are interned:
        every occurrence of a term in the texts analysed is then one object, which an index coding millions of
        tokens finds by identity, with its hash kept, and in fewer cache lines."""
        terms: list = []
        offsets: list = []
        if cjk:
            self._index_cjk(piece, 0, terms, offsets)
            units = len(piece)
        else:
            units = self._chunk(piece, 0, terms, offsets, True)
        return tuple(map(sys.intern, terms)), tuple(offsets), units

    def _index_cjk(self, run: str, unit: int, terms: list, positions: list) -> None:
        if self.cjk_mode == CJK_MODE_BIGRAM:
            pieces = _bigrams(run)
            if self.stopwords.isdisjoint(word for word, _ in pieces):  # the usual case, without a step per pair
                terms.extend(word for word, _ in pieces)
                positions.extend(range(unit, unit + len(pieces)))
                return
        else:
            pieces = ((word, start) for word, start, _end in self._jieba_tokenizer().tokenize(run, mode="search"))
        for word, start in pieces:
            if word not in self.stopwords:
                terms.append(word)
                positions.append(unit + start)

    def _jieba_tokenizer(self):
        if self._jieba is None:
            self._jieba = _jieba_for(self.user_dictionary)
        return self._jieba

    # --- Latin script and code-like tokens -------------------------------------------------------------

    def _chunk(self, chunk: str, unit: int, terms: list, positions: list, wholes: bool) -> int:
        """Index one whitespace-delimited chunk at `unit`; returns the units it occupies.

        wholes=False leaves out the whole forms of split tokens (phrases compare parts only, so that the
        phrase "2.3.1" matches inside "v2.3.1")."""
        parts = [match for match in _PART.finditer(chunk)]
        if not parts:
            return 0
        if len(parts) == 1:
            return self._word(parts[0].group(), unit, terms, positions, wholes)
        whole = chunk[parts[0].start(): parts[-1].end()]
        if wholes and len(whole) <= MAX_TERM_CHARS:
            terms.append(whole)
            positions.append(unit)
        cursor = unit
        for part in parts:
            cursor += self._word(part.group(), cursor, terms, positions, wholes)
        return cursor - unit

    def _word(self, word: str, unit: int, terms: list, positions: list, wholes: bool) -> int:
        if len(word) > MAX_TERM_CHARS:
            return 1
        if word.isdigit():
            terms.append(word)
            positions.append(unit)
            return 1
        if word.isalpha():
            if word not in self.stopwords:
                terms.append(self._stem(word))
                positions.append(unit)
            return 1
        if _HEX_RUN.fullmatch(word):
            terms.append(word)
            positions.append(unit)
            return 1
        if wholes:
            terms.append(word)
            positions.append(unit)
        if _HEX_PREFIXED.fullmatch(word):
            terms.append(word[2:])
            positions.append(unit)
            return 1
        pieces = _LETTERS_OR_DIGITS.findall(word)
        for offset, piece in enumerate(pieces):
            if piece not in self.stopwords:
                terms.append(self._stem(piece) if piece.isalpha() else piece)
                positions.append(unit + offset)
        return max(1, len(pieces))

    def _stem(self, word: str) -> str:
        if not self.stem:
            return word
        stem = self._stems.get(word)
        if stem is None:
            if self._stemmer is None:
                self._stemmer = _new_stemmer()
            stem = self._stems[word] = self._stemmer.stemWord(word)
        return stem

    # --- queries ---------------------------------------------------------------------------------------

    def query_tokens(self, text: str, vocabulary=None, cjk_mode: str = CJK_MODE_JIEBA,
                     phrase: bool = False) -> tuple[list, list]:
        """Like `index_tokens`, but CJK runs are segmented against `vocabulary` (see `Vocabulary`).

        phrase=True keeps only the tokens a phrase is checked with: the parts of split Latin tokens and
        the segmented CJK words without their substrings."""
        lookup = as_vocabulary(vocabulary)
        terms: list = []
        positions: list = []
        unit = 0
        for match in _PIECE.finditer(_folded(text)):
            run = match.group("cjk")
            if run is None:
                unit += self._chunk(match.group("chunk"), unit, terms, positions, not phrase)
                continue
            if cjk_mode == CJK_MODE_BIGRAM:
                pieces = _bigrams(run)
            else:
                pieces = segment_query_run(run, lookup, self.stopwords, substrings=not phrase)
            for word, start in pieces:
                if word not in self.stopwords:
                    terms.append(word)
                    positions.append(unit + start)
            unit += len(run)
        return terms, positions

    def parse_query(self, text: str, vocabulary=None, cjk_mode: str = CJK_MODE_JIEBA) -> ParsedQuery:
        """Terms of the whole query, and each quoted phrase ("…", “…”, 「…」) as (term, offset) pairs."""
        parsed = ParsedQuery()
        for match in _QUOTED.finditer(text):
            inner = next(group for group in match.groups() if group is not None)
            terms, positions = self.query_tokens(inner, vocabulary, cjk_mode, phrase=True)
            if len(terms) > 1:
                first = min(positions)
                parsed.phrases.append([(term, position - first) for term, position in zip(terms, positions)])
        parsed.terms, _positions = self.query_tokens(text.translate(_QUOTE_MARKS), vocabulary, cjk_mode)
        return parsed


# --- query segmentation ---------------------------------------------------------------------------------


class Vocabulary:
    """What the query segmenter needs from an index: document frequency of a term (0 = absent), the
    number of documents, and optionally whether any term starts with a prefix (prunes the search)."""

    def __init__(self, frequency, document_count: int, has_prefix=None):
        self.frequency = frequency
        self.document_count = max(1, int(document_count))
        self.has_prefix = has_prefix


def as_vocabulary(vocabulary) -> Vocabulary:
    """Accepts a Vocabulary, a set (or any container) of terms, a callable term → bool/int, or None."""
    if isinstance(vocabulary, Vocabulary):
        return vocabulary
    if vocabulary is None:
        return Vocabulary(lambda term: 0, 1)
    if callable(vocabulary):
        return Vocabulary(lambda term: int(vocabulary(term)), 1_000_000)
    return Vocabulary(lambda term: int(term in vocabulary), 1_000_000)


def segment_query_run(run: str, vocabulary: Vocabulary, stopwords=frozenset(), substrings: bool = True) -> list:
    """Split a CJK run into (word, start) pieces as jieba's search mode would, without jieba.

    A route maximizes the sum of log P(piece): P(word) = df/N for an indexed word, 1/2 for a stop word of
    one character, and 1/(2N) for any other character (so an unknown character never beats a known
    word). Each chosen word of 3+ characters also yields its indexed 2- and 3-character substrings, which
    is what `cut_for_search` adds at index time.
    """
    count = len(run)
    scale = math.log(vocabulary.document_count)
    unknown = -math.log(2.0) - scale
    best = [(0.0, count)] * (count + 1)
    for start in range(count - 1, -1, -1):
        character = run[start]
        frequency = vocabulary.frequency(character)
        if frequency:
            single = math.log(frequency) - scale
        else:
            single = -math.log(2.0) if character in stopwords else unknown
        route = (single + best[start + 1][0], start + 1)
        for end in _word_ends(run, start, vocabulary):
            frequency = vocabulary.frequency(run[start:end])
            if frequency:
                score = math.log(frequency) - scale + best[end][0]
                if score > route[0]:
                    route = (score, end)
        best[start] = route
    pieces = []
    start = 0
    while start < count:
        end = best[start][1]
        word = run[start:end]
        if substrings and len(word) > 2:
            pieces.extend(_known_grams(word, start, 2, vocabulary))
        if substrings and len(word) > 3:
            pieces.extend(_known_grams(word, start, 3, vocabulary))
        pieces.append((word, start))
        start = end
    return pieces


def _word_ends(run: str, start: int, vocabulary: Vocabulary):
    last = min(len(run), start + MAX_QUERY_WORD_CHARS)
    for end in range(start + 2, last + 1):
        if vocabulary.has_prefix is not None and not vocabulary.has_prefix(run[start:end]):
            return
        yield end


def _known_grams(word: str, start: int, size: int, vocabulary: Vocabulary) -> list:
    return [(word[index: index + size], start + index)
            for index in range(len(word) - size + 1) if vocabulary.frequency(word[index: index + size])]


def _bigrams(run: str):
    if len(run) == 1:
        return [(run, 0)]
    return [(run[index: index + 2], index) for index in range(len(run) - 1)]


# --- optional dependencies, loaded on first use ---------------------------------------------------------


@lru_cache(maxsize=None)
def _jieba_importable() -> bool:
    try:
        import jieba  # noqa: F401
    except ImportError:
        return False
    return True


@lru_cache(maxsize=None)
def _jieba_for(user_dictionary):
    """One jieba tokenizer per user dictionary per process: building one loads the 0.6 s dictionary."""
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    if user_dictionary is None:
        return jieba.dt
    if not os.path.isfile(user_dictionary):
        raise InputError("jieba user dictionary not found", user_dictionary)
    tokenizer = jieba.Tokenizer()
    tokenizer.load_userdict(user_dictionary)
    return tokenizer


def _new_stemmer():
    """PyStemmer (C) when installed, else snowballstemmer (pure Python): same Snowball English algorithm."""
    try:
        import Stemmer
    except ImportError:
        import snowballstemmer

        return snowballstemmer.stemmer(STEMMER_LANGUAGE)
    return Stemmer.Stemmer(STEMMER_LANGUAGE)
