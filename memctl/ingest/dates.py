"""Dates as the input formats write them, normalized to ISO 8601 (naive: the inputs carry no time zone).

Each parser raises ValueError with a reason; format parsers turn it into an InputError naming the place.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone

MONTHS = {
    name: number
    for number, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
         ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
         ("november", "nov"), ("december", "dec")],
        start=1,
    )
    for name in names
}

# "1:56 pm on 8 May, 2023" (the dates of LoCoMo sessions)
LOCOMO = re.compile(
    r"(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<half>am|pm)\s+on\s+(?P<day>\d{1,2})\s+(?P<month>[a-z]+)\.?,?\s+"
    r"(?P<year>\d{4})",
    re.IGNORECASE,
)
# "2024年04月01日 周一" or "2024年04月01日 周一 08:51" (MemDaily); the weekday is redundant and ignored
CHINESE = re.compile(
    r"(?P<year>\d{4})\s*年\s*(?P<month>\d{1,2})\s*月\s*(?P<day>\d{1,2})\s*[日号]"
    r"(?:\s*(?:周|星期|礼拜)[一二三四五六日天])?"
    r"(?:\s*(?P<hour>\d{1,2})\s*[:：]\s*(?P<minute>\d{2})(?:\s*[:：]\s*(?P<second>\d{2}))?)?"
)
# "2025-09-15 10:35", "2025/09/15 10:35:12", "2025-09-15T10:35", "2025-09-15" (transcript stamps)
NUMERIC = re.compile(
    r"(?P<year>\d{4})[-/.](?P<month>\d{1,2})[-/.](?P<day>\d{1,2})"
    r"(?:[ T](?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2}))?)?"
)
# Epoch numbers above this are taken as milliseconds (in seconds it would be after the year 5000).
EPOCH_MILLISECONDS_ABOVE = 100_000_000_000


def parse_locomo(text: str) -> str:
    match = LOCOMO.fullmatch(text.strip())
    if not match:
        raise ValueError(f"expected a date like '1:56 pm on 8 May, 2023', found {text!r}")
    month = MONTHS.get(match["month"].lower())
    if month is None:
        raise ValueError(f"unknown month {match['month']!r} in {text!r}")
    hour = int(match["hour"])
    if not 1 <= hour <= 12:
        raise ValueError(f"hour {hour} is not on a 12-hour clock in {text!r}")
    hour = hour % 12 + (12 if match["half"].lower() == "pm" else 0)
    return _build(text, match["year"], month, match["day"], hour, match["minute"])


def parse_chinese(text: str) -> str:
    match = CHINESE.fullmatch(text.strip())
    if not match:
        raise ValueError(f"expected a date like '2024年04月01日 周一', found {text!r}")
    return _build(text, match["year"], match["month"], match["day"], match["hour"], match["minute"],
                  match["second"])


def parse_numeric(text: str) -> str:
    match = NUMERIC.fullmatch(text.strip())
    if not match:
        raise ValueError(f"expected a date like '2025-09-15 10:35', found {text!r}")
    return _build(text, match["year"], match["month"], match["day"], match["hour"], match["minute"],
                  match["second"])


def parse_any(text: str) -> str:
    """A date in any of the shapes above, or ISO 8601."""
    for parser in (parse_locomo, parse_chinese, parse_numeric, parse_iso):
        try:
            return parser(text)
        except ValueError:
            continue
    raise ValueError(f"unrecognised date {text!r}")


def parse_iso(text: str) -> str:
    try:
        return datetime.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise ValueError(f"expected an ISO 8601 date, found {text!r}") from None


def parse_timestamp(value: object) -> str:
    """A JSON `ts`: an ISO 8601 string (any shape above is accepted too) or Unix epoch seconds/milliseconds."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"expected a date string or epoch number, found {type(value).__name__}")
    if isinstance(value, str):
        return parse_any(value)
    seconds = value / 1000 if abs(value) > EPOCH_MILLISECONDS_ABOVE else value
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"epoch time {value!r} is out of range") from None


def _build(text, year, month, day, hour=None, minute=None, second=None) -> str:
    try:
        if hour is None:
            return date(int(year), int(month), int(day)).isoformat()
        return datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0)).isoformat()
    except ValueError as error:
        raise ValueError(f"{error} in {text!r}") from None
