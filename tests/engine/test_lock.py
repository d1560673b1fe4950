"""engine.lock: one writer per store, a busy error naming the holder, freed when the holder dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from engine.errors import StoreBusy
from engine.format import GC_LOCK_FILE, WRITER_LOCK_FILE
from engine.lock import GcLock, WriterLock
from engine.store import Store

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_holder_is_written_into_the_lock_file(tmp_path):
    lock = WriterLock(str(tmp_path))
    lock.acquire(0, "memctl ingest notes.md")
    assert (tmp_path / WRITER_LOCK_FILE).read_text() == f"pid {os.getpid()} (memctl ingest notes.md)\n"
    lock.release()


def test_a_second_writer_is_busy_and_told_who_holds_it(tmp_path):
    first = WriterLock(str(tmp_path))
    first.acquire(0, "memctl job consolidate")
    second = WriterLock(str(tmp_path))
    for wait in (0, 0.05):
        with pytest.raises(StoreBusy) as caught:
            second.acquire(wait, "memctl ingest")
        assert caught.value.exit_code == 75
        assert f"pid {os.getpid()} (memctl job consolidate)" in str(caught.value)
        assert caught.value.path == str(tmp_path / WRITER_LOCK_FILE)
    first.release()
    second.acquire(0, "memctl ingest")
    second.release()


def test_a_waiting_writer_gets_the_lock_when_it_is_released(tmp_path):
    first = WriterLock(str(tmp_path))
    first.acquire(0, "first")
    releaser = threading.Timer(0.1, first.release)
    releaser.start()
    second = WriterLock(str(tmp_path))
    second.acquire(30, "second")  # returns as soon as the first lets go
    releaser.join()
    assert (tmp_path / WRITER_LOCK_FILE).read_text() == f"pid {os.getpid()} (second)\n"
    second.release()


def test_release_is_idempotent(tmp_path):
    lock = WriterLock(str(tmp_path))
    lock.release()
    lock.acquire(0, "x")
    lock.release()
    lock.release()


def test_a_busy_store_refuses_a_second_writer_but_not_readers(store_path):
    writer = Store.open(store_path, holder="memctl ingest")
    with writer.batch() as batch:
        batch.put("t.x", "a", 1)
    with pytest.raises(StoreBusy) as caught:
        Store.open(store_path, wait=0, holder="memctl fact add")
    assert "memctl ingest" in str(caught.value)
    assert Store.open(store_path, writable=False).get("t.x", "a") == 1
    writer.close()
    Store.open(store_path, wait=0).close()


def test_gc_lock_is_shared_among_readers_and_excludes_the_collector(tmp_path):
    readers = [GcLock(str(tmp_path)), GcLock(str(tmp_path))]
    for reader in readers:
        reader.acquire_shared()
    collector = GcLock(str(tmp_path))
    assert not collector.try_acquire(exclusive=True)
    for reader in readers:
        reader.release()
    assert collector.try_acquire(exclusive=True)
    assert not readers[0].try_acquire(exclusive=False)
    readers[0].release()
    collector.release()
    assert (tmp_path / GC_LOCK_FILE).read_bytes() == b""


HOLDER = """
import sys
from engine.store import Store
store = Store.open(sys.argv[1], holder="memctl job promote")
print("HOLDING", flush=True)
sys.stdin.read()
"""


def test_a_killed_holder_frees_the_lock(store_path):
    child = subprocess.Popen([sys.executable, "-c", HOLDER, store_path], cwd=REPOSITORY,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "HOLDING\n"
        with pytest.raises(StoreBusy) as caught:
            Store.open(store_path, wait=0.05)
        assert f"pid {child.pid} (memctl job promote)" in str(caught.value)
        child.send_signal(signal.SIGKILL)
        child.wait()
        Store.open(store_path, wait=10).close()  # no stale lock to clean up by hand
    finally:
        child.kill()
        child.wait()
        child.stdin.close()
        child.stdout.close()
