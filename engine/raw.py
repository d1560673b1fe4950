"""RawStore: immutable raw chunks, stored once by content as zstd blobs, with a reference count.

A chunk's bytes are addressed by their sha256: raw_id = "raw_" + its first 16 hex digits; the blob lives at
`raw/YYYY/MM/DD/<sha[0:2]>/raw_<sha256>.blob.zst` (the date of its first ingest, UTC) and its metadata is the
record `raw.chunk/<raw_id>`. Ordering (DESIGN invariant 2): every blob of a batch is written to a temp file and
fsynced, renamed into place and its directory fsynced *before* the batch's WAL record names it. A crash in
between leaves only orphan blobs, which no record names; `gc()` removes them.

References are the records that name a chunk (turns, later episodes): `put` starts the count, `acquire` and
`release` move it, and releasing the last reference deletes the record and, after that commit, the blob file.

Reading checks before trusting: the frame's declared content size against the limit and the record (before
any allocation), a window-size cap, a streamed byte counter for frames without a declared size, then the
length and sha256 against the record. Any mismatch is a CorruptionError naming the blob file.
"""

from __future__ import annotations

import hashlib
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone

import zstandard

from engine import fs
from engine.errors import CorruptionError, EngineError, InputError
from engine.format import (
    RAW_BLOB_MAX_BYTES,
    RAW_BLOB_SUFFIX,
    RAW_CHUNK_TABLE,
    RAW_DIR,
    RAW_ID_HEX_DIGITS,
    RAW_ID_PREFIX,
    RAW_MIME_TEXT,
    RAW_ZSTD_LEVEL,
    RAW_ZSTD_MAX_WINDOW_BYTES,
    TEMP_SUFFIX,
)

BLOB_NAME = re.compile(rf"{RAW_ID_PREFIX}([0-9a-f]{{64}}){re.escape(RAW_BLOB_SUFFIX)}")
STREAM_READ_BYTES = 1 << 20
# zstd never expands its input by more than about 1/128 plus a frame header; a bigger blob file is damaged.
COMPRESSED_SLACK = RAW_BLOB_MAX_BYTES // 128 + 4096


def raw_id_for(sha256_hex: str) -> str:
    return RAW_ID_PREFIX + sha256_hex[:RAW_ID_HEX_DIGITS]


def blob_path(sha256_hex: str, created_at: datetime) -> str:
    """Path of a blob relative to the store directory (always with "/" separators)."""
    return (f"{RAW_DIR}/{created_at:%Y/%m/%d}/{sha256_hex[:2]}/"
            f"{RAW_ID_PREFIX}{sha256_hex}{RAW_BLOB_SUFFIX}")


def decompress_bounded(blob: bytes, path: str, limit: int = RAW_BLOB_MAX_BYTES,
                       expected_length: int | None = None) -> bytes:
    """Decompress one zstd frame without ever holding more than `limit` output bytes."""
    try:
        declared = zstandard.frame_content_size(blob)
    except zstandard.ZstdError as error:
        raise CorruptionError(path, 0, f"not a zstd frame ({error})") from None
    if declared > limit:
        raise CorruptionError(path, 0, f"zstd frame declares {declared:,} bytes, above the {limit:,}-byte "
                                       "blob limit; refused before decompression")
    if expected_length is not None and declared >= 0 and declared != expected_length:
        raise CorruptionError(path, 0, f"zstd frame declares {declared:,} bytes, the record says "
                                       f"{expected_length:,}")
    decompressor = zstandard.ZstdDecompressor(max_window_size=RAW_ZSTD_MAX_WINDOW_BYTES)
    try:
        if declared >= 0:
            return decompressor.decompress(blob, max_output_size=declared)
        return _decompress_streamed(decompressor, blob, path, limit)
    except zstandard.ZstdError as error:
        raise CorruptionError(path, None, f"zstd frame does not decompress ({error})") from None


def _decompress_streamed(decompressor, blob: bytes, path: str, limit: int) -> bytes:
    output = bytearray()
    with decompressor.stream_reader(blob) as reader:
        while piece := reader.read(STREAM_READ_BYTES):
            output += piece
            if len(output) > limit:
                raise CorruptionError(path, None, f"zstd frame without a declared size decompresses past the "
                                                  f"{limit:,}-byte blob limit; stopped there")
    return bytes(output)


def _write_synced(path: str, data: bytes) -> None:
    """Write and fsync a new file (a temp file left by a crash is replaced)."""
    fs.remove(path)
    handle = fs.ops.open_new(path)
    try:
        fs.ops.write(handle, data)
        fs.failpoint("raw.blob.write.before_fsync")
        fs.ops.fsync(handle)
    finally:
        fs.ops.close(handle)


@dataclass(slots=True)
class PutResult:
    raw_id: str
    new: bool
    stored_bytes: int  # compressed bytes written by this put (0 for a chunk already stored)


