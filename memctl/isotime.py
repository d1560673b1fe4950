"""ISO dates and date-times as the command line's time bounds (--since, --until, --now)."""

from __future__ import annotations


def parse_time(text: str, option: str, end_of_day: bool) -> float:
    """Seconds since the epoch of an ISO date or date-time; a bare date at --until means its last instant."""
    from datetime import date, datetime, timedelta

    from engine.errors import InputError

    cleaned = text.strip()
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        raise InputError(f"{text!r} is not an ISO date or date-time (examples: 2024-05-01, 2024-05-01T09:30, "
                         "2024-05-01T09:30:00+08:00)", where=option) from None
    try:
        date.fromisoformat(cleaned)
    except ValueError:
        return moment.timestamp()
    if end_of_day:
        return (moment + timedelta(days=1)).timestamp() - 1e-6
    return moment.timestamp()
