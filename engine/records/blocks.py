"""Layout 2 of the records segment (format 4): rows in zstd-compressed blocks, found by their first keys.

    column             dtype  shape   content
    blocks             |u1    [..]    the blocks, each one zstd frame, concatenated in row order
    block_offsets      <u8    [B+1]   start of block b's frame in `blocks`; the last is len(blocks)
    block_rows         <u8    [B+1]   first row of block b; the last is the row count n
    first_key_offsets  <u8    [B+1]   start of block b's first key in `first_keys`
    first_keys         |u1    [..]    the composite key of each block's first row, concatenated

A frame decompresses to the block's m rows: the 2m lengths of their keys and values (u32, in four byte planes) ·
flags u8[m] · keys · values (a tombstone has flag bit 0 and an empty value). Point read: bisect the
first keys, decompress one block (or find it in the store's BlockCache), bisect its keys. A block's frame is
checked against the segment's column CRCs before it is decompressed: damage is named, never decoded.
MANIFEST.spec section 4 has the byte tables.
"""

from __future__ import annotations

import bisect
import itertools
import threading
from collections import OrderedDict

import numpy as np
import zstandard

from engine.codec import unpack
from engine.errors import CorruptionError
from engine.format import RECORD_FLAG_TOMBSTONE, RECORDS_CACHE_BYTES, RECORDS_MAX_BLOCK_BYTES
from engine.records.filter import FILTER_PROBES, may_contain, may_contain_one
from engine.records.rows import TOMBSTONE, composite_key, key_hashes, native_view, table_of

INDEX_COLUMNS = ("block_offsets", "block_rows", "first_key_offsets", "first_keys")
_LENGTH_DTYPE = np.dtype("<u4")
_READ_AHEAD = 64 << 10  # a partial block decompresses at least this much more at a time
_EXTENDING = threading.Lock()  # held while a partial block decompresses more of its frame
RELEASE_BYTES = 4 << 20  # a compaction's read gives back the pages of each 4 MiB of blocks it went through
_TOKENS = itertools.count()  # tells the segments sharing one BlockCache apart


def encode_block(composites: list, packed_values: list) -> bytes:
    """The decompressed bytes of a block of rows (packed value None: a tombstone)."""
    values = [value or b"" for value in packed_values]
    lengths = np.fromiter(itertools.chain(map(len, composites), map(len, values)), np.int64, 2 * len(values))
    if lengths.max() >= 1 << 32:
        raise ValueError("a records block row holds a key or value of 4 GiB")
    # Byte planes: the lengths' low bytes side by side, then their next bytes (mostly zeros) compress well.
    planes = lengths.astype(_LENGTH_DTYPE).view(np.uint8).reshape(-1, _LENGTH_DTYPE.itemsize).T
    flags = bytes(RECORD_FLAG_TOMBSTONE if value is None else 0 for value in packed_values)
    return b"".join([np.ascontiguousarray(planes).tobytes(), flags, *composites, *values])


