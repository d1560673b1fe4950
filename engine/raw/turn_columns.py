"""The raw.turns record of a chunk: its turns as columns (MANIFEST.spec section 8 has the bytes).

A record holds the chunk's conversation, its speakers once, its first turn time, and the turn rows as one
zstd frame of a msgpack array of columns: speaker index, turn time (delta-coded ints, see turn_time), source
id split into a shared prefix and a delta-coded number, the gap before each span and its length, and the
extra fields. Columns cost far less than a map per turn, written once at ingest and read by every R2G run.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from operator import add, sub

from engine.codec import pack, unpack
from engine.errors import CorruptionError, EngineError
from engine.format import RAW_TURN_COLUMNS, RAW_TURNS_TABLE
from engine.raw.decompress import decompress_bounded
from engine.raw.turn_time import decode_ts, encode_ts_column

DIGITS = "0123456789"
SOURCE_NUMBER_MAX_DIGITS = 18  # fits msgpack's int64


@dataclass(slots=True)
class TurnColumns:
    """A chunk's turns as parallel columns in chunk order (ingest builds these without a dict per turn):
    speaker (str or None), ts (ISO 8601 or None), source_id, offset and length of the span, extra (a dict;
    None or empty for none). Spans must be in order, disjoint and inside the chunk. encoded_ts, if given, is
    encode_ts_column(ts), made for a whole batch at once."""

    speakers: list
    ts: list
    source_ids: list
    offsets: list
    lengths: list
    extras: list
    encoded_ts: list | None = None

    @classmethod
    def from_dicts(cls, turns: list[dict]) -> "TurnColumns":
        return cls([turn.get("speaker") for turn in turns], [turn.get("ts") for turn in turns],
                   [turn["source_id"] for turn in turns], [turn["offset"] for turn in turns],
                   [turn["length"] for turn in turns], [turn.get("extra") for turn in turns])

    @classmethod
    def many(cls, chunks) -> list["TurnColumns"]:
        """TurnColumns of several chunks, each given as (speakers, ts, source_ids, offsets, lengths, extras), with
        the turn times of all of them encoded by one encode_ts_column call (a batch's long column goes to numpy
        at once)."""
        chunks = list(chunks)
        encoded = encode_ts_column(list(chain.from_iterable(chunk[1] for chunk in chunks)))
        columns, end = [], 0
        for speakers, ts, source_ids, offsets, lengths, extras in chunks:
            start, end = end, end + len(ts)
            columns.append(cls(speakers, ts, source_ids, offsets, lengths, extras, encoded[start:end]))
        return columns


def split_source_id(source_id: str) -> tuple[str, int | None]:
    """(prefix, number) with prefix + str(number) == source_id, number the trailing decimal digits without a
    leading zero ("D1:3" → ("D1:", 3), "a.txt#012" → ("a.txt#0", 12)); (source_id, None) when there are none.
    Consecutive turns differ only in the number, which is stored as a small delta."""
    tail = source_id[len(source_id.rstrip(DIGITS)):]
    digits = tail.lstrip("0") or tail[-1:]
    if not digits or len(digits) > SOURCE_NUMBER_MAX_DIGITS:
        return source_id, None
    return source_id[: len(source_id) - len(digits)], int(digits)


# Ids that open a new prefix repeat across conversations and chunks (LoCoMo's `D1:1`, every session's first id).
_split_source_id_cached = lru_cache(maxsize=1 << 12)(split_source_id)


def _split_source_ids(source_ids: list[str]) -> tuple[dict, list[int], list]:
    """split_source_id over a column: (prefix → its index, each id's prefix index, each id's number). An id
    that is the previous prefix followed by a plain decimal number (the common case: `notes.txt#41` after
    `notes.txt#40`) skips the general split, which gives the same answer for it."""
    prefix_index: dict = {}
    prefix_column, numbers = [], []
    prefix, index = None, -1
    for source_id in source_ids:
        rest = source_id[len(prefix):] if prefix is not None and source_id.startswith(prefix) else ""
        if rest.isascii() and rest.isdigit() and rest[0] != "0" and len(rest) <= SOURCE_NUMBER_MAX_DIGITS:
            number = int(rest)
        else:
            prefix, number = _split_source_id_cached(source_id)
            index = prefix_index.setdefault(prefix, len(prefix_index))
            if number is None:
                prefix = None  # a prefix that may end in a digit: the next id needs the general split
        prefix_column.append(index)
        numbers.append(number)
    return prefix_index, prefix_column, numbers


def _deltas(values: list) -> list:
    """Ints as differences from the previous int of the column (the first from 0); other values as they are."""
    if set(map(type, values)) == {int}:  # the usual column, at C speed
        return list(map(sub, values, [0, *values[:-1]]))
    previous = 0
    column = []
    for value in values:
        if type(value) is int:
            value, previous = value - previous, value
        column.append(value)
    return column


def _undeltas(column: list) -> list:
    previous = 0
    values = []
    for value in column:
        if type(value) is int:
            value = previous = previous + value
        values.append(value)
    return values


def encode_turns(conv_id: str, columns: TurnColumns, chunk_length: int) -> dict:
    """The raw.turns record (without its seq) of a chunk's turns: the rows as columns (MANIFEST.spec section
    8), packed but not yet compressed: "turns" becomes one zstd frame when the writer compresses the batch's
    records together (RawWriter.publish). Columns are built with map() over C-level operations where they can
    be: a chunk's turns are encoded once per ingest, and per-turn Python work is what an ingest spends most
    on."""
    offsets, lengths = columns.offsets, columns.lengths
    ends = list(map(add, offsets, lengths))
    gaps = list(map(sub, offsets, [0, *ends[:-1]]))
    if min(gaps) < 0 or min(lengths) < 0 or ends[-1] > chunk_length:
        raise EngineError(f"turn spans are out of order or outside the {chunk_length}-byte chunk")
    speakers = list(dict.fromkeys(columns.speakers))
    speaker_column = list(map({speaker: index for index, speaker in enumerate(speakers)}.__getitem__,
                              columns.speakers))
    ts_column = columns.encoded_ts if columns.encoded_ts is not None else encode_ts_column(columns.ts)
    prefix_index, prefix_column, numbers = _split_source_ids(columns.source_ids)
    extras = [extra or None for extra in columns.extras] if any(columns.extras) else None
    payload = [speaker_column, _deltas(ts_column), list(prefix_index), prefix_column, _deltas(numbers), gaps,
               lengths, extras]
    first_ts = next((value for value in ts_column if value is not None), None)
    return {"conv_id": conv_id, "ts": first_ts, "speakers": speakers, "turns": pack(payload)}


def decode_turns(raw_id: str, record: dict) -> list[dict]:
    """Turn dicts: turn_id, conv_id, speaker, ts (ISO 8601 or None), source_id, raw_ref {raw_id, offset,
    length} (bytes of the decompressed chunk) and extra (a dict, empty when the input had none)."""
    where = f"{RAW_TURNS_TABLE}/{raw_id}"
    payload = unpack(decompress_bounded(record["turns"], where), where)
    conv_id, speakers = record["conv_id"], record["speakers"]
    turns = []
    try:
        speaker_column, ts_column, prefixes, prefix_column, numbers, gaps, lengths, extras = payload
        count = len(speaker_column)
        extras = [None] * count if extras is None else extras
        if any(len(column) != count for column in (ts_column, prefix_column, numbers, gaps, lengths, extras)):
            raise ValueError("columns of different lengths")
        end = 0
        rows = zip(speaker_column, _undeltas(ts_column), prefix_column, _undeltas(numbers), gaps, lengths, extras)
        for ordinal, (speaker, ts, prefix, number, gap, length, extra) in enumerate(rows):
            if min(speaker, prefix, gap, length) < 0 or not _is_extra(extra) or not _is_number(number):
                raise ValueError(ordinal)
            offset = end + gap
            end = offset + length
            turns.append({
                "turn_id": f"{raw_id}:{ordinal}",
                "conv_id": conv_id,
                "speaker": speakers[speaker],
                "ts": decode_ts(ts),
                "source_id": prefixes[prefix] + ("" if number is None else str(number)),
                "raw_ref": {"raw_id": raw_id, "offset": offset, "length": length},
                "extra": extra or {},
            })
    except (TypeError, ValueError, IndexError, OverflowError):
        raise CorruptionError(where, None, f"malformed turn row {len(turns)} (expected the columns "
                                           f"{'/'.join(RAW_TURN_COLUMNS)})") from None
    return turns


def _is_number(value) -> bool:
    return value is None or (type(value) is int and value >= 0)


def _is_extra(value) -> bool:
    return value is None or isinstance(value, dict)
