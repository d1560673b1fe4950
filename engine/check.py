"""fsck for a store: every checksum, every MANIFEST reference, every id counter, without taking the writer lock.

Problems (the store is damaged) and notes (normal leftovers, e.g. a torn WAL tail after a crash or files a
reader's open kept the last writer from deleting) are reported with the file and, when known, the offset.
Problems are recorded in the store's DAMAGE marker (engine/damage.py), so that writers refuse the store until
`memctl repair` has run; a marker found is itself a problem until then.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from engine import damage, kinds, manifest as manifest_module, wal, wal_checkpoint
from engine.errors import CorruptionError, UnsupportedVersion
from engine.format import DAMAGE_FILE, KIND_RECORDS, NUMBER_DIGITS, SEGMENT_DIR, WAL_DIR
from engine.records import open_segment
from engine.segment import Segment

_NUMBERED = re.compile(rf"^(\d{{{NUMBER_DIGITS},}})\.")
# One note per orphan file, all with this message: `memctl check` prints them as one group.
ORPHAN_NOTE = "named by no record (an ingest or deletion was interrupted); `memctl raw gc` removes such files"


@dataclass
class Report:
    path: str
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    checked: dict = field(default_factory=dict)
    damage: list = field(default_factory=list)  # the problems that are damage, as CorruptionErrors

    def problem(self, file: str, offset, message: str, is_damage: bool = True) -> None:
        self.problems.append({"file": file, "offset": offset, "message": message})
        if is_damage:
            self.damage.append(CorruptionError(os.path.join(self.path, file), offset, message))

    def found(self, error: CorruptionError, file: str | None = None) -> None:
        """The problem `error` names (in `file`, default its path relative to the store); a file of an older or
        newer format is no damage."""
        self.problem(file or _relative(self.path, error.path), error.offset, error.reason,
                     is_damage=not isinstance(error, UnsupportedVersion))

    def note(self, file: str, message: str) -> None:
        self.notes.append({"file": file, "message": message})

    @property
    def clean(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict:
        return {"path": self.path, "clean": self.clean, "problems": self.problems, "notes": self.notes,
                "checked": self.checked}


def check_store(path: str, command: str = "memctl check") -> Report:
    """The report of the store at `path`; NoStore when none was ever created there. `command`: who checks, as
    the DAMAGE marker names the finder of what this check records."""
    report = Report(os.path.abspath(path))
    with damage.quiet():  # recorded once, below, by this check's name
        _check_all(report, command)
    damage.record(report.path, report.damage, command)
    return report


def _check_all(report: Report, command: str) -> None:
    try:
        name = manifest_module.read_current(report.path)
        if name is None:
            from engine.store import Store

            Store.open(report.path, writable=False, must_exist=True).close()  # NoStore, or CURRENT was lost
            name = manifest_module.read_current(report.path)  # a writer created the store meanwhile
        manifest = manifest_module.load(report.path, name)
    except CorruptionError as error:
        report.found(error)
        return
    report.checked["manifest"] = name
    _check_marker(report, manifest)
    segments = _check_segments(report, manifest)
    _check_wal(report, manifest)
    _check_counters(report, manifest)
    _check_kinds(report, segments, command)
    _check_raw(report, command)


def _check_marker(report: Report, manifest) -> None:
    marker = damage.read(report.path)
    if marker is None:
        return
    if marker.crc == manifest.resolved_damage:
        report.note(DAMAGE_FILE, "resolved by `memctl repair`; the next writer removes it")
    else:
        report.problem(DAMAGE_FILE, None, f"the store is marked damaged: {marker.summary()}; writers refuse it "
                                          "until `memctl repair` has run", is_damage=False)


def _relative(root: str, path: str) -> str:
    """A file relative to the store; a record's label ("raw.chunk/<raw_id>") as it is."""
    if not os.path.isabs(path):
        return path
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
            report.found(error, relative)
            continue
        opened.setdefault(entry["owner"], []).append(segment)
    report.checked["segments"] = len(manifest.segments)
    for name in _list(os.path.join(report.path, SEGMENT_DIR)):
        if name not in seen:
            report.note(os.path.join(SEGMENT_DIR, name), "not named by the MANIFEST; the next writer removes it")
    return opened


def _check_wal(report: Report, manifest) -> None:
    """Every live WAL file's records, and what the MANIFEST's checkpoint says they hold (wal_checkpoint; the
    batches' sequence numbers are checked by the reader open of _check_raw). A torn tail above the checkpoint
    is what a crash leaves: a note."""
    directory = os.path.join(report.path, WAL_DIR)
    scans, unreadable = {}, set()
    for name in _list(directory):
        relative = os.path.join(WAL_DIR, name)
        number = _NUMBERED.match(name)
        if not number or not name.endswith(".log") or int(number.group(1)) < manifest.wal_number:
            report.note(relative, "obsolete; the next writer removes it")
            continue
        try:
            scan = scans[int(number.group(1))] = wal.scan(os.path.join(directory, name))
        except CorruptionError as error:  # its header: reported here, not as missing below
            report.found(error, relative)
            unreadable.add(int(number.group(1)))
            continue
        if scan.status == "corruption":
            report.problem(relative, scan.problem_offset, scan.reason)
    if manifest.wal_number not in unreadable:
        for error in wal_checkpoint.file_problems(manifest, directory, scans):
            report.found(error)
    for number, scan in sorted(scans.items()):
        if scan.status == "torn_tail" and (number != manifest.wal_number or scan.valid_end >= manifest.wal_size):
            report.note(os.path.join(WAL_DIR, os.path.basename(scan.path)), _torn_tail_note(scan))
    report.checked["wal_files"] = len(scans)


def _torn_tail_note(scan) -> str:
    """How much an interrupted write left at the end of a WAL, which the next writer drops."""
    cut = scan.file_size - scan.valid_end
    if scan.number < 0:
        return f"partial header ({cut:,} bytes) left by an interrupted creation; the next writer writes it again"
    return (f"partial record at the end: {cut:,} bytes from offset {scan.valid_end:,} ({scan.reason}), left by an "
            "interrupted write; the next writer drops them")


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


def _check_kinds(report: Report, segments: dict, command: str) -> None:
    """Derived kinds check their own invariants (postings sorted, CSR valid…) through a reader snapshot, each
    instance ("text:nodes", "text:documents"…) over its own segments."""
    derived = {owner: found for owner, found in segments.items() if owner != KIND_RECORDS}
    if not derived:
        return
    from engine.store import Store

    try:
        store = Store.open(report.path, writable=False, holder=command)
    except CorruptionError as error:
        _open_failed(report, error)
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
            report.found(error)


def _check_raw(report: Report, command: str) -> None:
    """Raw chunks (engine/raw/): every blob present, of its recorded size and sha256, and reference counts of
    one per citing turn. Blob and temp files no record names are notes: an interrupted ingest or deletion
    leaves them, and `memctl raw gc` removes them."""
    from engine.raw import RawStore
    from engine.store import Store

    try:
        store = Store.open(report.path, writable=False, holder=command)
    except CorruptionError as error:
        _open_failed(report, error)
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
        report.found(error)
    for relative in unnamed:
        report.note(relative, ORPHAN_NOTE)


def _open_failed(report: Report, error: CorruptionError) -> None:
    """Report why a reader's open failed, unless a check above reported it already."""
    problem = {"file": _relative(report.path, error.path), "offset": error.offset, "message": error.reason}
    if problem not in report.problems:
        report.found(error)


def _list(directory: str) -> list[str]:
    try:
        return sorted(os.listdir(directory))
    except FileNotFoundError:
        return []
