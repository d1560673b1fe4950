"""Helpers shared by the engine tests: simulated crashes at failpoints and byte-level views of a store.

A uniquely named module (not conftest) so that `from engine_testkit import ...` cannot pick up another test
directory's conftest.
"""

from __future__ import annotations

import os

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


def files_containing(root: str, needle: bytes) -> list[str]:
    return sorted(name for name, data in store_files(root).items() if needle in data)


def flip_byte(path: str, offset: int, mask: int = 0x01) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        byte = handle.read(1)[0]
        handle.seek(offset)
        handle.write(bytes((byte ^ mask,)))
