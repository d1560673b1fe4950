"""The audit view of a fact (`memctl audit --fact ID --history`, seed 001 §7.1 审计可切换历史视图): its chain in
order, each version's evidence as verified citations (the chunk read back against its sha256 and the span cut
from it, as recall cites), the prio terms it is weighed with against the chain's newest claim, the open
reviews, and who or what changed which version's state, and when (facts.audit)."""

from __future__ import annotations

from memctl.facts.priority import priority
from memctl.facts.tables import CHAIN_TABLE, REVIEW_TABLE, members
from memctl.facts.versions import version_of


def audit(memory, graph, key: str, chain: str, settings, history: bool, trail: list) -> dict:
    """history: the whole chain; else the version `key` alone."""
    from engine.raw import RawStore
    from memctl.facts.api import fact_row
    from memctl.node_documents import epoch_seconds
    from memctl.recall.pack import Citations

    store = memory.store
    record = store.get(CHAIN_TABLE, chain) or {"entries": [], "claims": []}
    keys = members(record) if history else [key]
    nodes = [node for node in graph.nodes(keys) if node is not None]
    newest = max((epoch_seconds(since) for _, since in record["entries"] if since), default=None)
    citations = Citations(RawStore(store))
    versions = []
    for node in nodes:
        row = fact_row(node.key, node.props)
        version = version_of(node.key, node.props, node.created_at)
        since = epoch_seconds(row["valid_since"]) if row["valid_since"] else version.since
        row.update(source=version.source, recorded_at=node.props["attributes"].get("recorded_at"),
                   expired_at=node.props["attributes"].get("expired_at"),
                   prio=priority(version, since, max(newest or since, since), settings).terms(),
                   evidence=[citations.cite(ref) for ref in node.props.get("raw_refs", ())])
        versions.append(row)
    shown = set(keys)
    reviews = [{"id": review_key, **entry} for review_key, entry in store.scan(REVIEW_TABLE, chain + "/")
               if shown & set(entry["versions"])]
    changes = [change for change in trail if history or change["fact"] == key]
    return {"fact": key, "chain": chain, "in_force": record.get("in_force", []), "versions": versions,
            "reviews": reviews, "changes": changes}
