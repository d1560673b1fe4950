"""Write-ahead log: one logical record per batch, framed in 32 KiB blocks like LevelDB's log.

A file starts with a 32-byte header (magic, version, WAL number, salt). Records are
`masked_crc u32 | length u16 | type u8 | payload`, split into FULL or FIRST/MIDDLE.../LAST fragments so that
no fragment crosses a block boundary; fewer than 7 bytes left in a block are zero-filled. The CRC covers the
file's salt, the type byte and the payload, so a fragment from another WAL file can never validate here.

Reading separates three endings (REFERENCES A1, B3): `eof`; `torn_tail`, an incomplete or damaged record with
nothing valid after it (a crash mid-append: recovery drops it); and `corruption`, a damaged record followed
by valid ones (never skipped: the store refuses to open). What the MANIFEST recorded of the live WAL can make
a torn tail corruption too (engine/wal_checkpoint.py). Only `memctl repair` reads past damage (`salvage`).
"""

from __future__ import annotations

import itertools
import os
import struct
from dataclasses import dataclass, field

from engine import fs
from engine.codec import crc32, mask_crc
from engine.errors import CorruptionError, UnsupportedVersion
from engine.format import (
    FORMAT_VERSION,
    NUMBER_DIGITS,
    WAL_BLOCK_SIZE,
    WAL_HEADER_FORMAT,
    WAL_HEADER_SIZE,
    WAL_MAGIC,
    WAL_MAX_BATCH_BYTES,
    WAL_RECORD_HEADER_FORMAT,
    WAL_RECORD_HEADER_SIZE,
    WAL_TYPE_FIRST,
    WAL_TYPE_FULL,
    WAL_TYPE_LAST,
    WAL_TYPE_MIDDLE,
    WAL_TYPES,
)

_record_header = struct.Struct(WAL_RECORD_HEADER_FORMAT)
_file_header = struct.Struct(WAL_HEADER_FORMAT)
_MAX_FRAGMENT = WAL_BLOCK_SIZE - WAL_RECORD_HEADER_SIZE


def crc_seeds(salt: int) -> tuple:
    """CRC of salt ++ type for every record type, computed once per file: a record's CRC extends its seed."""
    salt_bytes = struct.pack("<I", salt)
    return tuple(crc32(salt_bytes + bytes((record_type,))) for record_type in range(WAL_TYPE_LAST + 1))


def _record_crc(seeds: tuple, record_type: int, payload) -> int:
    return mask_crc(crc32(payload, seeds[record_type]))


def encode_header(number: int, salt: int) -> bytes:
    body = _file_header.pack(WAL_MAGIC, FORMAT_VERSION, number, salt, 0, 0)[:-4]
    return body + struct.pack("<I", crc32(body))


def frame(payload: bytes, salt: int, file_size: int) -> bytearray:
    """The bytes that append `payload` as one logical record to a file currently `file_size` bytes long (a
    bytearray: a batch is megabytes, and copying them into a bytes object would buy nothing)."""
    seeds = crc_seeds(salt)
    out = bytearray()
    position = file_size
    remaining = memoryview(payload)
    first = True
    while True:
        left_in_block = WAL_BLOCK_SIZE - position % WAL_BLOCK_SIZE
        if left_in_block < WAL_RECORD_HEADER_SIZE:
            out += bytes(left_in_block)  # trailer: a header never straddles blocks
            position += left_in_block
            left_in_block = WAL_BLOCK_SIZE
        fragment_length = min(len(remaining), left_in_block - WAL_RECORD_HEADER_SIZE)
        last = fragment_length == len(remaining)
        if first and last:
            record_type = WAL_TYPE_FULL
        elif first:
            record_type = WAL_TYPE_FIRST
        elif last:
            record_type = WAL_TYPE_LAST
        else:
            record_type = WAL_TYPE_MIDDLE
        fragment = remaining[:fragment_length]
        out += _record_header.pack(_record_crc(seeds, record_type, fragment), fragment_length, record_type)
        out += fragment
        position += WAL_RECORD_HEADER_SIZE + fragment_length
        remaining = remaining[fragment_length:]
        first = False
        if last:
            return out


