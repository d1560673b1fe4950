"""Store.transaction: the batches committed inside one block are durable together, as one WAL record."""

from __future__ import annotations

import os

import pytest

from engine import fs, wal
from engine.errors import EngineError, StoreClosed
from engine.format import WAL_DIR
from engine.store import Store
from engine_testkit import SimulatedCrash, crash_at

T = "test.doc"


def _put(store, key, value) -> None:
    with store.batch() as batch:
        batch.put(T, key, value)


def _wal_records(path: str) -> int:
    directory = os.path.join(path, WAL_DIR)
    return sum(len(wal.scan(os.path.join(directory, name)).payloads) for name in os.listdir(directory))


def _rows(path: str) -> dict:
    with Store.open(path, writable=False) as reader:
        return dict(reader.scan(T))


def test_the_batches_of_a_transaction_are_one_wal_record_and_one_sequence(tmp_path):
    path = str(tmp_path / "store")
    with Store.open(path) as store:
        _put(store, "before", 0)
        sequence = store.sequence
        with store.transaction():
            _put(store, "a", 1)
            assert store.get(T, "a") == 1  # applied at once: what follows in the block reads it
            with store.batch() as batch:
                batch.put(T, "b", 2)
                batch.delete(T, "before")
                first = batch.allocate("ids", 3)
            _put(store, "c", store.counter("ids"))
        assert store.sequence == sequence + 1
        assert _wal_records(path) == 2  # "before", then the transaction's one record
    assert (first, _rows(path)) == (0, {"a": 1, "b": 2, "c": 3})


def test_a_crash_before_the_end_leaves_no_trace_of_any_batch(tmp_path):
    path = str(tmp_path / "store")
    store = Store.open(path)
    _put(store, "before", 0)
    crash_at("transaction.before_append")
    with pytest.raises(SimulatedCrash):
        with store.transaction():
            _put(store, "a", 1)
            _put(store, "b", 2)
    with pytest.raises(StoreClosed):
        _put(store, "later", 3)  # what it applied is in no log: the handle refuses to write more
    store.close()
    fs.disarm_all()
    assert _rows(path) == {"before": 0}


def test_a_crash_after_the_append_keeps_every_batch(tmp_path):
    path = str(tmp_path / "store")
    store = Store.open(path)
    crash_at("commit.after_append.before_apply")
    with pytest.raises(SimulatedCrash):
        with store.transaction():
            _put(store, "a", 1)
            _put(store, "b", 2)
    fs.disarm_all()
    assert _rows(path) == {"a": 1, "b": 2}


def test_an_error_inside_the_block_changes_nothing_and_the_handle_refuses_writes(tmp_path):
    path = str(tmp_path / "store")
    store = Store.open(path)
    _put(store, "before", 0)
    with pytest.raises(ZeroDivisionError):
        with store.transaction():
            _put(store, "a", 1)
            1 / 0
    with pytest.raises(StoreClosed):
        _put(store, "later", 2)
    store.close()  # neither flushes nor checkpoints what no log holds
    assert _rows(path) == {"before": 0}
    with Store.open(path) as reopened:
        _put(reopened, "later", 2)
    assert _rows(path) == {"before": 0, "later": 2}


def test_an_error_before_any_batch_leaves_the_handle_usable(tmp_path):
    path = str(tmp_path / "store")
    with Store.open(path) as store:
        with pytest.raises(ValueError):
            with store.transaction():
                raise ValueError("checked before writing")
        _put(store, "a", 1)
    assert _rows(path) == {"a": 1}


def test_a_transaction_that_fills_the_memtable_commits_by_a_flush(tmp_path):
    path = str(tmp_path / "store")
    with Store.open(path, flush_bytes=4096) as store:
        with store.transaction():
            for number in range(100):
                _put(store, f"k{number:03d}", "x" * 100)
        assert store.records and not store.tables  # flushed: the MANIFEST naming the segment is the commit
        assert _wal_records(path) == 0
    assert len(_rows(path)) == 100


def test_transactions_do_not_nest(tmp_path):
    with Store.open(str(tmp_path / "store")) as store:
        with store.transaction():
            with pytest.raises(EngineError, match="do not nest"):
                with store.transaction():
                    pass
