"""The `r2g` settings as one frozen object, read once per conversion from the configuration.

Every default lives in memctl.config.DEFAULTS (section r2g); `from_config(None)` reads them, so the builder,
the external import and the evaluation tools share one source.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class R2GSettings:
    batch_turns: int
    source_trust: float
    external_trust: float
    untimed_recency_boost: float
    similar_threshold: float
    similar_cap: int
    same_event_days: int
    edge_weight: tuple  # (confidence, source_trust, recency_boost) of R2G-4's edge weight formula
    importance: dict  # memctl.r2g.extract.importance's parameters
    lexicon_directory: str | None

    @classmethod
    def from_config(cls, config) -> "R2GSettings":
        from memctl.config import load

        section = (load() if config is None else config).section("r2g")
        weights = section["edge_weight"]
        return cls(batch_turns=max(1, int(section["batch_turns"])), source_trust=float(section["source_trust"]),
                   external_trust=float(section["external_trust"]),
                   untimed_recency_boost=float(section["untimed_recency_boost"]),
                   similar_threshold=float(section["similar_threshold"]), similar_cap=int(section["similar_cap"]),
                   same_event_days=int(section["same_event_days"]),
                   edge_weight=(float(weights["confidence"]), float(weights["source_trust"]),
                                float(weights["recency_boost"])),
                   importance=dict(section["importance"]), lexicon_directory=section["lexicon_directory"])
