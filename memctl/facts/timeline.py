"""A chain recomputed from its claims alone: the same claims (and `fact resolve` decisions) give the same chain,
whatever order they were ingested in. An older conversation converted after a newer one therefore never
becomes what holds now: it takes its place in the past.

The claims' statements are walked in world time (ties: recorded order, then key). Each statement of a claim
that holds (polarity "stated") opens a period of it unless it holds already, so a value that comes back
(Boston → Denver → Boston) is the same node with two periods, and the chain lists it twice.

Single-valued slot, one value in force at a time:
- a change statement (kind "change") supersedes the value in force;
- another value claimed with no change statement (kind "set", or a value said again after another took over)
  contradicts the value in force: CONTRADICTS with the dimension ("source": different sources; "value": the
  same day; "time": otherwise), and the higher prio (priority.py) holds. Below facts.review_margin the pair is
  contested: the higher still holds, both are in the review queue until `fact resolve` decides. A claim that
  loses keeps its place in the chain, never in force;
- "ended" of the value in force, or with no value, ends it; "ended" of another value is a past value's end,
  kept as history; "negated" of the value in force ends it, of another value it is no version.
Multi-valued slot: every value stated holds until a "stop"/"ended" or "negated" statement of that value; a
change statement ("换了新手机") while one value alone holds replaces it (with several, which one it replaces is
unknown: the new value joins them).
Invalidation never crosses chains: a chain is one subject's one slot.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memctl.facts.priority import DAY, priority
from memctl.facts.versions import CHANGE, ENDED, NEGATED, STATED

HELD, LOST, END, REJECTED = "held", "lost", "end", "rejected"
ACTIVE, SUPERSEDED, ENDED_STATE, CONTESTED, REJECTED_STATE = "active", "superseded", "ended", "contested", "rejected"


@dataclass(slots=True)
class Entry:
    key: str
    since: float
    until: float | None = None
    role: str = HELD
    successor: str | None = None  # the version whose statement ended this period
    ended: bool = False  # ended by an end, stop or negation (not superseded by another value)


@dataclass(frozen=True, slots=True)
class Review:
    versions: tuple  # (in force, challenger), each a key
    dimension: str
    terms: dict  # key → priority terms
    margin: float


@dataclass
class Timeline:
    entries: list = field(default_factory=list)  # chain order
    in_force: list = field(default_factory=list)  # keys, chain order
    contradicts: dict = field(default_factory=dict)  # (key, key) sorted → dimension
    reviews: dict = field(default_factory=dict)  # (in force, challenger) → Review, the last contest of a pair
    states: dict = field(default_factory=dict)  # key → state
    by_key: dict = field(default_factory=dict)  # key → its entries, in chain order

    def periods(self, key: str) -> list:
        return self.by_key.get(key, [])


def build(versions: list, multi_valued: bool, decisions: dict, settings) -> Timeline:
    """versions: Version of every claim of the chain; decisions: key → "keep" | "reject"; settings: `facts`."""
    walk = _Walk(multi_valued, decisions, settings)
    for seconds, _, _, first, version in sorted(_statements(versions)):
        walk.statement(version, seconds, first)
    return walk.finish()


def _statements(versions: list):
    for version in versions:
        yield version.since, version.recorded, version.key, True, version
        if version.polarity == STATED:
            for seconds in version.evidence:
                yield seconds, version.recorded, version.key, False, version


class _Walk:
    def __init__(self, multi_valued: bool, decisions: dict, settings):
        self.multi_valued = multi_valued
        self.decisions = decisions
        self.settings = settings
        self.timeline = Timeline()
        self.current: dict = {}  # normalised value → (Version, Entry) in force
        self.contested: set = set()

    def statement(self, version, seconds: float, first: bool) -> None:
        if self.decisions.get(version.key) == "reject":
            if first:
                self._open(version, seconds, REJECTED).until = seconds
            return
        if version.polarity == STATED:
            self._holds(version, seconds, first)
        elif first:
            self._ends(version, seconds)

    def _holds(self, version, seconds: float, first: bool) -> None:
        if version.normalized in self.current:
            return  # said again while it holds
        if first and version.kind == CHANGE and len(self.current) == 1:
            (held, entry), = self.current.values()
            self._close(held, entry, seconds, version.key)
        elif self.current and not self.multi_valued:
            (held, entry), = self.current.values()
            self._contest(held, entry, version, seconds)
            return
        self._open(version, seconds, HELD)

    def _ends(self, version, seconds: float) -> None:
        found = self.current.get(version.normalized)
        if found is None and version.polarity == ENDED and not version.normalized and not self.multi_valued:
            found = next(iter(self.current.values()), None)
        if found is not None:
            self._close(*found, seconds, version.key).ended = True
        if found is not None or version.polarity == ENDED:
            self._open(version, seconds, END).until = seconds

    def _contest(self, held, entry: Entry, challenger, seconds: float) -> None:
        dimension = "source" if held.source != challenger.source else \
            "value" if seconds - entry.since < DAY else "time"
        self.timeline.contradicts[tuple(sorted((held.key, challenger.key)))] = dimension
        kept = {key for key in (held.key, challenger.key) if self.decisions.get(key) == "keep"}
        held_prio = priority(held, entry.since, seconds, self.settings)
        challenger_prio = priority(challenger, seconds, seconds, self.settings)
        if len(kept) == 1:
            challenger_wins = challenger.key in kept
        else:
            challenger_wins = challenger_prio.total >= held_prio.total
            margin = round(abs(challenger_prio.total - held_prio.total), 4)
            if margin < self.settings.review_margin and not kept:
                pair = (held.key, challenger.key)
                self.timeline.reviews[pair] = Review(pair, dimension, {held.key: held_prio.terms(),
                                                                       challenger.key: challenger_prio.terms()},
                                                     margin)
                self.contested.update((held.key, challenger.key))
        if challenger_wins:
            self._close(held, entry, seconds, challenger.key)
            self._open(challenger, seconds, HELD)
        else:
            lost = self._open(challenger, seconds, LOST)
            lost.until, lost.successor = seconds, held.key

    def _open(self, version, seconds: float, role: str) -> Entry:
        entry = Entry(version.key, seconds, role=role)
        self.timeline.entries.append(entry)
        if role == HELD:
            self.current[version.normalized] = (version, entry)
        return entry

    def _close(self, version, entry: Entry, seconds: float, successor: str) -> Entry:
        entry.until, entry.successor = seconds, successor
        del self.current[version.normalized]
        return entry

    def finish(self) -> Timeline:
        timeline = self.timeline
        in_force = {version.key for version, _ in self.current.values()}
        timeline.in_force = [entry.key for entry in timeline.entries if entry.key in in_force and entry.until is None]
        for entry in timeline.entries:  # the last period of a version decides its state
            timeline.states[entry.key] = _state(entry, entry.key in in_force)
            timeline.by_key.setdefault(entry.key, []).append(entry)
        for key in self.contested:
            if timeline.states.get(key) != REJECTED_STATE:
                timeline.states[key] = CONTESTED
        return timeline


def _state(entry: Entry, in_force: bool) -> str:
    if in_force:
        return ACTIVE
    if entry.role == REJECTED:
        return REJECTED_STATE
    if entry.role == END or entry.ended:
        return ENDED_STATE
    return SUPERSEDED