class WalWriter:
    """Appends batches to one WAL file; each append is one write and one fsync (group commit)."""

    def __init__(self, path: str, number: int, salt: int, size: int):
        self.path = path
        self.number = number
        self.salt = salt
        self.size = size
        self._fd = fs.ops.open_append(path)

    @classmethod
    def create(cls, path: str, number: int, salt: int) -> "WalWriter":
        fs.atomic_write(path, encode_header(number, salt), label="wal.create")
        return cls(path, number, salt, WAL_HEADER_SIZE)

    def append(self, payload: bytes) -> None:
        if len(payload) > WAL_MAX_BATCH_BYTES:
            raise ValueError(f"batch of {len(payload)} bytes exceeds the WAL limit of {WAL_MAX_BATCH_BYTES}")
        data = memoryview(frame(payload, self.salt, self.size))  # halves without copies (a batch is megabytes)
        # Two writes with a failpoint between: the only way a SIGKILL test can leave a torn record.
        middle = len(data) // 2
        fs.ops.write(self._fd, data[:middle])
        fs.failpoint("wal.append.mid_write")
        fs.ops.write(self._fd, data[middle:])
        self.size += len(data)
        fs.failpoint("wal.append.before_fsync")
        fs.ops.fsync(self._fd)
        fs.failpoint("wal.append.after_fsync")

    def close(self) -> None:
        if self._fd is not None:
            fs.ops.close(self._fd)
            self._fd = None


@dataclass
class WalScan:
    """What a read of one WAL file found: the complete payloads, where valid data ends, and why it ended."""

    path: str
    number: int
    salt: int
    payloads: list = field(default_factory=list)
    valid_end: int = WAL_HEADER_SIZE
    status: str = "eof"  # eof | torn_tail | corruption
    problem_offset: int | None = None
    reason: str = ""
    file_size: int = 0
    failed_at: int | None = None  # the fragment reading stopped at (problem_offset: the record it belongs to)

    def raise_if_corrupt(self) -> None:
        if self.status == "corruption":
            raise CorruptionError(self.path, self.problem_offset, self.reason)


def read_header(data: bytes, path: str) -> tuple[int, int] | None:
    """(number, salt), or None when the file holds nothing yet (a crash while creating it: it is written by
    atomic replace, so a zeroed header in front of records can only be damage)."""
    if len(data) < WAL_HEADER_SIZE or not any(data):
        return None
    if data[:WAL_HEADER_SIZE] == bytes(WAL_HEADER_SIZE):
        raise CorruptionError(path, 0, "WAL header is zeroed but records follow")
    magic, version, number, salt, _reserved, stored_crc = _file_header.unpack_from(data)
    if magic != WAL_MAGIC:
        raise CorruptionError(path, 0, "not a memctl WAL file (bad magic)")
    if crc32(data[: WAL_HEADER_SIZE - 4]) != stored_crc:
        raise CorruptionError(path, 0, "WAL header checksum mismatch")
    if not 1 <= version <= FORMAT_VERSION:
        raise UnsupportedVersion(path, version, FORMAT_VERSION)
    return number, salt


def scan(path: str) -> WalScan:
    with open(path, "rb") as handle:
        data = handle.read()
    header = read_header(data, path)
    if header is None:
        if not data:
            return WalScan(path, -1, 0, valid_end=0, file_size=0)
        return WalScan(path, -1, 0, valid_end=0, status="torn_tail", problem_offset=0, file_size=len(data),
                       reason=f"{len(data)} bytes, no complete {WAL_HEADER_SIZE}-byte header")
    number, salt = header
    result = WalScan(path, number, salt, file_size=len(data))
    _scan_records(data, result)
    return result


