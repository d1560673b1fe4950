"""A claim asserted by hand (`memctl fact add`) or by an agent (structured JSONL): a slot Fact node of the
same key and shape as R2G's (memctl/r2g/emit.py `_slot_fact`), so that it joins the same chain, and the same
claim made by a conversation and by hand is one node whose evidence grows.

Everything is checked before the draft is touched: an unknown slot (with the closest names), a time that is
no ISO date, an unknown source, evidence that names no stored chunk or a span outside it are InputErrors.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from difflib import get_close_matches

from engine.errors import InputError
from memctl.facts.priority import SOURCES
from memctl.facts.versions import KINDS, STATED, chain_key
from memctl.model import NodeType, entity_id, node_id, normalize_text

CREATOR = "fact"  # provenance.creator: `r2g --rebuild` keeps these nodes (it removes r2g's and external's)
FIRST_PERSON = frozenset({"i", "me", "user", "我", "用户"})
FIRST_PERSON_NAMES = ("user", "用户")
SUBJECT_TYPE = "Person"
POLARITIES = ("stated", "negated", "ended")


@dataclass(frozen=True)
class Claim:
    subject: str  # canonical name
    subject_type: str
    slot: str
    value: str
    polarity: str
    kind: str
    since: str | None  # ISO date or date-time
    source: str
    evidence: dict | None  # a raw_ref {raw_id, offset, length, source_id, ts}

    def subject_key(self, tenant: str) -> str:
        return entity_id(tenant, self.subject, self.subject_type)

    def key(self, tenant: str) -> str:
        return node_id(NodeType.FACT, tenant, "slot", self.subject_key(tenant), self.slot,
                       normalize_text(self.value), self.polarity)

    def chain(self, tenant: str) -> str:
        return chain_key(self.subject_key(tenant), self.slot)


def checked_claim(subject: tuple, slot: str, value: str, since: str | None = None, source: str = "user",
                  evidence: dict | None = None, polarity: str = STATED, kind: str = "change") -> Claim:
    """subject: parsed_subject's (name, type)."""
    from memctl.language.slot_lexicon import slot_lexicon

    name, subject_type = subject
    slots = slot_lexicon().slots
    if slot not in slots:
        close = get_close_matches(slot, list(slots), n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(close)}?" if close else f"slots: {', '.join(sorted(slots))}"
        raise InputError(f"unknown slot {slot!r}: {hint} (the slot lexicon is memctl/data/slots.yaml, extended "
                         "by r2g.lexicon_directory)", where="SLOT")
    if not value.strip():
        raise InputError("VALUE is empty", where="VALUE")
    if source not in SOURCES:
        raise InputError(f"unknown source {source!r}: one of {', '.join(SOURCES)}", where="--source")
    if polarity not in POLARITIES or kind not in KINDS:
        raise InputError(f"polarity is one of {', '.join(POLARITIES)}, kind one of {', '.join(KINDS)}")
    return Claim(name, subject_type, slot, value.strip(), polarity, kind, checked_time(since), source,
                 evidence)


def parsed_subject(subject: str, known=None) -> tuple[str, str]:
    """(canonical name, entity type) of a SUBJECT argument. The first person (I, me, 我, user, 用户) is the
    user as R2G names a speaker: "user" or "用户", whichever known(name, type) finds in the store (the one of
    the argument's language when both or neither)."""
    subject_type, separator, name = subject.partition(":")
    if not separator:
        subject_type, name = SUBJECT_TYPE, subject
    name, subject_type = name.strip(), subject_type.strip()
    if not name or not subject_type:
        raise InputError("SUBJECT is a name or TYPE:NAME, e.g. Alice or Object:用户的猫", where="SUBJECT")
    if normalize_text(name) in FIRST_PERSON:
        names = FIRST_PERSON_NAMES if name.isascii() else FIRST_PERSON_NAMES[::-1]
        name = next((candidate for candidate in names if known and known(candidate, subject_type)), names[0])
    return name, subject_type


