"""Format 3 → 4: each turn's session, attachments and reply_to as columns of its raw.turns record (MANIFEST.spec
§8, §13).

Version 3 stored none of the three: what they would hold is in the turn's source id and extra, in the terms of
the input format that wrote it, which only memctl's ingest adapters know. The caller (memctl migrate) hands
that knowledge in as `hooks["turn_fields"]`: a function of (source_id, extra) returning {"session",
"attachments", "reply_to", "extra": what stays extra} (memctl.ingest.format3.generic_fields). Without it the
three stay empty and extra is kept, which reads as version 3 did.

Rewritten: every raw.turns record whose payload has version 3's 8 columns, re-encoded with 12 by today's
encoder (engine.raw.turn_columns), its conv_id, seq, first time and speakers unchanged. The chunk's bytes, its
spans, raw_id and refcount do not change, so no raw.chunk record or blob is touched.
"""

from __future__ import annotations

from engine.blob_files import compress_all
from engine.codec import unpack
from engine.format import RAW_TURN_COLUMNS, RAW_TURN_COLUMNS_ADDED_IN_4, RAW_TURNS_TABLE
from engine.migration.steps import Changes
from engine.raw.decompress import decompress_bounded
from engine.raw.turn_columns import TurnColumns, decode_turns, encode_turns

NAME = "turn_fields"
TO_VERSION = 4
HOOK = "turn_fields"
_VERSION_3_COLUMNS = len(RAW_TURN_COLUMNS) - len(RAW_TURN_COLUMNS_ADDED_IN_4)


def plan(store, hooks: dict) -> Changes:
    mapping = hooks.get(HOOK)
    raw_ids, records = [], []
    counts = {"chunks": 0, "turns": 0, "sessions": 0, "attachments": 0, "replies": 0}
    for raw_id, record in store.scan(RAW_TURNS_TABLE):
        if _column_count(raw_id, record) != _VERSION_3_COLUMNS:
            continue
        turns = [_upgraded(turn, mapping) for turn in decode_turns(raw_id, record)]
        columns = TurnColumns.from_dicts(turns)
        upgraded = {**encode_turns(record["conv_id"], columns, _chunk_end(turns)), "seq": record["seq"]}
        raw_ids.append(raw_id)
        records.append(upgraded)
        counts["chunks"] += 1
        counts["turns"] += len(turns)
        counts["sessions"] += sum(turn["session"] is not None for turn in turns)
        counts["attachments"] += sum(bool(turn["attachments"]) for turn in turns)
        counts["replies"] += sum(turn["reply_to"] is not None for turn in turns)
    frames = compress_all([record["turns"] for record in records]) if records else []
    for record, frame in zip(records, frames):
        record["turns"] = frame
    batch = store.batch()
    batch.put_many(RAW_TURNS_TABLE, raw_ids, records)
    return Changes(counts, batch.runs)


def _column_count(raw_id: str, record: dict) -> int:
    where = f"{RAW_TURNS_TABLE}/{raw_id}"
    return len(unpack(decompress_bounded(record["turns"], where), where))


def _upgraded(turn: dict, mapping) -> dict:
    """The turn as TurnColumns.from_dicts takes it, with its generic fields from `mapping` (none without one)."""
    fields = {"session": None, "attachments": (), "reply_to": None, "extra": turn["extra"]}
    if mapping is not None:
        fields.update(mapping(turn["source_id"], turn["extra"]))
    reference = turn["raw_ref"]
    return {"speaker": turn["speaker"], "ts": turn["ts"], "source_id": turn["source_id"],
            "offset": reference["offset"], "length": reference["length"], "extra": fields["extra"],
            "session": fields["session"], "attachments": list(fields["attachments"]) or None,
            "reply_to": fields["reply_to"]}


def _chunk_end(turns: list) -> int:
    """The end of the last span: encode_turns checks the spans lie inside the chunk, and they did when stored."""
    return turns[-1]["offset"] + turns[-1]["length"]
