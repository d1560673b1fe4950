"""engine.migration on stores made here: today's code writing the unnamed text index, with the MANIFEST then
labelled format 3 (or 2), is what the code of those formats wrote (format 4 only named the text instances).
The committed store written by the old code itself is migrated in tests/cli/test_migrate.py."""

from __future__ import annotations

import os

import pytest

from engine.check import check_store
from engine.errors import EngineError
from engine.format import FORMAT_VERSION
from engine.graph.api import GraphStore
from engine.migration import migrate_store
from engine.migration import fact_chains, raw_passages, split_text_index, turn_fields
from engine.migration.steps import STEPS, pending_steps
from engine.store import Store
from engine.text import stored
from engine.text.index import TextIndex
from engine_testkit import rewrite_manifest_as, store_files

NOTE_TYPED_AS_A_NODE = "notes/fact.txt"


def old_store(path: str, version: int = 3) -> None:
    """Nodes a, b (b deleted) and c in the graph; in the one text index: documents of a, b and c (c's replaced
    once), two plain documents (one typed "Fact", one deleted again); half flushed, half in the WAL."""
    with Store.open(path) as store:
        graph, text = GraphStore(store), TextIndex(store)
        for key in ("a", "b", "c"):
            graph.add_node(key, "Fact", {"text": f"fact {key}"})
        graph.add_edge("a", "ABOUT", "c", weight=2.0)
        text.add_many([{"key": key, "fields": {"title": f"fact {key}", "text": f"memory about {key}"},
                        "type": "Fact"} for key in ("a", "b", "c")])
        store.flush()
        graph.delete_node("b")
        text.add("c", {"text": "memory about c, again"}, type="Fact")
        text.add(NOTE_TYPED_AS_A_NODE, {"title": "note", "text": "a plain note about memory"}, type="Fact")
        text.add("notes/gone.txt", "deleted memory note")
        text.delete("notes/gone.txt")
    rewrite_manifest_as(path, version)


def search(store, owner: str, query: str = "memory note fact") -> list:
    return sorted(hit.key for hit in TextIndex(store, owner=owner).search(query, top=20))


def test_the_steps_run_in_order_on_the_stores_that_predate_them():
    assert STEPS == ("split_text_index", "turn_fields", "raw_passages", "fact_chains")
    assert pending_steps(2) == pending_steps(3) == [split_text_index, turn_fields, raw_passages, fact_chains]
    assert pending_steps(4) == [fact_chains]
    assert pending_steps(FORMAT_VERSION) == []


def test_the_step_names_the_indexes_memctl_reads():
    from memctl import indexes

    assert (split_text_index.NODES, split_text_index.DOCUMENTS) == (indexes.NODES, indexes.DOCUMENTS)


def test_raw_passages_counts_the_chunks_and_stages_nothing_the_rebuild_indexes_them(tmp_path):
    """The passage index is built from the chunks by the migration's rebuild (the `raw` kind): the step
    changes no record."""
    from engine.raw import RawStore

    with Store.open(str(tmp_path / "store")) as store:
        with RawStore(store).batch() as writer:
            writer.put_turns("Ann: the locker code is 4711".encode(), {}, "c", [
                {"speaker": "Ann", "ts": None, "source_id": "c:1", "offset": 5, "length": 23, "extra": None}])
        changes = raw_passages.plan(store, {})
        assert changes.counts == {"chunks": 1} and changes.runs == [] and changes.retired_counters == []
        store.rebuild()
        [hit] = RawStore(store).passages().searcher().search("locker")
        assert hit.key.endswith("@5+23")


