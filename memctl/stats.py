"""`memctl stats`: sizes on disk and counts of the tenant's store (engine.statistics), named by tenant.

Each derived kind instance is listed under its owner name ("text:nodes", "text:documents", "graph"): its
segments under "<owner>.<label>" in `segments`, and its own figures (documents, terms…) as a section."""

from __future__ import annotations


def collect(memory) -> dict:
    from engine.statistics import store_statistics

    statistics = store_statistics(memory.store)
    return {"path": statistics.pop("path"), "tenant": memory.tenant, **statistics}
