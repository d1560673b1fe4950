"""MANIFEST-<n> snapshots and the CURRENT pointer: the one consistent view of a store.

A MANIFEST is written whole (never edited): format version, live segments with sizes and CRCs, id counters,
the WAL checkpoint (first live WAL number, last sequence folded into segments, and what the live WAL held when
the MANIFEST was published: its size and last sequence, engine/wal_checkpoint.py), the next file number, and
the corruption marker a repair resolved (engine/damage.py).
It is published by writing MANIFEST-<n> durably, then atomically replacing CURRENT with its name and
fsyncing the directory. Until CURRENT names it, a new MANIFEST does not exist as far as any reader knows.
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass, field

from engine import fs
from engine.codec import crc32, pack, unpack
from engine.errors import CorruptionError, UnsupportedVersion
from engine.format import (
    CURRENT_FILE,
    FORMAT_VERSION,
    MANIFEST_HEADER_FORMAT,
    MANIFEST_HEADER_SIZE,
    MANIFEST_MAGIC,
    MANIFEST_MAX_BODY_BYTES,
    MANIFEST_PREFIX,
    NUMBER_DIGITS,
    WAL_HEADER_SIZE,
    OLDEST_MIGRATABLE_FORMAT_VERSION,
    OLDEST_STORE_FORMAT_VERSION,
)

_header = struct.Struct(MANIFEST_HEADER_FORMAT)
_CURRENT_PATTERN = re.compile(rf"{MANIFEST_PREFIX}(\d{{{NUMBER_DIGITS},}})\n")


@dataclass
class Manifest:
    number: int
    segments: list = field(default_factory=list)  # [{"name", "kind", "size", "crc", "meta"}]
    counters: dict = field(default_factory=dict)
    wal_number: int = 1
    last_sequence: int = 0
    next_file_number: int = 2
    version: int = FORMAT_VERSION
    wal_size: int = WAL_HEADER_SIZE  # bytes of WAL wal_number durable when published (absent before format 4)
    wal_sequence: int | None = None  # last sequence durable when published (None: last_sequence)
    resolved_damage: int | None = None  # body CRC of the DAMAGE marker a repair resolved

    def body(self) -> dict:
        body = {
            "version": self.version,
            "number": self.number,
            "segments": self.segments,
            "counters": self.counters,
            "wal_number": self.wal_number,
            "last_sequence": self.last_sequence,
            "next_file_number": self.next_file_number,
            "wal_size": self.wal_size,
            "wal_sequence": self.wal_sequence,
        }
        if self.resolved_damage is not None:
            body["resolved_damage"] = self.resolved_damage
        return body

    def __post_init__(self) -> None:
        if self.wal_sequence is None:  # every batch up to it was durable at publication (segments or WAL)
            self.wal_sequence = self.last_sequence

    def file_name(self) -> str:
        return manifest_name(self.number)


def manifest_name(number: int) -> str:
    return f"{MANIFEST_PREFIX}{number:0{NUMBER_DIGITS}d}"


def encode(manifest: Manifest) -> bytes:
    body = pack(manifest.body())
    return _header.pack(MANIFEST_MAGIC, FORMAT_VERSION, len(body), crc32(body), 0) + body


def decode(data: bytes, path: str, oldest: int = OLDEST_STORE_FORMAT_VERSION) -> Manifest:
    """The MANIFEST in `data`; a format version below `oldest` (OLDEST_MIGRATABLE_FORMAT_VERSION for a
    migration, which reads the stores it upgrades) or above FORMAT_VERSION is refused."""
    if len(data) < MANIFEST_HEADER_SIZE:
        raise CorruptionError(path, 0, f"MANIFEST of {len(data)} bytes is shorter than its header")
    magic, version, length, body_crc, _reserved = _header.unpack_from(data)
    if magic != MANIFEST_MAGIC:
        raise CorruptionError(path, 0, "not a memctl MANIFEST (bad magic)")
    if not oldest <= version <= FORMAT_VERSION:
        advice = None
        if OLDEST_MIGRATABLE_FORMAT_VERSION <= version < oldest:
            advice = (f"the store predates format {OLDEST_STORE_FORMAT_VERSION}: run `memctl migrate` to upgrade it "
                      "in place")
        raise UnsupportedVersion(path, version, FORMAT_VERSION, advice)
    if length > MANIFEST_MAX_BODY_BYTES or MANIFEST_HEADER_SIZE + length != len(data):
        raise CorruptionError(path, 12, f"MANIFEST body length {length} does not match the file")
    body = data[MANIFEST_HEADER_SIZE:]
    if crc32(body) != body_crc:
        raise CorruptionError(path, MANIFEST_HEADER_SIZE, "MANIFEST checksum mismatch")
    fields = unpack(body, path, MANIFEST_HEADER_SIZE)
    try:
        decoded = Manifest(
            number=int(fields["number"]),
            segments=list(fields["segments"]),
            counters=dict(fields["counters"]),
            wal_number=int(fields["wal_number"]),
            last_sequence=int(fields["last_sequence"]),
            next_file_number=int(fields["next_file_number"]),
            version=int(fields["version"]),
            wal_size=int(fields.get("wal_size", WAL_HEADER_SIZE)),
            wal_sequence=_optional_int(fields.get("wal_sequence")),
            resolved_damage=_optional_int(fields.get("resolved_damage")),
        )
    except (KeyError, TypeError, ValueError, OverflowError):
        raise CorruptionError(path, MANIFEST_HEADER_SIZE, "MANIFEST body lacks required fields") from None
    if decoded.wal_size < WAL_HEADER_SIZE or decoded.wal_sequence < decoded.last_sequence:
        raise CorruptionError(path, MANIFEST_HEADER_SIZE, f"MANIFEST WAL checkpoint (size {decoded.wal_size}, "
                                                          f"sequence {decoded.wal_sequence}) is impossible")
    # The body's CRC only proves it is what was written; a crafted one must not name files outside seg/.
    if not all(_is_segment_entry(entry) for entry in decoded.segments):
        raise CorruptionError(path, MANIFEST_HEADER_SIZE, "MANIFEST lists a segment entry it does not describe")
    return decoded


def _optional_int(value) -> int | None:
    return None if value is None else int(value)


def _is_segment_entry(entry) -> bool:
    return (isinstance(entry, dict) and all(isinstance(entry.get(key), str) for key in ("name", "kind", "owner"))
            and all(type(entry.get(key)) is int for key in ("size", "crc"))
            and entry["name"] == os.path.basename(entry["name"]) != "")


def read_current(directory: str) -> str | None:
    """The live MANIFEST's file name, or None when the store has no CURRENT (a new store)."""
    path = os.path.join(directory, CURRENT_FILE)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(256)
    except (FileNotFoundError, NotADirectoryError):  # no store, or the path leads through a file
        return None
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise CorruptionError(path, 0, "CURRENT is not ASCII") from None
    if not _CURRENT_PATTERN.fullmatch(text):
        raise CorruptionError(path, 0, f"CURRENT does not name a MANIFEST ({text[:40]!r})")
    return text.strip()


def load(directory: str, name: str, oldest: int = OLDEST_STORE_FORMAT_VERSION) -> Manifest:
    path = os.path.join(directory, name)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MANIFEST_HEADER_SIZE + MANIFEST_MAX_BODY_BYTES + 1)
    except FileNotFoundError:
        raise CorruptionError(path, None, "CURRENT names a MANIFEST that does not exist") from None
    manifest = decode(data, path, oldest)
    if manifest_name(manifest.number) != name:
        raise CorruptionError(path, MANIFEST_HEADER_SIZE, f"MANIFEST number {manifest.number} does not match its name")
    return manifest


def publish(directory: str, manifest: Manifest) -> None:
    """Write MANIFEST-<n> durably, then point CURRENT at it (the commit point)."""
    fs.atomic_write(os.path.join(directory, manifest.file_name()), encode(manifest), label="manifest.file")
    fs.failpoint("manifest.before_current")
    fs.atomic_write(os.path.join(directory, CURRENT_FILE), (manifest.file_name() + "\n").encode("ascii"),
                    label="manifest")
