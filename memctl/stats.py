"""`memctl stats`: sizes on disk and counts of the tenant's store (engine.statistics), named by tenant."""

from __future__ import annotations


def collect(memory) -> dict:
    from engine.statistics import store_statistics

    statistics = store_statistics(memory.store)
    return {"path": statistics.pop("path"), "tenant": memory.tenant, **statistics}
