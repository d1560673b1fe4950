"""The corruption marker DAMAGE: what a reader or `check` found wrong with a store, kept until `memctl repair`.

A command that finds corruption (a block failing its CRC, a WAL cut below its checkpoint, a missing file…)
records it here before it fails with exit 3: the next command may never read the damaged bytes (a recall
touches a few blocks), and a writer must not build on a store that has lost acknowledged data. Every writer
refuses a store holding a marker (StoreDamaged, exit 3) until `memctl repair` has run: repair publishes a
MANIFEST whose `resolved_damage` is the marker's body CRC, from which point the marker no longer counts, then
deletes it (MANIFEST.spec section 15).

Recording is best effort: a reader without write permission, or on a full disk, still fails with the error it
found. Two recorders at once may each keep only their own findings, never neither (each replaces the file
whole), and a finding already recorded is not written again. An older format's file (UnsupportedVersion) is
no damage, and repair and its dry run record nothing (`quiet`).
"""

from __future__ import annotations

import os
import struct
import time
from contextlib import contextmanager

from engine import fs
from engine.codec import crc32, pack, unpack
from engine.errors import CorruptionError, StoreDamaged, UnsupportedVersion
from engine.format import (
    CURRENT_FILE,
    DAMAGE_FILE,
    DAMAGE_HEADER_FORMAT,
    DAMAGE_HEADER_SIZE,
    DAMAGE_MAGIC,
    DAMAGE_MAX_BODY_BYTES,
    DAMAGE_MAX_FINDINGS,
    FORMAT_VERSION,
    SEGMENT_DIR,
    TEMP_SUFFIX,
)

_header = struct.Struct(DAMAGE_HEADER_FORMAT)
# The command this process runs, named in the findings it records (Store.open sets it from its holder).
process_command = {"name": "memctl"}
_quiet = {"depth": 0}


class Marker:
    """A DAMAGE file: its findings ({"file", "offset", "reason", "found_at", "command", "pid"}), how many more
    were found than it lists, and its body CRC (the identity a repair's MANIFEST records as resolved). A plain
    class: a dataclass costs every cold reader that imports this module a millisecond or two."""

    def __init__(self, findings: list | None = None, more: int = 0, crc: int = 0):
        self.findings = findings if findings is not None else []
        self.more = more
        self.crc = crc

    def summary(self) -> str:
        first = self.findings[0]
        where = first["file"] if first["offset"] is None else f"{first['file']} at offset {first['offset']}"
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(first["found_at"]))
        others = len(self.findings) - 1 + self.more
        return (f"`{first['command']}` found {where}: {first['reason']} ({when})"
                + (f", and {others} more finding(s)" if others else ""))


def path_of(store_path: str) -> str:
    return os.path.join(store_path, DAMAGE_FILE)