class Block:
    """One block's rows: their keys and values, sliced on demand. A point read decompresses the frame only as far
    as the rows it reads (the lengths, then the keys a bisection compares, then one value): the blocks of a
    compaction hold 2 MiB, and the key a write looks up is often absent, so most of a block is never needed."""

    __slots__ = ("data", "rows", "key_bounds", "value_bounds", "flags", "path", "offset", "size", "footprint",
                 "_reader")

    def __init__(self, frame: bytes, size: int, rows: int, path: str, offset: int, partial: bool = False):
        """frame: the zstd frame, declaring `size` decompressed bytes; offset: its file offset (errors name it);
        partial=False decompresses it whole at once."""
        self.rows, self.path, self.offset, self.size = rows, path, offset, size
        self.footprint = size + len(frame) if partial else size  # what the cache holds while it lasts
        header = 9 * rows
        if rows < 1 or size < header:
            raise CorruptionError(path, offset, f"records block of {size} bytes cannot hold {rows} rows")
        if partial:
            self.data = bytearray()
            self._reader = zstandard.ZstdDecompressor().stream_reader(frame, read_size=len(frame))
            self._reach(header)
        else:
            self.data, self._reader = self._decompressed(frame), None
        planes = np.frombuffer(self.data, np.uint8, 8 * rows).reshape(_LENGTH_DTYPE.itemsize, 2 * rows)
        lengths = planes[0].astype(np.int64)
        for plane in range(1, _LENGTH_DTYPE.itemsize):
            lengths |= planes[plane].astype(np.int64) << 8 * plane
        key_bounds = _bounds(header, lengths[:rows])
        value_bounds = _bounds(key_bounds[-1], lengths[rows:])
        if value_bounds[-1] != size:
            raise CorruptionError(path, offset, "records block lengths do not add up to its bytes")
        # Item reads of a memoryview give ints as fast as a list's, without making 2 ints per row (a point
        # read of a block of 20,000 rows compares about 15 keys).
        self.key_bounds, self.value_bounds = memoryview(key_bounds), memoryview(value_bounds)
        self.flags = bytes(self.data[8 * rows: header])

    def _decompressed(self, frame: bytes) -> bytes:
        try:
            data = zstandard.ZstdDecompressor().decompress(frame, max_output_size=self.size)
        except zstandard.ZstdError as error:
            raise CorruptionError(self.path, self.offset, f"records block does not decompress ({error})") from None
        if len(data) != self.size:
            raise CorruptionError(self.path, self.offset,
                                  f"records block holds {len(data)} bytes, its frame says {self.size}")
        return data

    def _reach(self, end: int) -> None:
        """Decompress the frame up to byte `end` at least (whole zstd blocks of up to 128 KiB at a time). The bytes
        only grow at their end, so a reader of bytes already there needs no lock; two threads extending one cached
        block take turns (zstd lets the GIL go while it decompresses)."""
        with _EXTENDING:
            data, reader = self.data, self._reader
            if reader is None:
                return
            try:
                while len(data) < end:
                    piece = reader.read(max(end - len(data), _READ_AHEAD))
                    if not piece:
                        raise CorruptionError(self.path, self.offset,
                                              f"records block holds {len(data)} bytes, its frame says {self.size}")
                    data += piece
                if len(data) == self.size:
                    if reader.read(1):
                        raise CorruptionError(self.path, self.offset,
                                              f"records block holds more bytes than the {self.size} its frame says")
                    self._reader = None
            except zstandard.ZstdError as error:
                raise CorruptionError(self.path, self.offset,
                                      f"records block does not decompress ({error})") from None

    def key(self, row: int) -> bytes:
        start, end = self.key_bounds[row], self.key_bounds[row + 1]
        if self._reader is not None and end > len(self.data):
            self._reach(end)
        return bytes(self.data[start:end])

    def packed(self, row: int) -> bytes | None:
        """The msgpack bytes of a row's value, None for a tombstone."""
        if self.flags[row] & RECORD_FLAG_TOMBSTONE:
            return None
        start, end = self.value_bounds[row], self.value_bounds[row + 1]
        if self._reader is not None and end > len(self.data):
            self._reach(end)
        return bytes(self.data[start:end])

    def value(self, row: int):
        packed = self.packed(row)
        return TOMBSTONE if packed is None else unpack(packed, self.path, self.offset)

    def find(self, composite: bytes, low: int = 0) -> int:
        """The first row at or after `low` whose key is not below `composite`."""
        return bisect.bisect_left(range(self.rows), composite, low, key=self.key)


def _bounds(start: int, lengths: np.ndarray) -> np.ndarray:
    """The start of each of the pieces of these lengths laid end to end from `start`, then their end."""
    bounds = np.empty(len(lengths) + 1, np.int64)
    bounds[0] = start
    np.cumsum(lengths, out=bounds[1:])
    bounds[1:] += start
    return bounds


