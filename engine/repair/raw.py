"""Raw chunks that cannot be served are dropped: a blob missing or damaged, or turns that do not match it.

Such a chunk's bytes are gone (`raw cat` fails on it, and so would every citation), so keeping its records would
leave a store that `check` never finds clean: its raw.chunk and raw.turns records are dropped and reported
(raw_id, turns, reason). What R2G drew from its turns stays: memories stand on their own, and a citation of a
dropped chunk says the chunk is gone. The blob file, now named by no record, is left to `memctl raw gc`.
"""

from __future__ import annotations

from engine.errors import CorruptionError, InputError
from engine.format import RAW_CHUNK_TABLE, RAW_TURNS_TABLE
from engine.raw import RawStore
from engine.raw.upkeep import chunk_problems


def drop_unservable_chunks(store) -> list:
    """Stage the deletion of every chunk `check` would find a problem with; returns [{"raw_id", "turns",
    "reason"}] of them (turns: how many the chunk held, None when its turns record does not read)."""
    raw = RawStore(store)
    dropped = [{"raw_id": raw_id, "turns": _turn_count(raw, raw_id), "reason": problems[0].reason}
               for raw_id, problems in chunk_problems(raw)]
    if dropped:
        batch = store.batch()
        for chunk in dropped:
            batch.delete(RAW_CHUNK_TABLE, chunk["raw_id"])
            batch.delete(RAW_TURNS_TABLE, chunk["raw_id"])
        store.stage(batch.runs)
    return dropped


def _turn_count(raw: RawStore, raw_id: str) -> int | None:
    try:
        return len(raw.turns(raw_id))
    except (CorruptionError, InputError):  # damaged turns, or turns of a chunk record that was lost
        return None