def read(store_path: str) -> Marker | None:
    """The store's marker, or None. A marker that fails its own checks still counts: its one finding says so,
    and its identity is the CRC of the whole file."""
    path = path_of(store_path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(DAMAGE_HEADER_SIZE + DAMAGE_MAX_BODY_BYTES + 1)
    except FileNotFoundError:
        return None
    try:
        return decode(data, path)
    except CorruptionError as error:
        return Marker([_finding(DAMAGE_FILE, error.offset, f"the marker itself is unreadable: {error.reason}",
                                os.stat(path).st_mtime, "memctl", 0)], 0, crc32(data))


def decode(data: bytes, path: str) -> Marker:
    if len(data) < DAMAGE_HEADER_SIZE:
        raise CorruptionError(path, 0, f"{len(data)} bytes, shorter than the marker's header")
    magic, version, length, body_crc, _reserved = _header.unpack_from(data)
    if magic != DAMAGE_MAGIC:
        raise CorruptionError(path, 0, "not a memctl DAMAGE marker (bad magic)")
    if not 1 <= version <= FORMAT_VERSION:
        raise UnsupportedVersion(path, version, FORMAT_VERSION)
    body = data[DAMAGE_HEADER_SIZE:]
    if length > DAMAGE_MAX_BODY_BYTES or length != len(body):
        raise CorruptionError(path, 12, f"marker body length {length} does not match the file")
    if crc32(body) != body_crc:
        raise CorruptionError(path, DAMAGE_HEADER_SIZE, "marker checksum mismatch")
    fields = unpack(body, path, DAMAGE_HEADER_SIZE)
    try:
        findings = [_finding(item["file"], item["offset"], item["reason"], item["found_at"], item["command"],
                             item["pid"]) for item in fields["findings"]]
        more = int(fields.get("more", 0))
    except (KeyError, TypeError, ValueError):
        raise CorruptionError(path, DAMAGE_HEADER_SIZE, "marker body lacks required fields") from None
    if not findings:
        raise CorruptionError(path, DAMAGE_HEADER_SIZE, "marker lists no finding")
    return Marker(findings, more, body_crc)


def encode(marker: Marker) -> bytes:
    body = {"findings": marker.findings}
    if marker.more:
        body["more"] = marker.more
    data = pack(body)
    return _header.pack(DAMAGE_MAGIC, FORMAT_VERSION, len(data), crc32(data), 0) + data


def _finding(file, offset, reason, found_at, command, pid) -> dict:
    if not (isinstance(file, str) and isinstance(reason, str) and isinstance(command, str)
            and (offset is None or type(offset) is int) and type(pid) is int):
        raise TypeError("malformed finding")
    return {"file": file, "offset": offset, "reason": reason, "found_at": float(found_at), "command": command,
            "pid": pid}


def record(store_path: str, errors, command: str | None = None) -> None:
    """Add the CorruptionErrors `errors` found in the store at `store_path` to its marker (creating it); an
    older format's file, a writer's refusal and a finding already listed add nothing."""
    errors = [error for error in errors if _is_damage(error)]
    if not errors or _quiet["depth"] or not os.path.isfile(os.path.join(store_path, CURRENT_FILE)):
        return
    marker = read(store_path) or Marker()
    known = {(item["file"], item["offset"], item["reason"]) for item in marker.findings}
    added = 0
    for error in errors:
        key = (_relative(store_path, error.path), error.offset, error.reason)
        if key in known:
            continue
        known.add(key)
        added += 1
        if len(marker.findings) < DAMAGE_MAX_FINDINGS:
            marker.findings.append(_finding(*key, time.time(), command or process_command["name"], os.getpid()))
        else:
            marker.more += 1
    if not added:
        return
    try:
        fs.atomic_write(path_of(store_path), encode(marker), label="damage",
                        temp=f"{path_of(store_path)}.{os.getpid()}{TEMP_SUFFIX}")
    except OSError:
        pass  # best effort: the command still fails with what it found


def found(error: CorruptionError, store_path: str | None = None) -> CorruptionError:
    """Record `error` (found in the store at `store_path`; by default the store of the segment file it names)
    and return it, for `raise damage.found(CorruptionError(…))`."""
    if store_path is None:
        directory = os.path.dirname(os.path.abspath(error.path))
        store_path = os.path.dirname(directory) if os.path.basename(directory) == SEGMENT_DIR else None
    if store_path is not None:
        record(store_path, [error])
    return error


def refusal(store_path: str, resolved: int | None) -> StoreDamaged | None:
    """The error a writer raises on this store (None when it has no marker, or the marker whose CRC the live
    MANIFEST's `resolved_damage` names, which is then deleted: a repair published before it could)."""
    marker = read(store_path)
    if marker is None:
        return None
    if marker.crc == resolved:
        fs.remove(path_of(store_path))
        return None
    return StoreDamaged(path_of(store_path), None,
                        f"{marker.summary()}; writers refuse this store until `memctl repair` has run "
                        "(`memctl repair --dry-run` reports what it would lose)")


def clear(store_path: str) -> None:
    """Delete the marker durably (repair, once the store is sound)."""
    path = path_of(store_path)
    if os.path.exists(path):
        fs.remove(path)
        fs.fsync_dir(store_path)


@contextmanager
def quiet():
    """Record nothing inside: repair reads damage on purpose, and its dry run writes nothing."""
    _quiet["depth"] += 1
    try:
        yield
    finally:
        _quiet["depth"] -= 1


def _is_damage(error) -> bool:
    return isinstance(error, CorruptionError) and not isinstance(error, (UnsupportedVersion, StoreDamaged))


def _relative(store_path: str, path: str) -> str:
    if not os.path.isabs(path):
        return path  # a record's label, such as raw.chunk/<raw_id>
    relative = os.path.relpath(path, store_path)
    return path if relative.startswith("..") else relative
