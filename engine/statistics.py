"""A store's sizes on disk and counts, from its MANIFEST and memtable (no full scans): what `memctl stats`
shows."""

from __future__ import annotations

import os

from engine import kinds
from engine.format import KIND_RECORDS, RAW_DIR, SEGMENT_DIR, WAL_DIR


def store_statistics(store) -> dict:
    """{path, manifest, bytes {segments, wal, raw, total}, segments {"records" or "<owner>.<label>": {segments, bytes}}, wal {files,
    unflushed_batches_bytes}, raw_blobs, stored_rows {table: rows}, counters}, then for each derived kind instance
    with data whose view has statistics, {owner: those}."""
    manifest = store.manifest
    segments: dict = {}
    for entry in manifest.segments:
        kind = segments.setdefault(_segment_name(entry), {"segments": 0, "bytes": 0})
        kind["segments"] += 1
        kind["bytes"] += entry["size"]
    rows: dict = {}
    for records in store.records:
        for table, (start, end) in records.tables.items():
            rows[table] = rows.get(table, 0) + end - start
    for table, memtable_rows in store.tables.items():
        rows[table] = rows.get(table, 0) + len(memtable_rows)
    wal_bytes, wal_files = _directory_bytes(os.path.join(store.path, WAL_DIR))
    raw_bytes, raw_files = _directory_bytes(os.path.join(store.path, RAW_DIR))
    segment_bytes, _ = _directory_bytes(os.path.join(store.path, SEGMENT_DIR))
    result = {
        "path": store.path,
        "manifest": manifest.file_name() if manifest.number else None,
        "bytes": {"segments": segment_bytes, "wal": wal_bytes, "raw": raw_bytes,
                  "total": segment_bytes + wal_bytes + raw_bytes},
        "segments": segments,
        "wal": {"files": wal_files, "unflushed_batches_bytes": store.memtable_bytes},
        "raw_blobs": raw_files,
        "stored_rows": dict(sorted(rows.items())),
        "counters": dict(sorted(store.counters.items())),
    }
    for owner in sorted(store.kind_segments.keys() | _memtable_owners(store)):
        if owner != KIND_RECORDS and kinds.is_registered(owner):
            view = store.kind(owner)
            if hasattr(view, "stats"):
                result[owner] = view.stats()
    return result


def _segment_name(entry: dict) -> str:
    """A segment's name in `segments`: "records", or its kind with its owner's instance ("text:nodes.postings",
    "graph.csr")."""
    if entry["owner"] == KIND_RECORDS:
        return KIND_RECORDS
    return f"{entry['owner']}.{entry['kind'].split('.', 1)[1]}"


def _directory_bytes(path: str) -> tuple[int, int]:
    total = files = 0
    for root, _dirs, names in os.walk(path):
        for name in names:
            try:
                total += os.path.getsize(os.path.join(root, name))
                files += 1
            except FileNotFoundError:
                continue  # removed by a writer while we walked
    return total, files


def _memtable_owners(store) -> set:
    return {kinds.owner_of(table) for table in store.tables}
