"""The raw.turns record of a chunk: its turns as columns (MANIFEST.spec section 8 has the bytes).

A record holds the chunk's conversation, its speakers once, its first turn time, and the turn rows as one
zstd frame of a msgpack array of columns: speaker index, turn time (delta-coded ints, see turn_time), source
id split into a shared prefix and a delta-coded number, the gap before each span and its length, the extra
fields, the session (a table of distinct values and an index), the attachments and the source id a turn replies
to (a distance back to a turn of the same chunk where it can). Columns cost far less than a map per turn, written
once at ingest and read by every R2G run; a column no turn uses is one nil.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from operator import add, sub
from types import NoneType

from engine.codec import pack, unpack
from engine.errors import CorruptionError, EngineError
from engine.format import RAW_TURN_COLUMNS, RAW_TURN_COLUMNS_ADDED_IN_4, RAW_TURNS_TABLE
from engine.raw.decompress import decompress_bounded
from engine.raw.turn_time import decode_ts, encode_ts_column

DIGITS = "0123456789"
SOURCE_NUMBER_MAX_DIGITS = 18  # fits msgpack's int64


@dataclass(slots=True)
class TurnColumns:
    """A chunk's turns as parallel columns in chunk order (ingest builds these without a dict per turn):
    speaker (str or None), ts (ISO 8601 or None), source_id, offset and length of the span, extra (a dict;
    None or empty for none), session (str or None), attachments (a list of maps with a str "kind" and str
    values; None or empty for none) and reply_to (the source id the turn answers, or None). The last three may
    be None as a whole: no turn has one. Spans must be in order, disjoint and inside the chunk. encoded_ts, if
    given, is encode_ts_column(ts), made for a whole batch at once."""

    speakers: list
    ts: list
    source_ids: list
    offsets: list
    lengths: list
    extras: list
    sessions: list | None = None
    attachments: list | None = None
    reply_to: list | None = None
    encoded_ts: list | None = None

    @classmethod
    def from_dicts(cls, turns: list[dict]) -> "TurnColumns":
        return cls(*([turn.get(key) for turn in turns] for key in ("speaker", "ts")),
                   [turn["source_id"] for turn in turns], [turn["offset"] for turn in turns],
                   [turn["length"] for turn in turns],
                   *([turn.get(key) for turn in turns] for key in ("extra", "session", "attachments", "reply_to")))

    @classmethod
    def many(cls, chunks) -> list["TurnColumns"]:
        """TurnColumns of several chunks, each given as (speakers, ts, source_ids, offsets, lengths, extras[,
        sessions, attachments, reply_to]), with the turn times of all of them encoded by one encode_ts_column
        call (a batch's long column goes to numpy at once)."""
        chunks = list(chunks)
        encoded = encode_ts_column(list(chain.from_iterable(chunk[1] for chunk in chunks)))
        columns, end = [], 0
        for chunk in chunks:
            start, end = end, end + len(chunk[1])
            columns.append(cls(*chunk, encoded_ts=encoded[start:end]))
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
    _check_optional_str(columns.sessions, "session")
    _check_optional_str(columns.reply_to, "reply_to")
    session_table, session_column = _sessions(columns.sessions)
    attachments = [items or None for items in columns.attachments] if any(columns.attachments or ()) else None
    payload = [speaker_column, _deltas(ts_column), list(prefix_index), prefix_column, _deltas(numbers), gaps,
               lengths, extras, session_table, session_column, attachments,
               _reply_column(columns.reply_to, columns.source_ids)]
    first_ts = next((value for value in ts_column if value is not None), None)
    return {"conv_id": conv_id, "ts": first_ts, "speakers": speakers, "turns": pack(payload)}


def _check_optional_str(column: list | None, name: str) -> None:
    if column is not None and not set(map(type, column)) <= {str, NoneType}:  # C-level over the column
        raise EngineError(f"a turn's {name} must be a str or None")


def _unused(column: list | None) -> bool:
    return column is None or column.count(None) == len(column)


def _sessions(sessions: list | None) -> tuple[list | None, list | None]:
    """(distinct sessions in order of first appearance, each turn's index into them); (None, None) when no turn
    has a session. A chunk holds one session or a few, each repeated over its turns."""
    if _unused(sessions):
        return None, None
    table = {session: index for index, session in enumerate(dict.fromkeys(sessions))}
    return list(table), list(map(table.__getitem__, sessions))


def _reply_column(reply_to: list | None, source_ids: list) -> list | None:
    """Each turn's reply_to as the distance back to the latest earlier turn of the chunk with that source id (the
    usual reply answers a turn just before it: a small int, not a repeated id), else the id itself; None when
    no turn has one."""
    if _unused(reply_to):
        return None
    latest: dict = {}
    column = []
    for row, (target, source_id) in enumerate(zip(reply_to, source_ids)):
        column.append(row - latest[target] if target in latest else target)
        latest[source_id] = row
    return column


def decode_turns(raw_id: str, record: dict) -> list[dict]:
    """Turn dicts: turn_id, conv_id, speaker, ts (ISO 8601 or None), source_id, raw_ref {raw_id, offset,
    length} (bytes of the decompressed chunk), extra (a dict, empty when the input had none), session (str or
    None), attachments (a list, empty when none) and reply_to (a source id or None). A payload of the first 8
    columns alone (format version 3) reads as turns without session, attachments or reply_to."""
    where = f"{RAW_TURNS_TABLE}/{raw_id}"
    payload = unpack(decompress_bounded(record["turns"], where), where)
    conv_id, speakers = record["conv_id"], record["speakers"]
    turns = []
    try:
        if len(payload) == len(RAW_TURN_COLUMNS) - len(RAW_TURN_COLUMNS_ADDED_IN_4):
            payload = [*payload, *[None] * len(RAW_TURN_COLUMNS_ADDED_IN_4)]
        (speaker_column, ts_column, prefixes, prefix_column, numbers, gaps, lengths, extras, session_table,
         session_column, attachments, reply_column) = payload
        count = len(speaker_column)
        extras, attachments, reply_column = ([None] * count if column is None else column
                                             for column in (extras, attachments, reply_column))
        sessions = _session_values(session_table, session_column, count)
        if any(len(column) != count for column in (ts_column, prefix_column, numbers, gaps, lengths, extras,
                                                   sessions, attachments, reply_column)):
            raise ValueError("columns of different lengths")
        end = 0
        rows = zip(speaker_column, _undeltas(ts_column), prefix_column, _undeltas(numbers), gaps, lengths, extras,
                   sessions, attachments, reply_column)
        for ordinal, (speaker, ts, prefix, number, gap, length, extra, session, attached, reply) in enumerate(rows):
            if min(speaker, prefix, gap, length) < 0 or not _is_extra(extra) \
                    or not _is_number(number) or not _is_attachments(attached):
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
                "session": session,
                "attachments": attached or [],
                "reply_to": _reply_to(reply, turns),
            })
    except (TypeError, ValueError, IndexError, OverflowError):
        raise CorruptionError(where, None, f"malformed turn row {len(turns)} (expected the columns "
                                           f"{'/'.join(RAW_TURN_COLUMNS)})") from None
    return turns