@dataclass
class WalSalvage:
    """What `salvage` read of one WAL file: every valid record's payload, and the byte ranges it skipped."""

    path: str
    number: int
    payloads: list = field(default_factory=list)
    skipped: list = field(default_factory=list)  # [(start, end, reason)], in file order
    file_size: int = 0


def salvage(path: str) -> WalSalvage:
    """Every valid record of a WAL file, damaged or not: up to the first damage, then from each later offset
    where a record validly starts again (as `scan` looks for one to tell corruption from a torn tail). For
    `memctl repair` only: a reader never skips damage. A damaged header raises CorruptionError (the salt,
    which every record's CRC covers, is unknown)."""
    with open(path, "rb") as handle:
        data = handle.read()
    header = read_header(data, path)
    if header is None:
        return WalSalvage(path, -1, skipped=[(0, len(data), "no complete header")] if data else [],
                          file_size=len(data))
    number, salt = header
    found = WalSalvage(path, number, file_size=len(data))
    seeds = crc_seeds(salt)
    position = WAL_HEADER_SIZE
    while position < len(data):
        part = WalScan(path, number, salt, file_size=len(data))
        _scan_records(data, part, position)
        found.payloads += part.payloads
        if part.status == "eof":
            break
        # From the fragment that failed on (it may itself start a valid record: "new record before the last
        # one ended"); a fragment that failed its checks is never a start, so every pass moves forward.
        resume = _next_record_start(data, part.failed_at - 1, seeds)
        found.skipped.append((part.problem_offset, len(data) if resume is None else resume, part.reason))
        if resume is None:
            break
        position = resume
    return found


def _scan_records(data: bytes, result: WalScan, start: int = WAL_HEADER_SIZE) -> None:
    seeds = crc_seeds(result.salt)
    position = start
    record_start = position
    pending: list | None = None
    end = len(data)
    while position < end:
        left_in_block = WAL_BLOCK_SIZE - position % WAL_BLOCK_SIZE
        if left_in_block < WAL_RECORD_HEADER_SIZE:
            position += left_in_block
            continue
        problem = _check_fragment(data, position, left_in_block, seeds)
        if problem:
            _classify_failure(data, position, record_start if pending is not None else position, problem, result)
            return
        checksum, length, record_type = _record_header.unpack_from(data, position)
        fragment = data[position + WAL_RECORD_HEADER_SIZE: position + WAL_RECORD_HEADER_SIZE + length]
        if record_type in (WAL_TYPE_FULL, WAL_TYPE_FIRST):
            if pending is not None:
                _classify_failure(data, position, record_start, "new record before the last one ended", result)
                return
            record_start = position
            pending = [fragment]
        elif pending is None:
            _classify_failure(data, position, position, "continuation fragment without a first fragment", result)
            return
        else:
            pending.append(fragment)
        position += WAL_RECORD_HEADER_SIZE + length
        if record_type in (WAL_TYPE_FULL, WAL_TYPE_LAST):
            result.payloads.append(b"".join(pending) if len(pending) > 1 else pending[0])
            result.valid_end = position
            pending = None
    if pending is not None:
        result.status, result.problem_offset, result.reason = "torn_tail", record_start, "record cut short at EOF"
        result.failed_at = end


def _check_fragment(data: bytes, position: int, left_in_block: int, seeds: tuple) -> str:
    """An empty string when the fragment at `position` is whole and its CRC matches, else why not."""
    if position + WAL_RECORD_HEADER_SIZE > len(data):
        return "record header cut short at EOF"
    checksum, length, record_type = _record_header.unpack_from(data, position)
    if record_type not in WAL_TYPES:
        return f"unknown record type {record_type}"
    if WAL_RECORD_HEADER_SIZE + length > left_in_block:
        return f"record length {length} crosses a block boundary"
    payload_end = position + WAL_RECORD_HEADER_SIZE + length
    if payload_end > len(data):
        return "record payload cut short at EOF"
    payload = memoryview(data)[position + WAL_RECORD_HEADER_SIZE: payload_end]
    if _record_crc(seeds, record_type, payload) != checksum:
        return "record checksum mismatch"
    return ""


