"""Cards, citations and budget packing (seed 001 §5.3, W6).

Citations: a card cites the node's raw_refs (a raw hit's passage first), at most `recall.max_citations`, each
{raw_id, offset, length, source_id, ts, snippet}. The snippet is the exact UTF-8 text of bytes
[offset, offset + length) of the chunk, read through RawStore.read, which checks the decompressed blob's length
and sha256 against the chunk record before any byte is used; a chunk that fails the check gives a citation with
snippet null and an "error", never a wrong text.

Token counting (memctl.language.token_estimate; no model tokenizer is loaded): every CJK character
(Han, kana, Hangul, CJK and full-width punctuation) counts 1 token, every other whitespace-separated word
(with its punctuation, a number, an emoji) 1.3, rounded up. A card costs its title + text + each citation's
snippet (unless it is the card's text, as for a raw passage), plus CITATION_OVERHEAD tokens per citation for its
reference line (raw_id, span, source_id, time).

Packing: greedy knapsack under the budget: cards by final score per token, each taken if it still fits; that is
compared with the same fill started from the best-scoring card that fits alone, and the higher total score wins
(the classic ½-approximation, so one long, decisive turn is never lost to many short weak ones). Cards keep
their rank order in the output.
"""

from __future__ import annotations

CITATION_OVERHEAD = 12


class Citations:
    """Verified chunk bytes, each chunk read once per Recaller."""

    def __init__(self, raw):
        self.raw = raw
        self._chunks: dict = {}

    def chunk(self, raw_id: str):
        found = self._chunks.get(raw_id)
        if found is None:
            from engine.errors import EngineError

            try:
                found = self.raw.read(raw_id)
            except EngineError as error:
                found = error
            self._chunks[raw_id] = found
        return found

    def cite(self, ref: dict) -> dict:
        raw_id, offset, length = ref.get("raw_id"), ref.get("offset"), ref.get("length")
        citation = {"raw_id": raw_id, "offset": offset, "length": length, "source_id": ref.get("source_id"),
                    "ts": ref.get("ts"), "snippet": None}
        if not isinstance(raw_id, str) or not isinstance(offset, int) or not isinstance(length, int):
            citation["error"] = "malformed raw_ref"
            return citation
        data = self.chunk(raw_id)
        if isinstance(data, Exception):
            citation["error"] = str(data)
        elif offset < 0 or length < 0 or offset + length > len(data):
            citation["error"] = f"span {offset}+{length} is outside {raw_id} ({len(data)} bytes)"
        else:
            citation["snippet"] = data[offset: offset + length].decode("utf-8", "replace")
        return citation


def card_refs(props: dict, raw_hit, limit: int) -> list:
    refs = []
    if raw_hit is not None:
        turn = raw_hit.turn
        refs.append({"raw_id": raw_hit.raw_id, "offset": raw_hit.offset, "length": raw_hit.length,
                     "source_id": turn.get("source_id"), "ts": turn.get("ts")})
    for ref in props.get("raw_refs") or ():
        if not isinstance(ref, dict):
            continue
        if any(covers(ref, taken) for taken in refs):
            continue
        refs.append(ref)
    return refs[:limit]


def covers(ref: dict, taken: dict) -> bool:
    """True when `taken` (a passage) lies inside `ref` (its turn), or they are the same span."""
    if ref.get("raw_id") != taken.get("raw_id"):
        return False
    try:
        return ref["offset"] <= taken["offset"] and taken["offset"] + taken["length"] <= ref["offset"] + ref["length"]
    except (KeyError, TypeError):
        return False


def card_tokens(card: dict) -> int:
    from memctl.language.token_estimate import estimate_tokens

    text = card.get("text") or ""
    total = estimate_tokens(card.get("title") or "") + estimate_tokens(text)
    for citation in card.get("citations", ()):
        snippet = citation.get("snippet") or ""
        # A raw passage's card text is its snippet: shown once.
        total += CITATION_OVERHEAD + (0 if snippet == text else estimate_tokens(snippet))
    return total


def pack(cards: list, budget: int | None) -> tuple[list, dict]:
    """(cards that fit, in their original order; facts: {"budget", "tokens" packed, "matched": cards offered,
    "dropped", "smallest_dropped": tokens of the smallest card left out, or None}). Each card has "score" and
    "tokens"."""
    total = sum(card["tokens"] for card in cards)
    if budget is None or total <= budget:
        return cards, {"budget": budget, "tokens": total, "matched": len(cards), "dropped": 0,
                       "smallest_dropped": None}
    order = sorted(range(len(cards)), key=lambda index: (-cards[index]["score"] / max(cards[index]["tokens"], 1),
                                                         index))
    chosen = _fill(cards, order, [], budget)
    fitting = [index for index in range(len(cards)) if cards[index]["tokens"] <= budget]
    if fitting:
        single = max(fitting, key=lambda index: (cards[index]["score"], -index))
        anchored = _fill(cards, order, [single], budget)
        if _value(cards, anchored) > _value(cards, chosen):
            chosen = anchored
    chosen.sort()
    used = sum(cards[index]["tokens"] for index in chosen)
    taken = set(chosen)
    smallest = min(card["tokens"] for index, card in enumerate(cards) if index not in taken)
    return [cards[index] for index in chosen], {"budget": budget, "tokens": used, "matched": len(cards),
                                                "dropped": len(cards) - len(chosen), "smallest_dropped": smallest}


def _fill(cards: list, order: list, chosen: list, budget: int) -> list:
    """`chosen` plus, in `order`, every card that still fits."""
    chosen = list(chosen)
    used = sum(cards[index]["tokens"] for index in chosen)
    for index in order:
        if index not in chosen and used + cards[index]["tokens"] <= budget:
            chosen.append(index)
            used += cards[index]["tokens"]
    return chosen


def _value(cards: list, chosen: list) -> float:
    return sum(cards[index]["score"] for index in chosen)
