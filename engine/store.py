"""Store: one tenant's directory of WAL, segments and MANIFEST, opened as a writer or a reader snapshot.

Write path: a batch is one WAL record and one fsync, then it is applied to the memtable. When the memtable
passes `flush_bytes`, it is written as a records segment (plus the segments of each derived kind instance
that has changes), a new WAL is started, and a new MANIFEST naming all of them is published; only then are
the old WAL and any replaced segments deleted. The batch that takes the memtable past `flush_bytes` skips
the WAL: it is applied and flushed at once, and the MANIFEST that flush publishes is its commit point.

Read path: a reader takes no writer lock. Holding LOCK.gc shared, it resolves CURRENT → MANIFEST, maps the
segments and reads the live WAL files up to their last complete record; after that it never touches the
directory again, so a writer can flush, compact and delete while it reads its snapshot.

Derived kinds (text postings, graph CSR) own record tables: an owner, a kind's unnamed instance "<kind>" or a
named one "<kind>:<instance>", owns the tables `<owner>.*` and the segments whose MANIFEST entries name it;
`engine.kinds` maps an owner to its kind class. Records stay the source of truth; an owner's segments are
indexes built from them, and `rebuild` makes every one of them again from the records alone.

A store of an older format (MANIFEST.spec §13) is refused, except by a handle opened with migrating=True:
engine.migration stages its steps' changes on such a handle and publishes them with `rebuild`.

Damage: opening checks the live WAL against the checkpoint its MANIFEST recorded (engine/wal_checkpoint.py),
which a writer publishes when it closes after appending; corruption found opening is recorded in the DAMAGE
marker (engine/damage.py), and a writer refuses a store holding one. A handle opened with repairing=True
(engine/repair/) skips both and reads nothing but the MANIFEST: repair reads the rest itself, past damage.
"""

from __future__ import annotations

import functools
import itertools
import operator
import os
import re
from contextlib import contextmanager

import msgpack

from engine import damage, fs, kinds, manifest as manifest_module, wal, wal_checkpoint
from engine.codec import unpack
from engine.errors import CorruptionError, EngineError, InputError, NoStore, StoreClosed
from engine.format import (
    CURRENT_FILE,
    INSTANCE_SEPARATOR,
    KIND_RECORDS,
    MANIFEST_PREFIX,
    NUMBER_DIGITS,
    OLDEST_MIGRATABLE_FORMAT_VERSION,
    OLDEST_STORE_FORMAT_VERSION,
    OP_COUNTER,
    OP_DELETE,
    OP_PUT,
    SEGMENT_COMPACTION_LEVEL,
    SEGMENT_DIR,
    SEGMENT_FLUSH_LEVEL,
    TEMP_SUFFIX,
    WAL_DIR,
    WAL_HEADER_SIZE,
)
from engine.lock import GcLock, WriterLock
from engine.manifest import Manifest
from engine.records import (
    TOMBSTONE,
    BlockCache,
    composite_key,
    key_hash,
    key_hashes,
    merge_records,
    newest_versions,
    open_segment,
    write_records,
)
from engine.records.tiers import newest_to_merge
from engine.segment import Segment, SegmentWriter

DEFAULT_FLUSH_BYTES = 8 << 20
CLOSE_FLUSH_BYTES = 512 << 10
_WAL_NAME = re.compile(rf"^(\d{{{NUMBER_DIGITS},}})\.log$")


def _refuse_writes_after_failure(method):
    """A flush or compaction that fails part-way leaves the published state unknown (CURRENT may have
    moved without its directory fsync, so the old WAL may already be obsolete): like a failed commit,
    it makes this handle refuse every further write; reopening recovers (fsyncgate, REFERENCES B4)."""
    @functools.wraps(method)
    def guarded(self, *arguments, **keywords):
        try:
            return method(self, *arguments, **keywords)
        except BaseException as error:
            if self._failure is None and self.writable and self._writer_lock is not None \
                    and not isinstance(error, _Refused):
                self._failure = error
            raise
    return guarded


class _Refused(EngineError):
    """A write this handle does not make in its state (outdated, or holding staged changes): nothing was
    attempted, so the handle stays usable."""


class Batch:
    """Operations collected in memory; nothing reaches disk until the `with` block exits cleanly.

    They are kept as runs, [code, name, keys, values] for consecutive operations of one code on one table or
    counter (values: None but for puts; a counter's run keeps its new values under keys): a bulk batch is a
    few long runs, which commit checks, packs and applies as wholes, with no object per operation."""

    def __init__(self, store: "Store", owned: bool = False):
        self._store = store
        self._owned = owned
        self.runs: list = []
        self._counters: dict = {}

    def _run(self, code: int, name: str) -> list:
        runs = self.runs
        if runs and runs[-1][0] == code and runs[-1][1] == name:
            return runs[-1]
        run = [code, name, [], [] if code == OP_PUT else None]
        runs.append(run)
        return run

    def put(self, table: str, key: str, value) -> None:
        run = self._run(OP_PUT, table)
        run[2].append(key)
        run[3].append(value)

    def put_many(self, table: str, keys, values) -> None:
        keys, values = list(keys), list(values)
        if len(keys) != len(values):
            raise ValueError(f"put_many takes one value per key ({len(keys)} keys, {len(values)} values)")
        run = self._run(OP_PUT, table)
        run[2] += keys
        run[3] += values

    def delete(self, table: str, key: str) -> None:
        self._run(OP_DELETE, table)[2].append(key)

    def allocate(self, counter: str, count: int = 1) -> int:
        """Reserve `count` consecutive ids from a persistent counter; returns the first."""
        first = self._counters.get(counter, self._store.counter(counter))
        self._counters[counter] = first + count
        self._run(OP_COUNTER, counter)[2].append(first + count)
        return first

    @property
    def operations(self) -> list:
        """The operations in order, as the WAL holds them: [code, name, key, value], [code, name, key] or
        [code, name, counter value]."""
        return [[code, name, *argument] for code, name, keys, values in self.runs
                for argument in (zip(keys, values) if values is not None else zip(keys))]

    def __enter__(self) -> "Batch":
        return self

    def __exit__(self, error_type, error, traceback) -> None:
        if error_type is None and self.runs:
            self._store.commit(self.runs, self._owned)


