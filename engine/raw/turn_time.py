"""Turn times as raw.turns stores them: a naive whole-second ISO 8601 time as an int, anything else as its text.

An int is seconds from 1970-01-01T00:00:00 on the same wall clock (the inputs carry no zone, and none is
invented); a bare date, a UTC offset or fractions of a second stay the ISO string, so decoding gives back the
same text. `ts_order` gives the seconds by which turn times (and chunks, by their first) are ordered.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from itertools import repeat
from operator import add

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
