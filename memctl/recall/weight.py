"""weight(node), seed 001 §6.1: how easily a memory comes back, independent of the query.

    weight = α·importance + β·log(1 + frequency) + γ·exp(−Δt / τ_type) + δ·emotion + ε·feedback − ζ·stale

Each term and the node prop it is computed from (README "Feedback, weight(node) and the event log" says who
writes each prop):
- importance: props.importance (R2G scores it per turn; an external agent may give it), 0.5 when absent;
- frequency: props.frequency, the number of mentions R2G merged into the node (1 when absent);
- recency: exp(−Δt/τ), Δt the reference time (now, or --now) minus props.recency (the latest evidence's time),
  τ weights.tau_days of the node type (Episode 14 d, Fact 90 d, Concept 180 d); timeless nodes get 0;
- emotion: the sentiment's arousal, or |valence| when that is larger (props.sentiment), at most 1;
- feedback: 1 for a pinned node (props.pinned) plus props.feedback (`memctl feedback --up/--down`), clipped to
  [0, 1];
- stale: 1 for a node another version replaced (props.superseded_by, or attributes.stale), else 0.
"""

from __future__ import annotations

import math

SECONDS_PER_DAY = 86400.0
DEFAULT_TAU_DAYS = 30.0
# term → (its coefficient's setting, its sign in the sum)
COEFFICIENTS = {"importance": ("alpha", 1.0), "frequency": ("beta", 1.0), "recency": ("gamma", 1.0),
                "emotion": ("delta", 1.0), "feedback": ("epsilon", 1.0), "stale": ("zeta", -1.0)}


def node_weight(props: dict, node_type: str | None, reference: float, weights) -> tuple[float, float]:
    """(weight, recency) of a node; `weights`: the weights settings."""
    terms = weight_terms(props, node_type, reference, weights)
    return weighted_sum(terms, weights), terms["recency"]


def explained_weight(props: dict, node_type: str | None, reference: float, weights) -> dict:
    """weight(node) with its terms and their signed coefficients (`memctl graph show`, `memctl feedback`)."""
    terms = weight_terms(props, node_type, reference, weights)
    return {"value": round(weighted_sum(terms, weights), 6),
            "terms": {name: round(value, 6) for name, value in terms.items()},
            "coefficients": {term: sign * weights[coefficient] for term, (coefficient, sign) in COEFFICIENTS.items()}}


def weighted_sum(terms: dict, weights) -> float:
    return sum(sign * weights[coefficient] * terms[term] for term, (coefficient, sign) in COEFFICIENTS.items())


def weight_terms(props: dict, node_type: str | None, reference: float, weights) -> dict:
    """The terms of weight(node) before their coefficients (frequency as log(1 + frequency))."""
    sentiment = props.get("sentiment") or {}
    emotion = max(abs(_number(sentiment.get("valence"), 0.0)), abs(_number(sentiment.get("arousal"), 0.0)))
    feedback = (1.0 if props.get("pinned") else 0.0) + max(_number(props.get("feedback"), 0.0), 0.0)
    attributes = props.get("attributes") or {}
    return {"importance": _number(props.get("importance"), 0.5),
            "frequency": math.log1p(max(_number(props.get("frequency"), 1.0), 0.0)),
            "recency": recency_of(props, node_type, reference, weights.tau_days),
            "emotion": min(emotion, 1.0),
            "feedback": min(feedback, 1.0),
            "stale": 1.0 if props.get("superseded_by") or attributes.get("stale") else 0.0}


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
