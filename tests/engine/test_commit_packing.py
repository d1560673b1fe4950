"""Store.commit builds the WAL payload run by run and keeps each value's bytes for the flush: the bytes must be
those of codec.pack([sequence, operations]), and owned operations must read back as decoded ones."""

import os

import msgpack
import pytest

from engine.codec import pack
from engine.format import OP_COUNTER, OP_DELETE, OP_PUT
from engine.store import Store, _pack_runs, runs_of

VALUES = [None, True, 0, -1, 2**40, 1.5, "", "文本", b"\x00bytes", [1, [2, (3, 4)]], {"k": {"nested": [None]}},
          {b"bin": "bin key"}, "x" * 70000, list(range(20))]


def test_payload_bytes_equal_packing_the_whole_batch():
    operations = [[OP_PUT, "t", f"k{index}", value] for index, value in enumerate(VALUES)]
    operations += [[OP_DELETE, "t", "k1"], [OP_COUNTER, "c", 7], (OP_PUT, "u" * 40, "key", (1, 2))]
    operations += [[OP_PUT, "t", f"many{index}", index] for index in range(70000)]  # an array32 header
    pieces, values = _pack_runs(12345, len(operations), runs_of(operations))
    assert b"".join(pieces) == pack([12345, operations])
    assert runs_of(operations)[:3] == [[OP_PUT, "t", [f"k{index}" for index in range(len(VALUES))], VALUES],
                                     [OP_DELETE, "t", ["k1"], None], [OP_COUNTER, "c", [7], None]]
    assert values[:len(VALUES)] == [pack(value) for value in VALUES]
    assert values[len(VALUES):len(VALUES) + 2] == [None, None]


def test_owned_and_copied_commits_flush_and_reopen_alike(tmp_path):
    stores = {}
    for owned in (False, True):
        path = str(tmp_path / f"owned-{owned}")
        with Store.open(path) as store:
            with store.batch(owned) as batch:
                for index, value in enumerate(VALUES):
                    batch.put("t", f"k{index}", value if owned or not isinstance(value, list) else list(value))
                batch.delete("t", "k2")
            store.flush()
        with Store.open(path, writable=False) as reopened:
            stores[owned] = dict(reopened.scan("t"))
    assert stores[False] == stores[True]
    assert stores[True]["k10"] == {"k": {"nested": [None]}} and "k2" not in stores[True]


def test_a_batch_keeps_runs_and_gives_its_operations_in_order(tmp_path):
    with Store.open(str(tmp_path / "store")) as store:
        with store.batch() as batch:
            batch.put("t", "a", 1)
            batch.put_many("t", ["b", "c"], [2, 3])
            batch.delete("t", "a")
            batch.put_many("u", iter(["x"]), iter([{"v": 1}]))
            first = batch.allocate("n", 5)
            batch.put("t", "d", 4)
            assert [run[:2] for run in batch.runs] == [[OP_PUT, "t"], [OP_DELETE, "t"], [OP_PUT, "u"],
                                                       [OP_COUNTER, "n"], [OP_PUT, "t"]]
            operations = batch.operations
            assert operations == [[OP_PUT, "t", "a", 1], [OP_PUT, "t", "b", 2], [OP_PUT, "t", "c", 3],
                                  [OP_DELETE, "t", "a"], [OP_PUT, "u", "x", {"v": 1}], [OP_COUNTER, "n", first + 5],
                                  [OP_PUT, "t", "d", 4]]
            with pytest.raises(ValueError, match="one value per key"):
                batch.put_many("t", ["e", "f"], [5])
        sequence = store.sequence
        wal_bytes = open(store._wal_writer.path, "rb").read()
    assert pack([sequence, operations]) in wal_bytes  # one WAL fragment: the record's bytes as they are
    with Store.open(str(tmp_path / "store"), writable=False) as reopened:
        assert dict(reopened.scan("t")) == {"b": 2, "c": 3, "d": 4} and reopened.counter("n") == first + 5


@pytest.mark.parametrize("value", [{1: "int key"}, {"props": {None: 1}}, [{"ok": {2.5: "float key"}}],
                                   msgpack.ExtType(5, b"x")])
def test_a_value_the_reader_would_refuse_is_bad_input_and_writes_nothing(tmp_path, value):
    """Readers refuse map keys that are not str and ext types as corruption (MANIFEST.spec, Conventions), so a
    batch holding one is refused before its WAL record is written: otherwise the next open would fail."""
    from engine.errors import InputError

    path = str(tmp_path / "store")
    with Store.open(path) as store:
        with store.batch() as batch:
            batch.put("t", "kept", 1)
        wal_bytes = {name: open(f"{path}/wal/{name}", "rb").read() for name in os.listdir(f"{path}/wal")}
        for flush_bytes in (store.flush_bytes, 1):  # the WAL path, and the batch that commits by a flush
            store.flush_bytes = flush_bytes
            with pytest.raises(InputError, match="cannot be stored"):
                with store.batch() as batch:
                    batch.put("t", "refused", value)
    assert {name: open(f"{path}/wal/{name}", "rb").read() for name in os.listdir(f"{path}/wal")} == wal_bytes
    with Store.open(path, writable=False) as reopened:
        assert dict(reopened.scan("t")) == {"kept": 1}
