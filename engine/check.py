"""fsck for a store: every checksum, every MANIFEST reference, every id counter, without taking the writer lock.

Problems (the store is damaged) and notes (normal leftovers, e.g. a torn WAL tail after a crash or files a
reader's open kept the last writer from deleting) are reported with the file and, when known, the offset.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from engine import kinds, manifest as manifest_module, wal
from engine.errors import CorruptionError
from engine.format import KIND_RECORDS, NUMBER_DIGITS, SEGMENT_DIR, WAL_DIR
from engine.records import open_segment
from engine.segment import Segment

_NUMBERED = re.compile(rf"^(\d{{{NUMBER_DIGITS},}})\.")


@dataclass
class Report:
    path: str
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    checked: dict = field(default_factory=dict)

    def problem(self, file: str, offset, message: str) -> None:
        self.problems.append({"file": file, "offset": offset, "message": message})

    def note(self, file: str, message: str) -> None:
        self.notes.append({"file": file, "message": message})

    @property
    def clean(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict:
        return {"path": self.path, "clean": self.clean, "problems": self.problems, "notes": self.notes,
                "checked": self.checked}


def check_store(path: str) -> Report:
    report = Report(os.path.abspath(path))
    try:
        name = manifest_module.read_current(report.path)
        if name is None:
            report.problem("CURRENT", None, "no CURRENT file: not a memctl store, or CURRENT was lost")
            return report
        manifest = manifest_module.load(report.path, name)
    except CorruptionError as error:
        report.problem(_relative(report.path, error.path), error.offset, error.reason)
        return report
    report.checked["manifest"] = name
    segments = _check_segments(report, manifest)
    _check_wal(report, manifest)
    _check_counters(report, manifest)
    _check_kinds(report, segments)
    _check_raw(report)
    return report


def _relative(root: str, path: str) -> str:
    try:
        return os.path.relpath(path, root)
    except ValueError:
        return path


def _check_segments(report: Report, manifest) -> dict:
    """Open and verify every segment; returns {owner: [Segment]} of those that passed."""
    opened: dict = {}
    seen = set()
    for entry in manifest.segments:
        relative = os.path.join(SEGMENT_DIR, str(entry.get("name")))
        path = os.path.join(report.path, relative)
        if entry.get("name") in seen:
            report.problem(relative, None, "named twice in the MANIFEST")
        seen.add(entry.get("name"))
        number = _NUMBERED.match(str(entry.get("name")))
        if not number or int(number.group(1)) >= manifest.next_file_number:
            report.problem(relative, None, f"file number is not below next_file_number {manifest.next_file_number}")
        try:
            segment = Segment.open(path, expected_size=entry.get("size"))
            if segment.kind != entry.get("kind"):
                raise CorruptionError(path, 12, f"kind {segment.kind!r}, the MANIFEST says {entry.get('kind')!r}")
            mismatch = kinds.ownership_problem(segment.kind, entry["owner"])
            if mismatch:
                raise CorruptionError(path, None, mismatch)
            # Column checks first: they name the damaged column's offset; the whole-file CRC cannot.
            segment.verify()
            if segment.kind == KIND_RECORDS:
                open_segment(segment).check()
            if segment.file_crc() != entry.get("crc"):
                raise CorruptionError(path, None, "file checksum differs from the MANIFEST's")
        except CorruptionError as error:
            report.problem(relative, error.offset, error.reason)
            continue
        opened.setdefault(entry["owner"], []).append(segment)
    report.checked["segments"] = len(manifest.segments)
    for name in _list(os.path.join(report.path, SEGMENT_DIR)):
        if name not in seen:
            report.note(os.path.join(SEGMENT_DIR, name), "not named by the MANIFEST; the next writer removes it")
    return opened


def _check_wal(report: Report, manifest) -> None:
    directory = os.path.join(report.path, WAL_DIR)
    live = 0
    for name in _list(directory):
        relative = os.path.join(WAL_DIR, name)
        number = _NUMBERED.match(name)
        if not number or not name.endswith(".log") or int(number.group(1)) < manifest.wal_number:
            report.note(relative, "obsolete; the next writer removes it")
            continue
        live += 1
        try:
            scan = wal.scan(os.path.join(directory, name))
        except CorruptionError as error:
            report.problem(relative, error.offset, error.reason)
            continue
        if scan.status == "corruption":
            report.problem(relative, scan.problem_offset, scan.reason)
        elif scan.status == "torn_tail":
            report.note(relative, f"torn tail at offset {scan.problem_offset} ({scan.reason}); the next writer drops it")
        if scan.number >= 0 and f"{scan.number:0{NUMBER_DIGITS}d}.log" != name:
            report.problem(relative, 12, f"header says WAL number {scan.number}")
    if live == 0:
        report.problem(WAL_DIR, None, f"the live WAL (number {manifest.wal_number}) is missing")
    report.checked["wal_files"] = live


def _check_counters(report: Report, manifest) -> None:
    for name, value in manifest.counters.items():
        if not isinstance(value, int) or value < 0:
            report.problem(manifest.file_name(), None, f"id counter {name!r} holds {value!r}")
    if manifest.number >= manifest.next_file_number:
        report.problem(manifest.file_name(), None,
                       f"next_file_number {manifest.next_file_number} is not above file number {manifest.number}")
    wal_names = [name for name in _list(os.path.join(report.path, WAL_DIR)) if name.endswith(".log")]
    numbers = [int(m.group(1)) for m in map(_NUMBERED.match, wal_names) if m]
    if numbers and max(numbers) >= manifest.next_file_number:
        # Created by a flush that a crash interrupted before its MANIFEST was published; the next writer
        # replays it and numbers new files above it.
        report.note(os.path.join(WAL_DIR, f"{max(numbers):0{NUMBER_DIGITS}d}.log"),
                    f"numbered at or above next_file_number {manifest.next_file_number}: left by an interrupted flush")
    report.checked["counters"] = len(manifest.counters)


def _check_kinds(report: Report, segments: dict) -> None:
    """Derived kinds check their own invariants (postings sorted, CSR valid…) through a reader snapshot, each
    instance ("text:nodes", "text:documents"…) over its own segments."""
    derived = {owner: found for owner, found in segments.items() if owner != KIND_RECORDS}
    if not derived:
        return
    from engine.store import Store

    try:
        store = Store.open(report.path, writable=False)
    except CorruptionError as error:
        report.problem(_relative(report.path, error.path), error.offset, error.reason)
        return
    for owner, found in derived.items():
        problem = kinds.owner_problem(owner)
        if problem is not None:
            report.problem(SEGMENT_DIR, None, f"segments of {owner!r}: {problem}")
            continue
        kind_object = kinds.open_kind(store, owner)
        checker = getattr(kind_object, "check", None)
        if checker is None:
            continue
        for error in checker(found):
            report.problem(_relative(report.path, error.path), error.offset, error.reason)


def _check_raw(report: Report) -> None:
    """Raw chunks (engine/raw/): every blob present, of its recorded size and sha256, and reference counts of
    one per citing turn. Blob and temp files no record names are notes: an interrupted ingest or deletion
    leaves them, and `memctl raw gc` removes them."""
    from engine.raw import RawStore
    from engine.store import Store

    try:
        store = Store.open(report.path, writable=False)
    except CorruptionError as error:
        if not report.problems:  # otherwise the checks above have reported why the store does not open
            report.problem(_relative(report.path, error.path), error.offset, error.reason)
        return
    try:
        raw = RawStore(store)
        problems, unnamed = raw.verify()
        report.checked["raw_chunks"] = sum(1 for _ in raw.scan())
    except CorruptionError as error:  # a records segment failing its CRC on first read
        problems, unnamed = [error], []
    finally:
        store.close()
    for error in problems:
        # Blob problems name the file; record problems name the record ("raw.chunk/<raw_id>").
        where = _relative(report.path, error.path) if os.path.isabs(error.path) else error.path
        report.problem(where, error.offset, error.reason)
    for relative in unnamed:
        report.note(relative, "no record names this file (an ingest or deletion was interrupted); "
                              "`memctl raw gc` removes it")


def _list(directory: str) -> list[str]:
    try:
        return sorted(os.listdir(directory))
    except FileNotFoundError:
        return []