def test_node_documents_go_to_the_nodes_index_by_their_key_and_the_rest_to_documents(tmp_path):
    path = str(tmp_path / "store")
    old_store(path)
    with Store.open(path, writable=False, migrating=True) as before:
        docnos = before.counter("text.docno")
        signature = before.get("text.meta", "tokenizer")
    report = migrate_store(path)
    assert report["steps"][0]["counts"] == {"node_documents": 3, "documents": 1, "retired_docnos_dropped": 2}
    assert (report["from_version"], report["migrated"], report["wal_batches"]) == (3, True, 5)
    with Store.open(path, writable=False) as store:
        # b is deleted, yet its record keeps its key: its document is a node's (R2G removes it with the node).
        assert search(store, "text:nodes") == ["a", "b", "c"]
        assert search(store, "text:documents") == [NOTE_TYPED_AS_A_NODE]  # typed like a node, keyed like a file
        assert not list(store.scan("text.doc")) and not list(store.scan("text.dead")) and "text.docno" not in \
            store.counters
        for owner in ("text:nodes", "text:documents"):
            assert store.counter(f"{owner}.docno") == docnos and store.get(f"{owner}.meta", "tokenizer") == signature
            assert not list(store.scan(f"{owner}.dead"))
        assert [row["key"] for row in GraphStore(store).neighbors("a").rows()] == ["c"]
        assert {entry["owner"] for entry in store.manifest.segments} == {"records", "graph", "text:nodes",
                                                                         "text:documents"}
    assert check_store(path).problems == []
    with Store.open(path) as store:  # new documents get docnos above every old one
        assert TextIndex(store, owner="text:nodes").add("d", "memory about d") == docnos


def test_a_format_2_store_migrates_with_its_text_records_as_they_are(tmp_path):
    """Format 2 kept a field's tokens as a [terms, positions] pair under "tokens" and no "positions" map; the
    step moves records unchanged and every reader takes that layout."""
    path = str(tmp_path / "store")
    old_store(path, version=2)
    pair = list(stored.encode(["format", "two", "memory"], [0, 1, 2]))
    with Store.open(path, writable=False, migrating=True) as store:
        docno = store.counter("text.docno")
    # Written as a format-2 writer did (under format 4's code, a Store opened for migration writes no batch).
    rewrite_manifest_as(path, FORMAT_VERSION)
    with Store.open(path) as store:
        with store.batch() as batch:
            batch.put("text.doc", "notes/old.txt", {"docno": docno, "tokens": {"text": pair}, "tags": [],
                                                    "type": None, "ts": None})
            batch.allocate("text.docno")
    rewrite_manifest_as(path, 2)
    migrate_store(path)
    with Store.open(path, writable=False) as store:
        assert store.get("text:documents.doc", "notes/old.txt")["tokens"] == {"text": pair}
        assert search(store, "text:documents", "two") == ["notes/old.txt"]
    assert check_store(path).problems == []


def test_an_outdated_store_is_read_but_only_a_migration_writes_it(tmp_path):
    path = str(tmp_path / "store")
    old_store(path)
    files = store_files(path)
    with Store.open(path, migrating=True) as store:
        assert store.outdated and store.get("text.doc", "a") is not None
        store.close_flush_bytes = 0
        for write in (store.flush, store.compact, lambda: store.commit([[1, "t", ["k"], [1]]])):
            with pytest.raises(EngineError, match="format 3: only `memctl migrate` writes it"):
                write()
    assert store_files(path).keys() - {"LOCK", "LOCK.gc"} == files.keys() - {"LOCK", "LOCK.gc"}
    assert {name: data for name, data in store_files(path).items() if name.endswith((".seg", ".log"))} == \
        {name: data for name, data in files.items() if name.endswith((".seg", ".log"))}


def test_opening_an_outdated_store_creates_no_wal_of_this_format(tmp_path):
    """A crash while a flush of the old code created its next WAL leaves a file without a whole header; a writer
    of today's code would start that WAL afresh, with a header of today's format, which the old code refuses."""
    path = str(tmp_path / "store")
    old_store(path)
    with Store.open(path, writable=False, migrating=True) as store:
        torn = os.path.join(path, "wal", f"{store.manifest.next_file_number:06d}.log")
    with open(torn, "wb") as handle:
        handle.write(b"MEMCT")
    with Store.open(path, migrating=True):
        pass
    assert open(torn, "rb").read() == b"MEMCT"


