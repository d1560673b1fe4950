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


def write_records(writer: SegmentWriter, tables: dict) -> None:
    """`tables`: {table: {key: value or TOMBSTONE}} (any order); writes every column and the meta."""
    keys = bytearray()
    values = bytearray()
    key_offsets = [0]
    value_offsets = [0]
    flags = []
    hashes = []
    table_ranges = {}
    for table in sorted(tables):
        rows = tables[table]
        first_row = len(flags)
        for key in sorted(rows):
            value = rows[key]
            composite = composite_key(table, key)
            keys += composite
            key_offsets.append(len(keys))
            hashes.append(key_hash(composite))
            if value is TOMBSTONE:
                flags.append(RECORD_FLAG_TOMBSTONE)
            else:
                flags.append(0)
                values += pack(value)
            value_offsets.append(len(values))
        table_ranges[table] = [first_row, len(flags)]
    hash_array = np.array(hashes, dtype=np.uint64)
    order = np.argsort(hash_array, kind="stable")
    writer.add_column("hashes", hash_array[order])
    writer.add_column("hash_rows", order.astype(np.uint32))
    writer.add_column("key_offsets", np.array(key_offsets, dtype=np.uint64))
    writer.add_bytes("keys", bytes(keys))
    writer.add_column("value_offsets", np.array(value_offsets, dtype=np.uint64))
    writer.add_bytes("values", bytes(values))
    writer.add_column("flags", np.array(flags, dtype=np.uint8))
    writer.set_meta({"tables": table_ranges, "count": len(flags)})


class RecordsSegment:
    """Point reads and ordered scans over one records segment."""

    def __init__(self, segment: Segment):
        self.segment = segment
        self.path = segment.path
        meta = segment.meta
        self.tables = {name: (int(bounds[0]), int(bounds[1])) for name, bounds in meta.get("tables", {}).items()}
        self.count = int(meta.get("count", 0))
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
