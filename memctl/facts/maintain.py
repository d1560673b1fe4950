"""Chain maintenance in the batch of the write that touched a claim: r2g's commits, `remember`, `fact add`,
`fact resolve` and structured imports all call update_chains(draft, …) before the draft commits, so the
claims and their chains are written in one store batch (all or nothing).

Work is bounded by the chains the batch touches: each is found through facts.chain, its claims read by key
(those a long writer knows already, known_chains.py, are not read again), recomputed (timeline.py) and
compared with what is stored; only what differs is written: the claims' chain
attributes, the ACTIVE_OF / VERSION_NEXT / CONTRADICTS edges, the chain record, the review queue and the audit
trail. A batch that touches no claim's chain does nothing, so `r2g` run twice writes nothing.

Chain attributes of a version (props.attributes): chain, valid_since, valid_until, periods ([[since, until],
…], one per time it held), state, recorded_at (the store time it was first written: its node's created_at),
expired_at (the store time it stopped being in force, None while it is); props.superseded_by: the version that
ended its last period. A claim that is no version (a negation of a value not in force) keeps chain and
recorded_at only.
"""

from __future__ import annotations

from dataclasses import replace

from memctl.facts.events import CONFLICT_DETECTED, FACT_DEMOTED, FACT_PROMOTED
from memctl.facts.known_chains import Claim
from memctl.facts.tables import AUDIT_KEPT, AUDIT_TABLE, CHAIN_TABLE, DECISION_TABLE, REVIEW_TABLE, chain_record, \
    members, review_key
from memctl.facts.timeline import build
from memctl.facts.versions import (chain_of, is_slot_fact, iso, recorded_seconds, slot_of, store_time, subject_of,
                                   version_of, whole_second)

CHAIN_FIELDS = ("chain", "valid_since", "valid_until", "periods", "state", "recorded_at", "expired_at")


def update_chains(draft, tenant: str, settings, actor: str, now: float, chains=None, decided=None,
                  known=None) -> list:
    """Recompute the chains of the slot Facts in `draft` (and `chains`: chain key → keys of claims to add to
    it) into the draft; returns the events [(type, payload)] of the changes. settings: the `facts` View;
    actor: who writes (r2g, fact add…); decided: the decisions this batch records (key → "keep" | "reject"),
    over the stored ones; known: the writer's KnownChains (known_chains.py) when it commits batch after batch
    under one lock: the claims of a chain it knows are not read again, only the batch's own."""
    touched = _touched(draft, tenant)
    for chain, keys in (chains or {}).items():
        touched.setdefault(chain, set()).update(keys)
    if not touched:
        return []
    if draft.rewritten is not None:
        known = None  # a rebuild writes every claim again
    store = draft.graph.store
    keys = sorted(touched)
    events: list = []
    for chain, record in zip(keys, store.get_many(CHAIN_TABLE, keys)):
        events += _ChainUpdate(draft, chain, record, touched[chain], settings, actor, now, known).run(decided or {})
    return events


def chain_state(attributes: dict, superseded_by: str | None) -> tuple:
    """What a chain write sets on a claim, comparable: its CHAIN_FIELDS and props.superseded_by."""
    return tuple((name, attributes[name]) for name in CHAIN_FIELDS if name in attributes), superseded_by


def multi_valued(slot: str) -> bool:
    from memctl.language.slot_lexicon import slot_lexicon

    spec = slot_lexicon().slots.get(slot)
    return spec is not None and spec.multi_valued


def _touched(draft, tenant: str) -> dict:
    touched: dict = {}
    for key, (node_type, _) in draft.nodes.items():
        if node_type == "Fact":
            props = draft.merged(key)
            if is_slot_fact(node_type, props):
                touched.setdefault(chain_of(tenant, props), set()).add(key)
    return touched


