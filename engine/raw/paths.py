"""Where a raw chunk lives: its id (from its sha256) and its blob file's path under the store.

raw_id = "raw_" + the first 16 hex digits of the content's sha256; the blob is
`raw/YYYY/MM/DD/<sha[0:2]>/raw_<sha256>.blob.zst`, the UTC day of the chunk's first ingest (`created_at`).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from functools import lru_cache

from engine.format import RAW_BLOB_SUFFIX, RAW_DIR, RAW_ID_HEX_DIGITS, RAW_ID_PREFIX

BLOB_NAME = re.compile(rf"{RAW_ID_PREFIX}([0-9a-f]{{64}}){re.escape(RAW_BLOB_SUFFIX)}")
SECONDS_PER_DAY = 86400


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
