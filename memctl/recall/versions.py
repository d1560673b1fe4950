"""Version chains as recall reads them (issue 19): a holder's slot facts, their chains, and the version a slot
question asks for.

Recall reads only what the facts contract fixes, never the chain builder's code: a version is a slot Fact whose
attributes hold `chain` ("<holder entity key>|<slot>"), `valid_since` / `valid_until` (ISO, world time) and
`state` (active, superseded, ended, contested, rejected); `ACTIVE_OF` holder → each version in force;
`VERSION_NEXT` older → next version; `SUBJECT` Fact → holder. A holder's versions are the targets of its
ACTIVE_OF edges and the sources of its SUBJECT edges that carry a chain, completed along VERSION_NEXT; a chain is
in VERSION_NEXT order (valid_since, then key, where the edges leave a gap).

A version "holds" unless it is an end marker (polarity "ended", or kind "end" / "stop": the statement that a
value ended), a negation, or rejected. The choice, per kind of question (memctl.recall.slot_question):
- current: the ACTIVE_OF versions when all of them started by the reference time, else the versions valid at
  the reference time (a store may hold statements dated after a --now in the past); none in force (the last
  value ended): the latest end marker, or the latest version, which the card then shows as no longer holding.
- past: the version whose [valid_since, valid_until) overlaps the question's interval most (a multi-valued
  slot: every overlapping one); none: nothing is chosen and recall is unchanged.
- previous: the version before the one the question names, or before the current one.
- when: the version whose value the question names (an end: the end marker of that value, else, for a
  single-valued slot, the version that replaced it); no value named: the latest change (a version with a
  predecessor; a chain of one version has none), or the latest end for an end, unless the question names
  another Entity ("when did Tom move to Baltimore?" with no Baltimore in the chain: the chain does not know);
  its evidence says when. Whenever nothing is chosen, recall is left unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ENDING_KINDS = ("end", "stop")
FIRST_PERSON = {"en": re.compile(r"\b(?:my|i|me|mine|i'm|i've)\b", re.IGNORECASE), "zh": re.compile("我")}
USER_NAMES = ("user", "用户")  # the holder R2G gives a first-person statement without a speaker
MIN_VALUE_CHARACTERS = 2


@dataclass
class Version:
    key: str
    props: dict
    active: bool  # an ACTIVE_OF edge from the holder reaches it
    since: float | None = None
    until: float | None = None

    def __post_init__(self):
        from memctl.node_documents import epoch_seconds

        self.since = epoch_seconds(_text(self.attributes.get("valid_since")))
        self.until = epoch_seconds(_text(self.attributes.get("valid_until")))

    @property
    def attributes(self) -> dict:
        return self.props.get("attributes") or {}

    @property
    def value(self) -> str:
        return str(self.attributes.get("value") or "")

    @property
    def state(self) -> str:
        return str(self.attributes.get("state") or ("active" if self.active else "superseded"))

    @property
    def ends(self) -> bool:
        return self.attributes.get("polarity") == "ended" or self.attributes.get("kind") in ENDING_KINDS

    @property
    def holds(self) -> bool:
        return not self.ends and self.attributes.get("polarity") != "negated" and self.state != "rejected"

    def covers(self, moment: float) -> bool:
        return (self.since is None or self.since <= moment) and (self.until is None or moment < self.until)

    def overlap(self, start: float, end: float) -> float:
        """Seconds of [start, end] the version held (an instant: 1 when it held then, else 0)."""
        if start >= end:
            return 1.0 if self.covers(start) else 0.0
        first = start if self.since is None else max(start, self.since)
        last = end if self.until is None else min(end, self.until)
        return max(last - first, 0.0)

    def named_in(self, folded_text: str) -> bool:
        from memctl.model import normalize_text

        names = {normalize_text(self.value), normalize_text(str(self.attributes.get("value_entity") or ""))}
        return any(len(name) >= MIN_VALUE_CHARACTERS and name in folded_text for name in names)


@dataclass
class Chain:
    key: str
    holder: str
    slot: str
    versions: list  # Version, oldest first

    def before(self, version: Version) -> Version | None:
        index = self.versions.index(version)
        return next((older for older in reversed(self.versions[:index]) if older.holds), None)

    def after(self, version: Version) -> Version | None:
        index = self.versions.index(version)
        return self.versions[index + 1] if index + 1 < len(self.versions) else None


@dataclass
class Choice:
    question: object  # memctl.recall.slot_question.SlotQuestion
    chain: Chain
    chosen: list  # Version, the answer first
    reason: str
    consulted: list = field(default_factory=list)  # chain keys looked at, in order


class ChainReader:
    """The chains of one store snapshot, read through the graph (see the module docstring)."""

    def __init__(self, graph, nodes):
        self.graph = graph
        self.nodes = nodes
        self._chains: dict = {}

    def chains(self, holder: str) -> dict:
        """{slot: Chain} of a holder Entity."""
        found = self._chains.get(holder)
        if found is None:
            found = self._chains[holder] = self._read(holder)
        return found

    def _read(self, holder: str) -> dict:
        active = set(self._linked(holder, "out", "ACTIVE_OF"))
        keys = list(dict.fromkeys([*active, *self._linked(holder, "in", "SUBJECT")]))
        versions = {key: Version(key, self.nodes.props(key), key in active) for key in keys
                    if self.nodes.attribute(key, "chain")}
        following: dict = {}
        pending = list(versions)
        while pending:  # VERSION_NEXT both ways: a version reached only through its chain still belongs
            key = pending.pop()
            for direction in ("out", "in"):
                for neighbour in self._linked(key, direction, "VERSION_NEXT"):
                    if direction == "out":
                        following.setdefault(key, neighbour)
                    if neighbour not in versions and self.nodes.attribute(neighbour, "chain"):
                        versions[neighbour] = Version(neighbour, self.nodes.props(neighbour), neighbour in active)
                        pending.append(neighbour)
        grouped: dict = {}
        for version in versions.values():
            grouped.setdefault(version.attributes["chain"], []).append(version)
        chains = {}
        for key, members in grouped.items():
            slot = str(members[0].attributes.get("slot") or key.rpartition("|")[2])
            chains[slot] = Chain(key, holder, slot, _ordered(members, following))
        return chains

    def _linked(self, key: str, direction: str, edge_type: str) -> list:
        if not self.nodes.exists(key):
            return []
        return [row["key"] for row in self.graph.neighbors(key, direction, [edge_type]).rows()]


def _ordered(members: list, following: dict) -> list:
    """Chain order: VERSION_NEXT from each version without a predecessor, the starts by valid_since; versions
    the walk does not reach (a cycle) last, by valid_since."""
    by_key = {version.key: version for version in members}
    targets = {following[key] for key in by_key if following.get(key) in by_key}
    starts = sorted((version for version in members if version.key not in targets), key=_time_order)
    ordered: list = []
    seen: set = set()
    for start in starts:
        key = start.key
        while key in by_key and key not in seen:
            seen.add(key)
            ordered.append(by_key[key])
            key = following.get(key)
    return ordered + sorted((version for version in members if version.key not in seen), key=_time_order)


def _time_order(version: Version) -> tuple:
    return (version.since if version.since is not None else float("-inf"), version.key)


def holders(text: str, language: str, entities: list, tenant: str, nodes) -> list:
    """Entity keys the question is about: the Entities it names (longest first), then the user for "my" / 我."""
    from memctl.model import entity_id

    found = [entity["id"] for entity in entities]
    if FIRST_PERSON[language].search(text):
        for name in USER_NAMES:
            key = entity_id(tenant, name, "Person")
            if nodes.exists(key):
                found.append(key)
    return list(dict.fromkeys(found))


def choose(question, holder_keys: list, reader: ChainReader, text: str, reference: float, entities=()) \
        -> Choice | None:
    """The version(s) `question` asks for: the first holder and slot with a chain that gives an answer.
    `entities`: the Entities the question names ({"id", "name"}): their canonical names match values too
    (杭州 → Hangzhou)."""
    from memctl.model import normalize_text

    folded = normalize_text(" ".join([text, *(entity["name"] for entity in entities)]))
    consulted: list = []
    for holder in holder_keys:
        chains = reader.chains(holder)
        if not chains:
            continue
        names_another = any(entity["id"] != holder for entity in entities)
        candidates = [chains[slot] for slot in question.slots if slot in chains]
        if question.kind == "when":  # a chain holding the value the question names first, the slot's first
            named = [chain for chain in chains.values() if any(version.named_in(folded) for version in chain.versions)]
            ordered = [chain for chain in named if chain.slot in question.slots] + named + candidates
            candidates = list({chain.key: chain for chain in ordered}.values())
        for chain in candidates:
            consulted.append(chain.key)
            picked = _pick(question, chain, folded, reference, names_another)
            if picked is not None:
                return Choice(question, chain, picked[0], picked[1], consulted)
    return Choice(question, None, [], "no chain answers", consulted) if consulted else None


def _pick(question, chain: Chain, folded: str, reference: float, names_another: bool):
    if question.kind == "current":
        return _current(chain, reference)
    if question.kind == "past":
        return _past(chain, *question.window, question.time_expression)
    if question.kind == "previous":
        return _previous(chain, folded, reference)
    return _when(chain, folded, question.ending, names_another)


def _current(chain: Chain, reference: float):
    active = [version for version in chain.versions if version.active and version.holds]
    if active and all(version.since is None or version.since <= reference for version in active):
        return _latest_first(active), "in force (ACTIVE_OF)"
    valid = [version for version in chain.versions if version.holds and version.covers(reference)]
    if valid:
        return _latest_first(valid), "valid at the reference time"
    past = [version for version in chain.versions if version.since is None or version.since <= reference]
    if not past:
        return None
    ended = [version for version in past if version.ends]
    last = (ended or past)[-1]
    return [last], "nothing in force: the last value ended"


def _past(chain: Chain, start: float, end: float, expression: str | None):
    scored = [(version.overlap(start, end), version) for version in chain.versions if version.holds]
    scored = [(overlap, version) for overlap, version in scored if overlap > 0]
    if not scored:
        return None
    scored.sort(key=lambda item: (-item[0], -(item[1].since or float("-inf"))))
    multi = _multi_valued(chain.slot)
    chosen = [version for _, version in scored] if multi else [scored[0][1]]
    return chosen, f"valid at {expression}" if expression else "valid then"


def _previous(chain: Chain, folded: str, reference: float):
    named = [version for version in chain.versions if version.holds and version.named_in(folded)]
    anchor = named[-1] if named else None
    if anchor is None:
        current = _current(chain, reference)
        anchor = current[0][0] if current else None
    older = chain.before(anchor) if anchor is not None else None
    if older is None:
        return None
    return [older], f"the version before {anchor.value}"


def _when(chain: Chain, folded: str, ending: bool, names_another: bool):
    named = [version for version in chain.versions if version.named_in(folded)]
    if named and ending:
        marker = [version for version in named if version.ends]
        if marker:
            return [marker[-1]], f"the end of {marker[-1].value}"
        successor = None if _multi_valued(chain.slot) else chain.after(named[-1])
        if successor is None:
            return None
        return [successor], f"{named[-1].value} ended when {successor.value or 'this'} began"
    held = [version for version in named if version.holds]
    if held:
        return [held[-1]], f"the version naming {held[-1].value}"
    if names_another:
        return None
    if ending:
        markers = [version for version in chain.versions if version.ends]
        if markers:
            return [markers[-1]], "the latest end"
    changes = [version for version in chain.versions[1:] if version.holds]
    if not changes:
        return None  # one statement is no change: kuset dev, 12 of 14 such guesses cited the wrong turn
    return [changes[-1]], "the latest change"


def describe(question, holder_keys: list, choice: Choice | None, nodes) -> dict:
    """The trace notes of the version stage: the question as read, the subjects, the chains consulted, every
    version of the chain that answered and why the chosen one was chosen."""
    from memctl.recall.version_cards import day

    notes = {"question": question.describe(),
             "subjects": [nodes.props(key).get("title") or key for key in holder_keys] or "none found"}
    if choice is None:
        notes["chosen"] = "no chain of these subjects for this slot"
        return notes
    notes["chains"] = choice.consulted
    if not choice.chosen:
        notes["chosen"] = f"none ({choice.reason}): the ranking is unchanged"
        return notes
    notes["versions"] = [f"{version.value} {day(version.attributes.get('valid_since'))} → "
                         f"{day(version.attributes.get('valid_until')) if version.until else '…'} {version.state}"
                         for version in choice.chain.versions]
    notes["chosen"] = f"{', '.join(version.value for version in choice.chosen)}: {choice.reason}"
    return notes


def _latest_first(versions: list) -> list:
    return sorted(versions, key=lambda version: _time_order(version), reverse=True)


def _multi_valued(slot: str) -> bool:
    from memctl.language.slot_lexicon import slot_lexicon

    spec = slot_lexicon().slots.get(slot)
    return spec is not None and spec.multi_valued


def _text(value) -> str | None:
    return value if isinstance(value, str) else None