class _ChainUpdate:
    def __init__(self, draft, chain: str, record: dict | None, touched: set, settings, actor: str, now: float,
                 known=None):
        self.draft = draft
        self.chain = chain
        self.record = record or {"entries": [], "claims": [], "contradicts": [], "in_force": [], "reviews": []}
        self.touched = touched
        self.settings = settings
        self.actor = actor
        self.now = now
        self.known = known
        self.events: list = []
        self.audit: list = []  # this update's changes of state, for facts.audit

    def run(self, decided: dict) -> list:
        draft = self.draft
        keys = list(dict.fromkeys(members(self.record) + sorted(self.touched)))
        known = (self.known.claims(self.chain, self.record) if self.known is not None else None) or {}
        known = {key: claim for key, claim in known.items() if key not in draft.nodes}
        read = [key for key in keys if key not in known]
        stored = dict(zip(read, draft.graph.nodes(read)))
        claims = self._claims(keys, stored, known)
        decisions = self._decisions(claims, known, decided)
        timeline = build(list(claims.values()), multi_valued(slot_of(self.chain)), decisions, self.settings)
        written = {key: self._write_claim(key, version, decisions.get(key), stored, known, timeline)
                   for key, version in claims.items()}
        from engine.fs import failpoint  # looked up here: the crash sweep counts the passes by replacing it

        failpoint("facts.chain_write")  # claims staged, edges and tables not yet: the batch is all or nothing
        self._write_edges(timeline)
        self._write_reviews(timeline)
        record = chain_record(timeline, [key for key in claims if key not in timeline.states])
        if record != self.record:
            draft.record(CHAIN_TABLE, self.chain, record)
        if self.known is not None:
            self.known.stage(self.chain, record, written)
        self._events(timeline)
        return self.events

    def _claims(self, keys: list, stored: dict, known: dict) -> dict:
        """key → Version of the chain's claims, in `keys` order: the known ones as known, the others read."""
        claims = {}
        for key in keys:
            if key in known:
                claims[key] = known[key].version
                continue
            props = self.draft.props(key) if key in self.draft.nodes else getattr(stored[key], "props", None)
            if is_slot_fact("Fact", props):
                claims[key] = version_of(key, props, recorded_seconds(stored[key], self.now))
        return claims

    def _decisions(self, claims: dict, known: dict, decided: dict) -> dict:
        decisions = {key: known[key].decision for key in claims if key in known and known[key].decision}
        read = [key for key in claims if key not in known]
        decisions.update((key, value["decision"])
                         for key, value in zip(read, self.draft.graph.store.get_many(DECISION_TABLE, read)) if value)
        decisions.update((key, value) for key, value in decided.items() if key in claims)
        return decisions

    # --- claims ------------------------------------------------------------------------------------------

    def _write_claim(self, key: str, version, decision: str | None, stored: dict, known: dict, timeline) -> Claim:
        """Set the claim's chain attributes; returns what the chain knows of the claim once written."""
        shape = _shape(key, timeline)
        if key in known:  # its props as stored differ from what it was written with in nothing else
            claim = known[key]
            if claim.shape == shape:  # what its chain attributes are made of is unchanged: so are they
                return claim if claim.decision == decision else Claim(claim.version, decision, claim.state, shape)
            attributes, superseded_by = self._chain_attributes(key, dict(claim.state[0]), timeline, version.recorded)
            if chain_state(attributes, superseded_by) == claim.state:
                return Claim(claim.version, decision, claim.state, shape)
            stored[key] = self.draft.graph.node(key)
        node = stored[key]
        props = self.draft.props(key) if key in self.draft.nodes else node.props
        old = (node.props if node is not None else props).get("attributes", {})
        chain_attributes, superseded_by = self._chain_attributes(key, old, timeline, version.recorded)
        attributes = {name: value for name, value in props["attributes"].items() if name not in CHAIN_FIELDS}
        attributes.update(chain_attributes)
        updated = {name: value for name, value in props.items() if name != "superseded_by"}
        if superseded_by is not None:
            updated["superseded_by"] = superseded_by
        state = attributes.get("state")
        if state is not None and old.get("state") != state:
            self._audit(key, old.get("state"), state)
        updated["attributes"] = attributes
        if key in self.draft.nodes or node is None or updated != node.props or self.draft.rewritten is not None:
            self.draft.replace(key, "Fact", updated)
        recorded = whole_second(version.recorded)  # as the next batch would read it back from recorded_at
        return Claim(version if recorded == version.recorded else replace(version, recorded=recorded), decision,
                     chain_state(attributes, superseded_by), shape)

    def _chain_attributes(self, key: str, old: dict, timeline, recorded: float) -> tuple[dict, str | None]:
        """The claim's chain attributes (in the order they are written) and the version that superseded it;
        old: its attributes as stored."""
        attributes = {"chain": self.chain, "recorded_at": store_time(recorded)}
        periods = timeline.periods(key)
        if not periods:
            return attributes, None
        last = periods[-1]
        in_force = key in timeline.in_force
        attributes.update(valid_since=iso(last.since), valid_until=iso(last.until),
                          periods=[[iso(entry.since), iso(entry.until)] for entry in periods],
                          state=timeline.states[key],
                          expired_at=None if in_force else old.get("expired_at") or store_time(self.now))
        return attributes, None if in_force else last.successor

    def _audit(self, key: str, before: str | None, after: str) -> None:
        self.audit.append({"at": store_time(self.now), "by": self.actor, "fact": key, "from": before, "to": after})

    # --- edges -------------------------------------------------------------------------------------------

    def _write_edges(self, timeline) -> None:
        wanted = _edges(self.chain, [entry.key for entry in timeline.entries], timeline.in_force,
                        timeline.contradicts)
        old = _edges(self.chain, [entry[0] for entry in self.record["entries"]], self.record["in_force"],
                     {tuple(item[:2]): item[2] for item in self.record["contradicts"]})
        for edge in old.keys() - wanted.keys():
            self.draft.remove_edge(*edge)
        rebuild = self.draft.rewritten is not None
        for edge, properties in wanted.items():
            if rebuild or edge not in old or old[edge] != properties:
                self.draft.edge(*edge, 1.0, 1.0, properties=properties)

    # --- review queue, chain events ----------------------------------------------------------------------

    def _write_reviews(self, timeline) -> None:
        store = self.draft.graph.store
        keys = [review_key(self.chain, pair) for pair in self.record.get("reviews", ())]
        old = {key: value for key, value in zip(keys, store.get_many(REVIEW_TABLE, keys)) if value}
        new = {}
        for pair, review in timeline.reviews.items():
            key = review_key(self.chain, pair)
            new[key] = {"chain": self.chain, "versions": list(pair), "dimension": review.dimension,
                        "terms": review.terms, "margin": review.margin,
                        "since": (old.get(key) or {}).get("since") or store_time(self.now)}
        for key in old.keys() - new.keys():
            self.draft.record(REVIEW_TABLE, key, None)
        for key, value in new.items():
            if old.get(key) != value:
                self.draft.record(REVIEW_TABLE, key, value)

    def _events(self, timeline) -> None:
        if self.audit:
            kept = list(self.draft.graph.store.get(AUDIT_TABLE, self.chain) or [])
            self.draft.record(AUDIT_TABLE, self.chain, (kept + self.audit)[-AUDIT_KEPT:])
        base = {"chain": self.chain, "subject": subject_of(self.chain), "slot": slot_of(self.chain), "by": self.actor}
        before, after = set(self.record["in_force"]), set(timeline.in_force)
        self.events += [(FACT_PROMOTED, {**base, "fact": key}) for key in timeline.in_force if key not in before]
        self.events += [(FACT_DEMOTED, {**base, "fact": key, "state": timeline.states.get(key)})
                        for key in self.record["in_force"] if key not in after]
        known = {tuple(item[:2]) for item in self.record["contradicts"]}
        self.events += [(CONFLICT_DETECTED, {**base, "facts": list(pair), "dimension": dimension,
                                             "contested": any(set(pair) == set(review) for review in timeline.reviews)})
                        for pair, dimension in sorted(timeline.contradicts.items()) if pair not in known]


def _shape(key: str, timeline) -> tuple:
    """What a claim's chain attributes are made of, besides its own recorded time and those the store kept:
    its periods, state, whether it is in force and what superseded it."""
    periods = timeline.periods(key)
    return (tuple((entry.since, entry.until) for entry in periods), timeline.states.get(key),
            key in timeline.in_force, periods[-1].successor if periods else None)


def _edges(chain: str, order: list, in_force: list, contradicts: dict) -> dict:
    """(source, type, target) → properties of the chain's edges."""
    subject, slot = subject_of(chain), slot_of(chain)
    edges = {(subject, "ACTIVE_OF", key): {"slot": slot} for key in in_force}
    for older, newer in zip(order, order[1:]):
        if older != newer:
            edges[(older, "VERSION_NEXT", newer)] = None
    for (first, second), dimension in contradicts.items():
        edges[(first, "CONTRADICTS", second)] = edges[(second, "CONTRADICTS", first)] = {"dimension": dimension}
    return edges
