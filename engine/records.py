"""The `records` segment kind: typed records (table, key) → msgpack value, the store's source of truth.

Rows are sorted by (table, key) so a table is one contiguous row range (scans); a sorted array of 64-bit
key hashes with their rows gives point reads in one numpy binary search, without loading any key at open.

Columns: hashes u64[n] (sorted) · hash_rows u32[n] · key_offsets u64[n+1] · keys u8 (table NUL key, UTF-8)
· value_offsets u64[n+1] · values u8 (msgpack) · flags u8[n] (bit 0: tombstone). Meta: {"tables":
{name: [first_row, end_row]}, "count": n}. A key's hash is BLAKE2b with an 8-byte output (digest_size=8, not a
prefix of BLAKE2b-512) read as a little-endian u64: MANIFEST.spec, Conventions and section 4.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import heapq
import operator

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


def key_hashes(composites: list) -> np.ndarray:
    """key_hash of every composite key, as uint64: the digests are made and read by C-level maps."""
    digests = map(_DIGEST, map(_HASHER, composites))
    return np.frombuffer(b"".join(digests), dtype="<u8").astype(np.uint64) if composites else np.zeros(0, np.uint64)


_HASHER = functools.partial(hashlib.blake2b, digest_size=8)
_DIGEST = operator.methodcaller("digest")


def _native_view(array: np.ndarray) -> memoryview:
    """A flat memoryview in native byte order (a copy only on a big-endian host)."""
    native = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))
    return memoryview(native.reshape(-1)).cast("B").cast(native.dtype.char) if native.size else memoryview(b"")


class _Columns:
    """Rows appended in (table, key) order, written out as a records segment."""

    def __init__(self):
        self.composites: list = []
        self.packed_values: list = []  # msgpack bytes, or None for a tombstone
        self.table_ranges: dict = {}

    def __len__(self) -> int:
        return len(self.composites)

    def add_table(self, table: str, composites: list, packed_values: list) -> None:
        """Rows of one table not seen before, in key order (packed value None: a tombstone)."""
        start = len(self.composites)
        self.table_ranges[table] = [start, start + len(composites)]
        self.composites += composites
        self.packed_values += packed_values

    def write(self, writer: SegmentWriter) -> None:
        packed_values = self.packed_values
        hash_array = key_hashes(self.composites)
        order = np.argsort(hash_array, kind="stable")
        writer.add_column("hashes", hash_array[order])
        writer.add_column("hash_rows", order.astype(np.uint32))
        writer.add_column("key_offsets", _offsets(self.composites))
        writer.add_bytes("keys", b"".join(self.composites))
        tombstones = packed_values.count(None)
        present = [value if value is not None else b"" for value in packed_values] if tombstones else packed_values
        writer.add_column("value_offsets", _offsets(present))
        writer.add_bytes("values", b"".join(present))
        flags = np.zeros(len(packed_values), dtype=np.uint8)
        if tombstones:
            flags[[index for index, value in enumerate(packed_values) if value is None]] = RECORD_FLAG_TOMBSTONE
        writer.add_column("flags", flags)
        writer.set_meta({"tables": self.table_ranges, "count": len(packed_values)})


def _offsets(pieces: list) -> np.ndarray:
    offsets = np.zeros(len(pieces) + 1, dtype=np.uint64)
    np.cumsum(np.fromiter(map(len, pieces), dtype=np.uint64, count=len(pieces)), out=offsets[1:])
    return offsets


def _composite_keys(table: str, keys: list) -> list:
    """composite_key(table, key) of every key: one encode of them all when they are ASCII (then a key's
    bytes are its characters), else one per key."""
    prefix = f"{table}\0"
    joined = prefix.join(keys)
    if not joined.isascii():
        return [composite_key(table, key) for key in keys]
    data = (prefix + joined).encode("ascii")
    ends = np.cumsum(np.fromiter(map(len, keys), dtype=np.int64, count=len(keys)) + len(prefix)).tolist()
    return list(map(data.__getitem__, map(slice, [0] + ends[:-1], ends)))


def write_records(writer: SegmentWriter, tables: dict, packed: dict | None = None) -> None:
    """`tables`: {table: {key: value or TOMBSTONE}} (any order); `packed`: {table: {key: msgpack bytes}} of
    values already packed (never of a key whose value is TOMBSTONE; the rest are packed here). Writes every
    column and the meta."""
    columns = _Columns()
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
        columns.add_table(table, _composite_keys(table, keys), values)
    columns.write(writer)


def merge_records(writer: SegmentWriter, segments: list, tables: dict | None = None, packed: dict | None = None) -> int:
    """Compaction: the live records of `segments` (oldest first) and of the memtable `tables` (newer than every
    segment; `packed` as write_records takes it) as one segment, decoding no stored value. Newer versions
    shadow older ones; tombstones and what they hide are dropped. Returns the row count."""
    columns = _Columns()
    sources = [segment.raw_rows(rank) for rank, segment in enumerate(reversed(segments), start=1)]
    if tables:
        sources.append(_memtable_rows(tables, packed or {}))
    previous = None
    table, composites, packed_values = None, [], []
    for composite, _rank, packed_value in heapq.merge(*sources):
        if composite == previous:
            continue  # an older version of a key already taken (or dropped)
        previous = composite
        if packed_value is None:
            continue
        name = composite[: composite.index(b"\0")].decode("utf-8")
        if name != table:
            if composites:
                columns.add_table(table, composites, packed_values)
            table, composites, packed_values = name, [], []
        composites.append(composite)
        packed_values.append(packed_value)
    if composites:
        columns.add_table(table, composites, packed_values)
    if len(columns):
        columns.write(writer)
    return len(columns)


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
            names = ("hashes", "hash_rows", "key_offsets", "keys", "value_offsets", "values", "flags")
            # Columns are checked block by block as rows are read, so a cold point read hashes a few
            # blocks instead of the whole (often largest) values column.
            arrays = tuple(self.segment.column(name, verify=False) for name in names)
            self._validate(*arrays)
            self._columns = tuple(_native_view(array) for array in arrays)
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

    def get(self, composite: bytes, hashed: int):
        """(found, value-or-TOMBSTONE)."""
        hashes = self._load()[0]
        position = bisect.bisect_left(hashes, hashed)
        self.segment.verify_bisect("hashes", position)
        return self._match(composite, hashed, position)

    def get_many(self, composites: list, hashed: np.ndarray) -> dict:
        """{index: value-or-TOMBSTONE} of the composites (hashed: their key_hashes) this segment holds. One
        search of the hash column for all of them: a writer checking a batch of new keys against every
        segment would otherwise pay a Python-level bisect per key per segment, growing with the store."""
        hashes = np.asarray(self._load()[0])
        if not len(hashes) or not len(hashed):
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
