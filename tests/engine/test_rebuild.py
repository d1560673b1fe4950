"""Store.rebuild: every segment made again from the records alone (MANIFEST.spec §7), and Store.stage, the
unlogged changes a migration publishes with it. The workload of the crash tests (plain records, counters, raw
chunks, a text index and a graph, with deletions, purges, replaced documents, flushes and compactions) gives
the store; what it serves is compared before and after, text scores exactly."""

from __future__ import annotations

import os

import pytest

from engine import damage
from engine.check import check_store
from engine.errors import EngineError
from engine.format import KIND_RECORDS, OP_PUT, WAL_HEADER_SIZE
from engine.store import Store
from engine_testkit import flip_byte, store_files
from tools.testing.derived import TEXT_TABLES
from tools.testing.workload import apply_to_store, batch_operations, read_state, schedule

SEED = 11
BATCHES = 90


def build(path: str, flush_bytes: int = 24 << 10) -> Store:
    """The workload's store, left with segments of several flushes and compactions and a WAL tail."""
    store = Store.open(path, flush_bytes=flush_bytes)
    for step in schedule(SEED, 1, BATCHES):
        if step[0] == "batch":
            apply_to_store(store, batch_operations(SEED, step[1]))
        elif step[0] == "flush":
            store.flush()
        elif step[0] == "compact":
            store.compact()
    with store.batch() as batch:  # something unflushed, whatever the schedule ended with
        batch.put("test.doc", "unflushed", {"tail": True})
    return store


def served(store: Store) -> dict:
    """read_state, with the text rankings as plain lists: scores must agree exactly, not to a tolerance."""
    state = read_state(store)
    state["text"]["search"] = {label: ranking.hits for label, ranking in state["text"]["search"].items()}
    return state


def test_a_rebuilt_store_serves_exactly_what_it_served(tmp_path):
    path = str(tmp_path / "store")
    store = build(path)
    assert store.tables and len(store.kind_segments[TEXT_TABLES.owner]) > 1, "a WAL tail and several segments"
    before, counters, old_wal = served(store), dict(store.counters), store.manifest.wal_number
    store.rebuild()
    assert served(store) == before and store.counters == counters
    kinds = sorted((entry["owner"], entry["kind"]) for entry in store.manifest.segments)
    assert kinds == [("graph", "graph.csr"), (KIND_RECORDS, KIND_RECORDS), (TEXT_TABLES.owner, "text.postings")]
    assert store.manifest.wal_number > old_wal and store.manifest.last_sequence == store.sequence
    assert not store.tables
    store.close()
    assert os.listdir(os.path.join(path, "wal")) == [f"{store.manifest.wal_number:06d}.log"]
    assert os.path.getsize(os.path.join(path, "wal", f"{store.manifest.wal_number:06d}.log")) == WAL_HEADER_SIZE
    assert check_store(path).problems == []
    for writable in (False, True):
        with Store.open(path, writable=writable) as reopened:
            assert served(reopened) == before


def test_a_rebuild_writes_the_segments_a_compaction_writes(tmp_path):
    """The graph part is dense, the text segment has no `deleted` column: what compaction leaves, read from the
    records instead of the segments."""
    rebuilt, compacted = build(str(tmp_path / "rebuilt")), build(str(tmp_path / "compacted"))
    rebuilt.rebuild()
    compacted.compact()
    for store in (rebuilt, compacted):
        graph, text = store.kind_segments["graph"][0], store.kind_segments[TEXT_TABLES.owner][0]
        assert graph.meta["dense"] and "deleted" not in text.names()
    assert served(rebuilt) == served(compacted)
    for owner in ("graph", TEXT_TABLES.owner):
        assert rebuilt.kind_segments[owner][0].meta == compacted.kind_segments[owner][0].meta
    rebuilt.close()
    compacted.close()


@pytest.mark.parametrize("kind", ["graph.csr", "text.postings"])
def test_a_rebuild_reads_no_derived_segment(tmp_path, kind):
    """A damaged graph or text segment fails the reads that touch it; a rebuild makes it again from the records
    (the repair it serves), so the store answers as before the damage."""
    path = str(tmp_path / "store")
    store = build(path)
    store.compact()
    before = served(store)
    store.close()
    segment = next(entry for entry in Store.open(path, writable=False).manifest.segments if entry["kind"] == kind)
    flip_byte(os.path.join(path, "seg", segment["name"]), 200)
    with damage.quiet():  # unrecorded: a DAMAGE marker would refuse the writer (repair heals a marked store)
        assert check_store(path).problems
    with Store.open(path) as store:
        store.rebuild()
        assert served(store) == before
    assert check_store(path).problems == []


def test_staged_changes_are_published_by_rebuild_alone(tmp_path):
    path = str(tmp_path / "store")
    store = build(path)
    files = store_files(path)
    batch = store.batch()
    batch.put("test.doc", "staged", 1)
    batch.delete("test.doc", "unflushed")
    batch.allocate("staged.counter", 7)
    store.stage(batch.runs, retired_counters=["doc"])
    assert store.get("test.doc", "staged") == 1 and store.get("test.doc", "unflushed") is None
    assert store.counter("staged.counter") == 7 and "doc" not in store.counters
    for write in (store.flush, store.compact, lambda: store.commit([[OP_PUT, "t", ["k"], [1]]])):
        with pytest.raises(EngineError, match="staged changes"):
            write()
    store.close_flush_bytes = 0
    store.close()  # no flush of what is staged, whatever its size
    assert store_files(path).keys() - {"LOCK", "LOCK.gc"} == files.keys() - {"LOCK", "LOCK.gc"}
    with Store.open(path) as reopened:  # as a crash before the rebuild would leave it
        assert reopened.get("test.doc", "staged") is None and reopened.get("test.doc", "unflushed") == {"tail": True}
        reopened.stage(batch.runs, retired_counters=["doc"])
        reopened.rebuild()
    with Store.open(path, writable=False) as published:
        assert published.get("test.doc", "staged") == 1 and published.get("test.doc", "unflushed") is None
        assert published.counter("staged.counter") == 7 and "doc" not in published.counters
