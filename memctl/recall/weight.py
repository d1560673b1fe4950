"""weight(node), seed 001 §6.1: how easily a memory comes back, independent of the query.

    weight = α·importance + β·log(1 + frequency) + γ·exp(−Δt / τ_type) + δ·emotion + ε·feedback − ζ·stale

importance, frequency and sentiment are node props (R2G writes them); Δt is the reference time (now, or
--now) minus the node's `recency`, τ_type is weights.tau_days of the node type (Episode 14 d, Fact 90 d,
Concept 180 d); emotion is the sentiment's arousal, or |valence| when that is larger; feedback is 1 for a
pinned node (props.pinned) plus props.feedback (upvotes, clipped to [0, 1]); stale is 1 for a node another
version replaced (props.superseded_by, or attributes.stale). Timeless nodes get recency 0.
"""

from __future__ import annotations

import math

SECONDS_PER_DAY = 86400.0
DEFAULT_TAU_DAYS = 30.0


def node_weight(props: dict, node_type: str | None, reference: float, weights) -> tuple[float, float]:
    """(weight, recency) of a node; `weights`: the weights settings."""
    recency = recency_of(props, node_type, reference, weights.tau_days)
    importance = _number(props.get("importance"), 0.5)
    frequency = max(_number(props.get("frequency"), 1.0), 0.0)
    sentiment = props.get("sentiment") or {}
    emotion = max(abs(_number(sentiment.get("valence"), 0.0)), abs(_number(sentiment.get("arousal"), 0.0)))
    feedback = min(1.0, (1.0 if props.get("pinned") else 0.0) + max(_number(props.get("feedback"), 0.0), 0.0))
    attributes = props.get("attributes") or {}
    stale = 1.0 if props.get("superseded_by") or attributes.get("stale") else 0.0
    value = (weights["alpha"] * importance + weights["beta"] * math.log1p(frequency) + weights["gamma"] * recency
             + weights["delta"] * min(emotion, 1.0) + weights["epsilon"] * feedback - weights["zeta"] * stale)
    return value, recency


def recency_of(props: dict, node_type: str | None, reference: float, tau_days) -> float:
    from memctl.node_documents import epoch_seconds

    moment = props.get("recency")
    seconds = epoch_seconds(moment) if isinstance(moment, str) else _number(moment, None)
    if seconds is None:
        return 0.0
    tau = float(tau_days.get(node_type or "", DEFAULT_TAU_DAYS)) * SECONDS_PER_DAY
    return math.exp(-max(reference - seconds, 0.0) / tau)


def _number(value, default):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return default
    return float(value)
