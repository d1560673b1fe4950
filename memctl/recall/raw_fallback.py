"""W5: the raw fallback, passage-level BM25 over raw turns, and when it fires.

Triggers (any one; `recall.raw.*`): the node hits are few (fewer than `low_coverage_topn`); their score
concentration is low (`low_concentration`: the share of the query's idf weight that the best node hit
matches, so a query whose words the graph does not hold well goes to the raw text); the query holds pattern
tokens of the kinds in `pattern_tokens` (error codes, hex, paths, URLs… are copied verbatim far more often
than summarised); or the user asks (`--allow-raw`, `--cite`). `raw.enabled: false` keeps the automatic
triggers off; an explicit flag still runs it.

The passage index is built lazily, in memory, over the "hot" chunks only (seed W5: 短期/热点 RawChunk): the
chunks the best node hits cite and the `raw.hot_chunks` most recently ingested ones, which include the chunks
r2g has not converted yet (ingest comes first); with no graph at all (r2g never ran) eight times as many.
Passages are cached per Recaller, so a batch tokenizes each chunk once. Nothing is
written at r2g time: the NodeIndex already holds every converted turn's own words (its `turn` field), so a
persistent second index would duplicate it, while the fallback's value is in precise snippets, verbatim
tokens and unconverted chunks. Passages are turns, and long turns are cut at sentence ends into windows of
about `raw.passage_tokens` tokens. CJK text is tokenized in bigrams on both sides, so this path never loads
jieba's dictionary either.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

# Compiled on first use (re caches it): every recall imports this module for `triggers`, few build passages.
SENTENCE_PATTERN = r"[^.!?。！？\n]+[.!?。！？\n]*"
K1 = 1.2
B = 0.75
DELTA = 1.0


@dataclass
class RawHit:
    raw_id: str
    offset: int  # bytes of the decompressed chunk
    length: int
    score: float
    turn: dict  # the decoded turn row (source_id, ts, speaker, raw_ref)
    text: str
    terms: list

    @property
    def node_id(self) -> str:
        return f"{self.raw_id}@{self.offset}+{self.length}"


def triggers(query, seeds: list, search, raw, explicit: list) -> list:
    """[(trigger, reason)] of the fallback conditions that hold; `raw`: the recall.raw settings."""
    fired = [("requested", flag) for flag in explicit]
    if not raw.enabled and not fired:
        return []
    if len(seeds) < raw.low_coverage_topn:
        fired.append(("low_coverage", f"{len(seeds)} node hits < {raw.low_coverage_topn}"))
    concentration = match_concentration(query, seeds, search)
    if concentration is not None and concentration < raw.low_concentration:
        fired.append(("low_concentration", f"best hit matches {concentration:.2f} of the query's idf weight "
                                           f"< {raw.low_concentration}"))
    kinds = [kind for kind in query.pattern_kinds if kind in raw.pattern_tokens]
    if kinds:
        tokens = [token for kind in kinds for token in query.patterns[kind]]
        fired.append(("pattern_tokens", f"{', '.join(kinds)}: {' '.join(tokens)[:80]}"))
    return fired


def match_concentration(query, seeds: list, search) -> float | None:
    """Share of the query terms' idf weight matched by the best seed; None without an index or terms."""
    if search is None or not query.keywords or not seeds:
        return None
    weights = {term: search.idf(term) for term in set(query.keywords)}
    total = sum(weights.values())
    if total <= 0:
        return None
    best = seeds[0]
    return sum(weights.get(term, 0.0) for term in set(best.terms)) / total


