"""prio(version) = a·source_trust + b·recency + c·evidence_support + d·consistency (seed 001 §7.2), which decides
between two claims that cannot both hold. Weights, source trust and the review margin are settings `facts.*`.

- source_trust: facts.source_trust of who asserted the claim (versions.source_of);
- recency: 0.5 ** (age / facts.recency_half_life_days), the age counted from the newer claim of the pair, so
  the newer one scores 1 and a claim made months earlier next to nothing, while two claims days apart stay close;
- evidence_support: 1 − 0.5 ** frequency (one statement 0.5, two 0.75, three 0.875: more evidence, less gain);
- consistency: the claim's confidence, the highest of its statements' (R2G lowers it for hedged or indirect
  statements, `fact add` takes 1): how firmly its evidence states it.
"""

from __future__ import annotations

from dataclasses import dataclass

DAY = 86400.0
# The names facts.source_trust accepts: who can assert a claim (`fact add --source`).
SOURCES = ("user", "agent", "r2g", "external")


@dataclass(frozen=True, slots=True)
class Priority:
    source_trust: float
    recency: float
    evidence_support: float
    consistency: float
    total: float

    def terms(self) -> dict:
        return {"source_trust": self.source_trust, "recency": self.recency,
                "evidence_support": self.evidence_support, "consistency": self.consistency, "prio": self.total}


def priority(version, since: float, newest: float, settings) -> Priority:
    """settings: the `facts` View. since: the start of the period the claim is weighed for."""
    weights = settings.weights
    trust = settings.source_trust.get(version.source, settings.default_trust)
    recency = 0.5 ** (max(newest - since, 0.0) / (settings.recency_half_life_days * DAY))
    support = 1.0 - 0.5 ** max(version.frequency, 1)
    consistency = min(max(version.confidence, 0.0), 1.0)
    total = (weights.source_trust * trust + weights.recency * recency + weights.evidence_support * support
             + weights.consistency * consistency)
    return Priority(*(round(value, 4) for value in (trust, recency, support, consistency, total)))
