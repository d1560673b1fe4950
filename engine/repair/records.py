"""Salvage of records segments: every row that reads back, from each segment the MANIFEST names.

A segment whose blocks all pass is taken whole. Otherwise it is read row by row (key_of and packed_value_of of
engine.records' readers check only the blocks a row touches), and a row is lost when a block it needs fails:
its table is known from the segment's meta, its key too when only the value's blocks failed (layout 1). Such a
key is dropped, not served from an older segment: the lost row was its newest version, maybe a deletion, and
an older value coming back would undo what a later batch did (a forgotten text must stay gone). A layout-2
segment loses a compressed block's keys with its values, so every older version of a key within the block's
key range (from its first key to the next block's) is dropped and reported lost with its key. A segment that
does not open (missing, header, footer or directory damaged) is lost whole; older versions of the keys it held
then serve, since which keys those were is unknown.
"""

from __future__ import annotations

import bisect
import os

from engine.errors import CorruptionError
from engine.format import KIND_RECORDS, SEGMENT_DIR
from engine.records import open_segment
from engine.segment import Segment

KEYS_LISTED = 10  # lost keys of a table listed one by one up to this many; beyond, the first and the last


class RecordsLoss:
    """What salvaging the records segments lost: whole segments, and rows per table (their keys when known)."""

    def __init__(self):
        self.segments: list = []  # [{"file", "reason"}]
        self.rows: dict = {}  # table -> rows lost
        self.keys: dict = {}  # table -> [key] of rows lost whose key read back
        self.damaged_segments = 0

    def lose_row(self, table: str, key: str | None) -> None:
        self.rows[table] = self.rows.get(table, 0) + 1
        if key is not None:
            self.keys.setdefault(table, []).append(key)

    def as_dict(self) -> dict:
        tables = {}
        for table, count in sorted(self.rows.items()):
            keys = sorted(self.keys.get(table, []))
            described = {"rows": count, "known_keys": len(keys)}
            if len(keys) <= KEYS_LISTED:
                described["keys"] = keys
            else:
                described["first_key"], described["last_key"] = keys[0], keys[-1]
            tables[table] = described
        return {"segments": self.segments, "tables": tables}


class SalvagedRows:
    """The readable rows of one records segment, as engine.records.merge_records takes a segment (raw_rows)."""

    def __init__(self, records, loss: RecordsLoss):
        self.records = records
        self.loss = loss
        self.hidden: list = []  # [low, high) key ranges a newer segment lost (None: unbounded)

    def raw_rows(self, rank: int):
        """(composite key, rank, msgpack bytes or None) in key order; a row whose value was lost is a tombstone,
        which hides the key's older versions."""
        try:
            self.records.segment.verify()
        except CorruptionError:
            self.loss.damaged_segments += 1
            rows = self._row_by_row(rank)
        else:
            rows = self.records.raw_rows(rank)
        for row in rows:
            if self.hidden and _within(row[0], self.hidden):
                self.loss.lose_row(*_table_and_key(row[0]))
                continue
            yield row

    def _row_by_row(self, rank: int):
        starts, tables = _table_starts(self.records.tables)
        for row in range(self.records.count):
            table = tables[bisect.bisect_right(starts, row) - 1] if starts else "?"
            try:
                composite = self.records.key_of(row)
            except CorruptionError:
                self.loss.lose_row(table, None)
                continue
            try:
                packed = self.records.packed_value_of(row)
            except CorruptionError:
                self.loss.lose_row(*_table_and_key(composite))
                packed = None
            yield composite, rank, packed


def _table_and_key(composite: bytes) -> tuple:
    table, key = composite.split(b"\0", 1)
    return table.decode("utf-8", "replace"), key.decode("utf-8", "replace")


def _within(composite: bytes, ranges: list) -> bool:
    return any((low is None or low <= composite) and (high is None or composite < high) for low, high in ranges)


def _table_starts(tables: dict) -> tuple[list, list]:
    ordered = sorted((start, table) for table, (start, _end) in tables.items())
    return [start for start, _ in ordered], [table for _, table in ordered]


def salvage_segments(store_path: str, entries: list, loss: RecordsLoss) -> list:
    """SalvagedRows of every records segment of `entries` (MANIFEST entries, oldest first) that opens; those
    that do not are added to `loss`. The rows are read, and their losses counted, as the caller iterates."""
    sources = []
    for entry in entries:
        if entry["kind"] != KIND_RECORDS:
            continue
        relative = os.path.join(SEGMENT_DIR, entry["name"])
        try:
            segment = Segment.open(os.path.join(store_path, relative))
            if segment.kind != KIND_RECORDS:
                raise CorruptionError(segment.path, 12, f"segment kind {segment.kind!r}, not {KIND_RECORDS!r}")
            records = open_segment(segment)
            lost_ranges = records.lost_key_ranges()
        except CorruptionError as error:
            loss.segments.append({"file": relative, "reason": error.reason})
            continue
        for older in sources:
            older.hidden += lost_ranges
        sources.append(SalvagedRows(records, loss))
    return sources
