"""RawWriter: the raw chunk changes of one store batch, and how their blobs become durable before it commits.

Publishing (DESIGN invariant 2, durable before named): a batch writes each new blob under its final name without
an fsync (see BlobFileWriter), makes the whole filesystem durable with ONE syncfs, and only then lets its WAL
record (which names them) commit. A batch of at most FEW_BLOBS blobs given ahead (an agent's exchange) fsyncs
each file and the directories naming them instead: the syncfs would cost whatever the whole filesystem holds
unwritten, other programs' files included. A bulk writer gives its chunks ahead (RawWriter.write_ahead): their files are
written first and the syncfs runs on a thread while the records are encoded, still before the commit. A crash
before that syncfs ends can leave blobs whose data never reached the disk;
that is safe because no committed record names them: a later put of the same content trusts the record, not the
file, and writes the blob again, and `gc()` deletes such orphans.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

import zstandard

from engine import fs
from engine.background import Background
from engine.blob_files import BlobFileWriter, compress_all
from engine.errors import EngineError, InputError
from engine.format import (
    RAW_CHUNK_TABLE,
    RAW_DIR,
    RAW_MIME_TEXT,
    RAW_SEQUENCE_COUNTER,
    RAW_TURNS_TABLE,
    RAW_ZSTD_LEVEL,
)
from engine.raw.paths import blob_path, raw_id_for, record_blob_path
from engine.raw.turn_columns import TurnColumns, encode_turns

FEW_BLOBS = 2


@dataclass(slots=True)
class PutResult:
    raw_id: str
    new: bool
    stored_bytes: int  # compressed blob bytes this put wrote (turn rows: RawWriter.deferred_stored_bytes)



class RawWriter:
    """Raw chunk changes inside one store batch (see RawStore.batch). Reads see this batch's own changes."""

    def __init__(self, raw):
        self.raw = raw
        self.batch = None
        self._compressor = zstandard.ZstdCompressor(level=RAW_ZSTD_LEVEL)
        self._pending: dict[str, dict | None] = {}  # raw_id → chunk record written in this batch (None: deleted)
        self._new_turns: dict[str, dict] = {}  # raw_id → raw.turns record to write at publish (seq added then)
        self._deleted_turns: set[str] = set()
        self._staged: set[str] = set()  # blob paths this batch writes
        self._synced: set[str] = set()  # those a finished or running sync_filesystem covers
        self._ahead: dict[str, bytes] = {}  # blob path → bytes, of the blobs compressed ahead, until written
        self._frames: Background | None = None  # their compression
        self._deferred: dict[str, str] = {}  # blob path → raw_id, of puts whose blob waits for its frame
        # Bytes no PutResult counts: blob files written after their puts, and the compressed turn rows.
        self.deferred_stored_bytes = 0
        self._written_ahead: dict[str, int] = {}  # blob path → bytes, of files written before their puts
        self._digests: dict = {}  # id(data) → (data, its sha256) for the blobs given to write_ahead
        self._sync: Background | None = None  # the sync_filesystem started once the files were written
        self._one_by_one = False  # the files written ahead are synced each (few of them)
        self._created: int | None = None  # created_at of the batch's new chunks: one reading of the clock
        self.blobs = BlobFileWriter(os.path.join(raw.store.path, RAW_DIR))
        self._released: dict[str, dict] = {}  # raw_id → chunk record whose blob to delete after commit

    def get(self, raw_id: str) -> dict | None:
        if raw_id in self._pending:
            return self._pending[raw_id]
        return self.raw.get(raw_id)

    def put(self, data: bytes, meta: dict, refs: int = 1, mime: str = RAW_MIME_TEXT) -> PutResult:
        """Store `data` unless already stored, adding `refs` references either way."""
        return self._put(data, self._digest(data), meta, refs, mime)

    def put_turns(self, data: bytes, meta: dict, conv_id: str, turns: list[dict] | TurnColumns,
                  mime: str = RAW_MIME_TEXT) -> PutResult:
        """Store a chunk and the turns it holds, one reference per turn. Turns: TurnColumns, or dicts {speaker,
        ts (ISO 8601 or None), source_id, offset, length, extra}. `meta` need not repeat what the turns say
        (describe derives conv_id, role, ts and source_id from them). A chunk whose turns are already recorded
        (by an earlier batch or earlier in this one) adds nothing: new is False (its blob is rewritten if the
        file is gone)."""
        columns = turns if isinstance(turns, TurnColumns) else TurnColumns.from_dicts(turns)
        if not columns.offsets:
            raise EngineError("a chunk stored with turns needs at least one turn")
        digest = self._digest(data)
        raw_id = raw_id_for(digest.hexdigest())
        if self._turns_record(raw_id) is not None:
            return PutResult(raw_id, False, self._put(data, digest, meta, 0, mime).stored_bytes)
        record = encode_turns(conv_id, columns, len(data))
        stored = self._put(data, digest, meta, len(columns.offsets), mime).stored_bytes
        self._new_turns[raw_id] = record
        self._deleted_turns.discard(raw_id)
        return PutResult(raw_id, True, stored)

    def _put(self, data: bytes, digest, meta: dict, refs: int, mime: str) -> PutResult:
        if len(data) > self.raw.limit:
            raise InputError(f"a raw chunk of {len(data):,} bytes exceeds the {self.raw.limit:,}-byte blob limit")
        sha, sha_hex = digest.digest(), digest.hexdigest()
        raw_id = raw_id_for(sha_hex)
        record = self.get(raw_id)
        if record is not None:
            if record["sha256"] != sha:
                raise EngineError(f"{raw_id} already names other content (a 64-bit id prefix collision)")
            self.acquire(raw_id, refs)
            return PutResult(raw_id, False, self._restore_missing_blob(record, data))
        created = self._created_at()
        relative = blob_path(sha_hex, created)
        released = self._released.pop(raw_id, None)
        if released is not None and record_blob_path(released) == relative:
            # Released and stored again in this batch, on the same day: the committed blob file stays as it is
            # (written again only if it was lost).
            written = self._restore_missing_blob(released, data)
            stored = written or released["stored_bytes"]
        else:
            if released is not None:
                self._released[raw_id] = released  # another day's path: that file still goes after commit
            stored = written = self._stage(relative, data, raw_id=raw_id)
        record = {"len_bytes": len(data), "sha256": sha, "created_at": created, "refcount": refs,
                  "stored_bytes": stored, "meta": meta}
        if mime != RAW_MIME_TEXT:
            record["mime"] = mime
        self._write(raw_id, record)
        if self._frames is not None and self._frames.done():
            self._write_ahead_files()
        return PutResult(raw_id, True, written)

    def acquire(self, raw_id: str, count: int = 1) -> None:
        record = self._existing(raw_id)
        if count:
            self._write(raw_id, {**record, "refcount": record["refcount"] + count})

    def release(self, raw_id: str, count: int = 1) -> bool:
        """Drop references; True when that was the last, so the chunk, its turns and its blob go at commit."""
        record = self._existing(raw_id)
        remaining = record["refcount"] - count
        if remaining > 0:
            self._write(raw_id, {**record, "refcount": remaining})
            return False
        self._pending[raw_id] = None
        self.batch.delete(RAW_CHUNK_TABLE, raw_id)
        if self._new_turns.pop(raw_id, None) is not None or self.raw.store.get(RAW_TURNS_TABLE, raw_id) is not None:
            self.batch.delete(RAW_TURNS_TABLE, raw_id)
            self._deleted_turns.add(raw_id)
        self._released[raw_id] = record
        return True

    def _turns_record(self, raw_id: str) -> dict | None:
        if raw_id in self._new_turns:
            return self._new_turns[raw_id]
        if raw_id in self._deleted_turns:
            return None
        return self.raw.store.get(RAW_TURNS_TABLE, raw_id)

    def _existing(self, raw_id: str) -> dict:
        record = self.get(raw_id)
        if record is None:
            raise InputError(f"no raw chunk {raw_id}")
        return record

    def _write(self, raw_id: str, record: dict) -> None:
        self._pending[raw_id] = record
        self.batch.put(RAW_CHUNK_TABLE, raw_id, record)

    def _restore_missing_blob(self, record: dict, data: bytes) -> int:
        """Re-ingesting a chunk whose blob was lost writes it again at its recorded path, by temp file and
        rename: that path is named by a committed record, so it never holds a partial file."""
        relative = record_blob_path(record)
        if os.path.exists(os.path.join(self.raw.store.path, relative)):
            return 0
        return self._stage(relative, data, replace=True)

    def write_ahead(self, datas: list[bytes]) -> None:
        """Compress on another thread the blobs of the coming puts of these very objects (those not stored yet),
        and write their files as soon as that is done (the first put to find it done writes them all), then
        start the batch's sync_filesystem on a thread: the puts after that encode their records while the disk
        syncs, and publish waits for that sync instead of making one. A put before that leaves its record's
        stored_bytes to be filled in when its file is written (deferred_stored_bytes counts those bytes). The
        sha256 of each is taken here once, for its put to use."""
        if self._frames is not None:  # given ahead before: those files first
            self._write_ahead_files()
        digests = list(map(hashlib.sha256, datas))
        self._digests = {id(data): (data, digest) for data, digest in zip(datas, digests)}
        for data, digest in zip(datas, digests):
            sha_hex = digest.hexdigest()
            raw_id = raw_id_for(sha_hex)
            if len(data) <= self.raw.limit and raw_id not in self._released and self.get(raw_id) is None:
                final = os.path.join(self.raw.store.path, blob_path(sha_hex, self._created_at()))
                if final not in self._staged:
                    self._ahead.setdefault(final, data)
        # A few blobs (an agent's exchange) are made durable file by file: see BlobFileWriter.sync_entries.
        self._one_by_one = len(self._ahead) <= FEW_BLOBS
        if self._ahead:
            self._frames = Background(compress_all, list(self._ahead.values()), name="memctl-compress",
                                      responsive=True)
            for final in self._ahead:  # while zstd works: the puts left to overlap the sync are then more
                self.blobs.ensure_directory(os.path.dirname(final))

    def _write_ahead_files(self) -> None:
        """Write the files of the blobs compressed ahead, fill in the sizes of the records that wait for them,
        and start the sync that covers every file written so far."""
        frames, self._frames = self._frames.result(), None
        ahead, self._ahead = self._ahead, {}
        for final, frame in zip(ahead, frames):
            self._staged.add(final)
            self.blobs.write(final, frame, synced=self._one_by_one)
            raw_id = self._deferred.pop(final, None)
            if raw_id is None:
                self._written_ahead[final] = len(frame)
                continue
            self.deferred_stored_bytes += len(frame)
            record = self._pending.get(raw_id)
            if record is not None:  # the chunk's last record in this batch (the one a reader will see)
                record["stored_bytes"] = len(frame)
        fs.failpoint("raw.before_sync")
        self._synced = set(self._staged)
        if self._one_by_one:
            self._end_sync(lambda: self.blobs.sync_entries(ahead))
        else:
            self._sync = Background(fs.sync_filesystem, self.raw.store.path, name="memctl-sync", responsive=True)

    def _created_at(self) -> int:
        if self._created is None:
            self._created = int(self.raw._clock().timestamp())
        return self._created

    def _digest(self, data: bytes):
        known = self._digests.get(id(data))
        return known[1] if known is not None and known[0] is data else hashlib.sha256(data)

    def _stage(self, relative: str, data: bytes, replace: bool = False, raw_id: str | None = None) -> int:
        """Write a blob file, unless this batch has or will (write_ahead's: counted by the put that names it if
        it is written already, else by deferred_stored_bytes); returns the bytes written now."""
        final = os.path.join(self.raw.store.path, relative)
        if final in self._ahead:  # its file comes with the frames
            if raw_id is not None:
                self._deferred[final] = raw_id
            return 0
        if final in self._staged:
            return self._written_ahead.pop(final, 0)
        self._staged.add(final)
        compressed = self._compressor.compress(data)
        self.blobs.write(final, compressed, replace)
        return len(compressed)

    def publish(self) -> None:
        """Make the batch's blob files durable (the sync write_ahead started, and one sync_filesystem more for
        blobs written since), then add the new turn records numbered in storing order; the caller commits the
        batch after this returns. A file written ahead that no put named is removed (gc's, if that fails)."""
        if self._frames is not None:  # compression outlasted the puts
            self._write_ahead_files()
        for path in self._written_ahead:
            try:
                fs.remove(path)
            except OSError:
                pass
        self._written_ahead = {}
        self._compress_turn_rows()  # while the disk syncs
        if self._sync is not None:
            sync, self._sync = self._sync, None
            self._end_sync(sync.result)
        if not self._staged <= self._synced:
            fs.failpoint("raw.before_sync")
            self._synced = set(self._staged)
            self._end_sync(lambda: fs.sync_filesystem(self.raw.store.path))
        if self._new_turns:
            first = self.batch.allocate(RAW_SEQUENCE_COUNTER, len(self._new_turns))
            for seq, (raw_id, record) in enumerate(self._new_turns.items(), start=first):
                self.batch.put(RAW_TURNS_TABLE, raw_id, {"conv_id": record["conv_id"], "seq": seq, **record})
            self._new_turns = {}

    def _compress_turn_rows(self) -> None:
        """Compress the new turn records' rows in one call into zstd. One compression per put would let go of
        the GIL for each, and every time the caller's thread does so and takes it back, a thread waiting for the
        GIL (write_ahead's compression, coming back with its frames) is made to wait a full switch interval more:
        the frames came back only once the puts were over."""
        records = list(self._new_turns.values())
        if not records:
            return
        for record, frame in zip(records, compress_all([record["turns"] for record in records])):
            record["turns"] = frame
            self.deferred_stored_bytes += len(frame)

    def _end_sync(self, sync) -> None:
        try:
            sync()
        except OSError as error:
            self.raw.store.fail(error)  # a failed sync is never retried on this store object
            raise
        fs.failpoint("raw.after_sync")

    def discard(self, keep_blobs: bool) -> None:
        """Best-effort removal of this batch's files after it failed: temp files always; the blob files and
        directories it created unless `keep_blobs` (a commit that failed may still have reached the disk and
        name them). What remains is for gc. A sync write_ahead started is waited for first."""
        if self._sync is not None:
            sync, self._sync = self._sync, None
            try:
                sync.result()
            except OSError as error:
                self.raw.store.fail(error)
        self.blobs.discard(keep_blobs)

    def remove_released(self) -> None:
        """Delete the blobs whose last reference this committed batch released. Not synced: a deletion a
        power loss undoes leaves an orphan, which gc removes."""
        for record in self._released.values():
            try:
                fs.remove(os.path.join(self.raw.store.path, record_blob_path(record)))
            except OSError:
                continue  # left for gc