def _classify_failure(data: bytes, position: int, record_start: int, reason: str, result: WalScan) -> None:
    """Damage is corruption when a record validly *starts* after it: a FULL or FIRST fragment there was
    appended by a later batch, after this one's fsync, so the damage is not a crash mid-append. A MIDDLE or
    LAST fragment alone proves nothing: a crash can persist an append's later pages and lose earlier ones.
    Candidates are the rest of the damaged block (the next record may follow the damaged one there) and
    every later block start; from each valid fragment the chain of valid fragments after it is
    followed, so a record starting after the damaged record's surviving tail is found too. Otherwise the
    damage is the torn tail of the last append."""
    result.failed_at = position
    if _next_record_start(data, position, crc_seeds(result.salt)) is not None:
        result.status, result.problem_offset, result.reason = "corruption", position, reason
        return
    result.status, result.problem_offset, result.reason = "torn_tail", record_start, reason


def _next_record_start(data: bytes, position: int, seeds: tuple) -> int | None:
    """The first offset after damage at `position` where a record validly starts (a FULL or FIRST fragment
    whose CRC matches, reached directly or through a chain of valid fragments), or None."""
    block_end = (position // WAL_BLOCK_SIZE + 1) * WAL_BLOCK_SIZE
    candidates = itertools.chain(sorted(_record_start_offsets(data, position + 1, min(block_end, len(data)))),
                                 range(block_end, len(data), WAL_BLOCK_SIZE))
    for start in candidates:
        found = _record_start_in_chain(data, start, seeds)
        if found is not None:
            return found
    return None


def _record_start_offsets(data: bytes, begin: int, end: int):
    """Offsets in [begin, end) whose type byte reads FULL or FIRST: inside a block nothing else can start
    (a continuation always starts a block), and bytes.find scans for them in C."""
    type_offset = WAL_RECORD_HEADER_SIZE - 1
    for record_type in (WAL_TYPE_FULL, WAL_TYPE_FIRST):
        marker = bytes((record_type,))
        found = data.find(marker, begin + type_offset, end + type_offset)
        while found != -1:
            yield found - type_offset
            found = data.find(marker, found + 1, end + type_offset)


def _record_start_in_chain(data: bytes, position: int, seeds: tuple) -> int | None:
    """Where the chain of valid fragments from `position` reaches a FULL or FIRST fragment, or None."""
    while position + WAL_RECORD_HEADER_SIZE <= len(data):
        left_in_block = WAL_BLOCK_SIZE - position % WAL_BLOCK_SIZE
        if left_in_block < WAL_RECORD_HEADER_SIZE:
            position += left_in_block
            continue
        if _check_fragment(data, position, left_in_block, seeds):
            return None
        _checksum, length, record_type = _record_header.unpack_from(data, position)
        if record_type in (WAL_TYPE_FULL, WAL_TYPE_FIRST):
            return position
        position += WAL_RECORD_HEADER_SIZE + length
    return None


def truncate_torn_tail(scan_result: WalScan) -> None:
    """Drop everything after the last complete record, durably (writer only)."""
    if scan_result.file_size > scan_result.valid_end:
        fs.ops.truncate(scan_result.path, scan_result.valid_end)
        fs.failpoint("wal.truncate.before_fsync")
        fd = fs.ops.open_append(scan_result.path)
        try:
            fs.ops.fsync(fd)
        finally:
            fs.ops.close(fd)


def wal_path(directory: str, number: int) -> str:
    return os.path.join(directory, f"{number:0{NUMBER_DIGITS}d}.log")
