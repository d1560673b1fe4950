"""Links that need no storage: event identity (seed R2G-5 SAME_AS) and keyword similarity (R2G-6 SIMILAR_TO).

The builder decides which nodes to compare; these functions only answer whether two extracted events are the
same one and which keyword sets are close enough, so that the rules are tested apart from the store.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date
from itertools import combinations

from memctl.language.timenorm import as_date, time_interval

SAME_EVENT_DAYS = 1  # R2G-5: "时间窗口相近（如 ±1d）"


@dataclass(frozen=True, slots=True)
class EventSignature:
    """What identifies an event: predicate, polarity, who did it to what, and when (a closed day interval)."""

    predicate: str
    negation: bool
    agents: frozenset
    patients: frozenset
    first_day: date | None
    last_day: date | None


def signature(fact, extraction, turn_time=None) -> EventSignature:
    """The signature of `fact` (an extract.Fact of `extraction`). An event without a resolved time happened
    on the day of its turn, when `turn_time` is given."""
    def fillers(role):
        names = set()
        for filler in fact.roles.get(role, ()):
            names.add(extraction.entities[filler.entity].normalized if filler.entity is not None else filler.text.lower())
        return frozenset(names)

    first_day = last_day = None
    if fact.time and fact.time.get("value"):
        first_day, last_day = time_interval(fact.time["value"], fact.time["granularity"])
    elif turn_time is not None:
        first_day = last_day = as_date(turn_time)
    return EventSignature(fact.predicate, fact.negation, fillers("AGENT"), fillers("PATIENT"), first_day, last_day)


def same_event(first: EventSignature, second: EventSignature, tolerance_days: int = SAME_EVENT_DAYS) -> bool:
    """R2G-5: same predicate and polarity, the main roles agree (each side names a common AGENT, and a common
    PATIENT when both name one), and the times lie within `tolerance_days` of each other. Two events without
    any time are not merged: nothing says they happened together."""
    if (first.predicate, first.negation) != (second.predicate, second.negation):
        return False
    if not (first.agents & second.agents) and (first.agents or second.agents):
        return False
    if first.patients and second.patients and not (first.patients & second.patients):
        return False
    if first.first_day is None or second.first_day is None:
        return False
    gap = max((second.first_day - first.last_day).days, (first.first_day - second.last_day).days, 0)
    return gap <= tolerance_days


def keyword_similarity(first: set, second: set) -> float:
    """Jaccard overlap of two keyword sets (case-folded by the caller)."""
    if not first or not second:
        return 0.0
    return len(first & second) / len(first | second)


def similar_pairs(keywords: dict, threshold: float = 0.3, cap: int = 8) -> list[tuple]:
    """(a, b, score) for node ids whose keyword sets overlap at or above `threshold`, best first, at most `cap`
    links per node (seed §22.1: SIMILAR_TO must not make the graph dense). Candidates come from an inverted
    index, so only nodes sharing a keyword are compared; keywords shared by more than a tenth of the nodes
    (and at least 50) are too common to propose candidates, though they still count in the overlap.

    The overlap of a candidate pair is counted while its postings are walked (one Counter update per keyword,
    in C) instead of intersecting the two sets for every pair: a long conversation proposes hundreds of
    thousands of pairs, most of them far below the threshold."""
    postings: dict[str, list] = defaultdict(list)
    for node, words in keywords.items():
        for word in words:
            postings[word].append(node)
    common = max(50, len(keywords) // 10)
    shared: Counter = Counter()
    frequent = set()
    for word, nodes in postings.items():
        if len(nodes) > common:
            frequent.add(word)
        elif len(nodes) > 1:
            shared.update(combinations(nodes, 2))
    frequent_of = {node: words & frequent for node, words in keywords.items()} if frequent else {}
    scored = []
    for (a, b), overlap in shared.items():
        if frequent_of:
            overlap += len(frequent_of[a] & frequent_of[b])
        score = overlap / (len(keywords[a]) + len(keywords[b]) - overlap)
        if score >= threshold:
            scored.append((a, b, score) if str(a) <= str(b) else (b, a, score))
    scored.sort(key=lambda item: (-item[2], str(item[0]), str(item[1])))
    degree: dict = defaultdict(int)
    pairs = []
    for a, b, score in scored:
        if degree[a] < cap and degree[b] < cap:
            pairs.append((a, b, score))
            degree[a] += 1
            degree[b] += 1
    return pairs
