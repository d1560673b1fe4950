"""Chain maintenance in the batch of the write that touched a claim: r2g's commits, `remember`, `fact add`,
`fact resolve` and structured imports all call update_chains(draft, …) before the draft commits, so the
claims and their chains are written in one store batch (all or nothing).

Work is bounded by the chains the batch touches: each is found through facts.chain, its claims read by key,
recomputed (timeline.py) and compared with what is stored; only what differs is written: the claims' chain
attributes, the ACTIVE_OF / VERSION_NEXT / CONTRADICTS edges, the chain record, the review queue and the audit
trail. A batch that touches no claim's chain does nothing, so `r2g` run twice writes nothing.

Chain attributes of a version (props.attributes): chain, valid_since, valid_until, periods ([[since, until],
…], one per time it held), state, recorded_at (the store time it was first written: its node's created_at),
expired_at (the store time it stopped being in force, None while it is); props.superseded_by: the version that
ended its last period. A claim that is no version (a negation of a value not in force) keeps chain and
recorded_at only.
"""

from __future__ import annotations

from memctl.facts.events import CONFLICT_DETECTED, FACT_DEMOTED, FACT_PROMOTED
from memctl.facts.tables import AUDIT_KEPT, AUDIT_TABLE, CHAIN_TABLE, DECISION_TABLE, REVIEW_TABLE, chain_record, \
    members, review_key
from memctl.facts.timeline import build
from memctl.facts.versions import (chain_of, is_slot_fact, iso, recorded_seconds, slot_of, store_time, subject_of,
                                   version_of)

CHAIN_FIELDS = ("chain", "valid_since", "valid_until", "periods", "state", "recorded_at", "expired_at")


def update_chains(draft, tenant: str, settings, actor: str, now: float, chains=None, decided=None) -> list:
    """Recompute the chains of the slot Facts in `draft` (and `chains`: chain key → keys of claims to add to
    it) into the draft; returns the events [(type, payload)] of the changes. settings: the `facts` View;
    actor: who writes (r2g, fact add…); decided: the decisions this batch records (key → "keep" | "reject"),
    over the stored ones."""
    touched = _touched(draft, tenant)
    for chain, keys in (chains or {}).items():
        touched.setdefault(chain, set()).update(keys)
    if not touched:
        return []
    store = draft.graph.store
    keys = sorted(touched)
    events: list = []
    for chain, record in zip(keys, store.get_many(CHAIN_TABLE, keys)):
        events += _ChainUpdate(draft, chain, record, touched[chain], settings, actor, now).run(decided or {})
    return events


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
    def __init__(self, draft, chain: str, record: dict | None, touched: set, settings, actor: str, now: float):
        self.draft = draft
        self.chain = chain
        self.record = record or {"entries": [], "claims": [], "contradicts": [], "in_force": [], "reviews": []}
        self.touched = touched
        self.settings = settings
        self.actor = actor
        self.now = now
        self.events: list = []
        self.audit: list = []  # this update's changes of state, for facts.audit

    def run(self, decided: dict) -> list:
        draft, store = self.draft, self.draft.graph.store
        keys = list(dict.fromkeys(members(self.record) + sorted(self.touched)))
        stored = dict(zip(keys, draft.graph.nodes(keys)))
        current = {key: draft.props(key) if key in draft.nodes else getattr(stored[key], "props", None)
                   for key in keys}
        claims = {key: props for key, props in current.items() if is_slot_fact("Fact", props)}
        recorded = {key: recorded_seconds(stored[key], self.now) for key in claims}
        versions = [version_of(key, props, recorded[key]) for key, props in claims.items()]
        decisions = {key: value["decision"] for key, value in zip(claims, store.get_many(DECISION_TABLE,
                                                                                          list(claims))) if value}
        decisions.update((key, value) for key, value in decided.items() if key in claims)
        timeline = build(versions, multi_valued(slot_of(self.chain)), decisions, self.settings)
        for key, props in claims.items():
            self._write_claim(key, props, stored[key], timeline, recorded[key])
        from engine.fs import failpoint  # looked up here: the crash sweep counts the passes by replacing it

        failpoint("facts.chain_write")  # claims staged, edges and tables not yet: the batch is all or nothing
        self._write_edges(timeline)
        self._write_reviews(timeline)
        record = chain_record(timeline, [key for key in claims if key not in timeline.states])
        if record != self.record:
            draft.record(CHAIN_TABLE, self.chain, record)
        self._events(timeline)
        return self.events

    # --- claims ------------------------------------------------------------------------------------------

    def _write_claim(self, key: str, props: dict, stored, timeline, recorded: float) -> None:
        old = (stored.props if stored is not None else props).get("attributes", {})
        attributes = {name: value for name, value in props["attributes"].items() if name not in CHAIN_FIELDS}
        attributes["chain"] = self.chain
        attributes["recorded_at"] = store_time(recorded)
        updated = {name: value for name, value in props.items() if name != "superseded_by"}
        periods = timeline.periods(key)
        if periods:
            state = timeline.states[key]
            last = periods[-1]
            in_force = key in timeline.in_force
            attributes.update(valid_since=iso(last.since), valid_until=iso(last.until),
                              periods=[[iso(entry.since), iso(entry.until)] for entry in periods], state=state,
                              expired_at=None if in_force else old.get("expired_at") or store_time(self.now))
            if not in_force and last.successor is not None:
                updated["superseded_by"] = last.successor
            if old.get("state") != state:
                self._audit(key, old.get("state"), state)
        updated["attributes"] = attributes
        if key in self.draft.nodes or stored is None or updated != stored.props or self.draft.rewritten is not None:
            self.draft.replace(key, "Fact", updated)

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
