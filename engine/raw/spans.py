"""A span of a raw chunk written as one string, `raw_<16 hex>@<offset>+<length>` (offset and length in bytes of
the decompressed chunk, decimal): how recall cites raw text, and the key of every passage of the raw passage
index (engine/raw/passage_kind.py)."""

from __future__ import annotations

import re

from engine.format import RAW_ID_HEX_DIGITS, RAW_ID_PREFIX

SPAN_KEY = re.compile(rf"({RAW_ID_PREFIX}[0-9a-f]{{{RAW_ID_HEX_DIGITS}}})@(0|[1-9][0-9]*)\+(0|[1-9][0-9]*)")


def span_key(raw_id: str, offset: int, length: int) -> str:
    return f"{raw_id}@{offset}+{length}"


def parse_span_key(key: str) -> tuple[str, int, int] | None:
    """(raw_id, offset, length) of a span key; None for any other string."""
    match = SPAN_KEY.fullmatch(key)
    if match is None:
        return None
    return match[1], int(match[2]), int(match[3])
