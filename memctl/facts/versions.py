"""A slot Fact node as its chain sees it: which chain it belongs to, what it claims and when it was said.

World time (when a claim holds) comes from the statement itself: its own time words (attributes.time, the
first day the expression covers: "since March" → March 1st) when it has them, else the time of its first
evidence (attributes.first_seen). A claim made again later (raw_refs keep the most recent evidence) may open a
period of its own again: Boston → Denver → Boston is one Boston node with two periods (timeline.py).
A claim with no time at all is placed by when the store first recorded it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from memctl.model import entity_id, normalize_text
from memctl.node_documents import epoch_seconds

STATED, NEGATED, ENDED = "stated", "negated", "ended"
# attributes.kind (facts contract): set, change, end, add, stop; absent means set.
SET, CHANGE, END, ADD, STOP = "set", "change", "end", "add", "stop"
KINDS = (SET, CHANGE, END, ADD, STOP)
SEPARATOR = "|"


@dataclass(frozen=True, slots=True)
class Version:
    key: str
    value: str
    normalized: str  # the value's key form: two claims of one value compare equal
    polarity: str
    kind: str
    since: float  # epoch seconds: when the claim starts to hold in the world
    evidence: tuple  # epoch seconds of its later statements, ascending (each may open a period again)
    source: str
    frequency: int
    confidence: float
    recorded: float  # epoch seconds the store first recorded it (ties in world time go by it)


def chain_key(subject_key: str, slot: str) -> str:
    return f"{subject_key}{SEPARATOR}{slot}"


def subject_of(chain: str) -> str:
    return chain.rsplit(SEPARATOR, 1)[0]


def slot_of(chain: str) -> str:
    return chain.rsplit(SEPARATOR, 1)[1]


def is_slot_fact(node_type: str, props: dict | None) -> bool:
    attributes = (props or {}).get("attributes") or {}
    return node_type == "Fact" and "slot" in attributes and "subject" in attributes


def chain_of(tenant: str, props: dict) -> str:
    """The chain key of a slot Fact: its holder Entity's key (the SUBJECT edge's target), then the slot."""
    attributes = props["attributes"]
    return chain_key(entity_id(tenant, attributes["subject"], attributes["subject_type"]), attributes["slot"])


def version_of(key: str, props: dict, recorded: float) -> Version:
    """recorded: when the store first recorded the claim (epoch seconds)."""
    attributes = props["attributes"]
    first = _first_seen(attributes)
    since = _statement_time(attributes)
    if since is None:
        since = first if first is not None else recorded
    later = sorted({seconds for seconds in (epoch_seconds(ref.get("ts")) for ref in props.get("raw_refs", ()))
                    if seconds is not None and seconds > since})
    polarity = attributes.get("polarity", STATED)
    return Version(key, str(attributes.get("value", "")), normalize_text(str(attributes.get("value", ""))),
                   polarity, attributes.get("kind") or SET, since, tuple(later), source_of(props),
                   int(props.get("frequency", 1)), float(props.get("confidence", 1.0)), recorded)


def source_of(props: dict) -> str:
    """Who asserted the claim: `fact add --source`, else what created the node (r2g, external)."""
    return (props.get("attributes") or {}).get("source") or (props.get("provenance") or {}).get("creator") or "r2g"


def iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    moment = datetime.fromtimestamp(seconds, timezone.utc)
    if moment.hour == moment.minute == moment.second == 0:
        return moment.date().isoformat()
    return moment.replace(microsecond=0, tzinfo=None).isoformat()


def store_time(seconds: float) -> str:
    """The store's clock as recorded_at / expired_at: UTC ISO, whole seconds."""
    return _whole_second(seconds).strftime("%Y-%m-%dT%H:%M:%SZ")


def whole_second(seconds: float) -> float:
    """`seconds` as recorded_seconds reads it back from store_time's form."""
    return _whole_second(seconds).timestamp()


def _whole_second(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, timezone.utc).replace(microsecond=0)


def recorded_seconds(node, now: float) -> float:
    """When a claim was recorded: the recorded_at a chain write gave it, else its node's creation (a claim
    written before chains), else `now` (a claim this batch creates). Read back from recorded_at rather than
    created_at, which the commit sets a moment after the chain write: a claim written at 12:00:00.9 and
    created at 12:00:01.0 would otherwise be rewritten by the next batch for a recorded_at one second on."""
    if node is None:
        return now
    recorded = ((node.props or {}).get("attributes") or {}).get("recorded_at")
    if isinstance(recorded, str):
        return datetime.strptime(recorded, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
    return node.created_at


def _first_seen(attributes: dict) -> float | None:
    first = attributes.get("first_seen")
    if not first or first[0]:  # [untimed, seconds, raw_id, offset]
        return None
    return float(first[1])


def _statement_time(attributes: dict) -> float | None:
    from memctl.language.timenorm import time_interval

    time = attributes.get("time") or {}
    if not time.get("value"):
        return None
    try:
        first_day = time_interval(time["value"], time.get("granularity", "day"))[0]
    except ValueError:
        return None
    return datetime(first_day.year, first_day.month, first_day.day, tzinfo=timezone.utc).timestamp()
