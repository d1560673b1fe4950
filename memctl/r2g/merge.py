"""Merging two mentions of one node (R2G-4: a duplicate raises `frequency` instead of adding a node).

The result does not depend on the order the mentions arrive in, so converting a conversation in one run, in
several incremental runs or with `--rebuild` gives the same node:
- frequency adds up; recency, importance and confidence take the maximum;
- raw_refs are the union, ordered by time, keeping the MAX_RAW_REFS most recent;
- keywords, entities, tags and the list attributes (aliases, triggers, expressions) are sorted unions;
- title, text, sentiment and the other attributes come from the earliest evidence (`attributes.first_seen`:
  [untimed, seconds, raw_id, offset]).
"""

from __future__ import annotations

from memctl.node_documents import epoch_seconds

MAX_RAW_REFS = 8  # a hub's other mentions stay reachable through its MENTIONS/ABOUT edges
MAX_LIST = 32
UNION_ATTRIBUTES = ("aliases", "triggers", "expressions")
# Types whose nodes gather many mentions; an Episode is one turn and a RawChunk one chunk: replaced, not merged.
MERGED_TYPES = frozenset({"Entity", "Fact", "Preference", "Concept"})


def evidence_key(ts: str | None, raw_id: str, offset: int) -> list:
    seconds = epoch_seconds(ts)
    return [seconds is None, seconds or 0.0, raw_id, offset]


def ref_order(ref: dict) -> tuple:
    seconds = epoch_seconds(ref.get("ts"))
    return seconds is None, seconds or 0.0, ref["raw_id"], ref["offset"]


def merge(node_type: str, versions: list) -> dict:
    """Props of a node from its stored props and this batch's mentions (full props dicts, not modified)."""
    if len(versions) == 1 or node_type not in MERGED_TYPES:
        return versions[-1]
    earliest = min(versions, key=lambda version: _first(version.get("attributes", {})))
    merged = dict(earliest)
    merged["frequency"] = sum(version.get("frequency", 1) for version in versions)
    merged["recency"] = max((version.get("recency") for version in versions), key=_recency_order)
    for name in ("importance", "confidence"):
        merged[name] = max(version.get(name, 0.0) for version in versions)
    merged["raw_refs"] = _merged_refs(ref for version in versions for ref in version.get("raw_refs", ()))
    for name in ("keywords", "entities", "tags"):
        values = _union(version.get(name) for version in versions)
        if values:
            merged[name] = values
    attributes = dict(earliest.get("attributes", {}))
    for name in UNION_ATTRIBUTES:
        if any(name in version.get("attributes", {}) for version in versions):
            attributes[name] = _union(version.get("attributes", {}).get(name) for version in versions)
    merged["attributes"] = attributes
    return merged


def _first(attributes: dict) -> list:
    return attributes.get("first_seen") or [True, float("inf"), "", 0]


def _recency_order(value) -> float:
    seconds = epoch_seconds(value)
    return float("-inf") if seconds is None else seconds


def _merged_refs(refs) -> list:
    unique = {(ref["raw_id"], ref["offset"], ref["length"]): ref for ref in refs}
    return sorted(unique.values(), key=ref_order)[-MAX_RAW_REFS:]


def _union(lists) -> list:
    values: set = set()
    for items in lists:
        if items:
            values.update(items)
    return sorted(values)[:MAX_LIST]
