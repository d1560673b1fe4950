"""Ranking (seed 001 §5.3, §18): per-stage normalisation, the λ blend of the stages that ran, clause coverage,
optional MMR, and folding Facts/Preferences into the Episode they came from.

    final = λ_bm25·K/max K + λ_vec·V/max V + λ_ppr·P/max P + λ_weight·W/max W

K is the keyword stage: stage A's BM25F (× speaker prior) plus stage C's reply hop, or the raw passage score
for a raw-only hit, or the boolean filter's match share in the pure-graph mode; V the vector stage (not built
yet: always absent); P the PPR score; W weight(node) (§6.1). λ of a stage that did not run is dropped and the
others renormalised to sum 1 (§18 variants, named in the trace). `recall.lambda` defaults are measured, not the
seed's appendix-A values, which lose 0.05 Recall@10 on LoCoMo dev: see memctl/settings/schema.py and RESULTS.md.

Clause coverage (multi-sentence queries, `recall.clause_coverage` g): over the best `coverage_pool`
candidates, pick greedily; a clause's share of a candidate's keyword score counts g^c, c being how much of that
clause the candidates already picked cover. "What did she buy on Monday? And where?" then gets turns for each
clause, not five for the first. MemDaily dev: +0.014 Recall@5.
"""

from __future__ import annotations

from dataclasses import dataclass, field

STAGES = ("bm25", "vec", "ppr", "weight", "recency")


@dataclass
class Candidate:
    key: str
    type: str | None
    keyword: float = 0.0  # stage A (+ reply hop), raw, or filter score, unnormalised
    term_part: float = 0.0  # the part of `keyword` owed to the query's own words (not the reply hop)
    raw: float = 0.0
    ppr: float = 0.0
    weight: float = 0.0
    recency: float = 0.0
    timestamp: float | None = None
    terms: list = field(default_factory=list)
    docno: int | None = None  # its NodeIndex document, when stage A found it there
    fields: dict | None = None  # term → where it matched, when stage A knew it already (the graph filter)
    raw_hit: object = None  # RawHit when the raw fallback found this node or passage
    via: tuple | None = None  # (parent key, edge type, kind) when the graph brought it in
    scores: dict = field(default_factory=dict)  # normalised stage scores, for output
    final: float = 0.0
    supports: list = field(default_factory=list)  # keys of Facts/Preferences folded into this card
    source_episode: str | None = None  # Facts/Preferences: the Episode they derive from


def variant(lambdas: dict, available: set, keyword_source: str = "A") -> tuple[str, dict]:
    """(name, λ renormalised over the available stages). The name lists the stages as §18 does, the keyword
    stage named by its source: A (NodeIndex BM25), G (graph filter, no index), R (raw passages only)."""
    chosen = {stage: float(lambdas.get(stage, 0.0)) for stage in STAGES if stage in available}
    total = sum(value for value in chosen.values() if value > 0)
    if total <= 0:
        chosen = {"bm25": 1.0} if "bm25" in available else {stage: 1.0 for stage in available}
        total = sum(chosen.values())
    name = "→".join(part for stage, part in (("bm25", keyword_source), ("vec", "B"), ("ppr", "C"))
                    if stage in available)
    return name or "W", {stage: value / total for stage, value in chosen.items() if value > 0}


def blend(candidates: list, weights: dict, time_windows: list, time_boost: float) -> None:
    """final per candidate; `scores` holds each stage's normalised value (for output)."""
    columns = {"bm25": [candidate.keyword for candidate in candidates],
               "ppr": [candidate.ppr for candidate in candidates],
               "weight": [max(candidate.weight, 0.0) for candidate in candidates],
               "recency": [candidate.recency for candidate in candidates]}
    scales = {stage: (1.0 / top if top > 0 else 0.0) for stage, top in
              ((stage, max(values, default=0.0)) for stage, values in columns.items())}
    used = [(weights[stage] * scales[stage], columns[stage]) for stage in columns if weights.get(stage)]
    term_scale = weights.get("bm25", 0.0) * scales["bm25"]
    for index, candidate in enumerate(candidates):
        candidate.scores = {stage: columns[stage][index] * scales[stage] for stage in columns}
        candidate.scores["vec"] = 0.0
        final = 0.0
        for factor, values in used:
            final += factor * values[index]
        if time_boost and time_windows and _in_windows(candidate.timestamp, time_windows):
            final *= 1.0 + time_boost
        candidate.final = final
        candidate.term_part *= term_scale


def _in_windows(timestamp, windows: list) -> bool:
    if timestamp is None:
        return False
    return any((start is None or timestamp >= start) and (end is None or timestamp <= end) for start, end in windows)


def order(candidates: list) -> list:
    return sorted(candidates, key=lambda candidate: (-candidate.final, candidate.key))


def clause_select(ranked: list, clause_scores: list, g: float, pool: int) -> list:
    """Greedy clause coverage over the first `pool` of `ranked`; clause_scores: [{key: BM25 of the clause}]."""
    if g >= 1.0 or len(clause_scores) < 2 or len(ranked) < 2:
        return ranked
    head, tail = ranked[:pool], ranked[pool:]
    parts = []
    for candidate in head:
        raw = [scores.get(candidate.key, 0.0) for scores in clause_scores]
        total = sum(raw)
        parts.append([candidate.term_part * value / total if total > 0 else 0.0 for value in raw])
    best = [max(max(column), 1e-12) for column in zip(*parts)]
    cover = [0.0] * len(clause_scores)
    chosen, available = [], list(range(len(head)))
    while available:
        def value(index):
            candidate = head[index]
            other = candidate.final - candidate.term_part
            return other + sum(part * g ** covered for part, covered in zip(parts[index], cover))
        pick = max(available, key=lambda index: (value(index), -index))
        available.remove(pick)
        chosen.append(head[pick])
        cover = [covered + part / top for covered, part, top in zip(cover, parts[pick], best)]
    return chosen + tail


def mmr(ranked: list, similarity, lam: float, limit: int) -> list:
    """Maximal marginal relevance over the first `limit`: λ·final − (1 − λ)·max similarity to those chosen."""
    head, tail = ranked[:limit], ranked[limit:]
    chosen: list = []
    remaining = list(head)
    while remaining:
        def value(candidate):
            penalty = max((similarity(candidate, other) for other in chosen), default=0.0)
            return lam * candidate.final - (1.0 - lam) * penalty
        pick = max(remaining, key=lambda candidate: (value(candidate), candidate.final))
        remaining.remove(pick)
        chosen.append(pick)
    return chosen + tail


def fold_supports(ranked: list) -> list:
    """Facts/Preferences whose Episode is also ranked become that Episode's supports; the Episode takes the
    higher of the two scores and the earlier of the two places."""
    position = {candidate.key: index for index, candidate in enumerate(ranked)}
    folded = set()
    for candidate in ranked:
        episode = candidate.source_episode
        if episode is None or episode not in position:
            continue
        target = ranked[position[episode]]
        target.supports.append(candidate.key)
        if candidate.final > target.final:
            target.final = candidate.final
        folded.add(candidate.key)
    kept = [candidate for candidate in ranked if candidate.key not in folded]
    return sorted(kept, key=lambda candidate: (-candidate.final, candidate.key))
