"""Fuzz targets (one per decoder), valid seed files, and the crash corpus (REFERENCES C #6).

Each target takes bytes and must either return or raise CorruptionError (UnsupportedVersion is one); any
other exception, or running past the deadline, is a bug. Inputs that fail are kept under corpus/<target>/
(SQLite's fuzzcheck) and replayed by test_corpus.py forever.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import struct
import tempfile

import numpy as np

from engine import manifest, wal
from engine.codec import crc32, decode_varint, pack, unpack
from engine.errors import CorruptionError
from engine.format import (
    FORMAT_VERSION,
    MANIFEST_HEADER_FORMAT,
    MANIFEST_MAGIC,
    SEGMENT_FOOTER_FORMAT,
    SEGMENT_FOOTER_MAGIC,
    SEGMENT_FOOTER_SIZE,
    SEGMENT_HEADER_SIZE,
)
from engine.records import composite_key, key_hash, key_hashes, open_segment, write_records
from engine.segment import Segment, SegmentWriter, encode_segment_header
from tools.testing import damage

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
DEADLINE_SECONDS = 5.0
_SCRATCH = tempfile.mkdtemp(prefix="memctl-fuzz-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None)
atexit.register(shutil.rmtree, _SCRATCH, True)


def _file(data: bytes, name: str) -> str:
    path = os.path.join(_SCRATCH, name)
    damage.replace_file(path, data)
    return path


def target_varint(data: bytes) -> None:
    for offset in range(min(len(data), 12)):
        value, end = decode_varint(data, offset)
        assert 0 <= value < 1 << 64 and offset < end <= offset + 10


def target_wal(data: bytes) -> None:
    result = wal.scan(_file(data, "000001.log"))
    assert result.valid_end <= len(data) and all(isinstance(payload, bytes) for payload in result.payloads)
    result.raise_if_corrupt()


def target_manifest(data: bytes) -> None:
    decoded = manifest.decode(data, "MANIFEST-000002")
    assert isinstance(decoded.segments, list)


def target_current(data: bytes) -> None:
    directory = os.path.join(_SCRATCH, "current")
    os.makedirs(directory, exist_ok=True)
    damage.replace_file(os.path.join(directory, "CURRENT"), data)
    name = manifest.read_current(directory)
    assert name is None or name.startswith("MANIFEST-")


def target_segment(data: bytes) -> None:
    """A segment read column by column (compressed ones decompressed), then as a records segment of its layout."""
    segment = Segment.open(_file(data, "000003.records.seg"))
    for name in segment.names():
        segment.column(name)
    records = open_segment(segment)
    for table in list(records.tables)[:4]:
        for _ in records.iterate(table, ""):
            pass
    composite = composite_key("test.doc", "k001")
    records.get(composite, key_hash(composite))
    composites = [composite_key("test.doc", "a"), composite_key("test.edge", "x")]
    records.get_many(composites, key_hashes(composites))
    records.check()


TARGETS = {
    "varint": target_varint,
    "wal": target_wal,
    "manifest": target_manifest,
    "current": target_current,
    "segment": target_segment,
    "segment_layout1": target_segment,
    "segment_columns": target_segment,
}


def run_target(name: str, data: bytes) -> None:
    """Run one input; CorruptionError is an answer, anything else is kept in the corpus and re-raised."""
    try:
        with damage.deadline(DEADLINE_SECONDS):
            TARGETS[name](data)
    except CorruptionError:
        pass
    except BaseException:
        keep(name, data)
        raise


def keep(name: str, data: bytes) -> None:
    """Save a failing input, only for the final (shrunk) example when hypothesis is reporting one."""
    try:
        from hypothesis.control import current_build_context

        if not getattr(current_build_context(), "is_final", True):
            return
    except Exception:  # noqa: BLE001  outside hypothesis (corpus replay): nothing to save
        return
    directory = os.path.join(CORPUS, name)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"crash-{hashlib.sha1(data).hexdigest()[:16]}.bin")
    with open(path, "wb") as handle:
        handle.write(data)


# --- valid seed files, and structure-aware builders that keep checksums valid -----------------------------


def seed_wal() -> bytes:
    data = bytearray(wal.encode_header(1, 99))
    for payload in (pack([1, [[1, "test.doc", "a", {"x": 1}]]]), b"p" * 40_000, pack([3, []])):
        data += wal.frame(payload, 99, len(data))
    return bytes(data)


def seed_manifest() -> bytes:
    return manifest.encode(manifest.Manifest(number=5, segments=[{"name": "000003.records.seg", "kind": "records",
                                                                  "owner": "records", "size": 100, "crc": 7}],
                                             counters={"doc": 3}, wal_number=4, last_sequence=9,
                                             next_file_number=6))


SEED_TABLES = {"test.doc": {"a": 1, "b": [1, 2], "k001": "v"}, "test.edge": {"x": b"\x00"}}


def _written(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def seed_segment() -> bytes:
    """A records segment of the block layout."""
    path = os.path.join(_SCRATCH, "seed.records.seg")
    writer = SegmentWriter(path, "records")
    write_records(writer, SEED_TABLES)
    writer.finish()
    return _written(path)


def seed_segment_layout1() -> bytes:
    """A records segment of layout 1, which formats 1 to 3 wrote."""
    from records_layout1 import write_layout1

    path = os.path.join(_SCRATCH, "seed1.records.seg")
    write_layout1(path, SEED_TABLES)
    return _written(path)


def seed_segment_columns() -> bytes:
    """A segment of compressed columns, each filter among them (as a derived kind writes them)."""
    path = os.path.join(_SCRATCH, "seed.columns.seg")
    writer = SegmentWriter(path, "records", compression=3)
    writer.add_column("ids", np.arange(2000, dtype="<i4"))
    writer.add_column("weights", np.repeat(np.array([0.5, 0.25], "<f4"), 1000))
    writer.add_column("bytes", np.frombuffer(b"abcd" * 600, np.uint8))
    writer.finish()
    return _written(path)


def segment_with_directory(directory: dict, body: bytes, kind: str = "records") -> bytes:
    """A segment whose header, directory CRC and footer are all valid, around any directory and body."""
    header = encode_segment_header(kind)
    packed = pack(directory)
    offset = len(header) + len(body)
    footer = struct.pack(SEGMENT_FOOTER_FORMAT, offset, len(packed), crc32(packed), FORMAT_VERSION, 0,
                         SEGMENT_FOOTER_MAGIC)
    return header + body + packed + footer


def segment_with_meta(original: bytes, meta) -> bytes:
    """`original` (a valid segment) with its directory's meta replaced, every checksum valid."""
    offset, length, _crc, _version, _reserved, _magic = struct.unpack_from(
        SEGMENT_FOOTER_FORMAT, original, len(original) - SEGMENT_FOOTER_SIZE)
    directory = unpack(original[offset: offset + length])
    directory["meta"] = meta
    return segment_with_directory(directory, original[SEGMENT_HEADER_SIZE:offset])


def manifest_with_body(body) -> bytes:
    packed = pack(body)
    return struct.pack(MANIFEST_HEADER_FORMAT, MANIFEST_MAGIC, FORMAT_VERSION, len(packed), crc32(packed), 0) + packed
