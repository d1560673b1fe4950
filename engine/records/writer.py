"""Writing records segments (layout 2, engine.records.blocks): a flush's memtable, or a compaction's merge of
segments, streamed into compressed blocks so that neither holds the segment's bytes whole."""

from __future__ import annotations

import numpy as np
import zstandard

from engine.codec import pack
from engine.format import (
    RECORDS_BLOCK_BYTES,
    RECORDS_COMPACTION_BLOCK_BYTES,
    RECORDS_LAYOUT_BLOCKS,
    RECORDS_POINT_READ_BLOCK_BYTES,
    RECORDS_POINT_READ_TABLES,
    SEGMENT_COMPACTION_LEVEL,
    SEGMENT_FLUSH_LEVEL,
)
from engine.records.blocks import encode_block
from engine.records.filter import FILTER_PROBES, build_filter
from engine.records.rows import TOMBSTONE, composite_key, composite_keys, key_hashes, newest_versions


class BlockWriter:
    """Rows added in key order become blocks of about `block_bytes`, each compressed and streamed into the
    segment's `blocks` column; `finish` writes the block index, the keys' filter (`filtered`) and the meta."""

    def __init__(self, writer, level: int, filtered: bool, block_bytes=None):
        """block_bytes: a function of a table name giving its blocks' mark (None: RECORDS_BLOCK_BYTES for all);
        a block closes where the mark changes, so that each holds the rows of one mark."""
        self._writer = writer
        self._stream = writer.byte_stream("blocks")
        self._compressor = zstandard.ZstdCompressor(level=level)
        self._block_bytes_of = block_bytes or (lambda _table: RECORDS_BLOCK_BYTES)
        self._block_bytes = RECORDS_BLOCK_BYTES
        self._hashes: list | None = [] if filtered else None
        self._unhashed: list = []  # keys add() took, hashed a block at a time
        self._composites: list = []
        self._values: list = []
        self._open_bytes = 0
        self._offsets, self._rows, self._first_keys = [0], [0], []
        self.tables: dict = {}
        self.count = 0
        self._table_prefix = None
        self._table_bounds: list = []

    def add(self, composite: bytes, packed: bytes | None) -> None:
        """One row (packed None: a tombstone), its key above every key added before."""
        prefix = composite[: composite.index(b"\0")]
        if prefix != self._table_prefix:
            self._start_table(prefix.decode("utf-8"))
            self._table_prefix = prefix
            self._table_bounds = self.tables[prefix.decode("utf-8")] = [self.count, self.count]
        self._composites.append(composite)
        self._values.append(packed)
        self.count += 1
        self._table_bounds[1] = self.count
        if self._hashes is not None:
            self._unhashed.append(composite)
        self._open_bytes += len(composite) + (len(packed) if packed else 0)
        if self._open_bytes >= self._block_bytes:
            self._cut()

    def add_table(self, table: str, composites: list, values: list) -> None:
        """The rows of one table not seen before, in key order: add() for them all, cut by whole-array sums."""
        self._table_prefix = None
        self._start_table(table)
        self.tables[table] = [self.count, self.count + len(composites)]
        if self._hashes is not None:
            self._hashes.append(key_hashes(composites))
        sizes = np.fromiter(map(len, composites), np.int64, len(composites)) + \
            np.fromiter((len(value) if value else 0 for value in values), np.int64, len(values))
        ends = np.cumsum(sizes)
        start = consumed = 0
        while start < len(composites):
            cut = int(np.searchsorted(ends, consumed + self._block_bytes - self._open_bytes))  # first row to reach it
            end = min(cut + 1, len(composites))
            self._composites += composites[start:end]
            self._values += values[start:end]
            self.count += end - start
            self._open_bytes += int(ends[end - 1]) - consumed
            consumed, start = int(ends[end - 1]), end
            if self._open_bytes >= self._block_bytes:
                self._cut()

    def _start_table(self, table: str) -> None:
        block_bytes = self._block_bytes_of(table)
        if block_bytes != self._block_bytes:
            self._cut()
            self._block_bytes = block_bytes

    def _cut(self) -> None:
        if not self._composites:
            return
        if self._unhashed:
            self._hashes.append(key_hashes(self._unhashed))
            self._unhashed = []
        self._stream.write(self._compressor.compress(encode_block(self._composites, self._values)))
        self._first_keys.append(self._composites[0])
        self._offsets.append(self._stream.length)
        self._rows.append(self.count)
        self._composites, self._values, self._open_bytes = [], [], 0

    def finish(self) -> int:
        """Close the segment's columns; returns the row count."""
        self._cut()
        self._stream.close()
        writer = self._writer
        writer.add_column("block_offsets", np.array(self._offsets, np.uint64))
        writer.add_column("block_rows", np.array(self._rows, np.uint64))
        key_offsets = np.zeros(len(self._first_keys) + 1, np.uint64)
        np.cumsum(np.fromiter(map(len, self._first_keys), np.uint64, len(self._first_keys)), out=key_offsets[1:])
        writer.add_column("first_key_offsets", key_offsets)
        writer.add_bytes("first_keys", b"".join(self._first_keys))
        meta = {"layout": RECORDS_LAYOUT_BLOCKS, "tables": self.tables, "count": self.count,
                "blocks": len(self._first_keys)}
        if self._hashes is not None:
            writer.add_bytes("filter", build_filter(self._hashes))
            meta["filter_probes"] = FILTER_PROBES
        writer.set_meta(meta)
        return self.count