class Store:
    def __init__(self, path: str, writable: bool, migrating: bool = False, repairing: bool = False):
        self.path = os.path.abspath(path)
        self.writable = writable
        self.migrating = migrating
        self.repairing = repairing
        self.flush_bytes = DEFAULT_FLUSH_BYTES
        self.close_flush_bytes = CLOSE_FLUSH_BYTES
        self.manifest: Manifest | None = None
        self.records: list = []  # readers of the records segments (engine.records.open_segment), oldest first
        self.block_cache = BlockCache()  # their decompressed blocks
        self.kind_segments: dict[str, list[Segment]] = {}
        self.tables: dict[str, dict] = {}  # the memtable
        self.packed_values: dict[str, dict] = {}  # table -> key -> msgpack bytes of the memtable's value
        self.counters: dict[str, int] = {}
        self.memtable_bytes = 0
        self.sequence = 0
        self.generation = 0  # bumps on every visible change; derived kinds cache against it
        self.wal_scans: list = []
        self._wal_writer: wal.WalWriter | None = None
        self._writer_lock: WriterLock | None = None
        self._kind_views: dict = {}
        self._failure: BaseException | None = None
        self._staged = False  # stage() applied changes that only rebuild() makes durable
        # What a checkpoint may record (wal_checkpoint): the bytes of WAL manifest.wal_number and the last
        # sequence known durable (a batch applied by a commit that then failed is not).
        self._wal_end = WAL_HEADER_SIZE
        self._durable_sequence = 0
        self.resolving: int | None = None  # the DAMAGE marker (body CRC) the next MANIFEST resolves (repair)
        self._joined: list | None = None  # the runs of the batches an open transaction() has applied

    # --- opening -----------------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str, writable: bool = True, wait: float = 0.0, holder: str = "memctl",
             flush_bytes: int = DEFAULT_FLUSH_BYTES, close_flush_bytes: int = CLOSE_FLUSH_BYTES,
             migrating: bool = False, must_exist: bool = False, repairing: bool = False) -> "Store":
        """A writer creates the store when there is none. A reader of a store never created sees it empty, or
        with must_exist gets NoStore. migrating=True also opens a store of a format from
        OLDEST_MIGRATABLE_FORMAT_VERSION on (its files are read by the version-tolerant readers); while it is
        `outdated`, only stage() and rebuild() change it. repairing=True (engine/repair/ only) loads the MANIFEST
        alone, whatever the DAMAGE marker says."""
        store = cls(path, writable, migrating, repairing)
        damage.process_command["name"] = holder
        store.flush_bytes = flush_bytes
        store.close_flush_bytes = close_flush_bytes
        if writable:
            store._open_writer(wait, holder)
        else:
            store._open_reader(must_exist)
        return store

    def _open_writer(self, wait: float, holder: str) -> None:
        fs.ensure_dir(self.path)
        self._writer_lock = WriterLock(self.path)
        self._writer_lock.acquire(wait, holder)
        try:
            name = manifest_module.read_current(self.path)
            if name is None:
                self._refuse_if_not_empty()
                self._create()
            elif self.repairing:
                self._load_manifest(name)
                self._number_files_above(self._live_wal_numbers())
            else:
                self._load(name)
                self._refuse_if_damaged()
                self._recover_wal()
            self._remove_obsolete_files()
        except BaseException as error:
            self.close()
            if not self.repairing:
                damage.record(self.path, [error])
            raise

    def _open_reader(self, must_exist: bool) -> None:
        if not os.path.isdir(self.path):
            if must_exist:
                raise NoStore(self.path)
            self.manifest = Manifest(number=0)
            return
        gc_lock = GcLock(self.path)
        gc_lock.acquire_shared()
        try:
            name = manifest_module.read_current(self.path)
            if name is None:
                self._refuse_if_not_empty()
                if must_exist:
                    raise NoStore(self.path)
                self.manifest = Manifest(number=0)
            elif self.repairing:
                self._load_manifest(name)
            else:
                self._load(name)
                self._read_live_wal(self._live_wal_numbers())
        except BaseException as error:
            if not self.repairing:
                damage.record(self.path, [error])
            raise
        finally:
            gc_lock.release()

    def _refuse_if_damaged(self) -> None:
        refusal = damage.refusal(self.path, self.manifest.resolved_damage)
        if refusal is not None:
            raise refusal

    @property
    def _wal_dir(self) -> str:
        return os.path.join(self.path, WAL_DIR)

    @property
    def _segment_dir(self) -> str:
        return os.path.join(self.path, SEGMENT_DIR)

    def _refuse_if_not_empty(self) -> None:
        # What a crash inside _create leaves (temp files, the initial MANIFEST, a WAL without records) is no
        # store yet: creating it again loses nothing. Anything more means CURRENT was lost.
        initial = manifest_module.encode(_initial_manifest())
        leftovers = [name for name in os.listdir(self.path) if name.startswith(MANIFEST_PREFIX)
                     and not name.endswith(TEMP_SUFFIX) and not _holds(os.path.join(self.path, name), initial)]
        leftovers += [os.path.join(WAL_DIR, name) for name in _list(self._wal_dir)
                      if _WAL_NAME.match(name) and os.path.getsize(os.path.join(self._wal_dir, name)) > WAL_HEADER_SIZE]
        if os.path.isdir(self._segment_dir) and os.listdir(self._segment_dir):
            leftovers.append(SEGMENT_DIR)
        if leftovers:
            raise CorruptionError(os.path.join(self.path, CURRENT_FILE), None,
                                  f"CURRENT is missing but the store holds {', '.join(sorted(leftovers))}")

    def _create(self) -> None:
        fs.ensure_dir(self._wal_dir)
        fs.ensure_dir(self._segment_dir)
        fs.failpoint("create.after_dirs")
        salt = _new_salt()
        self._wal_writer = wal.WalWriter.create(wal.wal_path(self._wal_dir, 1), 1, salt)
        self.manifest = _initial_manifest()
        manifest_module.publish(self.path, self.manifest)

    @property
    def outdated(self) -> bool:
        """The store is of a format older than this code writes (opened with migrating=True)."""
        return self.manifest.version < OLDEST_STORE_FORMAT_VERSION

    def _load(self, name: str) -> None:
        self._load_manifest(name)
        for entry in self.manifest.segments:
            segment = Segment.open(os.path.join(self._segment_dir, entry["name"]), expected_size=entry["size"])
            if segment.kind != entry["kind"]:
                raise CorruptionError(segment.path, 12, f"segment kind {segment.kind!r}, MANIFEST says {entry['kind']!r}")
            mismatch = kinds.ownership_problem(entry["kind"], entry["owner"])
            if mismatch:
                raise CorruptionError(segment.path, None, mismatch)
            if entry["kind"] == KIND_RECORDS:
                self.records.append(open_segment(segment, self.block_cache))
            else:
                self.kind_segments.setdefault(entry["owner"], []).append(segment)

    def _load_manifest(self, name: str) -> None:
        oldest = OLDEST_MIGRATABLE_FORMAT_VERSION if self.migrating else OLDEST_STORE_FORMAT_VERSION
        self.manifest = manifest_module.load(self.path, name, oldest)
        self.counters = dict(self.manifest.counters)
        self.sequence = self.manifest.last_sequence

    def _live_wal_numbers(self) -> list[int]:
        if not os.path.isdir(self._wal_dir):
            return []
        numbers = []
        for name in os.listdir(self._wal_dir):
            match = _WAL_NAME.match(name)
            if match and int(match.group(1)) >= self.manifest.wal_number:
                numbers.append(int(match.group(1)))
        return sorted(numbers)

    def _number_files_above(self, wal_numbers: list) -> None:
        if wal_numbers:
            # A crash between creating the next WAL and publishing the MANIFEST that names it leaves a WAL
            # numbered at or above next_file_number; handing that number out again would replace the live WAL
            # (LevelDB's MarkFileNumberUsed).
            self.manifest.next_file_number = max(self.manifest.next_file_number, wal_numbers[-1] + 1)

    def _recover_wal(self) -> None:
        numbers = self._live_wal_numbers()
        self._number_files_above(numbers)
        scans = self._read_live_wal(numbers)
        for scan in scans:
            if scan.status == "torn_tail" and scan.number >= 0:
                wal.truncate_torn_tail(scan)
        # An outdated store's WAL is never appended to (a migration publishes a MANIFEST of its own first), and a
        # WAL file of this format created here would make the store unreadable to the code that wrote it.
        if not self.outdated:
            self._continue_wal(numbers, scans[-1] if scans else None)
        fs.failpoint("recover.after_replay")

    def _read_live_wal(self, numbers: list) -> list:
        """Scan the live WAL files `numbers`, refuse damage (a corrupt record, or what breaks the MANIFEST's
        checkpoint: engine/wal_checkpoint.py) and replay them; returns their scans, in number order."""
        scans = {number: wal.scan(wal.wal_path(self._wal_dir, number)) for number in numbers}
        for scan in scans.values():
            scan.raise_if_corrupt()
        problems = wal_checkpoint.file_problems(self.manifest, self._wal_dir, scans)
        if problems:
            raise problems[0]
        for number in numbers:
            self._replay(scans[number])
        problem = wal_checkpoint.end_problem(self.manifest, self._wal_dir, self.sequence)
        if problem is not None:
            raise problem
        self._wal_end, self._durable_sequence = scans[self.manifest.wal_number].valid_end, self.sequence
        return [scans[number] for number in numbers]

    def _continue_wal(self, numbers: list, last_scan) -> None:
        if last_scan is None or last_scan.number < 0:
            # A WAL file above the MANIFEST's holding no complete header (wal_checkpoint refuses one at its
            # number): start the log afresh under that number.
            number = numbers[-1] if numbers else self.manifest.wal_number
            self._wal_writer = wal.WalWriter.create(wal.wal_path(self._wal_dir, number), number, _new_salt())
        else:
            self._wal_writer = wal.WalWriter(last_scan.path, last_scan.number, last_scan.salt, last_scan.valid_end)

    def _replay(self, scan) -> None:
        self.wal_scans.append(scan)
        for payload in scan.payloads:
            record = unpack(payload, scan.path)
            if not (isinstance(record, list) and len(record) == 2):
                raise CorruptionError(scan.path, None, "WAL batch is not [sequence, operations]")
            sequence, operations = record
            if sequence <= self.manifest.last_sequence:
                continue  # already folded into segments by a flush
            problem = wal_checkpoint.sequence_problem(scan.path, self.sequence, sequence)
            if problem is not None:
                raise problem
            self._apply(runs_of(operations), len(payload))
            self.sequence = sequence

    # --- writing -----------------------------------------------------------------------------------------

    def batch(self, owned: bool = False) -> Batch:
        """owned: see commit."""
        return Batch(self, owned)

    def _check_writable(self) -> None:
        self._check_open()
        if self.outdated:
            raise _Refused(f"the store is of format {self.manifest.version}: only `memctl migrate` writes it")
        if self._staged:
            raise _Refused("staged changes are published by rebuild() alone")

    def _check_open(self) -> None:
        if not self.writable:
            raise EngineError("store was opened read-only")
        if self._failure is not None:
            raise StoreClosed(f"store unusable after an I/O error ({self._failure}); reopen it to recover")
        if self._writer_lock is None:
            raise StoreClosed("store is closed")

    def commit(self, runs: list, owned: bool = False) -> int:
        """Append one batch (runs as Batch keeps them) durably, then apply it; the batch that fills the memtable
        is made durable by the flush it calls for instead (_commit_by_flush). Returns its sequence number.

        owned=True: the caller hands `runs` over and never touches them again, and its values hold only what
        msgpack gives back (dict with str keys, list, str, bytes, numbers, bool, None, no tuples), so they are
        applied as they are instead of as decoded from the WAL bytes (a bulk import's decode cost, for identical
        values). Other batches are decoded before anything is written: a value the reader would refuse (a map
        key that is not str, an ext type) is an InputError, and the store is left unchanged."""
        self._check_writable()
        sequence = self.sequence + 1
        _validate_runs(runs)
        runs, size, payload, packed_values = _packed(sequence, runs, owned)
        if self._joined is not None:
            self._apply(runs, size, packed_values)
            self._joined += runs
            return sequence
        return self._append(sequence, runs, size, payload, packed_values)

    @contextmanager
    def transaction(self):
        """Make every batch committed inside the block durable together, as ONE WAL record and one fsync when
        the block ends: each is applied at once (reads inside the block see it) and logged with the others.
        A crash before the end leaves no trace of any of them. An error inside the block, once a batch has
        been applied, leaves this handle's memtable holding what no log holds: the handle then refuses every
        further write (its close neither flushes nor checkpoints), and reopening shows the store as before."""
        self._check_writable()
        if self._joined is not None:
            raise EngineError("transactions do not nest")
        joined = self._joined = []
        try:
            yield self
            self._joined = None
            if joined:
                self._commit_joined(joined)
        except BaseException as error:
            if joined and self._failure is None:
                self._failure = error
            raise
        finally:
            self._joined = None

    def _commit_joined(self, runs: list) -> None:
        sequence = self.sequence + 1
        # The runs were applied as a reader decodes them: packed again, they give the bytes a reopen reads.
        payload = b"".join(_pack_runs(sequence, sum(len(run[2]) for run in runs), runs)[0])
        fs.failpoint("transaction.before_append")
        self._append(sequence, [], 0, payload, [])

    def _append(self, sequence: int, runs: list, size: int, payload: bytes, packed_values: list) -> int:
        """Log the batch `payload` and apply `runs`, or commit it by a flush when the memtable is full."""
        if self.memtable_bytes + size >= self.flush_bytes:
            return self._commit_by_flush(sequence, runs, size, packed_values)
        try:
            self._wal_writer.append(payload)
        except BaseException as error:
            # fsyncgate: after a failed write or fsync the page cache may have dropped data; never retry
            # on this handle. Any interruption between write and fsync (KeyboardInterrupt too) leaves the
            # batch's fate to recovery, so the sequence must not be reused: reopening replays the WAL up to
            # its last valid record.
            self._failure = error
            raise
        self.sequence = self._durable_sequence = sequence
        if self._wal_writer.number == self.manifest.wal_number:
            self._wal_end = self._wal_writer.size
        fs.failpoint("commit.after_append.before_apply")
        self._apply(runs, size, packed_values)
        return sequence

    def _commit_by_flush(self, sequence: int, runs: list, size: int, packed_values: list) -> int:
        """Commit the batch that fills the memtable with the flush it calls for, without appending it to the WAL
        first: the flush writes it to segments anyway, and its MANIFEST is published only once they are
        durable, so a crash before leaves no trace of the batch and one after finds all of it (MANIFEST.spec
        §7). The WAL would have written and synced its bytes once more, for nothing."""
        self.sequence = sequence
        self._apply(runs, size, packed_values)
        fs.failpoint("commit.by_flush.before_flush")
        try:
            self.flush()
        except BaseException as error:
            # The batch is in this handle's memtable and on no disk: only a reopen shows the durable store.
            self._failure = error
            raise
        return sequence

    def stage(self, runs: list, retired_counters=()) -> None:
        """Apply operations (runs, as Batch keeps them) and drop the counters `retired_counters` in this handle's
        memory only, logging nothing: they become durable with the next rebuild(), in the MANIFEST it publishes,
        and a crash before it leaves no trace of them. A migration stages its steps this way (a reader's handle
        too, for a dry run); commit, flush and compact refuse while changes are staged, since they would make
        part of them durable."""
        _validate_runs(runs)
        try:
            pieces, packed_values = _pack_runs(self.sequence, sum(len(run[2]) for run in runs), runs)
        except (TypeError, ValueError, OverflowError) as error:
            raise InputError(f"a record value cannot be stored: {error}") from None
        self._apply(runs, sum(map(len, pieces)), packed_values)
        for name in retired_counters:
            self.counters.pop(name, None)
        self._staged = True

    def fail(self, error: BaseException) -> None:
        """Refuse every further write: a sync failed somewhere (fsyncgate), and only a reopen, which recovers
        from the WAL, knows what is durable."""
        self._failure = error

    def _apply(self, runs: list, size: int, packed_values: list | None = None) -> None:
        """runs: the batch as Batch keeps it (or runs_of gives it from a WAL record); packed_values: the msgpack
        bytes of each operation's value (None for all but puts), kept for the flush (None when replaying: a
        replay runs before any commit of this handle, so no older bytes of the same key can be left over)."""
        start = 0
        # A run of operations of one kind on one table is one dict update (a bulk batch is a few long runs).
        for code, name, keys, values in runs:
            if code == OP_PUT:
                self.tables.setdefault(name, {}).update(zip(keys, values))
                if packed_values is not None:
                    self.packed_values.setdefault(name, {}).update(zip(keys, packed_values[start:start + len(keys)]))
            elif code == OP_DELETE:
                self.tables.setdefault(name, {}).update(dict.fromkeys(keys, TOMBSTONE))
                packed = self.packed_values.get(name)
                if packed:  # bytes of a put the delete undoes: write_records takes only live values' bytes
                    for key in keys:
                        packed.pop(key, None)
            elif code == OP_COUNTER:
                self.counters[name] = keys[-1]
            else:
                raise CorruptionError(self.path, None, f"unknown WAL operation code {code!r}")
            start += len(keys)
        self.memtable_bytes += size
        self.generation += 1

    # --- reading -----------------------------------------------------------------------------------------

    def counter(self, name: str) -> int:
        return self.counters.get(name, 0)

    def get(self, table: str, key: str):
        """The record's value, or None when absent or deleted. Do not mutate the returned value."""
        rows = self.tables.get(table)
        if rows is not None:
            value = rows.get(key, _MISSING)
            if value is not _MISSING:
                return None if value is TOMBSTONE else value
        if not self.records:
            return None
        composite = composite_key(table, key)
        hashed = key_hash(composite)
        for segment in reversed(self.records):
            found, value = segment.get(composite, hashed)
            if found:
                return None if value is TOMBSTONE else value
        return None

    def get_many(self, table: str, keys: list) -> list:
        """get() of every key, in order: the memtable answers for all of them in one C-level pass, and the
        segments holding the table are searched, newest first, for the keys it does not hold."""
        rows = self.tables.get(table, {})
        segments = [segment for segment in reversed(self.records) if table in segment.tables]
        values = list(map(rows.get, keys, itertools.repeat(_MISSING if segments else None)))
        if segments and _MISSING in values:
            self._get_from_segments(table, keys, values, segments)
        if TOMBSTONE in values:
            return [None if value is TOMBSTONE else value for value in values]
        return values

    @staticmethod
    def _get_from_segments(table: str, keys: list, values: list, segments: list) -> None:
        """Fill the _MISSING entries of `values` from `segments` (newest first), None where none holds the key."""
        missing = [index for index, value in enumerate(values) if value is _MISSING]
        composites = [composite_key(table, keys[index]) for index in missing]
        hashed = key_hashes(composites)
        for segment in segments:
            found = segment.get_many(composites, hashed)
            if found:
                for position, value in found.items():
                    values[missing[position]] = value
                kept = [position for position in range(len(missing)) if position not in found]
                missing = [missing[position] for position in kept]
                composites = [composites[position] for position in kept]
                hashed = hashed[kept]
            if not missing:
                return
        for index in missing:
            values[index] = None

    def scan(self, table: str, prefix: str = ""):
        """(key, value) of live records of `table` whose key starts with `prefix`, in key order."""
        sources = []
        rows = self.tables.get(table)
        if rows:
            sources.append(_ranked(sorted((key, value) for key, value in rows.items() if key.startswith(prefix)), 0))
        for rank, segment in enumerate(reversed(self.records), start=1):
            sources.append(_ranked(segment.iterate(table, prefix), rank))
        for key, value in newest_versions(sources):
            if value is not TOMBSTONE:
                yield key, value

    def memtable(self, table: str) -> dict:
        """The unflushed records of `table` (values or TOMBSTONE); for derived kinds."""
        return self.tables.get(table, {})

    def kind(self, owner: str):
        """The query object of a derived kind instance ("text", "text:nodes"…) at this store's current state
        (cached until the next change)."""
        cached = self._kind_views.get(owner)
        if cached is not None and cached[0] == self.generation:
            return cached[1]
        view = kinds.open_kind(self, owner).open(self.kind_segments.get(owner, []))
        self._kind_views[owner] = (self.generation, view)
        return view

    # --- flush and compaction ------------------------------------------------------------------------

    def _new_file_number(self) -> int:
        number = self.manifest.next_file_number
        self.manifest.next_file_number += 1
        return number

    def new_segment(self, kind: str) -> SegmentWriter:
        """A writer of a segment numbered like the store's own, which no MANIFEST names until one publishes it
        (engine/repair/ writes the records it salvaged so, then rebuilds from them)."""
        return self._segment_writer(kind)

    def _segment_writer(self, kind: str, compression: int | None = None) -> SegmentWriter:
        name = f"{self._new_file_number():0{NUMBER_DIGITS}d}.{kind}.seg"
        return SegmentWriter(os.path.join(self._segment_dir, name), kind, compression)

    def _write_derived(self, owner: str, produce, compression: int) -> list:
        """Run `produce(new_segment)` for a derived kind instance; return MANIFEST entries of what it wrote
        (a segment's kind is "<kind>.<label>" whatever the instance: its entry's owner names the instance), its
        columns compressed at level `compression` where that pays."""
        written: list = []

        def new_segment(label: str) -> SegmentWriter:
            writer = self._segment_writer(f"{kinds.kind_of(owner)}.{label}", compression)
            written.append(writer)
            return writer

        produce(new_segment)
        entries = []
        for writer in written:
            entry = writer.finish()
            entry["owner"] = owner
            entries.append(entry)
        return entries

    @_refuse_writes_after_failure
    def flush(self) -> None:
        """Fold the memtable into new segments and start a new WAL."""
        self._check_writable()
        if not self.tables and self.counters == self.manifest.counters:
            return
        fs.failpoint("flush.start")
        new_entries = []
        # A kind may build its segments on a thread while the records segment is written (start_flush); the
        # segments are still written, and published, in the same order.
        producers = {}
        for owner, changes in self._changes_by_owner().items():
            kind_object = kinds.open_kind(self, owner)
            producers[owner] = kind_object.start_flush(changes) if hasattr(kind_object, "start_flush") else \
                functools.partial(kind_object.flush, changes)
        if self.tables:
            writer = self._segment_writer(KIND_RECORDS)
            write_records(writer, self.tables, self.packed_values)
            entry = writer.finish()
            entry["owner"] = KIND_RECORDS
            new_entries.append(entry)
        for owner, produce in producers.items():
            new_entries += self._write_derived(owner, produce, SEGMENT_FLUSH_LEVEL)
        fs.failpoint("flush.after_segments")
        self._publish(self.manifest.segments + new_entries, rotate_wal=True)
        self.tables = {}
        self.packed_values = {}
        self.memtable_bytes = 0

    def _changes_by_owner(self) -> dict:
        changes: dict = {}
        for table, rows in self.tables.items():
            owner = kinds.owner_of(table)
            if kinds.is_registered(owner):
                changes.setdefault(owner, {})[table] = rows
        return changes

    @_refuse_writes_after_failure
    def compact(self) -> None:
        """Merge every segment of each kind instance into one, dropping deleted and superseded records."""
        self.flush()
        if not self.manifest.segments:
            return
        fs.failpoint("compact.start")
        entries = []
        writer = self._segment_writer(KIND_RECORDS)
        if merge_records(writer, self.records):
            entry = writer.finish()
            entry["owner"] = KIND_RECORDS
            entries.append(entry)
        else:
            writer.abort()
        for owner, segments in self.kind_segments.items():
            kind_object = kinds.open_kind(self, owner)
            entries += self._write_derived(owner, lambda factory: kind_object.compact(segments, factory),
                                           SEGMENT_COMPACTION_LEVEL)
        fs.failpoint("compact.after_segments")
        self._publish(entries, rotate_wal=False)

    @_refuse_writes_after_failure
    def merge_tiers(self, fanout: int, derived_max_bytes: int | None = None) -> int:
        """Merge the newest records segments into one while `fanout` of them share a size tier
        (engine.records.tiers), then the same for the segments of each derived kind instance, so that a long
        run of flushes keeps a bounded number of them; returns the number of merges. `derived_max_bytes` caps
        the input of a derived merge (engine.records.tiers: what such a merge holds grows with it). Each is
        published like a compaction (MANIFEST.spec §7): a crash before its MANIFEST leaves the segments it
        merged, one after leaves the merged one. The memtable is not touched, and the segments hold the same batches as before:
        the MANIFEST's sequences stay."""
        self._check_writable()
        merges = 0
        while count := newest_to_merge([entry["size"] for entry in self._owner_entries(KIND_RECORDS)], fanout):
            self._merge_newest_records(count)
            merges += 1
        for owner in list(self.kind_segments):
            while count := newest_to_merge([entry["size"] for entry in self._owner_entries(owner)], fanout,
                                           derived_max_bytes):
                self._merge_newest_derived(owner, count)
                merges += 1
        return merges

    def release_mapped_pages(self) -> None:
        """Drop this process's pages of every open segment file (Segment.release). A long writer's point reads
        land all over its older segments (r2g's chain maintenance reads every claim of a chain it touches), and
        each page read once stays in its resident memory until the segment is closed: 0.4 GB of a 32 MiB r2g."""
        for reader in self.records:
            reader.segment.release()
        for segments in self.kind_segments.values():
            for segment in segments:
                segment.release()

    def _owner_entries(self, owner: str) -> list:
        """The MANIFEST entries of the segments of `owner`, in the same order (oldest first)."""
        return [entry for entry in self.manifest.segments if entry["owner"] == owner]

    def _merge_newest_records(self, count: int) -> None:
        fs.failpoint("merge.start")
        writer = self._segment_writer(KIND_RECORDS)
        # With no older segment left, nothing is hidden below the merged ones: tombstones go, as in compact.
        if merge_records(writer, self.records[-count:], newest_only=count < len(self.records)):
            entry = writer.finish()
            entry["owner"] = KIND_RECORDS
            new_entries = [entry]
        else:
            writer.abort()
            new_entries = []
        fs.failpoint("merge.after_segment")
        self._publish_merge(KIND_RECORDS, count, new_entries)

    def _merge_newest_derived(self, owner: str, count: int) -> None:
        """Merge the newest `count` segments of a derived kind instance: the kind's partial merge keeps what they
        retire of its older segments; with no older one left, a merge of them all is its compaction."""
        fs.failpoint("merge.derived.start")
        segments = self.kind_segments[owner]
        kind_object = kinds.open_kind(self, owner)
        merge = kind_object.compact if count == len(segments) else kind_object.merge_newest
        new_entries = self._write_derived(owner, lambda factory: merge(segments[-count:], factory),
                                          SEGMENT_FLUSH_LEVEL)
        fs.failpoint("merge.derived.after_segments")
        self._publish_merge(owner, count, new_entries)

    def _publish_merge(self, owner: str, count: int, new_entries: list) -> None:
        """Publish a MANIFEST naming the segments but the newest `count` of `owner`, then `new_entries`."""
        merged = {entry["name"] for entry in self._owner_entries(owner)[-count:]}
        entries = [entry for entry in self.manifest.segments if entry["name"] not in merged]
        self._publish(entries + new_entries, rotate_wal=False,
                      sequences=(self.manifest.last_sequence, self._durable_sequence))

    def _publish(self, segment_entries: list, rotate_wal: bool, sequences: tuple | None = None) -> None:
        """Make a new MANIFEST current, then reopen its segments and delete what it no longer names. It records
        the live WAL's checkpoint (engine/wal_checkpoint.py). sequences: (the last batch the segments hold, the
        last one durable), by default every batch this handle committed for both."""
        last_sequence, durable_sequence = sequences or (self.sequence, self.sequence)
        manifest = Manifest(
            number=0,
            segments=segment_entries,
            counters=dict(self.counters),
            wal_number=self.manifest.wal_number,
            last_sequence=last_sequence,
            next_file_number=self.manifest.next_file_number,
            wal_size=self._wal_end,
            wal_sequence=durable_sequence,
            resolved_damage=self.manifest.resolved_damage if self.resolving is None else self.resolving,
        )
        new_wal = None
        if rotate_wal:
            number = manifest.next_file_number
            manifest.next_file_number += 1
            new_wal = wal.WalWriter.create(wal.wal_path(self._wal_dir, number), number, _new_salt())
            manifest.wal_number = number
            manifest.wal_size = WAL_HEADER_SIZE
            fs.failpoint("flush.after_new_wal")
        manifest.number = manifest.next_file_number
        manifest.next_file_number += 1
        try:
            manifest_module.publish(self.path, manifest)
        except BaseException:
            if new_wal is not None:
                new_wal.close()
            raise
        fs.failpoint("compact.after_manifest.before_unlink")
        if new_wal is not None:
            if self._wal_writer is not None:  # an outdated or repairing store's handle has none
                self._wal_writer.close()
            self._wal_writer = new_wal
        self.manifest = manifest
        self._wal_end, self._durable_sequence = manifest.wal_size, manifest.wal_sequence
        # A segment this handle has open stays open (files are immutable): a checkpoint's MANIFEST, which names
        # the same segments, then costs nothing per segment.
        opened = {os.path.basename(records.path): records for records in self.records}
        opened.update((os.path.basename(segment.path), segment) for segments in self.kind_segments.values()
                      for segment in segments)
        self.records = []
        self.kind_segments = {}
        for entry in manifest.segments:
            segment = opened.get(entry["name"]) or \
                Segment.open(os.path.join(self._segment_dir, entry["name"]), expected_size=entry["size"])
            if entry["kind"] == KIND_RECORDS:
                self.records.append(segment if not isinstance(segment, Segment) else
                                    open_segment(segment, self.block_cache))
            else:
                self.kind_segments.setdefault(entry["owner"], []).append(segment)
        self.generation += 1
        self._remove_obsolete_files()

    @_refuse_writes_after_failure
    def rebuild(self, new_wal_at_commit: bool = False) -> None:
        """Replace every segment with one records segment of the live records (unflushed and staged ones
        included) and, for each derived kind instance they hold records of, segments built from those records
        alone, then start a new WAL. No derived segment is read: damaged ones, or ones of an older format,
        leave no trace. The MANIFEST is of this format version, so an outdated store is current afterwards.

        Published like a compaction (MANIFEST.spec §7): a crash before the MANIFEST naming the new segments is
        current leaves the store as it was (the WAL is not touched before); after it, every batch is in those
        segments, and the old WAL, which only repeats them, is replaced by a new one in a second MANIFEST.
        new_wal_at_commit: the new WAL is named by the first MANIFEST already, so that the old one, which a
        repair leaves damaged or missing, is never live again (it is created before the commit point, where
        the old MANIFEST's readers would replay it: a store of this format only)."""
        self._check_open()
        fs.failpoint("rebuild.start")
        entries = []
        writer = self._segment_writer(KIND_RECORDS)
        if merge_records(writer, self.records, self.tables, self.packed_values):
            entry = writer.finish()
            entry["owner"] = KIND_RECORDS
            entries.append(entry)
        else:
            writer.abort()
        for owner, rows in self._rows_by_owner().items():
            entries += self._write_derived(owner, functools.partial(kinds.open_kind(self, owner).rebuild, rows),
                                           SEGMENT_COMPACTION_LEVEL)
        fs.failpoint("rebuild.after_segments")
        self._publish(entries, rotate_wal=new_wal_at_commit)
        self.tables = {}
        self.packed_values = {}
        self.memtable_bytes = 0
        self._staged = False
        if not new_wal_at_commit:
            self._publish(self.manifest.segments, rotate_wal=True)

    def _checkpoint(self) -> None:
        """Publish a MANIFEST of the same segments recording what the live WAL holds now (wal_checkpoint): a
        later cut below it is damage, not a torn tail. Its batches stay in the WAL (last_sequence unchanged).
        The batches are durable whatever happens here, so a failure to publish is not the command's."""
        fs.failpoint("checkpoint.start")
        try:
            self._publish(self.manifest.segments, rotate_wal=False,
                          sequences=(self.manifest.last_sequence, self._durable_sequence))
        except OSError:
            pass

    def _rows_by_owner(self) -> dict:
        """{owner: {table: {key: value}}}: the live records of every derived kind instance's tables."""
        tables = set(self.tables).union(*(segment.tables for segment in self.records))
        found: dict = {}
        for table in sorted(tables):
            owner = kinds.owner_of(table)
            if kinds.is_registered(owner):
                rows = dict(self.scan(table))
                if rows:
                    found.setdefault(owner, {})[table] = rows
        return found

    def _remove_obsolete_files(self) -> None:
        """Delete files no MANIFEST names (old WALs, replaced segments, temp files, old MANIFESTs).
        Skipped while a reader is opening the store; the next writer does it then. The directories are not
        fsynced: a deletion that a power loss undoes brings back a file that nothing reads (the MANIFEST does
        not name it, its WAL number is below wal_number), and the next writer deletes it again."""
        gc_lock = GcLock(self.path)
        if not gc_lock.try_acquire(exclusive=True):
            return
        try:
            live_segments = {entry["name"] for entry in self.manifest.segments}
            for name in _list(self._segment_dir):
                if name not in live_segments:
                    fs.failpoint("gc.before_unlink")
                    fs.remove(os.path.join(self._segment_dir, name))
            for name in _list(self._wal_dir):
                match = _WAL_NAME.match(name)
                if name.endswith(TEMP_SUFFIX) or (match and int(match.group(1)) < self.manifest.wal_number):
                    fs.remove(os.path.join(self._wal_dir, name))
            current = self.manifest.file_name()
            for name in _list(self.path):
                if (name.startswith(MANIFEST_PREFIX) and name != current) or name.endswith(TEMP_SUFFIX):
                    fs.remove(os.path.join(self.path, name))
        finally:
            gc_lock.release()

    def obsolete_files(self) -> list[str]:
        """Files on disk that the live MANIFEST does not name (for `check` and `stats`)."""
        live = {entry["name"] for entry in self.manifest.segments}
        found = [os.path.join(SEGMENT_DIR, name) for name in _list(self._segment_dir) if name not in live]
        for name in _list(self._wal_dir):
            match = _WAL_NAME.match(name)
            if not match or int(match.group(1)) < self.manifest.wal_number:
                found.append(os.path.join(WAL_DIR, name))
        current = self.manifest.file_name()
        found += [name for name in _list(self.path)
                  if (name.startswith(MANIFEST_PREFIX) and name != current) or name.endswith(TEMP_SUFFIX)]
        return found

    def close(self) -> None:
        """A writer leaving more than `close_flush_bytes` unflushed flushes first: every later process opening
        the store would otherwise replay that WAL tail (memctl runs one process per command). One leaving less
        that the MANIFEST's WAL checkpoint does not cover publishes a checkpoint instead."""
        if self._wal_writer is not None and self._failure is None and not self._staged and not self.outdated:
            if self.tables and self.memtable_bytes > self.close_flush_bytes:
                self.flush()
            elif self._wal_end > self.manifest.wal_size or self._durable_sequence > self.manifest.wal_sequence:
                self._checkpoint()
        if self._wal_writer is not None:
            self._wal_writer.close()
            self._wal_writer = None
        if self._writer_lock is not None:
            self._writer_lock.release()
            self._writer_lock = None

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_MISSING = object()
_CODE_AND_NAME, _KEY, _VALUE = operator.itemgetter(0, 1), operator.itemgetter(2), operator.itemgetter(3)


