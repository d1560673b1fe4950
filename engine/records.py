"""The `records` segment kind: typed records (table, key) → msgpack value, the store's source of truth.

Rows are sorted by (table, key) so a table is one contiguous row range (scans); a sorted array of 64-bit
key hashes with their rows gives point reads in one numpy binary search, without loading any key at open.

Columns: hashes u64[n] (sorted) · hash_rows u32[n] · key_offsets u64[n+1] · keys u8 (table NUL key, UTF-8)
· value_offsets u64[n+1] · values u8 (msgpack) · flags u8[n] (bit 0: tombstone). Meta: {"tables":
{name: [first_row, end_row]}, "count": n}.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq

import numpy as np

from engine.codec import pack, unpack
from engine.errors import CorruptionError
from engine.format import RECORD_FLAG_TOMBSTONE
from engine.segment import Segment, SegmentWriter


class Tombstone:
    """The value of a deleted record until compaction drops it."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "TOMBSTONE"


TOMBSTONE = Tombstone()


def composite_key(table: str, key: str) -> bytes:
    return f"{table}\0{key}".encode("utf-8")


def key_hash(composite: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(composite, digest_size=8).digest(), "little")


def _native_view(array: np.ndarray) -> memoryview:
    """A flat memoryview in native byte order (a copy only on a big-endian host)."""
    native = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))
    return memoryview(native.reshape(-1)).cast("B").cast(native.dtype.char) if native.size else memoryview(b"")


class _Columns:
    """Rows appended in (table, key) order, written out as a records segment."""

    def __init__(self):
        self.keys = bytearray()
        self.values = bytearray()
        self.key_offsets = [0]
        self.value_offsets = [0]
        self.flags = []
        self.hashes = []
        self.table_ranges = {}
        self._table = None

    def add(self, table: str, composite: bytes, packed_value) -> None:
        """packed_value: msgpack bytes, or None for a tombstone."""
        if table != self._table:
            self.table_ranges[table] = [len(self.flags), len(self.flags)]
            self._table = table
        self.keys += composite
        self.key_offsets.append(len(self.keys))
        self.hashes.append(key_hash(composite))
        if packed_value is None:
            self.flags.append(RECORD_FLAG_TOMBSTONE)
        else:
            self.flags.append(0)
            self.values += packed_value
        self.value_offsets.append(len(self.values))
        self.table_ranges[table][1] = len(self.flags)

    def write(self, writer: SegmentWriter) -> None:
        hash_array = np.array(self.hashes, dtype=np.uint64)
        order = np.argsort(hash_array, kind="stable")
        writer.add_column("hashes", hash_array[order])
        writer.add_column("hash_rows", order.astype(np.uint32))
        writer.add_column("key_offsets", np.array(self.key_offsets, dtype=np.uint64))
        writer.add_bytes("keys", bytes(self.keys))
        writer.add_column("value_offsets", np.array(self.value_offsets, dtype=np.uint64))
        writer.add_bytes("values", bytes(self.values))
        writer.add_column("flags", np.array(self.flags, dtype=np.uint8))
        writer.set_meta({"tables": self.table_ranges, "count": len(self.flags)})


def write_records(writer: SegmentWriter, tables: dict) -> None:
    """`tables`: {table: {key: value or TOMBSTONE}} (any order); writes every column and the meta."""
    columns = _Columns()
    for table in sorted(tables):
        rows = tables[table]
        for key in sorted(rows):
            value = rows[key]
            columns.add(table, composite_key(table, key), None if value is TOMBSTONE else pack(value))
    columns.write(writer)


def merge_records(writer: SegmentWriter, segments: list) -> int:
    """Compaction: the live records of `segments` (oldest first) as one segment, without decoding a value.
    Newer segments shadow older ones; tombstones and what they hide are dropped. Returns the row count."""
    columns = _Columns()
    sources = [segment.raw_rows(rank) for rank, segment in enumerate(reversed(segments))]
    previous = None
    for composite, _rank, packed_value in heapq.merge(*sources):
        if composite == previous:
            continue  # an older version of a key already taken (or dropped)
        previous = composite
        if packed_value is not None:
            columns.add(composite[: composite.index(b"\0")].decode("utf-8"), composite, packed_value)
    if columns.flags:
        columns.write(writer)
    return len(columns.flags)


class RecordsSegment:
    """Point reads and ordered scans over one records segment."""

    def __init__(self, segment: Segment):
        self.segment = segment
        self.path = segment.path
        meta = segment.meta
        try:
            self.tables = {name: (int(bounds[0]), int(bounds[1])) for name, bounds in meta.get("tables", {}).items()}
            self.count = int(meta.get("count", 0))
        except (AttributeError, TypeError, ValueError, KeyError, IndexError, OverflowError):
            raise CorruptionError(self.path, None, "records segment meta is malformed") from None
        if self.count < 0:
            raise CorruptionError(self.path, None, f"records segment meta holds a count of {self.count}")
        for table, (start, end) in self.tables.items():
            if not 0 <= start <= end <= self.count:
                raise CorruptionError(self.path, None, f"table {table!r} rows {start}..{end} out of range")
        self._columns = None

    def _load(self):
        """Columns as memoryviews: indexing a memoryview and `bisect` cost a fraction of numpy's per-call
        overhead, which dominates a single point read."""
        if self._columns is None:
            column = self.segment.column
            arrays = (column("hashes"), column("hash_rows"), column("key_offsets"), column("keys"),
                      column("value_offsets"), column("values"), column("flags"))
            self._validate(*arrays)
            self._columns = tuple(_native_view(array) for array in arrays)
        return self._columns

    def _validate(self, hashes, hash_rows, key_offsets, keys, value_offsets, values, flags) -> None:
        count = self.count
        if not (len(hashes) == len(hash_rows) == len(flags) == count
                and len(key_offsets) == len(value_offsets) == count + 1):
            raise CorruptionError(self.path, None, "records columns disagree on the record count")
        if count and (int(key_offsets[-1]) != len(keys) or int(value_offsets[-1]) != len(values)
                      or int(hash_rows.max()) >= count):
            raise CorruptionError(self.path, None, "records offsets point outside their columns")

    def _key_at(self, row: int) -> bytes:
        key_offsets, keys = self._columns[2], self._columns[3]
        return bytes(keys[key_offsets[row]: key_offsets[row + 1]])

    def _value_at(self, row: int):
        value_offsets, values, flags = self._columns[4], self._columns[5], self._columns[6]
        if flags[row] & RECORD_FLAG_TOMBSTONE:
            return TOMBSTONE
        start = value_offsets[row]
        return unpack(values[start: value_offsets[row + 1]], self.path, start)

    def get(self, composite: bytes, hashed: int):
        """(found, value-or-TOMBSTONE)."""
        hashes, hash_rows = self._load()[:2]
        position = bisect.bisect_left(hashes, hashed)
        while position < len(hashes) and hashes[position] == hashed:
            row = hash_rows[position]
            if self._key_at(row) == composite:
                return True, self._value_at(row)
            position += 1
        return False, None

    def raw_rows(self, rank: int):
        """(composite key, rank, msgpack bytes or None for a tombstone) of every row, in key order."""
        self._load()
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
