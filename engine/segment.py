"""Immutable segment files: a generic container of named numpy columns.

    header    magic | version | kind | header CRC                       (32 bytes)
    column 0  raw array bytes, starting on a 64-byte boundary
    ...
    directory msgpack {kind, checksum_block, columns: [[name, dtype, shape, offset, length, block_crcs]], meta}
    footer    directory offset | directory length | directory CRC | version | magic   (32 bytes)

Every kind (records, text postings, graph CSR, vectors) is this container with its own columns, so one
writer, one reader and one checker serve them all. A segment is complete iff its footer magic, directory
CRC and version are valid. Each column is checksummed in blocks of `checksum_block` bytes (LevelDB keeps a
CRC per table block for the same reason: a point read must not hash the whole file); a block's CRC is
checked the first time a read touches it in a process, so a cold command pays only for the bytes it reads.
Columns are read-only numpy views over one mmap; the CRCs live in the directory, so the views stay contiguous.
"""

from __future__ import annotations

import math
import mmap
import os
import re
import struct

import numpy as np

from engine import fs
from engine.codec import crc32, crc32_combine, pack, unpack
from engine.column_codec import CompressedColumn, compress_column
from engine.errors import CorruptionError, UnsupportedVersion
from engine.format import (
    FORMAT_VERSION,
    SEGMENT_CHECKSUM_BLOCK_BYTES,
    SEGMENT_COLUMN_ALIGNMENT,
    SEGMENT_FOOTER_FORMAT,
    SEGMENT_FOOTER_MAGIC,
    SEGMENT_FOOTER_SIZE,
    SEGMENT_HEADER_FORMAT,
    SEGMENT_HEADER_SIZE,
    SEGMENT_KIND_BYTES,
    SEGMENT_MAGIC,
    SEGMENT_MAX_CHECKSUM_BLOCK_BYTES,
    SEGMENT_MAX_DIRECTORY_BYTES,
    TEMP_SUFFIX,
)

_header = struct.Struct(SEGMENT_HEADER_FORMAT)
_footer = struct.Struct(SEGMENT_FOOTER_FORMAT)


def encode_segment_header(kind: str) -> bytes:
    kind_bytes = kind.encode("ascii")
    if len(kind_bytes) > SEGMENT_KIND_BYTES:
        raise ValueError(f"segment kind {kind!r} is longer than {SEGMENT_KIND_BYTES} bytes")
    body = _header.pack(SEGMENT_MAGIC, FORMAT_VERSION, kind_bytes, 0)[:-4]
    return body + struct.pack("<I", crc32(body))


