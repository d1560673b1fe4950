"""What a MANIFEST promises about the live WAL, and the checks that hold a store to it (MANIFEST.spec §2, §5).

Besides `wal_number` and `last_sequence`, a MANIFEST records what the live WAL held when it was published:
`wal_size`, the bytes of WAL `wal_number` then durable, and `wal_sequence`, the last sequence then durable. A
writer publishes one with every flush and compaction, and when it closes after batches were appended since
the last one (Store.close). A store breaks that promise, and is damaged rather than torn by a crash, when:
- WAL `wal_number` is missing, or holds no complete header (WAL files are created whole, by atomic replace,
  before any MANIFEST names them), or its header names another number;
- its valid records end below `wal_size` (every byte below was synced before the MANIFEST was published);
- the batches of the live WAL files do not follow each other (sequence n + 1 after n), or end below
  `wal_sequence`.
A cut above the checkpoint leaves the last records cut short or missing, exactly as a crash in the middle of
an append does: it cannot be told from a torn tail, and recovery drops it.
"""

from __future__ import annotations

from engine.errors import CorruptionError
from engine.wal import wal_path


def file_problems(manifest, wal_dir: str, scans: dict) -> list[CorruptionError]:
    """Damage in the live WAL files, `scans` being {number: wal.scan} of every one on disk (numbered at or above
    `wal_number`). Files numbered above it were created by a flush that a crash cut short before its MANIFEST
    was published: a missing or headerless one there lost nothing."""
    problems = [CorruptionError(found.path, 12, f"header says WAL number {found.number}")
                for number, found in sorted(scans.items()) if found.number >= 0 and found.number != number]
    live = wal_path(wal_dir, manifest.wal_number)
    scan = scans.get(manifest.wal_number)
    if scan is None:
        problems.append(CorruptionError(live, None, f"the live WAL (number {manifest.wal_number}), named by the "
                                                    "MANIFEST, is missing"))
    elif scan.number < 0:
        problems.append(CorruptionError(live, 0, f"the live WAL holds {scan.file_size} bytes and no complete "
                                                 "header; it was created whole before the MANIFEST named it"))
    elif scan.status != "corruption" and scan.valid_end < manifest.wal_size:  # corruption speaks for itself
        problems.append(CorruptionError(live, scan.valid_end, f"valid records end at byte {scan.valid_end}, but "
                                                              f"the MANIFEST recorded {manifest.wal_size} synced "
                                                              "bytes: acknowledged batches were cut off"))
    return problems


def sequence_problem(path: str, previous: int, sequence: int) -> CorruptionError | None:
    """The damage a batch numbered `sequence` shows when it follows batch `previous` in the live WAL files."""
    if sequence == previous + 1:
        return None
    if sequence > previous:
        return CorruptionError(path, None, f"batch sequence {sequence} follows {previous}: batches "
                                           f"{previous + 1}..{sequence - 1} are missing")
    return CorruptionError(path, None, f"batch sequence {sequence} follows {previous}: sequences never repeat")


def end_problem(manifest, wal_dir: str, last: int) -> CorruptionError | None:
    """The damage of live WAL files whose batches end at sequence `last`."""
    if last >= manifest.wal_sequence:
        return None
    return CorruptionError(wal_dir, None,
                           f"the live WAL files end at batch sequence {last}, but the MANIFEST recorded batches "
                           f"through {manifest.wal_sequence}: acknowledged batches are missing")
