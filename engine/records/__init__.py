"""The `records` segment kind: typed records (table, key) → msgpack value, the store's source of truth.

Rows are sorted by (table, key), so a table is one contiguous row range. Two layouts (MANIFEST.spec section 4):

    rows.py     composite keys, tombstones: what every layout shares
    blocks.py   layout 2, written since format 4: rows in zstd-compressed blocks, found by their first keys
    hashed.py   layout 1, read only: keys and values as is, found by 64-bit key hashes
    writer.py   a flush's and a compaction's segment, streamed block by block

`open_segment` reads either; both answer `get`, `get_many` (given the keys' key_hash), `iterate`, `raw_rows` and
`check`.
"""

from __future__ import annotations

from engine.errors import CorruptionError, UnsupportedVersion
from engine.format import RECORDS_LAYOUT_BLOCKS
from engine.records.blocks import BlockCache, BlockRecords
from engine.records.hashed import HashedRecords
from engine.records.rows import TOMBSTONE, Tombstone, composite_key, key_hash, key_hashes, newest_versions
from engine.records.writer import merge_records, write_records

__all__ = ["TOMBSTONE", "BlockCache", "Tombstone", "composite_key", "key_hash", "key_hashes", "merge_records",
           "newest_versions", "open_segment", "write_records"]


def open_segment(segment, cache: BlockCache | None = None):
    """The reader of a records segment (engine.segment.Segment) for its layout; `cache`: the store's cache of
    decompressed blocks (a reader of its own when None)."""
    meta = segment.meta
    try:
        layout = meta.get("layout", 1)
        tables = {name: (int(bounds[0]), int(bounds[1])) for name, bounds in meta.get("tables", {}).items()}
        count = int(meta.get("count", 0))
        blocks = int(meta["blocks"]) if layout == RECORDS_LAYOUT_BLOCKS else None
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, OverflowError):
        raise CorruptionError(segment.path, None, "records segment meta is malformed") from None
    if count < 0 or (blocks is not None and blocks < 0):
        raise CorruptionError(segment.path, None, f"records segment meta holds a count of {count}")
    for table, (start, end) in tables.items():
        if not 0 <= start <= end <= count:
            raise CorruptionError(segment.path, None, f"table {table!r} rows {start}..{end} out of range")
    if layout == RECORDS_LAYOUT_BLOCKS:
        return BlockRecords(segment, tables, count, blocks, cache)
    if layout == 1:
        return HashedRecords(segment, tables, count)
    if isinstance(layout, int) and layout > RECORDS_LAYOUT_BLOCKS:
        raise UnsupportedVersion(segment.path, layout, RECORDS_LAYOUT_BLOCKS)
    raise CorruptionError(segment.path, None, f"records segment layout {layout!r} is unknown")
