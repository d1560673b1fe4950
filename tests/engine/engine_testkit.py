"""Helpers shared by the engine tests: simulated crashes at failpoints and byte-level views of a store.

A uniquely named module (not conftest) so that `from engine_testkit import ...` cannot pick up another test
directory's conftest.
"""

from __future__ import annotations

import os
import struct

from engine import fs


class SimulatedCrash(Exception):
    """Raised at an armed failpoint: the test then abandons the store object as a killed process would."""


def _crash() -> None:
    raise SimulatedCrash()


def crash_at(name: str, hit: int = 1) -> None:
    fs.arm(name, hit, _crash)


def store_files(root: str) -> dict[str, bytes]:
    """Every file under `root` (relative path → content), to prove a failed call changed nothing or that
    some bytes are gone from disk."""
    found = {}
    for directory, _subdirectories, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, root)] = handle.read()
    return found


def flip_byte(path: str, offset: int, mask: int = 0x01) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        byte = handle.read(1)[0]
        handle.seek(offset)
        handle.write(bytes((byte ^ mask,)))


def rewrite_manifest_as(store_path: str, version: int) -> None:
    """Make the live MANIFEST say it was written by format `version` (header and body), as an older memctl
    would have written it; the segments and WAL stay as they are (their bytes carry no store format)."""
    from engine import manifest as manifest_module
    from engine.codec import crc32, pack
    from engine.format import MANIFEST_HEADER_FORMAT, MANIFEST_MAGIC

    path = os.path.join(store_path, manifest_module.read_current(store_path))
    with open(path, "rb") as handle:
        manifest = manifest_module.decode(handle.read(), path, oldest=1)  # whatever version it says now
    manifest.version = version
    body = pack(manifest.body())
    with open(path, "wb") as handle:
        handle.write(struct.pack(MANIFEST_HEADER_FORMAT, MANIFEST_MAGIC, version, len(body), crc32(body), 0) + body)


def mapped_resident_bytes(directory: str) -> int:
    """This process's resident bytes of the files mapped from under `directory` (/proc/self/smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as handle:
        for line in handle:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5:  # a mapping's header: range perms offset device inode [path]
                inside = len(fields) >= 6 and fields[5].startswith(directory)
            elif inside and fields[0] == "Rss:":
                total += int(fields[1]) << 10
    return total
