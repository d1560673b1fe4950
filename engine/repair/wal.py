"""Salvage of the live WAL files: every batch that reads back, before the damage and after it.

Each live WAL file (numbered at or above the MANIFEST's `wal_number`) is read by engine.wal.salvage, which skips
damaged bytes and goes on where a record validly starts again. A batch is kept when its payload decodes to
[sequence, operations] with operations of the three known shapes and a sequence above `last_sequence` (lower
ones are in the segments already). Batches after a lost one are kept too: each was acknowledged whole, and
dropping them would lose more of what was acknowledged (the report names the lost sequences, so what a kept
batch built on a lost one can be judged). Lost: the sequences missing between `last_sequence` and the last
one known (the highest kept, or the MANIFEST's `wal_sequence` when higher), and the files that do not read.
"""

from __future__ import annotations

import os

from engine import wal
from engine.codec import unpack
from engine.errors import CorruptionError
from engine.format import OP_COUNTER, OP_DELETE, OP_PUT, WAL_DIR

_OPERATION_LENGTHS = {OP_PUT: 4, OP_DELETE: 3, OP_COUNTER: 3}


class WalLoss:
    """What salvaging the WAL lost: sequences, unreadable files and skipped byte ranges."""

    def __init__(self):
        self.sequences: list = []  # [[first, last]] of batches lost
        self.files: list = []  # [{"file", "reason"}] of files that do not read at all
        self.skipped: list = []  # [{"file", "start", "end", "reason"}]
        self.undecodable = 0  # records whose CRC passed but whose payload is no batch

    def lose(self, sequence: int) -> None:
        """A batch that was read but cannot be applied."""
        self.sequences = sorted(self.sequences + [[sequence, sequence]])

    def as_dict(self) -> dict:
        return {"sequences": self.sequences, "count": sum(last - first + 1 for first, last in self.sequences),
                "files": self.files, "skipped_bytes": self.skipped, "undecodable_records": self.undecodable}


def salvage_batches(store_path: str, manifest, loss: WalLoss) -> list:
    """[(sequence, operations)] of every batch to keep, in sequence order; what is lost goes to `loss`."""
    directory = os.path.join(store_path, WAL_DIR)
    found: dict = {}
    numbers = _live_numbers(directory, manifest.wal_number)
    if manifest.wal_number not in numbers:
        loss.files.append({"file": os.path.join(WAL_DIR, os.path.basename(wal.wal_path(directory, manifest.wal_number))),
                           "reason": "missing"})
    for number in numbers:
        path = wal.wal_path(directory, number)
        relative = os.path.join(WAL_DIR, os.path.basename(path))
        try:
            salvaged = wal.salvage(path)
        except CorruptionError as error:
            loss.files.append({"file": relative, "reason": error.reason})
            continue
        loss.skipped += [{"file": relative, "start": start, "end": end, "reason": reason}
                         for start, end, reason in salvaged.skipped]
        for payload in salvaged.payloads:
            batch = _batch(payload, path)
            if batch is None:
                loss.undecodable += 1
            elif batch[0] > manifest.last_sequence:
                found.setdefault(batch[0], batch)
    last_known = max([manifest.wal_sequence, *found])
    loss.sequences = _missing_ranges(manifest.last_sequence + 1, last_known, found)
    return [found[sequence] for sequence in sorted(found)]


def _live_numbers(directory: str, oldest: int) -> list:
    numbers = []
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        stem, dot, suffix = name.partition(".")
        if dot and suffix == "log" and stem.isdigit() and int(stem) >= oldest:
            numbers.append(int(stem))
    return sorted(numbers)


def _batch(payload: bytes, path: str):
    """(sequence, operations) of a payload that is a well-formed batch, else None."""
    try:
        record = unpack(payload, path)
    except CorruptionError:
        return None
    if not (isinstance(record, list) and len(record) == 2 and type(record[0]) is int and isinstance(record[1], list)):
        return None
    sequence, operations = record
    for operation in operations:
        if not (isinstance(operation, list) and operation and _OPERATION_LENGTHS.get(operation[0]) == len(operation)):
            return None
    return sequence, operations


def _missing_ranges(first: int, last: int, present) -> list:
    """[[a, b]] of the sequences in [first, last] that `present` lacks."""
    ranges, expected = [], first
    for sequence in sorted(sequence for sequence in present if first <= sequence <= last) + [last + 1]:
        if sequence > expected:
            ranges.append([expected, sequence - 1])
        expected = sequence + 1
    return ranges