def checked_time(text: str | None, where: str = "--since") -> str | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InputError(f"{text!r} is not an ISO date or date-time (examples: 2024-05-01, 2024-05-01T09:30)",
                         where=where) from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment.isoformat() if len(text.strip()) > 10 else moment.date().isoformat()


def evidence_ref(raw, reference: str) -> dict:
    """The raw_ref of `--evidence RAW_REF` (raw_… or raw_…@OFFSET+LENGTH, as recall prints it), checked
    against the stored chunk (InputError when it names none or a span outside it)."""
    from memctl.raw_chunks import parse_reference

    raw_id, span, _ = parse_reference(reference)
    record = raw.get(raw_id)
    if record is None:
        raise InputError(f"no raw chunk {raw_id} (memctl raw list shows them)", where="--evidence")
    size = raw.describe(raw_id, record)["len_bytes"]
    offset, length = span if span is not None else (0, size)
    if offset + length > size:
        raise InputError(f"span {offset}+{length} is outside {raw_id} ({size} bytes)", where="--evidence")
    meta = record.get("meta") or {}
    return {"raw_id": raw_id, "offset": offset, "length": length, "source_id": meta.get("source_id"),
            "ts": meta.get("ts")}


def claim_props(tenant: str, claim: Claim, now: float, creator: str = CREATOR) -> dict:
    """The props of the claim's Fact node, shaped as R2G's slot facts (memctl/r2g/emit.py `_slot_fact`)."""
    from memctl.facts.versions import store_time
    from memctl.language.slot_lexicon import slot_lexicon
    from memctl.r2g.emit import props
    from memctl.r2g.merge import evidence_key

    label = slot_lexicon().slots[claim.slot].label("en" if claim.subject.isascii() else "zh")
    when = claim.since or store_time(now)
    ref = claim.evidence
    attributes = {"subject": claim.subject, "subject_type": claim.subject_type, "slot": claim.slot,
                  "slot_surface": label, "lexicon": True, "value": claim.value, "polarity": claim.polarity,
                  "kind": claim.kind, "source": claim.source,
                  "first_seen": evidence_key(when, ref["raw_id"] if ref else "", ref["offset"] if ref else 0)}
    prefix = {"ended": "formerly ", "negated": "not "}.get(claim.polarity, "")
    title = f"{claim.subject} {label}: {prefix}{claim.value}"
    return props(tenant, title=title, text=title, raw_refs=[ref] if ref else [], keywords=[label, claim.value],
                 entities=[claim.subject], recency=when, attributes=attributes, creator=creator)


def subject_props(tenant: str, claim: Claim, creator: str = CREATOR) -> dict:
    """The props of the claim's holder Entity, for a subject the store does not hold yet."""
    from memctl.r2g.emit import props

    return props(tenant, title=claim.subject, text=f"{claim.subject} ({claim.subject_type})", raw_refs=[],
                 keywords=[claim.subject], attributes={"entity_type": claim.subject_type,
                                                       "canonical": claim.subject, "aliases": []},
                 creator=creator)


def draft_claim(draft, tenant: str, claim: Claim, now: float) -> str:
    """Add the claim's Fact node, its holder Entity and their edges to `draft`; returns the Fact's key."""
    subject_key, key = claim.subject_key(tenant), claim.key(tenant)
    draft.node(key, "Fact", claim_props(tenant, claim, now))
    if draft.props(subject_key) is None:
        draft.node(subject_key, "Entity", subject_props(tenant, claim))
    draft.edge(key, "SUBJECT", subject_key, 1.0, 1.0)
    ref = claim.evidence
    if ref:
        draft.edge(key, "DERIVED_FROM", ref["raw_id"], 1.0, 1.0, properties={"offset": ref["offset"],
                                                                             "length": ref["length"]})
    return key
