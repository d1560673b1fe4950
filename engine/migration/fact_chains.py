"""Format 4 → 5: version chains of slot facts (MANIFEST.spec, "Fact chains").

Format 5 keeps, for every subject's slot, the chain of its claims: the facts.* tables, the chain attributes of
each slot Fact node and the ACTIVE_OF / VERSION_NEXT / CONTRADICTS edges, all written in the batch that
writes a claim. A store of format 4 holds the claims without any of it; what a chain is only memctl knows,
so the caller (memctl migrate) hands the building in as `hooks["fact_chains"]`: a function of the store
returning (counts, runs) (memctl.facts.migration.build_chains). Without it no chain is built and the next
`memctl r2g --rebuild` builds them.
"""

from __future__ import annotations

from engine.migration.steps import Changes

NAME = "fact_chains"
TO_VERSION = 5
HOOK = "fact_chains"


def plan(store, hooks: dict) -> Changes:
    build = hooks.get(HOOK)
    if build is None:
        return Changes({"chains": 0})
    counts, runs = build(store)
    return Changes(counts, runs)
