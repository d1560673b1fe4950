"""RawStore: immutable raw chunks, stored once by content as zstd blobs, and the turns that cite them.

A chunk's bytes are addressed by their sha256: raw_id = "raw_" + its first 16 hex digits; the blob lives at
`raw/YYYY/MM/DD/<sha[0:2]>/raw_<sha256>.blob.zst` (the UTC day of its first ingest, `created_at`) and its
metadata is the record `raw.chunk/<raw_id>`. The turns a chunk holds are one record, `raw.turns/<raw_id>`: its
conversation, its speakers once, and the turns as compressed columns (MANIFEST.spec section 8 has the bytes).

Publishing (DESIGN invariant 2, durable before named): a batch writes each new blob under its final name without
an fsync (see BlobFileWriter), makes the whole filesystem durable with ONE syncfs, and only then lets its WAL
record (which names them) commit. A bulk writer gives its chunks ahead (RawWriter.write_ahead): their files are
written first and the syncfs runs on a thread while the records are encoded, still before the commit. A crash
before that syncfs ends can leave blobs whose data never reached the disk;
that is safe because no committed record names them: a later put of the same content trusts the record, not the
file, and writes the blob again, and `gc()` deletes such orphans.

References are counted on the chunk record: `put_turns` adds one per turn, `acquire`/`release` move counts,
and releasing the last reference deletes both records and, after that commit, the blob file.

Reading checks before trusting: the frame's declared content size against the limit and the record (before
any allocation), a window-size cap, a streamed byte counter for frames without a declared size, then the
length and sha256 against the record. Any mismatch is a CorruptionError naming the blob file.
"""

from __future__ import annotations

import hashlib
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from itertools import repeat
from operator import add, sub

import zstandard

from engine import fs
from engine.background import Background
from engine.blob_files import BlobFileWriter, compress_all
from engine.codec import pack, unpack
from engine.errors import CorruptionError, EngineError, InputError
from engine.format import (
    RAW_BLOB_MAX_BYTES,
    RAW_BLOB_SUFFIX,
    RAW_CHUNK_TABLE,
    RAW_DIR,
    RAW_ID_HEX_DIGITS,
    RAW_ID_PREFIX,
    RAW_MIME_TEXT,
    RAW_SEQUENCE_COUNTER,
    RAW_TURN_COLUMNS,
    RAW_TURNS_TABLE,
    RAW_ZSTD_LEVEL,
    RAW_ZSTD_MAX_WINDOW_BYTES,
    TEMP_SUFFIX,
)

BLOB_NAME = re.compile(rf"{RAW_ID_PREFIX}([0-9a-f]{{64}}){re.escape(RAW_BLOB_SUFFIX)}")
STREAM_READ_BYTES = 1 << 20
# zstd never expands its input by more than about 1/128 plus a frame header; a bigger blob file is damaged.
COMPRESSED_SLACK = RAW_BLOB_MAX_BYTES // 128 + 4096
# Naive turn times are stored as seconds from this wall-clock instant (no time zone is implied).
NAIVE_EPOCH = datetime(1970, 1, 1)
NAIVE_EPOCH_ORDINAL = NAIVE_EPOCH.toordinal()
UTC_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
SECONDS_PER_DAY = 86400
# The shape datetime.isoformat() gives a naive time with whole seconds: such a string needs no round-trip check.
NAIVE_SECONDS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")
NAIVE_SECONDS_LINES = re.compile(r"(?:[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\n)*")
UTC_SUFFIX = "+00:00"
NAIVE_SECONDS_WIDTH = 19
NAIVE_SECONDS_DIGIT_COLUMNS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
NUMPY_TS_MIN_VALUES = 512  # below this, numpy's per-call overhead outweighs its speed
DAYS_IN_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
DAYS_FROM_MARCH_0000_TO_EPOCH = 719468
DIGITS = "0123456789"
SOURCE_NUMBER_MAX_DIGITS = 18  # fits msgpack's int64


def raw_id_for(sha256_hex: str) -> str:
    return RAW_ID_PREFIX + sha256_hex[:RAW_ID_HEX_DIGITS]


