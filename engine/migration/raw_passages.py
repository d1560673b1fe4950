"""Format 3 → 4: the raw passage index, the `raw` kind's segments (MANIFEST.spec §4c, §14).

Version 3 kept none: recall's raw fallback cut the passages of the chunks it searched in memory at each query.
Format 4 indexes the passages of every stored chunk, built from the chunks themselves, so this step changes no
record: the migration's rebuild (Store.rebuild) builds the index from every raw.turns record and blob, as it
builds every derived kind. The step reports what that covers.
"""

from __future__ import annotations

from engine.format import RAW_TURNS_TABLE
from engine.migration.steps import Changes

NAME = "raw_passages"
TO_VERSION = 4


def plan(store, hooks: dict) -> Changes:
    return Changes({"chunks": sum(1 for _ in store.scan(RAW_TURNS_TABLE))})
