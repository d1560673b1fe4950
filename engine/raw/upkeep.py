"""Checking and collecting raw storage: `check`'s verification of every chunk and `raw gc`'s removal of blob
files that no record names."""

from __future__ import annotations

import os

from engine import fs
from engine.errors import CorruptionError, EngineError
from engine.format import RAW_CHUNK_TABLE, RAW_DIR, RAW_TURNS_TABLE, TEMP_SUFFIX
from engine.raw.paths import BLOB_NAME, raw_id_for, record_blob_path
from engine.raw.turn_columns import decode_turns


def verify(raw) -> tuple[list[CorruptionError], list[str]]:
    """For `check`, without writing: (an error for every chunk whose blob does not read back exactly or
    whose turns do not match it, the blob and temp files no record names, relative to the store).

    Reference rule: a chunk with a raw.turns record has exactly one reference per turn; a chunk without
    one (stored through `put`) must have at least one."""
    problems = [error for _raw_id, found in chunk_problems(raw) for error in found]
    return problems, [relative for relative, _ in _unnamed_files(raw)]


def chunk_problems(raw):
    """(raw_id, [CorruptionError]) of every chunk whose blob does not read back exactly or whose turns do not
    match it, and of every raw.turns record without a chunk record (for `check`, and for `repair`, which drops
    such chunks)."""
    turn_records = dict(raw.store.scan(RAW_TURNS_TABLE))
    for raw_id, record in raw.scan():
        try:
            data = raw.read_verified(raw_id, record)
            problems = []
        except CorruptionError as error:
            problems, data = [error], None
        problems += check_references(raw_id, record, turn_records.pop(raw_id, None), data)
        if problems:
            yield raw_id, problems
    for raw_id in turn_records:
        yield raw_id, [CorruptionError(f"{RAW_TURNS_TABLE}/{raw_id}", None,
                                       f"turns of {raw_id}, which has no {RAW_CHUNK_TABLE} record")]


def collect_garbage(raw) -> list[str]:
    """Delete blob files and temp files that no committed record names (left by a crash between a blob's
    publication and its batch's commit, or by a deletion interrupted after commit). Writer only, and never
    while one of its batches is open. Returns the removed paths, relative to the store.

    Nothing is synced: a removal that a power loss undoes leaves an orphan for the next gc."""
    if not raw.store.writable:
        raise EngineError("raw gc needs the store opened for writing")
    removed = []
    for relative, path in _unnamed_files(raw):
        fs.remove(path)
        removed.append(relative)
    root = os.path.join(raw.store.path, RAW_DIR)
    for directory, _, _ in os.walk(root, topdown=False):
        if directory != root and not os.listdir(directory):
            os.rmdir(directory)
    return removed


def _unnamed_files(raw):
    """(relative path, path) of temp files and of blob files that no record names."""
    for directory, _, files in os.walk(os.path.join(raw.store.path, RAW_DIR)):
        for name in sorted(files):
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, raw.store.path).replace(os.sep, "/")
            if name.endswith(TEMP_SUFFIX) or _is_orphan(raw, name, relative):
                yield relative, path


def _is_orphan(raw, name: str, relative: str) -> bool:
    match = BLOB_NAME.fullmatch(name)
    if match is None:
        return False  # not ours: left alone
    record = raw.get(raw_id_for(match[1]))
    return record is None or record["sha256"].hex() != match[1] or record_blob_path(record) != relative


def check_references(raw_id: str, record: dict, turns_record: dict | None, data: bytes | None) -> list:
    """Problems of one chunk's reference count and turn rows (spans checked against `data` when it read)."""
    label = f"{RAW_CHUNK_TABLE}/{raw_id}"
    refcount = record.get("refcount")
    if turns_record is None:
        if not isinstance(refcount, int) or refcount < 1:
            return [CorruptionError(label, None, f"reference count {refcount!r}; a stored chunk has at least 1")]
        return []
    try:
        turns = decode_turns(raw_id, turns_record)
    except CorruptionError as error:
        return [error]
    problems = []
    if refcount != len(turns):
        problems.append(CorruptionError(label, None, f"reference count {refcount!r}, but {len(turns)} turn(s) "
                                                     f"in {RAW_TURNS_TABLE}/{raw_id} cite it"))
    for turn in turns:
        ref = turn["raw_ref"]
        if ref["offset"] + ref["length"] > record["len_bytes"]:
            problems.append(CorruptionError(f"{RAW_TURNS_TABLE}/{raw_id}", None, f"turn {turn['turn_id']} spans "
                                            f"past the chunk's {record['len_bytes']:,} bytes"))
            break
        if data is not None:
            try:
                data[ref["offset"]: ref["offset"] + ref["length"]].decode("utf-8")
            except UnicodeDecodeError:
                problems.append(CorruptionError(f"{RAW_TURNS_TABLE}/{raw_id}", None,
                                                f"turn {turn['turn_id']} does not span whole UTF-8 characters"))
                break
    return problems