def _new_salt() -> int:
    """A new WAL's salt: 32 random bits (os.urandom: the random module costs every process its import)."""
    return int.from_bytes(os.urandom(4), "little")


def _initial_manifest() -> Manifest:
    return Manifest(number=2, wal_number=1, next_file_number=3)


def _holds(path: str, content: bytes) -> bool:
    with open(path, "rb") as handle:
        return handle.read(len(content) + 1) == content


def _ranked(items, rank: int):
    for key, value in items:
        yield key, rank, value


def _list(directory: str) -> list[str]:
    try:
        return sorted(os.listdir(directory))
    except FileNotFoundError:
        return []


def runs_of(operations: list) -> list:
    """The runs (as Batch keeps them) of a WAL record's operations."""
    runs = []
    for (code, name), run in itertools.groupby(operations, key=_CODE_AND_NAME):
        run = list(run)
        runs.append([code, name, list(map(_KEY, run)), list(map(_VALUE, run)) if code == OP_PUT else None])
    return runs


def _read_back(payload: bytes):
    """The batch `payload` as a reader will decode it; InputError when the reader would refuse it."""
    try:
        return unpack(payload)
    except CorruptionError as error:
        raise InputError(f"a record value cannot be stored: {error.reason}") from None


def _packed(sequence: int, runs: list, owned: bool) -> tuple:
    """(runs to apply, their size in the WAL, the WAL payload, the msgpack bytes of each value) of a batch;
    InputError when a value cannot be stored. runs: see Store.commit's owned."""
    try:
        pieces, packed_values = _pack_runs(sequence, sum(len(run[2]) for run in runs), runs)
    except (TypeError, ValueError, OverflowError) as error:
        raise InputError(f"a record value cannot be stored: {error}") from None
    payload = b"".join(pieces)
    if not owned:
        # Apply what a reopen will read back (lists, not tuples; no aliasing of the caller's objects).
        runs = runs_of(_read_back(payload)[1])
    return runs, len(payload), payload, packed_values


