"""The events a chain update emits (seed 001 §7.3, §9.3): ConflictDetected when two claims are found to
contradict, FactPromoted when a version comes into force, FactDemoted when it leaves it. They are written in
the batch that changes the chain, through the event log (memctl/event_log.py, issue 19's events part); a
memctl without that module keeps them in the update's result only."""

from __future__ import annotations

CONFLICT_DETECTED = "ConflictDetected"
FACT_PROMOTED = "FactPromoted"
FACT_DEMOTED = "FactDemoted"


def publish(batch, events: list) -> None:
    """Append (type, payload) pairs to the event log inside `batch`."""
    try:
        from memctl.event_log import append
    except ImportError:  # the event log is another part of issue 19: wired when both are merged
        return
    for event_type, payload in events:
        append(batch, event_type, payload)