class SegmentWriter:
    """Streams columns into a temp file next to `path`; `finish()` publishes it durably. compression: the zstd
    level of columns stored compressed where it pays (engine.column_codec), None to store every column as is."""

    def __init__(self, path: str, kind: str, compression: int | None = None):
        self.path = path
        self.kind = kind
        self.compression = compression
        self._temp = path + TEMP_SUFFIX
        fs.remove(self._temp)
        self._fd = fs.ops.open_new(self._temp)
        self._columns: list = []
        self._meta: dict = {}
        self._size = 0
        self._file_crc = 0
        self._write(encode_segment_header(kind))

    def _write(self, data, crc: int | None = None) -> None:
        """crc: crc32 of `data` when the caller knows it (then the file's CRC is combined, not recomputed)."""
        fs.ops.write(self._fd, data)
        self._size += len(data)
        self._file_crc = crc32(data, self._file_crc) if crc is None else crc32_combine(self._file_crc, crc, len(data))

    def add_column(self, name: str, array) -> None:
        array = np.asarray(array)
        if array.dtype.hasobject or array.dtype.fields is not None:
            raise TypeError(f"column {name!r} must hold plain numbers or bytes (one column per field), "
                            f"not {array.dtype}")
        if array.dtype.str.startswith(">"):  # big-endian (native on such a host): columns are little-endian
            array = array.astype(array.dtype.newbyteorder("<"))
        padding = -self._size % SEGMENT_COLUMN_ALIGNMENT
        if padding:
            self._write(bytes(padding))
        compressed = compress_column(array, self.compression) if self.compression is not None else None
        if compressed is not None:
            frames, codec = compressed
            data = b"".join(frames)
        else:
            flat = np.ascontiguousarray(array.reshape(-1))
            data = flat.view(np.uint8) if flat.size else b""
        crcs = block_crcs(data)
        entry = [name, array.dtype.str, list(array.shape), self._size, len(data), crcs]
        self._columns.append(entry + [codec] if compressed is not None else entry)
        self._write(data, _crc_of_blocks(crcs, len(data)))

    def add_bytes(self, name: str, data: bytes) -> None:
        self.add_column(name, np.frombuffer(data, dtype=np.uint8))

    def byte_stream(self, name: str) -> "ByteColumnStream":
        """A |u1 column written piece by piece (`write`, then `close`) instead of held whole in memory: a
        compaction streams its largest column. No other column may be added while it is open."""
        padding = -self._size % SEGMENT_COLUMN_ALIGNMENT
        if padding:
            self._write(bytes(padding))
        return ByteColumnStream(self, name, self._size)

    def set_meta(self, meta: dict) -> None:
        self._meta = meta

    def finish(self) -> dict:
        """Publish: fsync the file, rename into place, fsync the directory. Returns the MANIFEST entry."""
        directory = pack({"kind": self.kind, "checksum_block": SEGMENT_CHECKSUM_BLOCK_BYTES, "columns": self._columns,
                          "meta": self._meta})
        directory_offset = self._size
        self._write(directory)
        footer = _footer.pack(directory_offset, len(directory), crc32(directory), FORMAT_VERSION, 0,
                              SEGMENT_FOOTER_MAGIC)
        self._write(footer)
        try:
            fs.failpoint("segment.write.before_fsync")
            fs.ops.fsync(self._fd)
        finally:
            fs.ops.close(self._fd)
            self._fd = None
        fs.failpoint("segment.before_rename")
        fs.ops.rename(self._temp, self.path)
        fs.failpoint("segment.after_rename.before_dirsync")
        fs.ops.fsync_dir(os.path.dirname(os.path.abspath(self.path)))
        fs.failpoint("segment.after_publish")
        return {"name": os.path.basename(self.path), "kind": self.kind, "size": self._size, "crc": self._file_crc}

    def abort(self) -> None:
        if self._fd is not None:
            fs.ops.close(self._fd)
            self._fd = None
        fs.remove(self._temp)


class ByteColumnStream:
    """One |u1 column of a SegmentWriter, appended piece by piece; its checksum blocks are computed as the bytes
    go by, so the column is never held whole."""

    def __init__(self, writer: SegmentWriter, name: str, offset: int):
        self._writer = writer
        self._name = name
        self._offset = offset
        self.length = 0
        self._crcs: list = []  # CRCs of the finished checksum blocks
        self._open_crc = 0  # CRC of the bytes of the block being filled

    def write(self, data) -> None:
        view = memoryview(data).cast("B")
        position = 0
        while position < len(view):
            filled = self.length % SEGMENT_CHECKSUM_BLOCK_BYTES
            piece = view[position: position + SEGMENT_CHECKSUM_BLOCK_BYTES - filled]
            crc = crc32(piece)
            self._writer._write(piece, crc)
            self._open_crc = crc32_combine(self._open_crc, crc, len(piece)) if filled else crc
            self.length += len(piece)
            position += len(piece)
            if self.length % SEGMENT_CHECKSUM_BLOCK_BYTES == 0:
                self._crcs.append(self._open_crc)

    def close(self) -> None:
        if self.length % SEGMENT_CHECKSUM_BLOCK_BYTES:
            self._crcs.append(self._open_crc)
        crcs = np.array(self._crcs, dtype="<u4").tobytes()
        self._writer._columns.append([self._name, "|u1", [self.length], self._offset, self.length, crcs])


class _Blocks:
    """Which checksum blocks of one column this process has verified."""

    __slots__ = ("crcs", "verified", "unverified")

    def __init__(self, crcs: bytes):
        self.crcs = np.frombuffer(crcs, dtype="<u4").tolist()
        self.verified = bytearray(len(self.crcs))
        self.unverified = len(self.crcs)


