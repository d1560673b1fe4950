"""W5: the raw fallback, passage-level BM25 over raw turns, and when it fires.

Triggers (any one; `recall.raw.*`): the node hits are few (fewer than `low_coverage_topn`); their score
concentration is low (`low_concentration`: the share of the query's idf weight that the best node hit
matches, so a query whose words the graph does not hold well goes to the raw text); the query holds pattern
tokens of the kinds in `pattern_tokens` (error codes, hex, paths, URLs… are copied verbatim far more often
than summarised); or the user asks (`--allow-raw`, `--cite`). `raw.enabled: false` keeps the automatic
triggers off; an explicit flag still runs it.

It searches the store's raw passage index (the engine's `raw` kind, engine/raw/passage_kind.py): every turn of
every stored chunk, whether R2G converted it or not, long turns cut into sentence windows of about 96 tokens, by
BM25+ over all of them (k1 1.2, b 0.75, δ 1). The index is built from the chunks and keeps no text: a hit's turn
comes from its chunk's turn records and its text from the chunk itself, read (and verified) once per chunk per
Recaller, and only for the hits a card shows. CJK text is cut into bigrams on both sides, so this path never
loads jieba's dictionary either.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field


@dataclass
class RawHit:
    node_id: str  # the passage's span, raw_<id>@<offset>+<length>
    raw_id: str
    offset: int  # bytes of the decompressed chunk
    length: int
    score: float
    turn: dict  # the decoded turn row (source_id, ts, speaker, raw_ref) holding the passage
    terms: list
    passages: "RawPassages" = field(repr=False, compare=False)  # what reads its text, when a card shows it

    @property
    def text(self) -> str:
        return self.passages.text(self)


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
    """The stored passage index at one snapshot, and the turns and chunks its hits come from."""

    def __init__(self, raw):
        self.raw = raw
        self.searcher = raw.passages().searcher()
        self._turns: dict = {}  # raw_id → (each turn's offset, the turns), None for a chunk no longer stored
        self._chunks: dict = {}  # raw_id → its bytes

    @property
    def documents(self) -> int:
        return self.searcher.document_count

    def search(self, text: str, top: int, since: float | None = None, until: float | None = None) -> list:
        """The best `top` passages for `text` (a window since/until drops untimed turns)."""
        from engine.raw import parse_span_key

        hits = []
        # A quoted phrase's words may stand anywhere in a passage: a phrase the graph's index does not hold is
        # when the raw text is worth reading loosely (a book title quoted as the turn never wrote it).
        for hit in self.searcher.search(text, top, since=since, until=until, phrases=False):
            raw_id, offset, length = parse_span_key(hit.key)
            turn = self._turn(raw_id, offset)
            if turn is not None:
                hits.append(RawHit(hit.key, raw_id, offset, length, hit.score, turn, sorted(hit.terms), self))
        return hits

    def text(self, hit: RawHit) -> str:
        data = self._chunks.get(hit.raw_id)
        if data is None:
            data = self._chunks[hit.raw_id] = self.raw.read(hit.raw_id)
        return data[hit.offset: hit.offset + hit.length].decode("utf-8", "replace")

    def _turn(self, raw_id: str, offset: int) -> dict | None:
        """The turn whose span holds byte `offset` of the chunk."""
        if raw_id not in self._turns:
            turns = self.raw.turns(raw_id) if self.raw.chunk(raw_id) is not None else []
            self._turns[raw_id] = ([turn["raw_ref"]["offset"] for turn in turns], turns) if turns else None
        found = self._turns[raw_id]
        if found is None:
            return None
        starts, turns = found
        index = bisect_right(starts, offset) - 1
        return turns[index] if index >= 0 else None
