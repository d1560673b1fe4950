"""One writer, many readers, across real processes (REFERENCES B6, C #7)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from engine.check import check_store
from engine.errors import StoreBusy
from engine.store import Store
from tools.testing import rwchild

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
READERS = 4
WRITER_SECONDS = 12


def start(*arguments, stdin=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tools.testing.rwchild", *arguments], cwd=REPOSITORY,
                            env=dict(os.environ, PYTHONPATH=REPOSITORY), stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.fixture
def store_path(tmp_path):
    path = str(tmp_path / "store")
    Store.open(path).close()
    return path


@pytest.fixture
def holder(store_path):
    """A separate process holding the writer lock until the test ends (or kills it)."""
    process = start("hold", store_path, "memctl job nightly", stdin=subprocess.PIPE)
    assert process.stdout.readline().strip() == "HOLDING", process.stderr.read()
    yield process
    if process.poll() is None:
        process.stdin.close()
        process.wait(timeout=30)


def test_a_second_writer_gets_store_busy_naming_the_holder(store_path, holder):
    with pytest.raises(StoreBusy) as caught:
        Store.open(store_path, writable=True, wait=0.3, holder="memctl ingest")
    assert f"held by pid {holder.pid} (memctl job nightly)" in str(caught.value)
    assert caught.value.exit_code == 75


def test_a_waiting_writer_proceeds_once_the_holder_lets_go(store_path, holder):
    holder.stdin.close()
    holder.wait(timeout=30)
    store = Store.open(store_path, writable=True, wait=30.0)
    store.close()


def test_a_writer_killed_while_holding_the_lock_frees_it(store_path, holder):
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    store = Store.open(store_path, writable=True, wait=0.0)
    with store.batch() as batch:
        batch.put("test.rw", "after", 1)
    store.close()
    assert Store.open(store_path, writable=False).get("test.rw", "after") == 1


def test_readers_see_consistent_growing_snapshots_while_a_writer_commits_flushes_and_compacts(store_path,
                                                                                               tmp_path):
    stop_file = str(tmp_path / "stop")
    writer = start("writer", store_path, str(WRITER_SECONDS))
    readers = [start("reader", store_path, stop_file) for _ in range(READERS)]
    try:
        writer_output, writer_errors = writer.communicate(timeout=WRITER_SECONDS + 60)
    finally:
        open(stop_file, "w").close()
        outcomes = [reader.communicate(timeout=60) for reader in readers]
    assert writer.returncode == 0, writer_errors
    written = int(writer_output.split()[1])
    assert written > 2 * rwchild.COMPACT_EVERY, "the writer must flush and compact several times"
    for reader, (output, errors) in zip(readers, outcomes):
        assert reader.returncode == 0, output + errors
        _ok, opens, last_seen = output.split()
        assert int(opens) > 10 and int(last_seen) <= written
    store = Store.open(store_path, writable=False)
    assert dict(store.scan("test.rw")) == {key: value for number in range(1, written + 1)
                                           for key, value in rwchild.records_of(number).items()}
    assert check_store(store_path).problems == []
