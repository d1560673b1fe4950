"""Facts (Memory.facts): assert, list, show, trace and resolve the versions of slot facts (`memctl fact`,
`memctl audit`). Writes go through the chain code R2G uses (maintain.update_chains), in one store batch each.
An unknown fact id, slot, source or a bad time is an InputError (exit 2) and changes nothing."""

from __future__ import annotations

from engine.errors import InputError
from memctl.facts.tables import AUDIT_TABLE, CHAIN_TABLE, DECISION_TABLE, REVIEW_TABLE, members
from memctl.facts.versions import chain_key, chain_of, is_slot_fact, slot_of, source_of, store_time

DECISIONS = ("keep", "reject")


class Facts:
    def __init__(self, memory):
        self._memory = memory

    @property
    def _settings(self):
        from memctl.language.lexicon import use_directory
        from memctl.settings import resolve

        settings = resolve(self._memory.config)
        use_directory(settings.r2g.lexicon_directory)
        return settings

    def _graph(self):
        from engine.graph.api import GraphStore

        return GraphStore(self._memory.store)

    # --- writes ----------------------------------------------------------------------------------------------

    def add(self, subject: str, slot: str, value: str, since: str | None = None, source: str = "user",
            evidence: str | None = None, conflicts: str | None = None) -> dict:
        """Assert that SUBJECT's SLOT is VALUE (since `since`, else now): a change statement, which supersedes
        the value in force of a single-valued slot. conflicts=ID asserts it instead as a claim that contradicts
        version ID of the same chain (seed 001 §25.5 `fact --add v2 … --conflicts v1`): prio decides, a close
        call goes to the review queue. Returns show() of the new version and the chain's "events"."""
        from engine.raw import RawStore
        from memctl.facts.claims import checked_claim, draft_claim, evidence_ref

        self._settings  # noqa: B018 - the tenant's slot lexicon
        reference = evidence_ref(RawStore(self._memory.store), evidence) if evidence else None
        tenant = self._memory.tenant
        claim = checked_claim(self._subject(subject), slot, value, since, source, reference,
                              kind="set" if conflicts else "change")
        if conflicts is not None and self._fact(conflicts, "--conflicts")[1] != claim.chain(tenant):
            raise InputError(f"{conflicts} is a fact of another subject or slot than {subject}'s {slot}",
                             where="--conflicts")
        key, events = self._write("fact add", lambda draft, now: draft_claim(draft, tenant, claim, now))
        return {**self.show(key), "events": events}

    def resolve(self, key: str, decision: str) -> dict:
        """Decide a contested version for good: keep (it wins its conflicts) or reject (it never holds). The
        chain is recomputed in the same batch; the decision is kept (facts.decision) and later claims are
        weighed with it."""
        if decision not in DECISIONS:
            raise InputError(f"decide with --keep or --reject, not {decision!r}")
        _, chain = self._fact(key)

        def decide(draft, now):
            draft.record(DECISION_TABLE, key, {"decision": decision, "at": store_time(now), "by": "fact resolve"})
            return key

        _, events = self._write("fact resolve", decide, chains={chain: ()}, decided={key: decision})
        return {**self.show(key), "events": events}

    def _write(self, actor: str, build, chains=None, decided=None) -> tuple:
        """One batch: build(draft, now) → key, the chains it touched recomputed, the nodes indexed."""
        from memctl.facts.maintain import update_chains
        from memctl.node_documents import INDEXED_TYPES
        from memctl.r2g.draft import GraphDraft
        from memctl.r2g.nodeindex import open_index

        store, config = self._memory.store, self._memory.config
        graph = self._graph()
        draft = GraphDraft(graph, open_index(store, config))
        now = graph.clock()
        key = build(draft, now)
        draft.events += update_chains(draft, self._memory.tenant, self._settings.facts, actor, now, chains, decided)
        draft.document_nodes(frozenset(INDEXED_TYPES) - {"Episode"})
        draft.commit()
        return key, draft.events

    # --- reads -----------------------------------------------------------------------------------------------

    def _subject(self, subject: str) -> tuple:
        """(name, entity type) of a SUBJECT argument, the first person as this store names the user."""
        from memctl.facts.claims import parsed_subject
        from memctl.model import entity_id

        graph, tenant = self._graph(), self._memory.tenant
        return parsed_subject(subject, lambda name, kind: graph.node(entity_id(tenant, name, kind)) is not None)

    def _fact(self, key: str, where: str = "ID") -> tuple:
        """(props, chain key) of slot Fact `key`, else an InputError."""
        node = self._graph().node(key)
        if node is None or not is_slot_fact(node.type, node.props):
            raise InputError(f"no fact {key!r} (memctl fact list shows the ids)", where=where)
        return node.props, node.props["attributes"].get("chain") or chain_of(self._memory.tenant, node.props)

    def show(self, key: str) -> dict:
        props, chain = self._fact(key)
        record = self._memory.store.get(CHAIN_TABLE, chain) or {}
        contradicts = [{"fact": first if second == key else second, "dimension": dimension}
                       for first, second, dimension in record.get("contradicts", ()) if key in (first, second)]
        return {**fact_row(key, props), "chain": chain, "title": props.get("title"),
                "recorded_at": props["attributes"].get("recorded_at"),
                "expired_at": props["attributes"].get("expired_at"), "source": source_of(props),
                "evidence": props.get("raw_refs", []), "contradicts": contradicts}

    def list(self, subject: str | None = None, slot: str | None = None, all_versions: bool = False,
             as_of: str | None = None) -> list:
        """The versions in force (all_versions: every version; as_of: those that held at that time), chain by
        chain."""
        from memctl.facts.claims import checked_time
        from memctl.node_documents import epoch_seconds

        moment = epoch_seconds(checked_time(as_of, "--as-of")) if as_of else None
        wanted = self._subject(subject)[0] if subject else None
        graph, rows = self._graph(), []
        for chain, record in self._memory.store.scan(CHAIN_TABLE):
            if slot is not None and slot_of(chain) != slot:
                continue
            keys = record["in_force"] if moment is None and not all_versions else \
                list(dict.fromkeys(entry[0] for entry in record["entries"]))
            for node in graph.nodes(keys):
                if node is None or (wanted and node.props["attributes"]["subject"] != wanted):
                    continue
                row = fact_row(node.key, node.props)
                if moment is None or _held_at(row["periods"], moment):
                    rows.append(row)
        return rows

    def history(self, subject: str, slot: str) -> dict:
        """The chain of SUBJECT's SLOT in chain order: one row per period (a value that came back twice)."""
        from memctl.model import entity_id

        chain = chain_key(entity_id(self._memory.tenant, *self._subject(subject)), slot)
        record = self._memory.store.get(CHAIN_TABLE, chain)
        if record is None:
            raise InputError(f"no facts about {subject}'s {slot} (memctl fact list shows the subjects and slots)",
                             where="SUBJECT SLOT")
        nodes = dict(zip(members(record), self._graph().nodes(members(record))))
        entries = [{**fact_row(key, nodes[key].props), "since": since} for key, since in record["entries"]
                   if nodes.get(key) is not None]
        return {"chain": chain, "subject": subject, "slot": slot, "versions": entries,
                "in_force": record["in_force"],
                "contradicts": [{"facts": item[:2], "dimension": item[2]} for item in record["contradicts"]]}

    def review(self) -> list:
        """The review queue: contested pairs, oldest first, with each version's value and prio terms."""
        graph = self._graph()
        queue = []
        for key, entry in self._memory.store.scan(REVIEW_TABLE):
            versions = [fact_row(node.key, node.props) for node in graph.nodes(entry["versions"]) if node]
            queue.append({"id": key, "chain": entry["chain"], "dimension": entry["dimension"],
                          "margin": entry["margin"], "since": entry["since"], "versions": versions,
                          "terms": entry["terms"]})
        return sorted(queue, key=lambda item: (item["since"], item["id"]))

    def audit(self, key: str, history: bool = True) -> dict:
        from memctl.facts.audit import audit

        self._settings  # noqa: B018 - the tenant's slot lexicon
        props, chain = self._fact(key)
        return audit(self._memory, self._graph(), key, chain, self._settings.facts, history,
                     self._memory.store.get(AUDIT_TABLE, chain) or [])


def fact_row(key: str, props: dict) -> dict:
    attributes = props["attributes"]
    return {"fact": key, "subject": attributes["subject"], "slot": attributes["slot"], "value": attributes["value"],
            "polarity": attributes.get("polarity"), "kind": attributes.get("kind", "set"),
            "state": attributes.get("state"), "valid_since": attributes.get("valid_since"),
            "valid_until": attributes.get("valid_until"), "periods": attributes.get("periods", []),
            "superseded_by": props.get("superseded_by")}


def _held_at(periods: list, moment: float) -> bool:
    from memctl.node_documents import epoch_seconds

    return any(epoch_seconds(since) <= moment and (until is None or moment < epoch_seconds(until))
               for since, until in periods)
