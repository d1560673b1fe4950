"""Format 3 → 4: the raw passage index, "text:passages" (MANIFEST.spec §4a, §14).

Version 3 kept none: recall's raw fallback cut the passages of the chunks it searched in memory at each query.
Format 4 stores one document per passage, written with its chunk at ingest, so a migrated store needs the
passages of every chunk it holds. What a passage is, and how its words are tokenized, is memctl's (the engine
stores and searches the documents), so the caller hands the indexing in as `hooks["raw_passages"]`: a function
of (store, batch) that adds every stored chunk's passages to the index in the batch and returns its counts
(memctl.raw_passages.index_stored). Without it nothing is indexed, and the raw fallback of the migrated
store finds nothing until its chunks are ingested again.
"""

from __future__ import annotations

from engine.migration.steps import Changes

NAME = "raw_passages"
TO_VERSION = 4
HOOK = "raw_passages"


def plan(store, hooks: dict) -> Changes:
    index = hooks.get(HOOK)
    if index is None:
        return Changes({"chunks": 0, "passages": 0})
    batch = store.batch()
    return Changes(index(store, batch), batch.runs)