def write_records(writer, tables: dict, packed: dict | None = None) -> None:
    """A flush: `tables` {table: {key: value or TOMBSTONE}} (any order); `packed`: {table: {key: msgpack bytes}}
    of values already packed (never of a key whose value is TOMBSTONE; the rest are packed here)."""
    blocks = BlockWriter(writer, SEGMENT_FLUSH_LEVEL, filtered=True)
    for table in sorted(tables):
        rows = tables[table]
        if not rows:
            continue
        keys = sorted(rows)
        packed_rows = (packed or {}).get(table, {})
        if len(packed_rows) == len(rows):  # every value packed at commit (a bulk load): C-level lookups
            values = list(map(packed_rows.__getitem__, keys))
        else:  # values replayed from the WAL, and tombstones
            values = [None if value is TOMBSTONE else packed_rows.get(key) or pack(value)
                      for key, value in zip(keys, map(rows.__getitem__, keys))]
        blocks.add_table(table, composite_keys(table, keys), values)
    blocks.finish()


def merge_records(writer, segments: list, tables: dict | None = None, packed: dict | None = None,
                  newest_only: bool = False) -> int:
    """Compaction: the live records of `segments` (oldest first; readers with raw_rows) and of the memtable
    `tables` (newer than every segment; `packed` as write_records takes it) as one segment, decoding no stored
    value. Newer versions shadow older ones; tombstones and what they hide are dropped. Returns the row count.
    The segment holds no filter: it is the store's only one until the next flush, so an absent key costs one
    block.
    newest_only: `segments` are the store's newest and older ones stay (a tier merge, engine.records.tiers): the
    tombstones are kept, since they still hide older versions, and the segment is written as a flush writes
    one (a filter, the flush's compression and block size), since the next compaction rewrites it anyway."""
    if newest_only:
        blocks = BlockWriter(writer, SEGMENT_FLUSH_LEVEL, filtered=True)
    else:
        blocks = BlockWriter(writer, SEGMENT_COMPACTION_LEVEL, filtered=False, block_bytes=compaction_block_bytes)
    sources = [segment.raw_rows(rank) for rank, segment in enumerate(reversed(segments), start=1)]
    if tables:
        sources.append(_memtable_rows(tables, packed or {}))
    for composite, packed_value in newest_versions(sources):
        if packed_value is not None or newest_only:
            blocks.add(composite, packed_value)
    return blocks.finish()


def compaction_block_bytes(table: str) -> int:
    """The mark of a compaction's blocks of `table` (engine/format.py says why two)."""
    return RECORDS_POINT_READ_BLOCK_BYTES if table in RECORDS_POINT_READ_TABLES else RECORDS_COMPACTION_BLOCK_BYTES


def _memtable_rows(tables: dict, packed: dict):
    """(composite key, rank 0, msgpack bytes or None for a tombstone) of every memtable row, in key order."""
    rows = []
    for table, values in tables.items():
        packed_rows = packed.get(table, {})
        for key, value in values.items():
            rows.append((composite_key(table, key), 0,
                         None if value is TOMBSTONE else packed_rows.get(key) or pack(value)))
    rows.sort()
    return iter(rows)
