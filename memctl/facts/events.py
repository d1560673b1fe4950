"""The events a chain update emits (seed 001 §7.3, §9.3): ConflictDetected when two claims are found to
contradict, FactPromoted when a version comes into force, FactDemoted when it leaves it. They are written in
the batch that changes the chain, through the event log (memctl/event_log.py)."""

from __future__ import annotations

CONFLICT_DETECTED = "ConflictDetected"
FACT_PROMOTED = "FactPromoted"
FACT_DEMOTED = "FactDemoted"


def publish(batch, events: list) -> None:
    """Append (type, payload) pairs to the event log inside `batch`."""
    from memctl.event_log import append

    for event_type, payload in events:
        append(batch, event_type, payload)