class RawPassages:
    def __init__(self, raw, settings):
        """`settings`: the recall.raw settings."""
        from engine.text.tokenizer import Tokenizer

        self.raw = raw
        self.settings = settings
        self.tokenizer = Tokenizer(cjk="bigram")
        self._chunks: dict = {}  # raw_id → _ChunkIndex
        self._recent = None  # raw ids, most recently ingested first

    def hot_chunks(self, cited: list, recent_count: int) -> tuple[list, dict]:
        """Chunk ids to search: those the best node hits cite, then the `recent_count` most recently ingested
        (where chunks r2g has not converted yet are, ingest coming before r2g)."""
        if self._recent is None:
            self._recent = [raw_id for _, raw_id in sorted(((chunk.created_at, chunk.raw_id) for chunk
                                                             in self.raw.chunks()), reverse=True)]
        chosen = list(dict.fromkeys([raw_id for raw_id in cited if raw_id] + self._recent[:recent_count]))
        return chosen, {"chunks": len(chosen), "cited": len(set(cited)), "stored": len(self._recent)}

    def search(self, text: str, chunks: list, top: int) -> list:
        """BM25+ over the passages of `chunks` (statistics over those passages only)."""
        terms = Counter(self.tokenizer.query_tokens(text, None, "bigram")[0])
        parts = [part for part in (self._chunk_index(raw_id) for raw_id in chunks) if part.passages]
        count = sum(len(part.passages) for part in parts)
        if not terms or not count:
            return []
        average = sum(part.total_length for part in parts) / count
        frequency = {term: sum(len(part.postings.get(term, ())) for part in parts) for term in terms}
        idf = {term: math.log((count + 1.0) / found) for term, found in frequency.items() if found}
        hits = []
        for part in parts:
            scores: dict = {}
            matched: dict = {}
            for term, weight in idf.items():
                for passage, tf in part.postings.get(term, ()):
                    norm = (1 - B) + B * part.lengths[passage] / max(average, 1e-9)
                    scores[passage] = scores.get(passage, 0.0) + terms[term] * weight * (
                        (K1 + 1) * tf / (K1 * norm + tf) + DELTA)
                    matched.setdefault(passage, []).append(term)
            for passage, score in scores.items():
                raw_id, offset, length, turn, passage_text = part.passages[passage]
                hits.append(RawHit(raw_id, offset, length, score, turn, passage_text, sorted(matched[passage])))
        hits.sort(key=lambda hit: (-hit.score, hit.raw_id, hit.offset))
        return hits[:top]

    def _chunk_index(self, raw_id: str) -> "_ChunkIndex":
        found = self._chunks.get(raw_id)
        if found is None:
            found = self._chunks[raw_id] = _ChunkIndex(list(self._build(raw_id)))
        return found

    def _build(self, raw_id: str):
        """(raw_id, offset, length, turn, text, tokens) of every passage of the chunk."""
        if self.raw.chunk(raw_id) is None:
            return
        data = self.raw.read(raw_id)
        turns = self.raw.turns(raw_id) or [{"source_id": None, "ts": None, "speaker": None,
                                            "raw_ref": {"raw_id": raw_id, "offset": 0, "length": len(data)}}]
        for turn in turns:
            ref = turn["raw_ref"]
            text = data[ref["offset"]: ref["offset"] + ref["length"]].decode("utf-8", "replace")
            for start, end in self._windows(text):
                piece = text[start:end]
                if not piece.strip():
                    continue
                offset = ref["offset"] + len(text[:start].encode("utf-8"))
                length = len(piece.encode("utf-8"))
                yield raw_id, offset, length, turn, piece, self.tokenizer.index_tokens(piece)[0]

    def _windows(self, text: str):
        """Character ranges of a turn's passages: the whole turn, or sentence windows of ~passage_tokens."""
        from memctl.ingest.chunker import estimate_tokens

        limit = self.settings.passage_tokens
        if estimate_tokens(text) <= limit:
            yield 0, len(text)
            return
        start = end = 0
        size = 0
        for match in re.finditer(SENTENCE_PATTERN, text):
            tokens = estimate_tokens(match.group())
            if size and size + tokens > limit:
                yield start, end
                start, size = match.start(), 0
            end = match.end()
            size += tokens
        if end > start:
            yield start, len(text)


class _ChunkIndex:
    """One chunk's passages and their postings: term → [(passage number, tf)]."""

    __slots__ = ("passages", "lengths", "total_length", "postings")

    def __init__(self, built: list):
        self.passages = [item[:5] for item in built]
        self.lengths = [len(item[5]) for item in built]
        self.total_length = sum(self.lengths)
        self.postings: dict = {}
        for number, item in enumerate(built):
            for term, tf in Counter(item[5]).items():
                self.postings.setdefault(term, []).append((number, tf))
