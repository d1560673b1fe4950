"""The format-3 fixture store, and what a migration of it must leave (tests and tools/crash only).

tests/fixtures/format3_store/store was written by memctl before format 4 (its README.txt says how). However a
migration of it is interrupted, the directory must hold one of two stores:
- the old one: every file the old code reads (CURRENT, the MANIFEST it names, that MANIFEST's segments, the WAL
  files it replays, the raw blobs) byte for byte as in the fixture, so the old code reads what it wrote and a
  migration can run again; a file beside them is an orphan the old code never opens and its next writer
  deletes (`old_store_problems`);
- the migrated one: a MANIFEST of today's format, `check_store` without problems, and `content` equal to what an
  uninterrupted migration leaves (`migrated_problems`).
"""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
from functools import lru_cache
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "format3_store" / "store"
OLD_VERSION = 3
TEXT_OWNERS = ("text:nodes", "text:documents")
# Words of both languages and of both indexes (the notes and the conversations).
QUERIES = ("Dana Somerville Red Line commute", "litter Miso groceries", "Bluetooth headset power", "小林 柜员 杭州",
           "柯基 洗澡 豆包", "咖啡 美式 饺子皮")


def copy_fixture(destination: str) -> None:
    shutil.copytree(FIXTURE, destination)


def manifest_version(path: str) -> int:
    """The format version in the header of the MANIFEST that CURRENT names."""
    from engine import manifest as manifest_module
    from engine.format import MANIFEST_HEADER_FORMAT

    with open(os.path.join(path, manifest_module.read_current(path)), "rb") as handle:
        return struct.unpack_from(MANIFEST_HEADER_FORMAT, handle.read(struct.calcsize(MANIFEST_HEADER_FORMAT)))[1]


def files_the_old_code_reads(path: str) -> dict:
    """{relative path: bytes} of every file an open of the store at `path`, as the fixture's MANIFEST says,
    reads (raw blobs included)."""
    from engine import manifest as manifest_module
    from engine.format import CURRENT_FILE, OLDEST_MIGRATABLE_FORMAT_VERSION, RAW_DIR, SEGMENT_DIR, WAL_DIR

    name = manifest_module.read_current(path)
    manifest = manifest_module.load(path, name, OLDEST_MIGRATABLE_FORMAT_VERSION)
    names = [CURRENT_FILE, name] + [os.path.join(SEGMENT_DIR, entry["name"]) for entry in manifest.segments]
    names += [os.path.join(WAL_DIR, wal_name) for wal_name in sorted(os.listdir(os.path.join(path, WAL_DIR)))
              if wal_name.endswith(".log") and int(wal_name.split(".")[0]) >= manifest.wal_number]
    for directory, _subdirectories, files in os.walk(os.path.join(path, RAW_DIR)):
        names += [os.path.relpath(os.path.join(directory, file), path) for file in files]
    found = {}
    for relative in sorted(names):
        with open(os.path.join(path, relative), "rb") as handle:
            found[relative] = handle.read()
    return found


def old_store_problems(path: str) -> list:
    """Why the store at `path` is not the fixture's old store as its code reads it ([] when it is)."""
    if manifest_version(path) != OLD_VERSION:
        return [f"its MANIFEST is of format {manifest_version(path)}, not {OLD_VERSION}"]
    return read_files_problems(str(FIXTURE), path)


def read_files_problems(expected_path: str, path: str, harmless=lambda name, data: False) -> list:
    """How the files a reader of the store at `path` reads (files_the_old_code_reads) differ from those of the
    store at `expected_path`; a file read only at `path` for which `harmless(name, data)` is true is no
    difference."""
    expected, found = files_the_old_code_reads(expected_path), files_the_old_code_reads(path)
    problems = [f"{name} is missing" for name in sorted(expected.keys() - found.keys())]
    problems += [f"{name} would be read too" for name in sorted(found.keys() - expected.keys())
                 if not harmless(name, found[name])]
    problems += [f"{name} differs" for name in sorted(expected.keys() & found.keys()) if expected[name] != found[name]]
    return problems


def content(path: str) -> dict:
    """What a reader of a migrated store sees: every table's live records, the counters, each text index's
    hits (key, score, terms) for QUERIES, and every live node's neighbours in both directions."""
    from engine.graph.api import GraphStore
    from engine.store import Store
    from engine.text.index import TextIndex

    with Store.open(path, writable=False) as store:
        tables = sorted(set(store.tables).union(*(segment.tables for segment in store.records)))
        records = {table: dict(store.scan(table)) for table in tables}
        search = {owner: {query: [(hit.key, hit.score, tuple(hit.terms))
                                  for hit in TextIndex(store, owner=owner).search(query, top=100)]
                          for query in QUERIES} for owner in TEXT_OWNERS}
        graph = GraphStore(store)
        neighbors = {node.key: sorted(map(repr, graph.neighbors(node.key, "both").rows()))
                     for node in graph.iter_nodes()}
        return {"records": records, "counters": dict(store.counters), "search": search, "neighbors": neighbors}


def migrate(path: str) -> dict:
    """engine.migration.migrate_store of the store at `path` with the hooks `memctl migrate` hands it."""
    from engine.migration import migrate_store
    from memctl.memory import migration_hooks

    return migrate_store(path, hooks=migration_hooks())


@lru_cache(maxsize=1)
def reference_content() -> dict:
    """`content` of the fixture after an uninterrupted migration."""
    with tempfile.TemporaryDirectory(prefix="memctl-migrated-") as scratch:
        path = os.path.join(scratch, "store")
        copy_fixture(path)
        migrate(path)
        return content(path)


def migrated_problems(path: str) -> list:
    """Why the store at `path` is not the fixture completely migrated ([] when it is)."""
    from engine.check import check_store
    from engine.format import FORMAT_VERSION

    if manifest_version(path) != FORMAT_VERSION:
        return [f"its MANIFEST is of format {manifest_version(path)}, not {FORMAT_VERSION}"]
    problems = [f"check: {problem}" for problem in check_store(path).problems]
    if not problems and content(path) != reference_content():
        problems.append("it holds or serves something else than an uninterrupted migration leaves")
    return problems


def outcome_problems(path: str) -> list:
    """[] when the store at `path` is the old store intact or the fixture completely migrated."""
    return old_store_problems(path) if manifest_version(path) == OLD_VERSION else migrated_problems(path)


def finished_problems(path: str) -> list:
    """Why the store at `path`, migrated once more unarmed, is not the fixture migrated, or why one more migration
    changes it ([] when neither)."""
    problems = [f"after the last migration: {problem}" for problem in migrated_problems(path)]
    if not problems and migrate(path)["migrated"]:
        problems.append("a migration of the migrated store migrated it again")
    return problems
