"""Layout 1 of the records segment (formats 1 to 3, and format-4 stores written before the block layout):
every key and value stored as is, found through a sorted column of 64-bit key hashes. Read, never written.

Columns: hashes u64[n] (sorted) · hash_rows u32[n] · key_offsets u64[n+1] · keys u8 (table NUL key, UTF-8)
· value_offsets u64[n+1] · values u8 (msgpack) · flags u8[n] (bit 0: tombstone). Meta: {"tables":
{name: [first_row, end_row]}, "count": n}. A key's hash is BLAKE2b with an 8-byte output (digest_size=8, not a
prefix of BLAKE2b-512) read as a little-endian u64: MANIFEST.spec, Conventions and section 4.
"""

from __future__ import annotations

import bisect

import numpy as np

from engine.codec import unpack
from engine.errors import CorruptionError
from engine.format import RECORD_FLAG_TOMBSTONE
from engine.records.rows import TOMBSTONE, composite_key, native_view

COLUMNS = ("hashes", "hash_rows", "key_offsets", "keys", "value_offsets", "values", "flags")


class HashedRecords:
    """Point reads and ordered scans over one layout-1 records segment."""

    def __init__(self, segment, tables: dict, count: int):
        self.segment = segment
        self.path = segment.path
        self.tables = tables
        self.count = count
        self._columns = None

    def _load(self):
        """Columns as memoryviews (native_view)."""
        if self._columns is None:
            # Columns are checked block by block as rows are read, so a cold point read hashes a few
            # blocks instead of the whole (often largest) values column.
            arrays = tuple(self.segment.column(name, verify=False) for name in COLUMNS)
            self._validate(*arrays)
            self._columns = tuple(native_view(array) for array in arrays)
        return self._columns

    def _validate(self, hashes, hash_rows, key_offsets, keys, value_offsets, values, flags) -> None:
        count = self.count
        if not (len(hashes) == len(hash_rows) == len(flags) == count
                and len(key_offsets) == len(value_offsets) == count + 1):
            raise CorruptionError(self.path, None, "records columns disagree on the record count")
        self.segment.verify_items("key_offsets", count, count + 1)
        self.segment.verify_items("value_offsets", count, count + 1)
        if count and (int(key_offsets[-1]) != len(keys) or int(value_offsets[-1]) != len(values)):
            raise CorruptionError(self.path, None, "records offsets point outside their columns")

    def _key_at(self, row: int) -> bytes:
        key_offsets, keys = self._columns[2], self._columns[3]
        verify = self.segment.verify_items
        verify("key_offsets", row, row + 2)
        start, end = key_offsets[row], key_offsets[row + 1]
        verify("keys", start, end)
        return bytes(keys[start:end])

    def _value_at(self, row: int):
        span = self._value_span(row)
        if span is None:
            return TOMBSTONE
        start, end = span
        return unpack(self._columns[5][start:end], self.path, start)

    def _value_span(self, row: int) -> tuple | None:
        """[start, end) of the row's value in the values column, its blocks checked; None for a tombstone."""
        value_offsets, flags = self._columns[4], self._columns[6]
        verify = self.segment.verify_items
        verify("flags", row, row + 1)
        if flags[row] & RECORD_FLAG_TOMBSTONE:
            return None
        verify("value_offsets", row, row + 2)
        start, end = value_offsets[row], value_offsets[row + 1]
        verify("values", start, end)
        return start, end

    # Row by row, each read checking only the blocks it touches (a CorruptionError names a failed one), so that
    # a damaged segment's other rows still read: engine/repair/ salvages a segment this way (0 <= row < count).

    def key_of(self, row: int) -> bytes:
        """The composite key of row `row`."""
        self._load()
        return self._key_at(row)

    def packed_value_of(self, row: int) -> bytes | None:
        """The msgpack bytes of row `row`'s value; None for a tombstone."""
        self._load()
        span = self._value_span(row)
        return None if span is None else bytes(self._columns[5][span[0]:span[1]])

    def lost_key_ranges(self) -> list:
        """Key ranges whose rows a damaged part of the segment hid (engine/repair/): none in this layout, where
        a row's key reads back whenever its value does not."""
        return []

    def get(self, composite: bytes, hashed: int):
        """(found, value-or-TOMBSTONE); `hashed`: the composite key's key_hash."""
        hashes = self._load()[0]
        position = bisect.bisect_left(hashes, hashed)
        self.segment.verify_bisect("hashes", position)
        return self._match(composite, hashed, position)

    def get_many(self, composites: list, hashed: np.ndarray) -> dict:
        """{index: value-or-TOMBSTONE} of the composites this segment holds (`hashed`: their key_hashes): one
        search of the hash column for all of them."""
        hashes = np.asarray(self._load()[0])
        if not len(hashes) or not composites:
            return {}
        self.segment.verify_items("hashes", 0, len(hashes))  # many searches probe all over the column
        positions = np.searchsorted(hashes, hashed)
        candidates = np.flatnonzero(hashes[np.minimum(positions, len(hashes) - 1)] == hashed)
        found = {}
        for index, position in zip(candidates.tolist(), positions[candidates].tolist()):
            present, value = self._match(composites[index], int(hashed[index]), position)
            if present:
                found[index] = value
        return found

    def _match(self, composite: bytes, hashed: int, position: int):
        """(found, value) walking the rows whose hash equals `hashed` from `position`, their first."""
        hashes, hash_rows = self._load()[:2]
        verify = self.segment.verify_items
        while position < len(hashes):
            verify("hashes", position, position + 1)
            if hashes[position] != hashed:
                break
            verify("hash_rows", position, position + 1)
            row = hash_rows[position]
            if row >= self.count:
                raise CorruptionError(self.path, None, f"record hash row {row} is out of range")
            if self._key_at(row) == composite:
                return True, self._value_at(row)
            position += 1
        return False, None

    def raw_rows(self, rank: int):
        """(composite key, rank, msgpack bytes or None for a tombstone) of every row, in key order."""
        self._load()
        self.segment.verify()  # compaction reads every byte: checked in one pass
        key_offsets, keys, value_offsets, values, flags = self._columns[2:7]
        for row in range(self.count):
            packed = None if flags[row] & RECORD_FLAG_TOMBSTONE else bytes(values[value_offsets[row]: value_offsets[row + 1]])
            yield bytes(keys[key_offsets[row]: key_offsets[row + 1]]), rank, packed

    def iterate(self, table: str, prefix: str = ""):
        """(key, value-or-TOMBSTONE) of `table` whose key starts with `prefix`, in key order."""
        bounds = self.tables.get(table)
        if bounds is None:
            return
        self._load()
        start, end = bounds
        head = len(table) + 1
        wanted = composite_key(table, prefix)
        row = bisect.bisect_left(range(start, end), wanted, key=self._key_at) + start
        while row < end:
            composite = self._key_at(row)
            if not composite.startswith(wanted):
                return
            yield composite[head:].decode("utf-8"), self._value_at(row)
            row += 1

    def check(self) -> None:
        """CorruptionError unless hashes are sorted and every table's keys strictly ascend (`memctl check`; the
        column CRCs are checked before)."""
        self._load()
        hashes, key_offsets = self.segment.column("hashes"), self.segment.column("key_offsets")
        if len(hashes) > 1 and bool(np.any(hashes[1:] < hashes[:-1])):
            raise CorruptionError(self.path, None, "record hashes are not sorted")
        if len(key_offsets) > 1 and bool(np.any(key_offsets[1:] < key_offsets[:-1])):
            raise CorruptionError(self.path, None, "record key offsets decrease")
        for table, (start, end) in self.tables.items():
            keys = [self._key_at(row) for row in range(start, end)]
            if keys != sorted(keys) or len(set(keys)) != len(keys):
                raise CorruptionError(self.path, None, f"keys of table {table!r} are not strictly sorted")
