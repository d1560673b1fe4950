"""A full disk (a file size limit, `ulimit -f`, in a real process): the error names the file and what was done
to it; the store keeps every acknowledged batch; `check` reports what the failed batch left (a partial WAL
record, orphan blobs) as notes with counts; the LOCK file keeps the holder note it had."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys

import pytest

from engine import fs
from engine.lock import WriterLock
from engine.store import Store
from memctl.paths import tenant_dir
from tools.testing.faultfs import installed


def memctl(home, *arguments, file_limit: int | None = None) -> subprocess.CompletedProcess:
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    return subprocess.run([sys.executable, "-m", "memctl", "--home", str(home), *arguments], capture_output=True,
                          text=True, timeout=120, preexec_fn=None if file_limit is None else limit)


@pytest.fixture
def store(tmp_path):
    home = tmp_path / "home"
    assert memctl(home, "ingest", "--text", "alice: the first batch").returncode == 0
    return home, tenant_dir(str(home), "default")


def lock_note(directory: str) -> bytes:
    with open(os.path.join(directory, "LOCK"), "rb") as handle:
        return handle.read()


def test_nothing_writable_names_the_blob_and_keeps_the_lock_note(store):
    home, directory = store
    note = lock_note(directory)
    assert note.startswith(b"pid ") and note.endswith(b" (memctl ingest)\n")
    failed = memctl(home, "ingest", "--text", "bob: a second batch", file_limit=0)
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.startswith(f"error: cannot write {directory}/raw/")
    assert ".blob.zst: File too large; the batches acknowledged before are kept" in failed.stderr
    assert lock_note(directory) == note  # not emptied, not rewritten
    checked = json.loads(memctl(home, "check", "--json").stdout)
    assert checked["clean"] and checked["notes"] == []  # the failed batch took its blob away again
    assert "the first batch" in memctl(home, "raw", "cat", _only_chunk(home)).stdout


def _only_chunk(home) -> str:
    [chunk] = json.loads(memctl(home, "raw", "ls", "--json").stdout)
    return chunk["raw_id"]


def test_a_wal_cut_short_is_reported_by_check_with_counts(store, tmp_path):
    home, directory = store
    wal = os.path.join(directory, "wal", "000001.log")
    acknowledged = os.path.getsize(wal)
    turns = tmp_path / "turns.jsonl"
    turns.write_text("".join(json.dumps({"conv_id": f"c{number}", "speaker": "A", "text": f"turn {number} {number * 7919}"})
                             + "\n" for number in range(40)), encoding="utf-8")
    # Each blob fits under 1 KiB; the batch's WAL record does not.
    failed = memctl(home, "ingest", "--raw", str(turns), "--format", "jsonl", file_limit=1024)
    assert failed.returncode == 1
    assert failed.stderr.startswith(f"error: cannot write {wal}: File too large; ")

    printed = memctl(home, "check").stdout.splitlines()
    assert printed[0] == (f"note wal/000001.log: partial record at the end: {os.path.getsize(wal) - acknowledged:,} "
                          f"bytes from offset {acknowledged} (record payload cut short at EOF), left by an "
                          "interrupted write; the next writer drops them")
    assert printed[1].startswith("note 40 files named by no record")
    assert printed[-2] == "  … and 35 more (`memctl check --verbose` lists every one)"
    # The writer that acknowledged the first ingest published its WAL checkpoint on close (MANIFEST-000003).
    assert printed[-1].endswith("no problems, 41 notes (manifest MANIFEST-000003, segments 0, wal_files 1, "
                                "counters 1, raw_chunks 1)")

    assert memctl(home, "raw", "gc").stdout == "removed 40 unreferenced file(s)\n"
    assert memctl(home, "ingest", "--text", "carol: after the disk had room again").returncode == 0
    assert memctl(home, "check").stdout.splitlines()[-1].endswith(": clean (manifest MANIFEST-000004, segments 0, "
                                                                  "wal_files 1, counters 1, raw_chunks 2)")


def test_a_busy_writer_leaves_the_holder_note_alone(store):
    home, directory = store
    holder = WriterLock(directory)
    holder.acquire(0, "memctl job consolidate")
    try:
        note = lock_note(directory)
        busy = memctl(home, "ingest", "--text", "bob: a second batch", file_limit=0)
        assert busy.returncode == 75 and f"held by pid {os.getpid()} (memctl job consolidate)" in busy.stderr
        assert lock_note(directory) == note
    finally:
        holder.release()


def test_a_lock_note_that_cannot_be_written_leaves_the_old_one(tmp_path, monkeypatch):
    path = tmp_path / "LOCK"
    path.write_bytes(b"pid 1 (memctl ingest)\n")

    def full(fd, data, offset):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "pwrite", full)
    lock = WriterLock(str(tmp_path))
    lock.acquire(0, "memctl r2g")  # the note is informational: the writer goes on, and fails where it writes
    try:
        assert path.read_bytes() == b"pid 1 (memctl ingest)\n"
    finally:
        lock.release()


def test_a_longer_old_note_is_cut_to_the_new_one(tmp_path):
    (tmp_path / "LOCK").write_bytes(b"pid 123456789 (memctl graph import with a long holder name)\n")
    lock = WriterLock(str(tmp_path))
    lock.acquire(0, "memctl r2g")
    try:
        assert (tmp_path / "LOCK").read_bytes() == f"pid {os.getpid()} (memctl r2g)\n".encode()
    finally:
        lock.release()


def test_a_write_on_a_descriptor_names_its_file(tmp_path):
    fd = fs.ops.open_append("/dev/full")  # opens, and refuses every write with ENOSPC
    try:
        with pytest.raises(OSError) as caught:
            fs.ops.write(fd, b"x")
    finally:
        fs.ops.close(fd)
    assert (caught.value.errno, caught.value.filename, caught.value.operation) == (errno.ENOSPC, "/dev/full", "write")


@pytest.mark.parametrize("operation, words", [("write", "write"), ("fsync", "sync")])
def test_a_failed_commit_names_the_wal_and_the_operation(tmp_path, operation, words):
    store_path = str(tmp_path / "store")
    Store.open(store_path).close()
    with installed(store_path) as fault:
        store = Store.open(store_path)
        fault.fail(operation, 1, errno.ENOSPC)
        with pytest.raises(OSError) as caught:
            with store.batch() as batch:
                batch.put("test.rows", "a", 1)
        store.close()
    assert caught.value.filename == os.path.join(store_path, "wal", "000001.log")
    assert (caught.value.errno, caught.value.operation) == (errno.ENOSPC, words)


def test_path_operations_name_their_file_and_keep_their_class(tmp_path):
    missing = str(tmp_path / "no" / "such")
    with pytest.raises(FileNotFoundError) as caught:
        fs.ops.mkdir(missing)
    assert (caught.value.filename, caught.value.operation) == (missing, "create directory")
    with pytest.raises(FileNotFoundError) as caught:
        fs.ops.rename(missing, str(tmp_path / "elsewhere"))
    assert (caught.value.filename, caught.value.operation) == (missing, "rename")
