"""What a card says about a fact version (issue 19): stale versions are never presented as current.

Every card of a slot Fact that belongs to a chain (attributes.chain) gets a "version" field:
{"chain", "slot", "subject", "value", "state", "valid_since", "valid_until", "current"}; "current" is true only
for a version in force in the store (state "active", a value that holds). A card that is not current has its
title marked: "formerly: …" (superseded), "no longer: …" (ended), "contested: …" (in the review queue),
"rejected: …", with "(until DAY)" when the version has an end. The card a slot question chose first
(memctl.recall.versions) also gets "chosen" (current, past, previous, when) and "reason", and a title that
says what held when: "Maria · residence: Denver (since 2023-05-06; formerly Boston)",
"formerly: Maria · residence: Boston (2022-01-10 – 2023-05-06; then Denver)".
"""

from __future__ import annotations

MARKS = {"superseded": "formerly", "ended": "no longer", "contested": "contested", "rejected": "rejected"}
ENDING_KINDS = ("end", "stop")


def version_field(props: dict) -> dict | None:
    """The card's "version" field of a node, or None when it is no chain version."""
    attributes = props.get("attributes") or {}
    chain = attributes.get("chain")
    if not isinstance(chain, str):
        return None
    state = attributes.get("state") or ("superseded" if props.get("superseded_by") else "active")
    ends = attributes.get("polarity") == "ended" or attributes.get("kind") in ENDING_KINDS
    holds = not ends and attributes.get("polarity") != "negated"
    return {"chain": chain, "slot": attributes.get("slot"), "subject": attributes.get("subject"),
            "value": attributes.get("value"), "state": "ended" if ends and state == "active" else state,
            "valid_since": attributes.get("valid_since"), "valid_until": attributes.get("valid_until"),
            "current": state == "active" and holds and not attributes.get("valid_until")}


def marked_title(title: str | None, version: dict | None) -> str | None:
    """`title`, marked when the node is a version not in force (see the module docstring)."""
    if version is None or version["current"]:
        return title
    mark = MARKS.get(version["state"], "no longer")
    until = f" (until {day(version['valid_until'])})" if version.get("valid_until") else ""
    return f"{mark}: {title or ''}{until}"


def chosen_title(version, chain, label: str) -> str:
    """The title of the card a slot question chose: `version` (memctl.recall.versions.Version) of `chain`."""
    subject = version.attributes.get("subject") or ""
    field = version_field(version.props)
    older, newer = chain.before(version), chain.after(version)
    value = version.value or (older.value if older is not None and version.ends else "")  # "分手了" names none
    head = f"{subject} · {label}: {value}"
    if version.ends:
        return f"no longer: {head} (ended {day(version.attributes.get('valid_since'))})"
    span = day(version.attributes.get("valid_since"))
    if field["current"]:
        formerly = f"; formerly {older.value}" if older is not None else ""
        return f"{head} (since {span}{formerly})"
    until = day(field.get("valid_until"))
    then = f"; then {newer.value}" if newer is not None and newer.holds else ""
    return f"{MARKS.get(field['state'], 'no longer')}: {head} ({span} – {until}{then})"


def day(moment) -> str:
    """The day of an ISO time, "?" for none."""
    return moment[:10] if isinstance(moment, str) and moment else "?"
