"""Seed 002's memory operations on facts, as lines of the structured JSONL input (`memctl r2g --from jsonl`,
memctl/r2g/external.py): an agent's claims join the same chains as R2G's and `fact add`'s.

    {"op": "ADD", "fact": {"subject", "slot", "value", "since"?, "source"?, "raw_refs"?}, "ref"?}
    {"op": "UPDATE", "id": FACT, "fact": {"value", "since"?, "source"?, "raw_refs"?}, "ref"?}
    {"op": "DELETE", "id": FACT, "since"?, "ref"?}

ADD asserts SUBJECT's SLOT is VALUE (a change statement: it supersedes the value in force of a single-valued
slot); UPDATE ("删旧加新") asserts a new value of the chain of fact FACT (a node id, or the ref of an earlier
line); DELETE ends the version FACT: nothing is deleted, an "ended" claim of its value (an end, or a stop of a
multi-valued slot's value) closes its period, so history stays queryable. `since` (ISO) is when the change
happens, else the line's "ts", else the time of the import; `source` one of facts.source_trust's names (default
agent). BOOST is no fact operation: `memctl feedback ID --up` gives a memory its boost.
"""

from __future__ import annotations

import time

from engine.errors import InputError

OPERATIONS = ("ADD", "UPDATE", "DELETE")
LINE_FIELDS = {"op", "id", "fact", "since", "ts", "ref", "tenant_id", "tenant"}
FACT_FIELDS = {"subject", "slot", "value", "since", "source", "raw_refs"}


def fact_operation(validator, line: dict) -> str:
    """Add the operation's claim to the validator's plan (Fact node, holder Entity, SUBJECT edge); returns the
    claim's key. A bad line is a ValueError (the validator names the line)."""
    from memctl.facts.claims import claim_props, subject_props

    unknown = set(line) - LINE_FIELDS
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))} of an op line "
                         f"({', '.join(sorted(LINE_FIELDS))})")
    operation = str(line.get("op", "")).upper()
    if operation not in OPERATIONS:
        raise ValueError(f"unknown op {line.get('op')!r}: {', '.join(OPERATIONS)} (BOOST is `memctl feedback ID --up`)")
    try:
        claim = _claim(validator, operation, line)
    except InputError as error:
        raise ValueError(str(error)) from None
    tenant, now = validator.tenant, time.time()
    key, subject_key = claim.key(tenant), claim.subject_key(tenant)
    validator.plan.nodes[key] = ["Fact", claim_props(tenant, claim, now, creator="external"), None]
    if subject_key not in validator.plan.nodes and not validator.graph.node(subject_key):
        validator.plan.nodes[subject_key] = ["Entity", subject_props(tenant, claim, creator="external"), None]
    validator.plan.edges.append((key, "SUBJECT", subject_key, 1.0, 1.0, None))
    return key


def _claim(validator, operation: str, line: dict):
    from memctl.facts.claims import checked_claim, parsed_subject
    from memctl.facts.maintain import multi_valued
    from memctl.model import entity_id

    since = line.get("since") or line.get("ts")
    if operation == "DELETE":
        base = _version(validator, line.get("id"))
        kind = "stop" if multi_valued(base["slot"]) else "end"
        return checked_claim((base["subject"], base["subject_type"]), base["slot"], base["value"], since, "agent",
                             polarity="ended", kind=kind)
    fields = line.get("fact")
    if not isinstance(fields, dict) or set(fields) - FACT_FIELDS:
        raise ValueError(f"fact must be a JSON object of {', '.join(sorted(FACT_FIELDS))}")
    evidence = [validator.raw_ref(ref, index) for index, ref in enumerate(fields.get("raw_refs") or [])][:1]
    if operation == "ADD":
        graph, tenant = validator.graph, validator.tenant
        subject = parsed_subject(str(fields.get("subject") or ""),
                                 lambda name, kind: graph.node(entity_id(tenant, name, kind)) is not None)
        slot = str(fields.get("slot") or "")
    else:
        base = _version(validator, line.get("id"))
        subject, slot = (base["subject"], base["subject_type"]), base["slot"]
    return checked_claim(subject, slot, str(fields.get("value") or ""), fields.get("since") or since,
                         str(fields.get("source") or "agent"), evidence[0] if evidence else None)


def _version(validator, reference) -> dict:
    """The attributes of the slot Fact `reference` names (a node id or an earlier line's ref)."""
    key = validator.endpoint(reference, "id")
    entry = validator.plan.nodes.get(key)
    props = entry[1] if entry is not None else validator.graph.node(key).props
    attributes = props.get("attributes") or {}
    if "slot" not in attributes or "subject" not in attributes:
        raise ValueError(f"id {reference!r} is no slot fact (memctl fact list shows them)")
    return attributes