class Segment:
    """A published segment, mapped read-only."""

    def __init__(self, path: str, kind: str, meta: dict, columns: dict, buffer, block: int | None,
                 compressed: dict | None = None):
        self.path = path
        self.kind = kind
        self.meta = meta
        self._columns = columns  # name → (dtype, shape, offset, stored length, block CRCs as u32 LE bytes)
        self._compressed = compressed  # name → CompressedColumn, of the columns stored compressed
        self._buffer = buffer
        self._view = memoryview(buffer)
        self._block = block  # None: a version-1 segment, one block per column
        self._blocks: dict = {}  # name → _Blocks, made when a read first touches the column
        self._complete: set = set()  # names whose every block is verified

    @classmethod
    def open(cls, path: str, expected_size: int | None = None) -> "Segment":
        try:
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if expected_size is not None and size != expected_size:
                    raise CorruptionError(path, size, f"segment is {size} bytes, the MANIFEST says {expected_size}")
                if size < SEGMENT_HEADER_SIZE + SEGMENT_FOOTER_SIZE:
                    raise CorruptionError(path, 0, f"segment of {size} bytes is shorter than header + footer")
                buffer = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            raise CorruptionError(path, None, "segment file named by the MANIFEST is missing") from None
        except IsADirectoryError:
            raise CorruptionError(path, None, "segment named by the MANIFEST is a directory") from None
        kind = _check_header(buffer, path)
        directory = _read_directory(buffer, path, size)
        entries, meta = directory.get("columns", []), directory.get("meta") or {}
        if not isinstance(entries, list) or not isinstance(meta, dict):
            raise CorruptionError(path, None, "segment directory lacks a column list or a meta map")
        block = _checksum_block(directory, path)
        columns, compressed = {}, {}
        for entry in entries:
            name, *column, codec = _column_entry(entry, path, size, block)
            columns[name] = tuple(column)
            if codec is not None:
                compressed[name] = codec
        return cls(path, kind, meta, columns, buffer, block, compressed)

    def names(self) -> list[str]:
        return list(self._columns)

    def has(self, name: str) -> bool:
        return name in self._columns

    def column_offset(self, name: str) -> int:
        """File offset of the column's first byte (for errors naming where damage is)."""
        return self._entry(name)[2]

    def _entry(self, name: str) -> tuple:
        try:
            return self._columns[name]
        except KeyError:
            raise CorruptionError(self.path, None, f"segment has no column {name!r}") from None

    def column(self, name: str, verify: bool = True) -> np.ndarray:
        """The whole column; `verify` checks every block not yet checked. Readers that touch a small part of
        a large column take it with verify=False and call `verify_items` for the part they read: of a compressed
        column, only what `verify_items` (or a verified read) filled holds its data, the rest reads as zeros."""
        dtype, shape, offset, length, crcs = self._entry(name)
        compressed = self._compressed.get(name)
        if compressed is not None:
            if verify and compressed.unfilled:
                self._fill(name, compressed, range(len(compressed.filled)))
            return compressed.data.view(dtype).reshape(shape)
        if verify and name not in self._complete:
            self._verify_blocks(name, 0, len(crcs) // 4)
        array = np.frombuffer(self._buffer, dtype=dtype, count=length // dtype.itemsize, offset=offset)
        return array.reshape(shape)

    def verify_items(self, name: str, start: int, stop: int) -> None:
        """Check the blocks holding items [start, stop) of the flattened column (item = one dtype value); of a
        compressed column, decompress the frames holding them (their stored blocks checked first)."""
        if name in self._complete:
            return
        dtype, _shape, _offset, length, _crcs = self._entry(name)
        compressed = self._compressed.get(name)
        if compressed is not None:
            self._fill(name, compressed, compressed.frames_of(max(start, 0) * dtype.itemsize,
                                                               min(stop * dtype.itemsize, compressed.logical_length)))
            return
        first, end = max(start, 0) * dtype.itemsize, min(stop * dtype.itemsize, length)
        if first < end:
            block = self._block or length
            first, last = first // block, (end - 1) // block
            if first == last:
                self._verify_block(name, first)
            else:
                self._verify_blocks(name, first, last + 1)

    def _fill(self, name: str, compressed: CompressedColumn, frames) -> None:
        """Decompress the `frames` of a compressed column not filled yet, each after checking the stored blocks
        that hold its bytes."""
        offset = self._columns[name][2]
        block = self._block or self._columns[name][3]
        for index in frames:
            if compressed.filled[index]:
                continue
            start, end = compressed.starts[index], compressed.starts[index + 1]
            if start < end:
                self._verify_blocks(name, start // block, (end - 1) // block + 1)
            compressed.fill(index, self._view[offset + start: offset + end])
        if not compressed.unfilled:
            self._complete.add(name)

    def verify_bisect(self, name: str, position: int) -> None:
        """Check the blocks a binary search (bisect_left) of a sorted 1-D column read to return `position`.

        The probes follow from the answer alone (a probe below `position` compared smaller, the others not),
        so the check replays them after a fast search instead of slowing every probe down."""
        if name in self._complete:
            return
        if name in self._compressed:
            raise TypeError(f"column {name!r} is compressed: read it whole before a binary search")
        dtype, _shape, _offset, length, _crcs = self._entry(name)
        per_block = (self._block or length) // dtype.itemsize
        low, high = 0, length // dtype.itemsize
        while low < high:
            last_window = low // per_block == (high - 1) // per_block  # it holds every later probe
            middle = low if last_window else (low + high) // 2
            self._verify_block(name, middle // per_block)
            if last_window:
                return
            if middle < position:
                low = middle + 1
            else:
                high = middle

    def items(self, name: str, start: int, stop: int) -> np.ndarray:
        """Items [start, stop) of a 1-D column, their blocks checked: a zero-copy view."""
        if not 0 <= start <= stop:
            raise ValueError(f"item range {start}..{stop} of column {name!r}")  # a negative start would wrap
        self.verify_items(name, start, stop)
        return self.column(name, verify=False)[start:stop]

    def _verify_block(self, name: str, index: int) -> None:
        blocks = self._blocks.get(name)
        if blocks is None or not blocks.verified[index]:
            self._verify_blocks(name, index, index + 1)

    def _verify_blocks(self, name: str, first: int, end: int) -> None:
        blocks = self._blocks.get(name)
        if blocks is None:
            blocks = self._blocks[name] = _Blocks(self._columns[name][4])
        verified = blocks.verified
        _dtype, _shape, offset, length, _crcs = self._columns[name]
        block = self._block or length
        for index in range(first, end):
            if verified[index]:
                continue
            start = offset + index * block
            stop = min(start + block, offset + length)
            if crc32(self._view[start:stop]) != blocks.crcs[index]:
                from engine import damage  # off the path of every read that passes

                raise damage.found(CorruptionError(self.path, start, f"column {name!r} checksum mismatch in block "
                                                                     f"{index} (file bytes {start}..{stop})"))
            verified[index] = 1
            blocks.unverified -= 1
        if not blocks.unverified and name not in self._compressed:  # a compressed one: once every frame is filled
            self._complete.add(name)

    def bytes(self, name: str) -> memoryview:
        return memoryview(self.column(name))

    def verify(self) -> None:
        """Check every block of every column (used by `memctl check`)."""
        for name in self._columns:
            self.column(name)

    def file_crc(self) -> int:
        return crc32(self._buffer)

    def release(self, stop: int | None = None) -> None:
        """Drop this process's pages of the file's bytes before `stop` (None: all of them; MADV_DONTNEED, a later
        read maps them again from the page cache): a read once through a large segment, a compaction's or a tier
        merge's, would count every byte it read in the process's resident memory until the segment is closed."""
        length = len(self._buffer) if stop is None else stop - stop % mmap.PAGESIZE
        if length > 0 and isinstance(self._buffer, mmap.mmap):
            self._buffer.madvise(mmap.MADV_DONTNEED, 0, length)


def _crc_of_blocks(crcs: bytes, length: int) -> int:
    """crc32 of `length` bytes whose SEGMENT_CHECKSUM_BLOCK_BYTES blocks have the CRCs `crcs` (u32 LE)."""
    total, block = 0, SEGMENT_CHECKSUM_BLOCK_BYTES
    for index, crc in enumerate(np.frombuffer(crcs, dtype="<u4").tolist()):
        total = crc32_combine(total, crc, min(block, length - index * block))
    return total


def block_crcs(data) -> bytes:
    """CRC of each SEGMENT_CHECKSUM_BLOCK_BYTES block of `data` (the last may be shorter), as u32 LE."""
    view = memoryview(data).cast("B")
    crcs = [crc32(view[start: start + SEGMENT_CHECKSUM_BLOCK_BYTES])
            for start in range(0, len(view), SEGMENT_CHECKSUM_BLOCK_BYTES)]
    return np.array(crcs, dtype="<u4").tobytes()


def _check_header(buffer, path: str) -> str:
    magic, version, kind_bytes, stored_crc = _header.unpack_from(buffer, 0)
    if magic != SEGMENT_MAGIC:
        raise CorruptionError(path, 0, "not a memctl segment (bad magic)")
    if crc32(buffer[: SEGMENT_HEADER_SIZE - 4]) != stored_crc:
        raise CorruptionError(path, 0, "segment header checksum mismatch")
    if not 1 <= version <= FORMAT_VERSION:
        raise UnsupportedVersion(path, version, FORMAT_VERSION)
    try:
        return kind_bytes.rstrip(b"\0").decode("ascii")
    except UnicodeDecodeError:
        raise CorruptionError(path, 12, "segment kind is not ASCII") from None


def _read_directory(buffer, path: str, size: int) -> dict:
    footer_offset = size - SEGMENT_FOOTER_SIZE
    offset, length, directory_crc, version, _reserved, magic = _footer.unpack_from(buffer, footer_offset)
    if magic != SEGMENT_FOOTER_MAGIC:
        raise CorruptionError(path, footer_offset, "segment footer magic missing: incomplete or damaged file")
    if not 1 <= version <= FORMAT_VERSION:
        raise UnsupportedVersion(path, version, FORMAT_VERSION)
    if length > SEGMENT_MAX_DIRECTORY_BYTES or offset < SEGMENT_HEADER_SIZE or offset + length != footer_offset:
        raise CorruptionError(path, footer_offset, f"segment directory bounds {offset}+{length} are invalid")
    raw = buffer[offset: offset + length]
    if crc32(raw) != directory_crc:
        raise CorruptionError(path, offset, "segment directory checksum mismatch")
    directory = unpack(raw, path, offset)
    if not isinstance(directory, dict):
        raise CorruptionError(path, offset, "segment directory is not a map")
    return directory


def _checksum_block(directory: dict, path: str) -> int | None:
    """The directory's block size; None for a version-1 segment, whose columns each carry one CRC."""
    block = directory.get("checksum_block")
    if block is None:
        return None
    if type(block) is not int or not 0 < block <= SEGMENT_MAX_CHECKSUM_BLOCK_BYTES:
        raise CorruptionError(path, None, f"segment directory names a checksum block of {block!r} bytes")
    return block


# A column's dtype as the writer records it (numpy's dtype.str): byte order, kind, item size, and a datetime's
# unit. Anything else is refused before numpy parses it: numpy also reads deprecated aliases ('a' for 'S', with
# a warning) and whole dtype expressions ("(2,)i4"), which no writer of ours produced.
_DTYPE_TEXT = re.compile(r"[<>|][biufcmMOSUV]\d*(?:\[\w+\])?")


def _column_entry(entry, path: str, size: int, block: int | None) -> tuple:
    """(name, dtype, shape, offset, stored length, block CRCs, CompressedColumn or None) of a directory entry."""
    try:
        name, dtype_text, shape, offset, length, crcs, *codec = entry
        if type(dtype_text) is not str or not _DTYPE_TEXT.fullmatch(dtype_text):
            raise ValueError(dtype_text)
        dtype = np.dtype(dtype_text)
        shape = tuple(int(extent) for extent in shape)
    except (TypeError, ValueError, KeyError, OverflowError):
        raise CorruptionError(path, None, f"segment directory entry {entry!r} is malformed") from None
    # The directory's CRC only proves it is what was written; a crafted one must still not reach numpy.
    if not all(type(value) is int for value in (offset, length)) or min(shape, default=0) < 0 \
            or dtype.itemsize == 0 or type(name) is not str or len(codec) > 1:
        raise CorruptionError(path, None, f"segment directory entry {entry!r} is malformed")
    if dtype.hasobject or offset < SEGMENT_HEADER_SIZE or offset + length > size - SEGMENT_FOOTER_SIZE:
        raise CorruptionError(path, offset, f"column {name!r} lies outside the segment body")
    expected = math.prod(shape) * dtype.itemsize
    compressed = CompressedColumn(codec[0], dtype, expected, length, path, offset) if codec else None
    if compressed is None and expected != length:
        raise CorruptionError(path, offset, f"column {name!r}: shape {shape} needs {expected} bytes, has {length}")
    if block is None and type(crcs) is int and 0 <= crcs < 1 << 32 and not codec:  # version 1: one block
        return name, dtype, shape, offset, length, struct.pack("<I", crcs) if length else b"", None
    if block is None or type(crcs) is not bytes or len(crcs) != 4 * -(-length // block):
        raise CorruptionError(path, offset, f"column {name!r}: its block checksums do not cover its {length} bytes")
    return name, dtype, shape, offset, length, crcs, compressed
