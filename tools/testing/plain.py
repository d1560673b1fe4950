"""The bytes a store's files hold with their compression undone: what a search for forgotten text looks
through (invariant 6: after forget and compaction no file holds the text, compressed or not)."""

from __future__ import annotations

import os

from engine.errors import CorruptionError
from engine.format import KIND_RECORDS, RECORDS_LAYOUT_BLOCKS
from engine.records import open_segment
from engine.segment import Segment


def plain_contents(path: str) -> bytes:
    """The file's bytes, followed for a records segment of the block layout by every block decompressed."""
    with open(path, "rb") as handle:
        data = handle.read()
    if not path.endswith(".seg"):
        return data
    try:
        segment = Segment.open(path)
    except CorruptionError:
        return data  # a damaged or partial segment: its bytes as they are
    if segment.kind != KIND_RECORDS or segment.meta.get("layout") != RECORDS_LAYOUT_BLOCKS:
        return data
    records = open_segment(segment)
    return b"".join([data, *(records.block(number, cached=False).data for number in range(records.block_count))])


def files_containing(root: str, needle: bytes) -> list[str]:
    """Paths (relative to `root`) of the files whose plain contents hold `needle`."""
    found = []
    for directory, _subdirectories, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            if needle in plain_contents(path):
                found.append(os.path.relpath(path, root))
    return sorted(found)