def turn_spans(raw_id: str, record: dict) -> tuple[list, list, list]:
    """(offsets, lengths, times) of a chunk's turns, in chunk order: their spans in bytes of the decompressed chunk
    and their times as stored (turn_time: naive seconds, an ISO 8601 str or None), decoding nothing else."""
    where = f"{RAW_TURNS_TABLE}/{raw_id}"
    payload = unpack(decompress_bounded(record["turns"], where), where)
    try:
        ts_column, gaps, lengths = payload[1], payload[5], payload[6]
        if len(gaps) != len(lengths) or len(ts_column) != len(lengths) or min(gaps + lengths, default=0) < 0:
            raise ValueError("columns of different lengths")
        offsets, end = [], 0
        for gap, length in zip(gaps, lengths):
            offsets.append(end + gap)
            end += gap + length
        return offsets, list(lengths), _undeltas(ts_column)
    except (TypeError, ValueError, IndexError, KeyError):
        raise CorruptionError(where, None, "malformed turn spans (expected the columns "
                                           f"{'/'.join(RAW_TURN_COLUMNS)})") from None


def _session_values(table, column, count: int) -> list:
    """Each turn's session from the stored table and index column (both nil: no turn has one)."""
    if table is None and column is None:
        return [None] * count
    if any(type(index) is not int or index < 0 for index in column) or \
            any(session is not None and type(session) is not str for session in table):
        raise ValueError("a session index is an int >= 0 into a table of str or nil")
    return list(map(table.__getitem__, column))


def _reply_to(reply, earlier: list) -> str | None:
    """A stored reply_to: nil, a str source id, or k >= 1 for the source id of the turn k rows back."""
    if reply is None or type(reply) is str:
        return reply
    if type(reply) is not int or not 1 <= reply <= len(earlier):
        raise ValueError("a reply distance is an int from 1 to the turns before it")
    return earlier[-reply]["source_id"]


def _is_number(value) -> bool:
    return value is None or (type(value) is int and value >= 0)


def _is_extra(value) -> bool:
    return value is None or isinstance(value, dict)


def _is_attachments(value) -> bool:
    """nil, or a non-empty array of maps of str to str, each with a "kind"."""
    return value is None or (type(value) is list and bool(value) and all(
        type(item) is dict and type(item.get("kind")) is str
        and all(type(key) is str and type(text) is str for key, text in item.items()) for item in value))