def _pack_runs(sequence: int, count: int, runs: list) -> tuple[list, list]:
    """The pieces whose join is the bytes of `pack([sequence, operations])` (`count` operations, as
    Batch.operations gives them), built run by run to keep the msgpack bytes of each put's value (None for other
    operations): a flush writes those instead of packing every value again."""
    packer = msgpack.Packer(use_bin_type=True)  # codec.pack's options: the same bytes
    pack = packer.pack
    pieces = [packer.pack_array_header(2), pack(sequence), packer.pack_array_header(count)]
    all_values: list = []
    # A run is packed column by column, each column by one C-level map, between repeated operation headers.
    for code, name, keys, values in runs:
        columns = [list(map(pack, column)) for column in ([keys] if values is None else [keys, values])]
        step = 1 + len(columns)
        interleaved = [packer.pack_array_header(2 + len(columns)) + pack(code) + pack(name)] * (step * len(keys))
        for offset, column in enumerate(columns, start=1):
            interleaved[offset::step] = column
        pieces += interleaved
        all_values += columns[1] if values is not None else [None] * len(keys)
    return pieces, all_values


def _validate_runs(runs: list) -> None:
    """InputError unless every record operation names a table (str without NUL) and a key (str; a key may
    hold NUL: the table's NUL ends the table in a composite key), and a table whose owner part names an
    instance ("<kind>:<instance>.<name>") names a valid instance of a kind that has them: such a table would
    otherwise be a plain table that no index ever sees."""
    for code, table, keys, _values in runs:
        if code not in (OP_PUT, OP_DELETE):
            continue
        if not (type(table) is str and table and "\0" not in table and set(map(type, keys)) <= {str}):
            _raise_for_bad_operation(table, keys)  # all well is checked at C speed; this names what is not
        if type(table) is str and INSTANCE_SEPARATOR in table:
            owner = kinds.owner_of(table)
            problem = kinds.owner_problem(owner) if INSTANCE_SEPARATOR in owner else None
            if problem is not None:
                raise InputError(f"record table {table!r} belongs to no derived kind instance: {problem}")


def _raise_for_bad_operation(table, keys: list) -> None:
    for key in keys:
        if not isinstance(table, str) or not isinstance(key, str) or "\0" in table or not table:
            raise InputError(f"record table and key must be strings without NUL (got {table!r}, {key!r})")
