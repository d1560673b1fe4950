"""Chunks as RawStore lists them: typed rows of the raw.chunk and raw.turns records, the order chunks are read
in, and the meta a chunk's turns imply. Callers read these, never the records, so the stored form can change
behind them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from engine.format import RAW_MIME_TEXT
from engine.raw.turn_time import decode_ts, ts_order


class Chunk(NamedTuple):
    """One stored chunk (its raw.chunk record)."""

    raw_id: str
    length: int  # bytes, decompressed
    stored_bytes: int  # bytes of its blob file
    created_at: int  # UTC epoch seconds of its first ingest (its blob's day)
    refcount: int
    mime: str
    meta: dict  # what ingest gave beside the turns; the stored mapping itself: do not change it


@dataclass(frozen=True, slots=True)
class TurnChunk:
    """A chunk stored with turns (its raw.turns record), as the conversations are read in order;
    RawStore.chunk_turns decodes its turns without reading the record again."""

    raw_id: str
    conv_id: str
    ts: str | None  # its first turn's time, ISO 8601 (None: no turn has one)
    seq: int  # storing order
    _record: dict = field(repr=False, compare=False)

    @property
    def order(self) -> tuple:
        """Its place in turn_chunks()'s order (chunk_order)."""
        return chunk_order(self._record)


def chunk_of(raw_id: str, record: dict | None) -> Chunk | None:
    if record is None:
        return None
    return Chunk(raw_id, record["len_bytes"], record["stored_bytes"], record["created_at"], record["refcount"],
                 record.get("mime", RAW_MIME_TEXT), record.get("meta", {}))


def turn_chunk_of(raw_id: str, record: dict) -> TurnChunk:
    return TurnChunk(raw_id, record["conv_id"], decode_ts(record["ts"]), record["seq"], record)


def turns_meta(turns: list[dict]) -> dict:
    speakers = {turn["speaker"] for turn in turns}
    return {"conv_id": turns[0]["conv_id"], "role": speakers.pop() if len(speakers) == 1 else None,
            "ts": next((turn["ts"] for turn in turns if turn["ts"]), None),
            "source_id": source_range(turns[0]["source_id"], turns[-1]["source_id"])}


def source_range(first: str, last: str) -> str:
    """"D1:1..D2:7"; positions in the same file share its name: "notes.txt#1..40"."""
    if first == last:
        return first
    first_file, hash_sign, _ = first.rpartition("#")
    last_file, _, last_line = last.rpartition("#")
    if hash_sign and first_file == last_file:
        return f"{first}..{last_line}"
    return f"{first}..{last}"


def chunk_order(record: dict) -> tuple:
    """Conversations by conv_id; inside one, chunks by their first turn time (untimed ones last), then in the
    order they were stored."""
    seconds = ts_order(record["ts"])
    return record["conv_id"], seconds is None, seconds or 0, record["seq"]