class BlockCache:
    """Decompressed blocks, the least recently used forgotten first once they pass `budget` bytes."""

    def __init__(self, budget: int = RECORDS_CACHE_BYTES):
        self.budget = budget
        self._entries: OrderedDict = OrderedDict()
        self._bytes = 0

    def get(self, key):
        block = self._entries.get(key)
        if block is not None:
            self._entries.move_to_end(key)
        return block

    def put(self, key, block: Block) -> None:
        self._entries[key] = block
        self._bytes += block.footprint
        while self._bytes > self.budget and len(self._entries) > 1:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= dropped.footprint


class BlockRecords:
    """Point reads and ordered scans over one layout-2 records segment."""

    def __init__(self, segment, tables: dict, count: int, blocks: int, cache: BlockCache | None = None):
        self.segment = segment
        self.path = segment.path
        self.tables = tables
        self.count = count
        self.block_count = blocks
        self._cache = cache if cache is not None else BlockCache()
        self._token = next(_TOKENS)
        self._index = None
        self._first_keys: list | None = None  # every block's first key, once a bulk read needed them
        self._filter: tuple | None = None  # (filter bytes, probes), once a read needed them

    def _load(self) -> tuple:
        """The index columns as memoryviews (cheap single-item reads), their lengths checked."""
        if self._index is None:
            segment, count = self.segment, self.block_count
            offsets, rows, key_offsets, first_keys = (segment.column(name, verify=False) for name in INDEX_COLUMNS)
            blocks = segment.column("blocks", verify=False)
            columns = (offsets, rows, key_offsets, first_keys, blocks)
            dtypes = [column.dtype.str for column in columns]
            if dtypes != ["<u8", "<u8", "<u8", "|u1", "|u1"] or any(column.ndim != 1 for column in columns):
                raise CorruptionError(self.path, None, f"records block columns have the dtypes {dtypes}")
            if not len(offsets) == len(rows) == len(key_offsets) == count + 1:
                raise CorruptionError(self.path, None, "records block index columns disagree on the block count")
            for name in INDEX_COLUMNS[:3]:
                segment.verify_items(name, 0, 1)
                segment.verify_items(name, count, count + 1)
            if (int(offsets[0]), int(offsets[-1]), int(rows[0]), int(rows[-1]), int(key_offsets[0]),
                    int(key_offsets[-1])) != (0, len(blocks), 0, self.count, 0, len(first_keys)):
                raise CorruptionError(self.path, None, "records block index does not span its rows and bytes")
            self._index = tuple(map(native_view, (blocks, offsets, rows, key_offsets, first_keys)))
        return self._index

    def _first_key(self, block: int) -> bytes:
        key_offsets, first_keys = self._index[3], self._index[4]
        self.segment.verify_items("first_key_offsets", block, block + 2)
        start, end = key_offsets[block], key_offsets[block + 1]
        if not start <= end <= len(first_keys):
            raise CorruptionError(self.path, None, f"records block {block}: first key offsets out of range")
        self.segment.verify_items("first_keys", start, end)
        return bytes(first_keys[start:end])

    def _block_of(self, composite: bytes) -> int:
        """The block that holds `composite` if any does (-1: it sorts before every row)."""
        if self._first_keys is not None:
            return bisect.bisect_right(self._first_keys, composite) - 1
        self._load()
        return bisect.bisect_right(range(self.block_count), composite, key=self._first_key) - 1

    def _load_first_keys(self) -> None:
        """Every block's first key at once (a bulk read bisects them many times)."""
        if self._first_keys is None:
            self._load()
            self.segment.verify_items("first_key_offsets", 0, self.block_count + 1)
            self._first_keys = [self._first_key(block) for block in range(self.block_count)]

    def _filter_bytes(self):
        """The filter column (None when the segment has none), checked once."""
        if self._filter is None:
            probes = self.segment.meta.get("filter_probes")
            if probes is None:
                self._filter = (None,)
            elif type(probes) is not int or probes != FILTER_PROBES or not self.segment.has("filter"):
                raise CorruptionError(self.path, None, f"records filter of {probes!r} probes is not readable")
            else:
                bits = self.segment.column("filter")
                if bits.dtype != np.uint8 or bits.ndim != 1 or len(bits) < 8:
                    raise CorruptionError(self.path, None, "records filter column is malformed")
                self._filter = (bits,)
        return self._filter[0]

    def _absent(self, hashes: np.ndarray) -> np.ndarray:
        """Which of the keys of these hashes the segment's filter rules out (none without a filter)."""
        bits = self._filter_bytes()
        return np.zeros(len(hashes), bool) if bits is None else ~may_contain(bits, hashes)

    def block(self, number: int, cached: bool = True, partial: bool = False) -> Block:
        """Block `number`, its frame checked (from the cache when it is there); partial: decompressed only as far
        as its reads need (a point read), else whole at once (a scan will read it all)."""
        key = (self._token, number)
        found = self._cache.get(key) if cached else None
        if found is not None:
            return found
        blocks, offsets, rows = self._load()[:3]
        verify = self.segment.verify_items
        verify("block_offsets", number, number + 2)
        verify("block_rows", number, number + 2)
        start, end, first_row, end_row = offsets[number], offsets[number + 1], rows[number], rows[number + 1]
        if not (start <= end <= len(blocks) and first_row < end_row <= self.count):
            raise CorruptionError(self.path, None, f"records block {number}: its bytes or rows are out of range")
        verify("blocks", start, end)
        file_offset = self.segment.column_offset("blocks") + start
        frame = bytes(blocks[start:end])
        found = Block(frame, self._frame_size(frame, file_offset), end_row - first_row, self.path, file_offset,
                      partial)
        if found.key(0) != self._first_key(number):
            raise CorruptionError(self.path, file_offset, f"records block {number} does not start with its first key")
        if cached:
            self._cache.put(key, found)
        return found

    def _frame_size(self, frame: bytes, offset: int) -> int:
        """The decompressed size the frame declares."""
        try:
            size = zstandard.frame_content_size(frame)
        except zstandard.ZstdError as error:
            raise CorruptionError(self.path, offset, f"records block does not decompress ({error})") from None
        if not 0 <= size <= RECORDS_MAX_BLOCK_BYTES:
            raise CorruptionError(self.path, offset, f"records block frame declares {size} bytes")
        return size

    def get(self, composite: bytes, hashed: int):
        """(found, value-or-TOMBSTONE); `hashed`: the composite key's key_hash."""
        if not self.count:
            return False, None
        bits = self._filter_bytes()
        if bits is not None and not may_contain_one(memoryview(bits), hashed):
            return False, None
        return self._find(composite)

    def _find(self, composite: bytes):
        number = self._block_of(composite)
        if number < 0:
            return False, None
        block = self.block(number, partial=True)
        row = block.find(composite)
        if row < block.rows and block.key(row) == composite:
            return True, block.value(row)
        return False, None

    def get_many(self, composites: list, hashed: np.ndarray) -> dict:
        """{index: value-or-TOMBSTONE} of the composites this segment holds (`hashed`: their key_hashes): the
        filter rules most absent keys out at once, the rest are looked up in key order (a cached block serves its
        neighbours). A few keys bisect the first keys of the blocks; many read them all once."""
        if not self.count or not composites:
            return {}
        wanted = sorted(np.flatnonzero(~self._absent(hashed)).tolist(), key=composites.__getitem__)
        if len(wanted) * self.block_count.bit_length() >= self.block_count:
            self._load_first_keys()  # cheaper than bisecting the first keys one key at a time
        found = {}
        for index in wanted:
            present, value = self._find(composites[index])
            if present:
                found[index] = value
        return found

    def _rows_from(self, composite: bytes, cached: bool = True):
        """(block, row) of every row from the first whose key is not below `composite`, in order."""
        number = max(self._block_of(composite), 0)
        row = None
        while number < self.block_count:
            block = self.block(number, cached)
            for row in range(block.find(composite) if row is None else 0, block.rows):
                yield block, row
            row = 0
            number += 1

    def iterate(self, table: str, prefix: str = ""):
        """(key, value-or-TOMBSTONE) of `table` whose key starts with `prefix`, in key order."""
        if table not in self.tables or not self.count:
            return
        wanted = composite_key(table, prefix)
        head = len(table.encode("utf-8")) + 1
        for block, row in self._rows_from(wanted):
            composite = block.key(row)
            if not composite.startswith(wanted):
                return
            yield composite[head:].decode("utf-8"), block.value(row)

    def raw_rows(self, rank: int):
        """(composite key, rank, msgpack bytes or None for a tombstone) of every row, in key order: compaction's
        read, block after block, kept out of the cache, and out of the process's memory once read."""
        if not self.count:
            return
        offsets = self._load()[1]
        start = self.segment.column_offset("blocks")
        released = 0
        for number in range(self.block_count):
            block = self.block(number, cached=False)
            for row in range(block.rows):
                yield block.key(row), rank, block.packed(row)
            if offsets[number + 1] - released >= RELEASE_BYTES:
                released = offsets[number + 1]
                self.segment.release(start + released)

    # Row by row, for engine/repair/: a read checks and decompresses only the block holding the row, so that a
    # damaged block's CorruptionError loses its rows and no other (0 <= row < count).

    def _row_in_block(self, row: int) -> tuple:
        """(block, row within it) of segment row `row`."""
        rows = self._load()[2]
        self.segment.verify_items("block_rows", 0, self.block_count + 1)
        number = bisect.bisect_right(rows, row) - 1
        return self.block(number), row - rows[number]

    def key_of(self, row: int) -> bytes:
        """The composite key of row `row`."""
        block, row = self._row_in_block(row)
        return block.key(row)

    def packed_value_of(self, row: int) -> bytes | None:
        """The msgpack bytes of row `row`'s value; None for a tombstone."""
        block, row = self._row_in_block(row)
        return block.packed(row)

    def lost_key_ranges(self) -> list:
        """[low, high) composite key ranges of the blocks that fail their checks (None: unbounded), whose keys
        are lost with their values: engine/repair/ drops older versions of keys in them."""
        self._load()
        ranges = []
        for number in range(self.block_count):
            try:
                self.block(number, cached=False)
            except CorruptionError:
                ranges.append((self._known_first_key(number), self._known_first_key(number + 1)))
        return ranges

    def _known_first_key(self, number: int) -> bytes | None:
        if number >= self.block_count:
            return None
        try:
            return self._first_key(number)
        except CorruptionError:
            return None

    def check(self) -> None:
        """CorruptionError unless every block decodes, keys strictly ascend across the segment, tombstones hold
        no value and the meta's tables are the key ranges (`memctl check`; the column CRCs are checked before)."""
        tables: dict = {}
        previous, row_number = None, 0
        for number in range(self.block_count if self.count else 0):
            block = self.block(number, cached=False)
            for row in range(block.rows):
                composite = block.key(row)
                if previous is not None and composite <= previous:
                    raise CorruptionError(self.path, block.offset, f"records keys do not ascend at row {row_number}")
                if block.flags[row] & RECORD_FLAG_TOMBSTONE and block.value_bounds[row] != block.value_bounds[row + 1]:
                    raise CorruptionError(self.path, block.offset, f"tombstone at row {row_number} holds a value")
                bounds = tables.setdefault(table_of(composite), [row_number, row_number])
                bounds[1] = row_number = row_number + 1
                previous = composite
        if {name: tuple(bounds) for name, bounds in tables.items()} != self.tables:
            raise CorruptionError(self.path, None, "records meta tables differ from the rows' tables")
        if self._absent(key_hashes([composite for composite, _rank, _packed in self.raw_rows(0)])).any():
            raise CorruptionError(self.path, None, "records filter rules out a key the segment holds")
