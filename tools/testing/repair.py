"""A damaged store, and what a repair of it must leave (tests and tools/crash only).

`build_damaged` writes a store of the crash workload's batches (records, text, graph, raw chunks) in two
records segments and a WAL of ten batches, then damages it three ways: a byte of the newest records segment's
values column, a byte of the fourth WAL record (valid batches follow it), and the first raw chunk's blob; `check`
then marks it damaged. However a repair of it is interrupted, the directory must hold one of two stores:
- the old one: every file its readers read (CURRENT, that MANIFEST, its segments, the live WAL files, the raw
  blobs: tools.testing.migration.files_the_old_code_reads) byte for byte as before, but for a new WAL holding
  no batch, and a writer still refused (StoreDamaged);
- the repaired one: `check_store` without problems, a writer welcome, and `content` equal to what an
  uninterrupted repair leaves.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from functools import lru_cache

SEED = 1701
BATCHES = 30
FLUSHED_AT = (10, 20)  # two flushes: two records segments; batches 21..30 stay in the WAL
DAMAGED_WAL_RECORD = 3  # index of the damaged WAL record (the fourth of ten)


def build_damaged(path: str, seed: int = SEED) -> dict:
    """Write and damage the store at `path` (see the module's docstring); returns what was damaged:
    {"segment", "wal", "blob"}, paths relative to the store."""
    from engine.check import check_store
    from engine.store import Store
    from tools.testing.workload import apply_to_store, batch_operations

    store = Store.open(path, writable=True, holder="repair fixture", flush_bytes=1 << 30)
    try:
        for number in range(1, BATCHES + 1):
            apply_to_store(store, batch_operations(seed, number, big_values=False, dense=True))
            if number in FLUSHED_AT:
                store.flush()
    finally:
        store.close()
    damaged = {"blob": _damage_blob(path), "segment": _damage_segment(path), "wal": _damage_wal(path)}
    if not check_store(path).problems:  # marks the store damaged
        raise AssertionError("the damaged fixture checks clean")
    return damaged


def _manifest(path: str):
    from engine import manifest as manifest_module

    return manifest_module.load(path, manifest_module.read_current(path))


def _flip(path: str, offset: int) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        byte = handle.read(1)
        handle.seek(offset)
        handle.write(bytes([byte[0] ^ 0x5A]))


def _damage_segment(path: str) -> str:
    from engine.format import KIND_RECORDS, SEGMENT_DIR
    from engine.segment import Segment

    entry = [entry for entry in _manifest(path).segments if entry["kind"] == KIND_RECORDS][-1]
    relative = os.path.join(SEGMENT_DIR, entry["name"])
    segment = Segment.open(os.path.join(path, relative))
    _dtype, _shape, offset, length, _crcs = segment._columns["blocks"]  # layout 2: rows in compressed blocks
    _flip(os.path.join(path, relative), offset + length // 2)
    return relative


def _damage_wal(path: str) -> str:
    from engine.format import WAL_DIR, WAL_RECORD_HEADER_SIZE
    from engine.wal import wal_path
    from tools.testing.reference import wal_records

    live = wal_path(os.path.join(path, WAL_DIR), _manifest(path).wal_number)
    with open(live, "rb") as handle:
        records = wal_records(handle.read())
    start, _end = records[DAMAGED_WAL_RECORD]
    _flip(live, start + WAL_RECORD_HEADER_SIZE + 2)
    return os.path.relpath(live, path)


def _damage_blob(path: str) -> str:
    from engine.raw import RawStore, record_blob_path
    from engine.store import Store

    with Store.open(path, writable=False) as store:
        _raw_id, record = next(iter(RawStore(store).scan()))
    relative = record_blob_path(record)
    with open(os.path.join(path, relative), "wb") as handle:
        handle.write(b"not a zstd frame")
    return relative


def repair(path: str) -> dict:
    """engine.repair.repair_store of the store at `path`, as `memctl repair` runs it."""
    from engine.repair import repair_store

    return repair_store(path)


def content(path: str) -> dict:
    """What a reader of a repaired store serves: every record and counter, and the text and graph answers."""
    from engine.store import Store
    from tools.testing.reference import fingerprint

    with Store.open(path, writable=False) as store:
        return fingerprint(store)


@lru_cache(maxsize=1)
def pristine() -> str:
    """A damaged store built once per process, copied by every trial (never changed itself), removed at exit."""
    directory = tempfile.mkdtemp(prefix="memctl-repair-fixture-")
    owner = os.getpid()  # a forked child that exits normally must not remove it under its parent
    atexit.register(lambda: os.getpid() == owner and shutil.rmtree(directory, ignore_errors=True))
    path = os.path.join(directory, "store")
    build_damaged(path)
    return path


def copy_damaged(destination: str) -> None:
    shutil.copytree(pristine(), destination, ignore=shutil.ignore_patterns("LOCK", "LOCK.gc"))


@lru_cache(maxsize=1)
def reference_content() -> dict:
    """`content` of the damaged store after an uninterrupted repair."""
    with tempfile.TemporaryDirectory(prefix="memctl-repaired-") as scratch:
        path = os.path.join(scratch, "store")
        copy_damaged(path)
        repair(path)
        return content(path)


def old_store_problems(path: str) -> list:
    """Why the store at `path` is not the damaged store, still refused to writers ([] when it is)."""
    from engine.errors import StoreDamaged
    from engine.store import Store

    from engine.format import WAL_HEADER_SIZE
    from tools.testing.migration import read_files_problems

    # The repair's new WAL, created before its commit point, holds no batch: reading it changes nothing.
    problems = read_files_problems(pristine(), path, harmless=lambda name, data: len(data) == WAL_HEADER_SIZE)
    try:
        Store.open(path, writable=True, holder="repair verdict").close()
        problems.append("a writer opened the damaged store")
    except StoreDamaged:
        pass
    return problems


def repaired_problems(path: str) -> list:
    """Why the store at `path` is not the completely repaired one ([] when it is)."""
    from engine.check import check_store
    from engine.store import Store

    problems = [f"check: {problem}" for problem in check_store(path).problems]
    if problems:
        return problems
    if content(path) != reference_content():
        return ["it serves something else than an uninterrupted repair leaves"]
    Store.open(path, writable=True, holder="repair verdict").close()  # welcome again (an error is the verdict)
    return []


def outcome_problems(path: str) -> list:
    """[] when the store at `path` is the damaged store intact (refused to writers) or the repaired one."""
    from engine import manifest as manifest_module

    untouched = manifest_module.read_current(path) == manifest_module.read_current(pristine())
    return old_store_problems(path) if untouched else repaired_problems(path)


def finished_problems(path: str) -> list:
    """Why the store at `path`, after a last repair, is not the repaired one, or why one more repair finds damage
    ([] when neither)."""
    problems = [f"after the last repair: {problem}" for problem in repaired_problems(path)]
    if not problems and repair(path)["found"]:
        problems.append("a repair of the repaired store found damage")
    return problems
