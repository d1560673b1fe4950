"""What a chunk record says beyond its bytes: the meta its turns imply, and the order chunks are read in."""

from __future__ import annotations

from engine.raw.turn_time import ts_order


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