def blob_path(sha256_hex: str, created_at: int) -> str:
    """Path of a blob relative to the store directory (always with "/" separators); `created_at` is the
    chunk record's UTC epoch seconds."""
    day_directory = _day_directory(created_at // SECONDS_PER_DAY)
    return f"{day_directory}/{sha256_hex[:2]}/{RAW_ID_PREFIX}{sha256_hex}{RAW_BLOB_SUFFIX}"


@lru_cache(maxsize=64)
def _day_directory(day_number: int) -> str:
    """`raw/YYYY/MM/DD` of a UTC day counted from the epoch (formatting a date costs more than a whole put's
    other path work, and a batch's chunks share their day)."""
    day = datetime.fromtimestamp(day_number * SECONDS_PER_DAY, timezone.utc)
    return f"{RAW_DIR}/{day:%Y/%m/%d}"


def record_blob_path(record: dict) -> str:
    return blob_path(record["sha256"].hex(), record["created_at"])


def decompress_bounded(blob: bytes, path: str, limit: int = RAW_BLOB_MAX_BYTES,
                       expected_length: int | None = None) -> bytes:
    """Decompress one zstd frame without ever holding more than `limit` output bytes."""
    try:
        declared = zstandard.frame_content_size(blob)
    except zstandard.ZstdError as error:
        raise CorruptionError(path, 0, f"not a zstd frame ({error})") from None
    if declared > limit:
        raise CorruptionError(path, 0, f"zstd frame declares {declared:,} bytes, above the {limit:,}-byte "
                                       "blob limit; refused before decompression")
    if expected_length is not None and declared >= 0 and declared != expected_length:
        raise CorruptionError(path, 0, f"zstd frame declares {declared:,} bytes, the record says "
                                       f"{expected_length:,}")
    decompressor = zstandard.ZstdDecompressor(max_window_size=RAW_ZSTD_MAX_WINDOW_BYTES)
    try:
        if declared >= 0:
            return decompressor.decompress(blob, max_output_size=declared)
        return _decompress_streamed(decompressor, blob, path, limit)
    except zstandard.ZstdError as error:
        raise CorruptionError(path, None, f"zstd frame does not decompress ({error})") from None


def _decompress_streamed(decompressor, blob: bytes, path: str, limit: int) -> bytes:
    output = bytearray()
    with decompressor.stream_reader(blob) as reader:
        while piece := reader.read(STREAM_READ_BYTES):
            output += piece
            if len(output) > limit:
                raise CorruptionError(path, None, f"zstd frame without a declared size decompresses past the "
                                                  f"{limit:,}-byte blob limit; stopped there")
    return bytes(output)


# --- turn times ---------------------------------------------------------------------------------------------


def encode_ts(ts: str | None) -> int | str | None:
    """A turn's ISO 8601 time as stored: an int when it is a naive date-time with whole seconds (seconds from
    1970-01-01T00:00:00 on the same wall clock: the inputs carry no zone, and none is invented), else the ISO
    string itself (a bare date, a UTC offset, fractions of a second), so decoding gives back the same text."""
    if ts is None:
        return None
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return ts
    if not NAIVE_SECONDS.fullmatch(ts) and (moment.tzinfo is not None or moment.microsecond
                                           or moment.isoformat() != ts):
        return ts
    return _naive_seconds(moment)


def _naive_seconds(moment: datetime) -> int:
    # Day and clock arithmetic on ints: a timedelta subtraction and division cost twice as much.
    return ((moment.toordinal() - NAIVE_EPOCH_ORDINAL) * SECONDS_PER_DAY + moment.hour * 3600 + moment.minute * 60
            + moment.second)


def _encode_ts_column(values: list) -> dict:
    """{value: encode_ts(value)} for distinct turn times. A column of naive whole-second times only (what every
    parser but JSONL and messages gives) is checked by one regex over all of it instead of one per value, and
    converted by C-level maps (read as UTC, a naive time's POSIX timestamp is its seconds from NAIVE_EPOCH,
    exact as a float)."""
    if None not in values and NAIVE_SECONDS_LINES.fullmatch("\n".join(values) + "\n"):
        try:
            moments = map(datetime.fromisoformat, map(add, values, repeat(UTC_SUFFIX)))
            return dict(zip(values, map(int, map(datetime.timestamp, moments))))
        except ValueError:
            pass  # a field out of range (month 13): such a value stays a string, as encode_ts decides
    return {ts: encode_ts(ts) for ts in values}


def encode_ts_column(values: list) -> list:
    """encode_ts of every value of a column of turn times (repeats included), for a batch's turns at once. A long
    column of mostly distinct times (as its first NUMPY_TS_MIN_VALUES are) is converted by numpy value by
    value: finding its distinct values first would hash every string anew, half as much again. Otherwise each
    distinct time is converted once (the turns of a session share theirs), by numpy when there are many."""
    mostly_distinct = len(values) >= NUMPY_TS_MIN_VALUES and \
        2 * len(set(values[:NUMPY_TS_MIN_VALUES])) > NUMPY_TS_MIN_VALUES
    if mostly_distinct:
        seconds = _naive_seconds_numpy(values)
        if seconds is not None:
            return seconds
    distinct = list(dict.fromkeys(values))
    if not mostly_distinct and len(distinct) >= NUMPY_TS_MIN_VALUES:  # numpy refused the column: no second try
        seconds = _naive_seconds_numpy(distinct)
        if seconds is not None:
            return list(map(dict(zip(distinct, seconds)).__getitem__, values))
    codes = _encode_ts_column(distinct)
    return list(map(codes.__getitem__, values))


def _naive_seconds_numpy(values: list) -> list[int] | None:
    """_naive_seconds of `values` when every one is a valid naive whole-second ISO time (NAIVE_SECONDS, fields
    in range), else None: the digits are read as a matrix of fixed-width rows and the date turned into days
    by the proleptic Gregorian civil-to-days formula (H. Hinnant), which date.toordinal() also follows."""
    import numpy as np

    try:
        joined = "".join(values)
    except TypeError:
        return None  # an untimed turn (None)
    if len(joined) != NAIVE_SECONDS_WIDTH * len(values) or not joined.isascii():
        return None
    rows = np.frombuffer(joined.encode("ascii"), dtype=np.uint8).reshape(-1, NAIVE_SECONDS_WIDTH)
    digits = rows[:, NAIVE_SECONDS_DIGIT_COLUMNS].astype(np.int64) - ord("0")
    if ((rows[:, [4, 7, 10, 13, 16]] != np.frombuffer(b"--T::", dtype=np.uint8)).any()
            or (digits < 0).any() or (digits > 9).any()):
        return None
    year = ((digits[:, 0] * 10 + digits[:, 1]) * 10 + digits[:, 2]) * 10 + digits[:, 3]
    month, day, hour, minute, second = (digits[:, index] * 10 + digits[:, index + 1] for index in range(4, 14, 2))
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    month_days = np.array(DAYS_IN_MONTH)[np.clip(month, 0, 12)] + ((month == 2) & leap)
    if not ((year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & (day <= month_days) & (hour < 24)
            & (minute < 60) & (second < 60)).all():
        return None
    shifted_year = year - (month <= 2)  # years start in March, so that a leap day ends one
    era_year = shifted_year % 400
    day_of_year = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    day_of_era = era_year * 365 + era_year // 4 - era_year // 100 + day_of_year
    days = (shifted_year // 400) * 146097 + day_of_era - DAYS_FROM_MARCH_0000_TO_EPOCH
    return (days * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second).tolist()


def decode_ts(value: int | str | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return (NAIVE_EPOCH + timedelta(seconds=value)).isoformat()


def ts_order(value: int | str | None) -> float | None:
    """Seconds for ordering turn times: naive times as if they were UTC, a bare date as its midnight."""
    if value is None or isinstance(value, int):
        return value
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return (moment - NAIVE_EPOCH).total_seconds()
    return (moment - UTC_EPOCH).total_seconds()


# --- turn rows ----------------------------------------------------------------------------------------------


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


def _turns_meta(turns: list[dict]) -> dict:
    speakers = {turn["speaker"] for turn in turns}
    return {"conv_id": turns[0]["conv_id"], "role": speakers.pop() if len(speakers) == 1 else None,
            "ts": next((turn["ts"] for turn in turns if turn["ts"]), None),
            "source_id": _source_range(turns[0]["source_id"], turns[-1]["source_id"])}


def _source_range(first: str, last: str) -> str:
    """"D1:1..D2:7"; positions in the same file share its name: "notes.txt#1..40"."""
    if first == last:
        return first
    first_file, hash_sign, _ = first.rpartition("#")
    last_file, _, last_line = last.rpartition("#")
    if hash_sign and first_file == last_file:
        return f"{first}..{last_line}"
    return f"{first}..{last}"


def _chunk_order(record: dict) -> tuple:
    """Conversations by conv_id; inside one, chunks by their first turn time (untimed ones last), then in the
    order they were stored."""
    seconds = ts_order(record["ts"])
    return record["conv_id"], seconds is None, seconds or 0, record["seq"]


@dataclass(slots=True)
class PutResult:
    raw_id: str
    new: bool
    stored_bytes: int  # compressed blob bytes this put wrote (turn rows: RawWriter.deferred_stored_bytes)


class RawStore:
    def __init__(self, store, limit: int = RAW_BLOB_MAX_BYTES, clock=None):
        self.store = store
        self.limit = limit
        self._clock = clock or (lambda: datetime.now(timezone.utc))

    # --- reading -------------------------------------------------------------------------------------------

    def get(self, raw_id: str) -> dict | None:
        return self.store.get(RAW_CHUNK_TABLE, raw_id)

    def scan(self, prefix: str = ""):
        """(raw_id, record) in raw_id order."""
        return self.store.scan(RAW_CHUNK_TABLE, prefix)

    def describe(self, raw_id: str, record: dict) -> dict:
        """A chunk record for people and JSON: its mime, sha256 in hex, created_at in ISO 8601, the blob's path,
        and for a chunk stored with turns a meta completed from them (conv_id, role: its only speaker, ts: the
        first turn time, source_id: the first and last turns' ids)."""
        created = datetime.fromtimestamp(record["created_at"], timezone.utc)
        described = {"raw_id": raw_id, "mime": RAW_MIME_TEXT, **record, "sha256": record["sha256"].hex(),
                     "created_at": created.isoformat(timespec="seconds"), "path": record_blob_path(record)}
        turns_record = self.store.get(RAW_TURNS_TABLE, raw_id)
        if turns_record is not None:
            described["meta"] = {**_turns_meta(decode_turns(raw_id, turns_record)), **record.get("meta", {})}
        return described

    def read(self, raw_id: str) -> bytes:
        """The chunk's decompressed bytes, verified against its record's length and sha256."""
        return self._read_verified(raw_id, self._record(raw_id))

    def _read_verified(self, raw_id: str, record: dict) -> bytes:
        path = os.path.join(self.store.path, record_blob_path(record))
        try:
            with open(path, "rb") as handle:
                blob = handle.read(self.limit + COMPRESSED_SLACK + 1)
        except FileNotFoundError:
            raise CorruptionError(path, None, f"blob of {raw_id} is missing") from None
        if len(blob) > self.limit + COMPRESSED_SLACK:
            raise CorruptionError(path, None, "blob file is larger than any blob within the limit")
        data = decompress_bounded(blob, path, self.limit, record["len_bytes"])
        if len(data) != record["len_bytes"]:
            raise CorruptionError(path, None, f"blob holds {len(data):,} bytes, the record says "
                                              f"{record['len_bytes']:,}")
        if hashlib.sha256(data).digest() != record["sha256"]:
            raise CorruptionError(path, None, f"sha256 mismatch: the blob's content is not {raw_id}'s")
        return data

    def read_span(self, raw_id: str, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes [offset, offset + length) of the decompressed chunk (a raw_ref's text); length None: to the end."""
        record = self._record(raw_id)
        size = record["len_bytes"]
        if length is None:
            length = size - offset
        if offset < 0 or length < 0 or offset + length > size:
            raise InputError(f"span offset {offset}, length {length} is outside {raw_id} ({size:,} bytes)")
        return self._read_verified(raw_id, record)[offset: offset + length]

    def turns(self, raw_id: str) -> list[dict]:
        """The turns of one chunk, in chunk order (see decode_turns); [] for a chunk stored without turns."""
        self._record(raw_id)
        record = self.store.get(RAW_TURNS_TABLE, raw_id)
        return decode_turns(raw_id, record) if record is not None else []

    def iter_turns(self, text: bool = False):
        """Every turn of the store, in conversation/time order: conversations by conv_id; inside one, chunks
        by their first turn's time (a naive time compared as if UTC; untimed chunks after timed ones), ties in
        the order they were stored; turns in their order inside the chunk. With `text`, each turn dict also
        has "text", its span decoded (each blob read and verified once)."""
        for raw_id, record in sorted(self.store.scan(RAW_TURNS_TABLE), key=lambda item: _chunk_order(item[1])):
            turns = decode_turns(raw_id, record)
            if text:
                data = self.read(raw_id)
                for turn in turns:
                    ref = turn["raw_ref"]
                    turn["text"] = data[ref["offset"]: ref["offset"] + ref["length"]].decode("utf-8")
            yield from turns

    def _record(self, raw_id: str) -> dict:
        record = self.get(raw_id)
        if record is None:
            raise InputError(f"no raw chunk {raw_id}")
        return record

    # --- writing -------------------------------------------------------------------------------------------

    @contextmanager
    def batch(self, owned: bool = False):
        """A store batch whose new blobs are made durable before it commits; released blobs are deleted
        after it commits. Yields a RawWriter; `writer.batch` takes the batch's other records. owned: as
        Store.batch's (the memtable keeps the values put, not copies decoded from the WAL): every value put,
        the `meta` given to put / put_turns included, holds only msgpack's types and is not changed after."""
        writer = RawWriter(self)
        committing = False
        try:
            with self.store.batch(owned) as batch:
                writer.batch = batch
                yield writer
                writer.publish()
                committing = True
        except BaseException:
            # After a failed commit the WAL record may still be on disk: its blobs must stay (gc decides).
            writer.discard(keep_blobs=committing)
            raise
        writer.remove_released()

    # --- checking and collecting ---------------------------------------------------------------------------

    def verify(self) -> tuple[list[CorruptionError], list[str]]:
        """For `check`, without writing: (an error for every chunk whose blob does not read back exactly or
        whose turns do not match it, the blob and temp files no record names, relative to the store).

        Reference rule: a chunk with a raw.turns record has exactly one reference per turn; a chunk without
        one (stored through `put`) must have at least one."""
        problems: list[CorruptionError] = []
        turn_records = dict(self.store.scan(RAW_TURNS_TABLE))
        for raw_id, record in self.scan():
            try:
                data = self._read_verified(raw_id, record)
            except CorruptionError as error:
                problems.append(error)
                data = None
            problems += _check_references(raw_id, record, turn_records.pop(raw_id, None), data)
        for raw_id in turn_records:
            problems.append(CorruptionError(f"{RAW_TURNS_TABLE}/{raw_id}", None,
                                            f"turns of {raw_id}, which has no {RAW_CHUNK_TABLE} record"))
        return problems, [relative for relative, _ in self._unnamed_files()]

    def gc(self) -> list[str]:
        """Delete blob files and temp files that no committed record names (left by a crash between a blob's
        publication and its batch's commit, or by a deletion interrupted after commit). Writer only, and never
        while one of its batches is open. Returns the removed paths, relative to the store.

        Nothing is synced: a removal that a power loss undoes leaves an orphan for the next gc."""
        if not self.store.writable:
            raise EngineError("raw gc needs the store opened for writing")
        removed = []
        for relative, path in self._unnamed_files():
            fs.remove(path)
            removed.append(relative)
        root = os.path.join(self.store.path, RAW_DIR)
        for directory, _, _ in os.walk(root, topdown=False):
            if directory != root and not os.listdir(directory):
                os.rmdir(directory)
        return removed

    def _unnamed_files(self):
        """(relative path, path) of temp files and of blob files that no record names."""
        for directory, _, files in os.walk(os.path.join(self.store.path, RAW_DIR)):
            for name in sorted(files):
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, self.store.path).replace(os.sep, "/")
                if name.endswith(TEMP_SUFFIX) or self._is_orphan(name, relative):
                    yield relative, path

    def _is_orphan(self, name: str, relative: str) -> bool:
        match = BLOB_NAME.fullmatch(name)
        if match is None:
            return False  # not ours: left alone
        record = self.get(raw_id_for(match[1]))
        return record is None or record["sha256"].hex() != match[1] or record_blob_path(record) != relative


def _check_references(raw_id: str, record: dict, turns_record: dict | None, data: bytes | None) -> list:
    """Problems of one chunk's reference count and turn rows (spans checked against `data` when it read)."""
    label = f"{RAW_CHUNK_TABLE}/{raw_id}"
    refcount = record.get("refcount")
    if turns_record is None:
        if not isinstance(refcount, int) or refcount < 1:
            return [CorruptionError(label, None, f"reference count {refcount!r}; a stored chunk has at least 1")]
        return []
    try:
        turns = decode_turns(raw_id, turns_record)
    except CorruptionError as error:
        return [error]
    problems = []
    if refcount != len(turns):
        problems.append(CorruptionError(label, None, f"reference count {refcount!r}, but {len(turns)} turn(s) "
                                                     f"in {RAW_TURNS_TABLE}/{raw_id} cite it"))
    for turn in turns:
        ref = turn["raw_ref"]
        if ref["offset"] + ref["length"] > record["len_bytes"]:
            problems.append(CorruptionError(f"{RAW_TURNS_TABLE}/{raw_id}", None, f"turn {turn['turn_id']} spans "
                                            f"past the chunk's {record['len_bytes']:,} bytes"))
            break
        if data is not None:
            try:
                data[ref["offset"]: ref["offset"] + ref["length"]].decode("utf-8")
            except UnicodeDecodeError:
                problems.append(CorruptionError(f"{RAW_TURNS_TABLE}/{raw_id}", None,
                                                f"turn {turn['turn_id']} does not span whole UTF-8 characters"))
                break
    return problems


class RawWriter:
    """Raw chunk changes inside one store batch (see RawStore.batch). Reads see this batch's own changes."""

    def __init__(self, raw: RawStore):
        self.raw = raw
        self.batch = None
        self._compressor = zstandard.ZstdCompressor(level=RAW_ZSTD_LEVEL)
        self._pending: dict[str, dict | None] = {}  # raw_id → chunk record written in this batch (None: deleted)
        self._new_turns: dict[str, dict] = {}  # raw_id → raw.turns record to write at publish (seq added then)
        self._deleted_turns: set[str] = set()
        self._staged: set[str] = set()  # blob paths this batch writes
        self._synced: set[str] = set()  # those a finished or running sync_filesystem covers
        self._ahead: dict[str, bytes] = {}  # blob path → bytes, of the blobs compressed ahead, until written
        self._frames: Background | None = None  # their compression
        self._deferred: dict[str, str] = {}  # blob path → raw_id, of puts whose blob waits for its frame
        # Bytes no PutResult counts: blob files written after their puts, and the compressed turn rows.
        self.deferred_stored_bytes = 0
        self._written_ahead: dict[str, int] = {}  # blob path → bytes, of files written before their puts
        self._digests: dict = {}  # id(data) → (data, its sha256) for the blobs given to write_ahead
        self._sync: Background | None = None  # the sync_filesystem started once the files were written
        self._created: int | None = None  # created_at of the batch's new chunks: one reading of the clock
        self.blobs = BlobFileWriter(os.path.join(raw.store.path, RAW_DIR))
        self._released: dict[str, dict] = {}  # raw_id → chunk record whose blob to delete after commit

    def get(self, raw_id: str) -> dict | None:
        if raw_id in self._pending:
            return self._pending[raw_id]
        return self.raw.get(raw_id)

    def put(self, data: bytes, meta: dict, refs: int = 1, mime: str = RAW_MIME_TEXT) -> PutResult:
        """Store `data` unless already stored, adding `refs` references either way."""
        return self._put(data, self._digest(data), meta, refs, mime)

    def put_turns(self, data: bytes, meta: dict, conv_id: str, turns: list[dict] | TurnColumns,
                  mime: str = RAW_MIME_TEXT) -> PutResult:
        """Store a chunk and the turns it holds, one reference per turn. Turns: TurnColumns, or dicts {speaker,
        ts (ISO 8601 or None), source_id, offset, length, extra}. `meta` need not repeat what the turns say
        (describe derives conv_id, role, ts and source_id from them). A chunk whose turns are already recorded
        (by an earlier batch or earlier in this one) adds nothing: new is False (its blob is rewritten if the
        file is gone)."""
        columns = turns if isinstance(turns, TurnColumns) else TurnColumns.from_dicts(turns)
        if not columns.offsets:
            raise EngineError("a chunk stored with turns needs at least one turn")
        digest = self._digest(data)
        raw_id = raw_id_for(digest.hexdigest())
        if self._turns_record(raw_id) is not None:
            return PutResult(raw_id, False, self._put(data, digest, meta, 0, mime).stored_bytes)
        record = encode_turns(conv_id, columns, len(data))
        stored = self._put(data, digest, meta, len(columns.offsets), mime).stored_bytes
        self._new_turns[raw_id] = record
        self._deleted_turns.discard(raw_id)
        return PutResult(raw_id, True, stored)

    def _put(self, data: bytes, digest, meta: dict, refs: int, mime: str) -> PutResult:
        if len(data) > self.raw.limit:
            raise InputError(f"a raw chunk of {len(data):,} bytes exceeds the {self.raw.limit:,}-byte blob limit")
        sha, sha_hex = digest.digest(), digest.hexdigest()
        raw_id = raw_id_for(sha_hex)
        record = self.get(raw_id)
        if record is not None:
            if record["sha256"] != sha:
                raise EngineError(f"{raw_id} already names other content (a 64-bit id prefix collision)")
            self.acquire(raw_id, refs)
            return PutResult(raw_id, False, self._restore_missing_blob(record, data))
        created = self._created_at()
        relative = blob_path(sha_hex, created)
        released = self._released.pop(raw_id, None)
        if released is not None and record_blob_path(released) == relative:
            # Released and stored again in this batch, on the same day: the committed blob file stays as it is
            # (written again only if it was lost).
            written = self._restore_missing_blob(released, data)
            stored = written or released["stored_bytes"]
        else:
            if released is not None:
                self._released[raw_id] = released  # another day's path: that file still goes after commit
            stored = written = self._stage(relative, data, raw_id=raw_id)
        record = {"len_bytes": len(data), "sha256": sha, "created_at": created, "refcount": refs,
                  "stored_bytes": stored, "meta": meta}
        if mime != RAW_MIME_TEXT:
            record["mime"] = mime
        self._write(raw_id, record)
        if self._frames is not None and self._frames.done():
            self._write_ahead_files()
        return PutResult(raw_id, True, written)

    def acquire(self, raw_id: str, count: int = 1) -> None:
        record = self._existing(raw_id)
        if count:
            self._write(raw_id, {**record, "refcount": record["refcount"] + count})

    def release(self, raw_id: str, count: int = 1) -> bool:
        """Drop references; True when that was the last, so the chunk, its turns and its blob go at commit."""
        record = self._existing(raw_id)
        remaining = record["refcount"] - count
        if remaining > 0:
            self._write(raw_id, {**record, "refcount": remaining})
            return False
        self._pending[raw_id] = None
        self.batch.delete(RAW_CHUNK_TABLE, raw_id)
        if self._new_turns.pop(raw_id, None) is not None or self.raw.store.get(RAW_TURNS_TABLE, raw_id) is not None:
            self.batch.delete(RAW_TURNS_TABLE, raw_id)
            self._deleted_turns.add(raw_id)
        self._released[raw_id] = record
        return True

    def _turns_record(self, raw_id: str) -> dict | None:
        if raw_id in self._new_turns:
            return self._new_turns[raw_id]
        if raw_id in self._deleted_turns:
            return None
        return self.raw.store.get(RAW_TURNS_TABLE, raw_id)

    def _existing(self, raw_id: str) -> dict:
        record = self.get(raw_id)
        if record is None:
            raise InputError(f"no raw chunk {raw_id}")
        return record

    def _write(self, raw_id: str, record: dict) -> None:
        self._pending[raw_id] = record
        self.batch.put(RAW_CHUNK_TABLE, raw_id, record)

    def _restore_missing_blob(self, record: dict, data: bytes) -> int:
        """Re-ingesting a chunk whose blob was lost writes it again at its recorded path, by temp file and
        rename: that path is named by a committed record, so it never holds a partial file."""
        relative = record_blob_path(record)
        if os.path.exists(os.path.join(self.raw.store.path, relative)):
            return 0
        return self._stage(relative, data, replace=True)

    def write_ahead(self, datas: list[bytes]) -> None:
        """Compress on another thread the blobs of the coming puts of these very objects (those not stored yet),
        and write their files as soon as that is done (the first put to find it done writes them all), then
        start the batch's sync_filesystem on a thread: the puts after that encode their records while the disk
        syncs, and publish waits for that sync instead of making one. A put before that leaves its record's
        stored_bytes to be filled in when its file is written (deferred_stored_bytes counts those bytes). The
        sha256 of each is taken here once, for its put to use."""
        if self._frames is not None:  # given ahead before: those files first
            self._write_ahead_files()
        digests = list(map(hashlib.sha256, datas))
        self._digests = {id(data): (data, digest) for data, digest in zip(datas, digests)}
        for data, digest in zip(datas, digests):
            sha_hex = digest.hexdigest()
            raw_id = raw_id_for(sha_hex)
            if len(data) <= self.raw.limit and raw_id not in self._released and self.get(raw_id) is None:
                final = os.path.join(self.raw.store.path, blob_path(sha_hex, self._created_at()))
                if final not in self._staged:
                    self._ahead.setdefault(final, data)
        if self._ahead:
            self._frames = Background(compress_all, list(self._ahead.values()), name="memctl-compress",
                                      responsive=True)
            for final in self._ahead:  # while zstd works: the puts left to overlap the sync are then more
                self.blobs.ensure_directory(os.path.dirname(final))

    def _write_ahead_files(self) -> None:
        """Write the files of the blobs compressed ahead, fill in the sizes of the records that wait for them,
        and start the sync that covers every file written so far."""
        frames, self._frames = self._frames.result(), None
        ahead, self._ahead = self._ahead, {}
        for final, frame in zip(ahead, frames):
            self._staged.add(final)
            self.blobs.write(final, frame)
            raw_id = self._deferred.pop(final, None)
            if raw_id is None:
                self._written_ahead[final] = len(frame)
                continue
            self.deferred_stored_bytes += len(frame)
            record = self._pending.get(raw_id)
            if record is not None:  # the chunk's last record in this batch (the one a reader will see)
                record["stored_bytes"] = len(frame)
        fs.failpoint("raw.before_sync")
        self._synced = set(self._staged)
        self._sync = Background(fs.sync_filesystem, self.raw.store.path, name="memctl-sync", responsive=True)

    def _created_at(self) -> int:
        if self._created is None:
            self._created = int(self.raw._clock().timestamp())
        return self._created

    def _digest(self, data: bytes):
        known = self._digests.get(id(data))
        return known[1] if known is not None and known[0] is data else hashlib.sha256(data)

    def _stage(self, relative: str, data: bytes, replace: bool = False, raw_id: str | None = None) -> int:
        """Write a blob file, unless this batch has or will (write_ahead's: counted by the put that names it if
        it is written already, else by deferred_stored_bytes); returns the bytes written now."""
        final = os.path.join(self.raw.store.path, relative)
        if final in self._ahead:  # its file comes with the frames
            if raw_id is not None:
                self._deferred[final] = raw_id
            return 0
        if final in self._staged:
            return self._written_ahead.pop(final, 0)
        self._staged.add(final)
        compressed = self._compressor.compress(data)
        self.blobs.write(final, compressed, replace)
        return len(compressed)

    def publish(self) -> None:
        """Make the batch's blob files durable (the sync write_ahead started, and one sync_filesystem more for
        blobs written since), then add the new turn records numbered in storing order; the caller commits the
        batch after this returns. A file written ahead that no put named is removed (gc's, if that fails)."""
        if self._frames is not None:  # compression outlasted the puts
            self._write_ahead_files()
        for path in self._written_ahead:
            try:
                fs.remove(path)
            except OSError:
                pass
        self._written_ahead = {}
        self._compress_turn_rows()  # while the disk syncs
        if self._sync is not None:
            sync, self._sync = self._sync, None
            self._end_sync(sync.result)
        if not self._staged <= self._synced:
            fs.failpoint("raw.before_sync")
            self._synced = set(self._staged)
            self._end_sync(lambda: fs.sync_filesystem(self.raw.store.path))
        if self._new_turns:
            first = self.batch.allocate(RAW_SEQUENCE_COUNTER, len(self._new_turns))
            for seq, (raw_id, record) in enumerate(self._new_turns.items(), start=first):
                self.batch.put(RAW_TURNS_TABLE, raw_id, {"conv_id": record["conv_id"], "seq": seq, **record})
            self._new_turns = {}

    def _compress_turn_rows(self) -> None:
        """Compress the new turn records' rows in one call into zstd. One compression per put would let go of
        the GIL for each, and every time the caller's thread does so and takes it back, a thread waiting for the
        GIL (write_ahead's compression, coming back with its frames) is made to wait a full switch interval more:
        the frames came back only once the puts were over."""
        records = list(self._new_turns.values())
        if not records:
            return
        for record, frame in zip(records, compress_all([record["turns"] for record in records])):
            record["turns"] = frame
            self.deferred_stored_bytes += len(frame)

    def _end_sync(self, sync) -> None:
        try:
            sync()
        except OSError as error:
            self.raw.store.fail(error)  # a failed sync is never retried on this store object
            raise
        fs.failpoint("raw.after_sync")

    def discard(self, keep_blobs: bool) -> None:
        """Best-effort removal of this batch's files after it failed: temp files always; the blob files and
        directories it created unless `keep_blobs` (a commit that failed may still have reached the disk and
        name them). What remains is for gc. A sync write_ahead started is waited for first."""
        if self._sync is not None:
            sync, self._sync = self._sync, None
            try:
                sync.result()
            except OSError as error:
                self.raw.store.fail(error)
        self.blobs.discard(keep_blobs)

    def remove_released(self) -> None:
        """Delete the blobs whose last reference this committed batch released. Not synced: a deletion a
        power loss undoes leaves an orphan, which gc removes."""
        for record in self._released.values():
            try:
                fs.remove(os.path.join(self.raw.store.path, record_blob_path(record)))
            except OSError:
                continue  # left for gc
