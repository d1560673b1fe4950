"""`memctl migrate` from format 4: a store of format 4 holds slot facts without chains. The engine's step
(engine/migration/fact_chains.py) hands the store to build_chains, which recomputes every chain as r2g would
have (with the default settings: a migration reads none) and returns the records to stage."""

from __future__ import annotations

import time


def build_chains(store) -> tuple[dict, list]:
    """({"chains", "claims", "in_force", "contradictions"}, the runs of an uncommitted store batch)."""
    from engine.graph.api import GraphStore
    from memctl.facts.maintain import update_chains
    from memctl.facts.versions import chain_of, is_slot_fact
    from memctl.r2g.draft import GraphDraft
    from memctl.settings import defaults

    graph = GraphStore(store)
    by_tenant: dict = {}
    for node in graph.iter_nodes():
        if is_slot_fact(node.type, node.props):
            tenant = node.props.get("tenant", "default")
            by_tenant.setdefault(tenant, {}).setdefault(chain_of(tenant, node.props), set()).add(node.key)
    draft = GraphDraft(graph, None)
    for tenant, chains in sorted(by_tenant.items()):
        update_chains(draft, tenant, defaults().facts, "migrate", time.time(), chains)
    batch = store.batch()
    draft.stage(batch)
    records = [value for table, _, value in draft.records if table == "facts.chain"]
    counts = {"chains": len(records),
              "claims": sum(len(keys) for chains in by_tenant.values() for keys in chains.values()),
              "in_force": sum(len(record["in_force"]) for record in records),
              "contradictions": sum(len(record["contradicts"]) for record in records)}
    return counts, batch.runs