def test_a_crash_before_the_manifest_leaves_the_old_store(tmp_path):
    from engine import fs
    from engine_testkit import SimulatedCrash, crash_at

    path = str(tmp_path / "store")
    old_store(path)
    old = {name: data for name, data in store_files(path).items() if not name.startswith("LOCK")}
    crash_at("manifest.before_current")
    with pytest.raises(SimulatedCrash):
        migrate_store(path)
    fs.disarm_all()
    found = store_files(path)
    assert {name: found[name] for name in old} == old  # nothing the old code reads has changed
    assert not [name for name in found.keys() - old.keys() if name.startswith("wal" + os.sep)]
    assert migrate_store(path)["migrated"] and check_store(path).problems == []


def _format_3_turns(store, raw_id: str, turns: list) -> None:
    """A raw.turns record as format 3 wrote it: today's encoding cut to its first 8 columns."""
    from engine.blob_files import compress_all
    from engine.codec import pack, unpack
    from engine.format import RAW_TURNS_TABLE
    from engine.raw.turn_columns import TurnColumns, encode_turns

    record = encode_turns("conversation", TurnColumns.from_dicts(turns), 1000)
    record["turns"] = compress_all([pack(unpack(record["turns"])[:8])])[0]
    with store.batch() as batch:
        batch.put(RAW_TURNS_TABLE, raw_id, {**record, "seq": 0})


TURNS = [{"speaker": "Ann", "ts": "2024-05-01T10:00:00", "source_id": "x:1", "offset": 0, "length": 5,
          "extra": {"caption": "a cat", "keep": 1}},
         {"speaker": "Bo", "ts": None, "source_id": "x:2", "offset": 6, "length": 4, "extra": None}]


def _mapping(source_id: str, extra: dict) -> dict:
    extra = dict(extra)
    caption = extra.pop("caption", None)
    return {"session": "s" + source_id[-1], "attachments": ({"kind": "image", "caption": caption},) if caption else (),
            "reply_to": "x:1" if source_id == "x:2" else None, "extra": extra}


@pytest.mark.parametrize("hooks, expected", [
    ({}, [(None, [], None, {"caption": "a cat", "keep": 1}), (None, [], None, {})]),
    ({turn_fields.HOOK: _mapping}, [("s1", [{"kind": "image", "caption": "a cat"}], None, {"keep": 1}),
                                    ("s2", [], "x:1", {})]),
])
def test_turn_fields_rewrites_version_3_turns_with_what_the_hook_says(tmp_path, hooks, expected):
    from engine.raw.turn_columns import decode_turns

    with Store.open(str(tmp_path / "store")) as store:
        _format_3_turns(store, "raw_0", TURNS)
        changes = turn_fields.plan(store, hooks)
        store.stage(changes.runs, changes.retired_counters)
        turns = decode_turns("raw_0", store.get("raw.turns", "raw_0"))
    assert [(turn["session"], turn["attachments"], turn["reply_to"], turn["extra"]) for turn in turns] == expected
    assert [(turn["speaker"], turn["ts"], turn["source_id"], turn["raw_ref"]["offset"], turn["raw_ref"]["length"])
            for turn in turns] == [("Ann", "2024-05-01T10:00:00", "x:1", 0, 5), ("Bo", None, "x:2", 6, 4)]
    assert changes.counts["chunks"] == 1 and changes.counts["turns"] == 2


def test_turn_fields_leaves_records_of_today_alone(tmp_path):
    from engine.blob_files import compress_all
    from engine.raw.turn_columns import TurnColumns, encode_turns

    with Store.open(str(tmp_path / "store")) as store:
        record = encode_turns("conversation", TurnColumns.from_dicts(TURNS), 1000)
        record["turns"] = compress_all([record["turns"]])[0]
        with store.batch() as batch:
            batch.put("raw.turns", "raw_0", {**record, "seq": 0})
        assert turn_fields.plan(store, {turn_fields.HOOK: _mapping}).counts["chunks"] == 0