class RawStore:
    def __init__(self, store, limit: int = RAW_BLOB_MAX_BYTES, clock=None):
        self.store = store
        self.limit = limit
        self._clock = clock or (lambda: datetime.now(timezone.utc))

    # --- reading -------------------------------------------------------------------------------------------

    def get(self, raw_id: str) -> dict | None:
        return self.store.get(RAW_CHUNK_TABLE, raw_id)

    def scan(self, prefix: str = ""):
        """(raw_id, record) in raw_id order."""
        return self.store.scan(RAW_CHUNK_TABLE, prefix)

    def read(self, raw_id: str) -> bytes:
        """The chunk's decompressed bytes, verified against its record's length and sha256."""
        record = self._record(raw_id)
        path = os.path.join(self.store.path, record["path"])
        try:
            with open(path, "rb") as handle:
                blob = handle.read(self.limit + COMPRESSED_SLACK + 1)
        except FileNotFoundError:
            raise CorruptionError(path, None, f"blob of {raw_id} is missing") from None
        if len(blob) > self.limit + COMPRESSED_SLACK:
            raise CorruptionError(path, None, "blob file is larger than any blob within the limit")
        data = decompress_bounded(blob, path, self.limit, record["len_bytes"])
        if len(data) != record["len_bytes"]:
            raise CorruptionError(path, None, f"blob holds {len(data):,} bytes, the record says "
                                              f"{record['len_bytes']:,}")
        if hashlib.sha256(data).hexdigest() != record["sha256"]:
            raise CorruptionError(path, None, f"sha256 mismatch: the blob's content is not {raw_id}'s")
        return data

    def read_span(self, raw_id: str, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes [offset, offset + length) of the decompressed chunk (a raw_ref's text); length None: to the end."""
        record = self._record(raw_id)
        size = record["len_bytes"]
        if length is None:
            length = size - offset
        if offset < 0 or length < 0 or offset + length > size:
            raise InputError(f"span offset {offset}, length {length} is outside {raw_id} ({size:,} bytes)")
        return self.read(raw_id)[offset: offset + length]

    def _record(self, raw_id: str) -> dict:
        record = self.get(raw_id)
        if record is None:
            raise InputError(f"no raw chunk {raw_id}")
        return record

    # --- writing -------------------------------------------------------------------------------------------

    @contextmanager
    def batch(self):
        """A store batch whose new blobs are made durable before it commits; released blobs are deleted
        after it commits. Yields a RawWriter; `writer.batch` takes the batch's other records."""
        writer = RawWriter(self)
        committing = False
        try:
            with self.store.batch() as batch:
                writer.batch = batch
                yield writer
                writer.publish()
                fs.failpoint("raw.after_publish.before_commit")
                committing = True
        except BaseException:
            # After a failed commit the WAL record may still be on disk: its blobs must stay (gc decides).
            writer.discard(published_too=not committing)
            raise
        writer.remove_released()

    def verify(self) -> tuple[list[CorruptionError], list[str]]:
        """For `check`, without writing: (an error for every chunk whose blob does not read back exactly,
        the blob and temp files no record names, relative to the store)."""
        problems = []
        for raw_id, _ in self.scan():
            try:
                self.read(raw_id)
            except CorruptionError as error:
                problems.append(error)
        return problems, [relative for relative, _ in self._unnamed_files()]

    def gc(self) -> list[str]:
        """Delete blob files and temp files that no committed record names (left by a crash between a blob's
        publication and its batch's commit, or by a deletion interrupted after commit). Writer only, and never
        while one of its batches is open. Returns the removed paths, relative to the store."""
        if not self.store.writable:
            raise EngineError("raw gc needs the store opened for writing")
        removed = []
        directories = set()
        for relative, path in self._unnamed_files():
            fs.remove(path)
            removed.append(relative)
            directories.add(os.path.dirname(path))
        for directory in sorted(directories, key=lambda path: (-path.count(os.sep), path)):
            fs.fsync_dir(directory)
        root = os.path.join(self.store.path, RAW_DIR)
        for directory, _, _ in os.walk(root, topdown=False):
            if directory != root and not os.listdir(directory):
                os.rmdir(directory)
        return removed

    def _unnamed_files(self):
        """(relative path, path) of temp files and of blob files that no record names."""
        for directory, _, files in os.walk(os.path.join(self.store.path, RAW_DIR)):
            for name in sorted(files):
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, self.store.path).replace(os.sep, "/")
                if name.endswith(TEMP_SUFFIX) or self._is_orphan(name, relative):
                    yield relative, path

    def _is_orphan(self, name: str, relative: str) -> bool:
        match = BLOB_NAME.fullmatch(name)
        if match is None:
            return False  # not ours: left alone
        record = self.get(raw_id_for(match[1]))
        return record is None or record["path"] != relative or record["sha256"] != match[1]


class RawWriter:
    """Raw chunk changes inside one store batch (see RawStore.batch). Reads see this batch's own changes."""

    def __init__(self, raw: RawStore):
        self.raw = raw
        self.batch = None
        self._pending: dict[str, dict | None] = {}  # raw_id → record written in this batch (None: deleted)
        self._staged: list[tuple[str, str]] = []  # (temp path, final path) of blobs to publish
        self._new_directories: list[str] = []  # created for staged blobs; their entries are fsynced at publish
        self._published: list[str] = []
        self._released: dict[str, str] = {}  # raw_id → blob path to delete after commit

    def get(self, raw_id: str) -> dict | None:
        if raw_id in self._pending:
            return self._pending[raw_id]
        return self.raw.get(raw_id)

    def put(self, data: bytes, meta: dict, refs: int = 1, mime: str = RAW_MIME_TEXT) -> PutResult:
        """Store `data` unless already stored, adding `refs` references either way."""
        if len(data) > self.raw.limit:
            raise InputError(f"a raw chunk of {len(data):,} bytes exceeds the {self.raw.limit:,}-byte blob limit")
        sha = hashlib.sha256(data).hexdigest()
        raw_id = raw_id_for(sha)
        record = self.get(raw_id)
        if record is not None:
            if record["sha256"] != sha:
                raise EngineError(f"{raw_id} already names other content (a 64-bit id prefix collision)")
            self.acquire(raw_id, refs)
            return PutResult(raw_id, False, self._restore_missing_blob(record, data))
        created = self.raw._clock()
        relative = blob_path(sha, created)
        stored = self._stage(relative, data)
        if self._released.get(raw_id) == relative:
            del self._released[raw_id]  # released and stored again in this batch: the file stays
        self._write(raw_id, {
            "mime": mime,
            "len_bytes": len(data),
            "sha256": sha,
            "created_at": created.isoformat(timespec="seconds"),
            "path": relative,
            "refcount": refs,
            "stored_bytes": stored,
            "meta": meta,
        })
        return PutResult(raw_id, True, stored)

    def acquire(self, raw_id: str, count: int = 1) -> None:
        record = self._existing(raw_id)
        if count:
            self._write(raw_id, {**record, "refcount": record["refcount"] + count})

    def release(self, raw_id: str, count: int = 1) -> bool:
        """Drop references; True when that was the last, so the chunk and its blob go at commit."""
        record = self._existing(raw_id)
        remaining = record["refcount"] - count
        if remaining > 0:
            self._write(raw_id, {**record, "refcount": remaining})
            return False
        self._pending[raw_id] = None
        self.batch.delete(RAW_CHUNK_TABLE, raw_id)
        self._released[raw_id] = record["path"]
        return True

    def _existing(self, raw_id: str) -> dict:
        record = self.get(raw_id)
        if record is None:
            raise InputError(f"no raw chunk {raw_id}")
        return record

    def _write(self, raw_id: str, record: dict) -> None:
        self._pending[raw_id] = record
        self.batch.put(RAW_CHUNK_TABLE, raw_id, record)

    def _restore_missing_blob(self, record: dict, data: bytes) -> int:
        """Re-ingesting a chunk whose blob was lost writes it again at its recorded path."""
        if os.path.exists(os.path.join(self.raw.store.path, record["path"])):
            return 0
        return self._stage(record["path"], data)

    def _stage(self, relative: str, data: bytes) -> int:
        final = os.path.join(self.raw.store.path, relative)
        if any(staged_final == final for _, staged_final in self._staged):
            return 0
        compressed = zstandard.ZstdCompressor(level=RAW_ZSTD_LEVEL).compress(data)
        self._make_directories(os.path.dirname(final))
        temp = final + TEMP_SUFFIX
        _write_synced(temp, compressed)
        self._staged.append((temp, final))
        return len(compressed)

    def _make_directories(self, directory: str) -> None:
        """Create missing directories without an fsync each: with the 256-way fan-out most blobs get a new
        directory, and publish() fsyncs every touched parent once instead."""
        missing = []
        while not os.path.isdir(directory):
            missing.append(directory)
            directory = os.path.dirname(directory)
        for path in reversed(missing):
            try:
                fs.ops.mkdir(path)
            except FileExistsError:
                continue
            self._new_directories.append(path)

    def publish(self) -> None:
        """Rename every staged blob into place, then fsync each directory holding a new entry, once,
        deepest first (DESIGN invariant 2: durable before the batch's record names it)."""
        directories = {os.path.dirname(path) for path in self._new_directories}
        for temp, final in self._staged:
            fs.ops.rename(temp, final)
            self._published.append(final)
            directories.add(os.path.dirname(final))
        fs.failpoint("raw.after_rename.before_dirsync")
        for directory in sorted(directories, key=lambda path: (-path.count(os.sep), path)):
            fs.fsync_dir(directory)
        self._staged = []
        self._new_directories = []

    def discard(self, published_too: bool) -> None:
        """Best-effort removal of this batch's files after it failed; what remains is for gc."""
        paths = [temp for temp, _ in self._staged] + (self._published if published_too else [])
        for path in paths:
            try:
                fs.remove(path)
            except OSError:
                pass

    def remove_released(self) -> None:
        directories = set()
        for relative in self._released.values():
            path = os.path.join(self.raw.store.path, relative)
            try:
                fs.remove(path)
            except OSError:
                continue  # left for gc
            directories.add(os.path.dirname(path))
        for directory in sorted(directories):
            fs.fsync_dir(directory)
