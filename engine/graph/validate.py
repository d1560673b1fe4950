"""Checks of what callers hand the graph API: keys, numbers, times, properties, directions; and the plain-value
tests a bulk write passes before it skips the per-row checks."""

from __future__ import annotations

import itertools
import math
from datetime import datetime, timezone

import numpy as np

from engine.errors import InputError
from engine.graph import traverse

MAX_KEY_BYTES = 1024


def check_direction(direction: str) -> None:
    if direction not in traverse.DIRECTIONS:
        raise InputError(f"direction must be one of {', '.join(traverse.DIRECTIONS)}, not {direction!r}")


def check_key(key, what: str) -> None:
    if not isinstance(key, str) or not key or "\0" in key:
        raise InputError(f"{what} must be non-empty text without NUL, not {key!r}")
    # UTF-8 takes at most 4 bytes a character: short keys need no encoding to be measured.
    if len(key) * 4 > MAX_KEY_BYTES and len(key.encode("utf-8")) > MAX_KEY_BYTES:
        raise InputError(f"{what} is longer than {MAX_KEY_BYTES} bytes")


def finite_number(value, name: str, low: float, high: float) -> float:
    if type(value) is float and math.isfinite(value) and low <= value <= high:  # the common case, at once
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or \
            not low <= value <= high:
        raise InputError(f"{name} must be a finite number in [{low}, {high}], not {value!r}")
    return float(value)


def epoch_seconds(value, default, name: str):
    """Seconds since the epoch from a number or an ISO 8601 string; `default` when None."""
    if value is None:
        return default
    if type(value) is float and math.isfinite(value):
        return value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise InputError(f"{name} {value!r} is not an ISO 8601 time") from None
        # A time without a zone is taken as UTC, not as this machine's local time.
        return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()
    return finite_number(value, name, -math.inf, math.inf)


def property_map(properties) -> dict:
    if properties is None:
        return {}
    if not isinstance(properties, dict) or not all(isinstance(name, str) for name in properties):
        raise InputError("properties must be a mapping with text keys")
    return dict(properties)


def all_of_type(values, *types) -> bool:
    return set(map(type, values)) <= set(types)


def plain_keys(keys, distinct: bool = False) -> bool:
    """Keys that check_key accepts without measuring their UTF-8 (others go row by row)."""
    return (all_of_type(keys, str) and 0 < min(map(len, keys)) and max(map(len, keys)) <= MAX_KEY_BYTES // 4
            and "\0" not in "".join(keys) and (not distinct or len(set(keys)) == len(keys)))


def plain_properties(values) -> bool:
    present = [value for value in values if value is not None]
    return all_of_type(present, dict) and all_of_type(itertools.chain.from_iterable(present), str)


def plain_numbers(values, low: float, high: float, default: float | None = None) -> list | None:
    """`values` as floats when each is a finite int or float within [low, high] (or None, given a `default`
    for it), else None."""
    if not all_of_type(values, float, int, *(() if default is None else (type(None),))):
        return None
    numbers = [default if value is None else float(value) for value in values]
    array = np.array(numbers, dtype=np.float64)
    if not (np.isfinite(array).all() and (array >= low).all() and (array <= high).all()):
        return None
    return numbers
