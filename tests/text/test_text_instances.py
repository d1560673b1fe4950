"""Several text indexes in one store (MANIFEST.spec §4a): each named instance keeps its own records, docno
counter, segments and statistics through flush, compaction, WAL replay, deletion and check."""

from __future__ import annotations

import os

import pytest

from engine import manifest as manifest_module
from engine.check import check_store
from engine.errors import CorruptionError, InputError
from engine.format import DAMAGE_FILE
from engine.store import Store
from engine.text.index import TextIndex
from engine.text.kind import TextKind
from engine.text.tables import text_tables
from engine.text.tokenizer import Tokenizer

TOKENIZER = Tokenizer()
NODES, DOCUMENTS = "text:nodes", "text:documents"
# The same keys in both indexes, and words they share, with very different frequencies in each.
NODE_DOCUMENTS = [{"key": f"k{number}", "fields": {"title": f"node {number}", "text": text}}
                  for number, text in enumerate(["蓝牙 打不开 driver", "bluetooth driver rollback", "Kyoto peanut",
                                                 "蓝牙 耳机 battery", "driver update failed"])]
OTHER_DOCUMENTS = [{"key": f"k{number}", "fields": {"text": f"蓝牙 driver driver note {number}"}}
                   for number in range(12)]
QUERIES = ("蓝牙 driver", "Kyoto", "bluetooth rollback", "note")


def answers(index: TextIndex) -> dict:
    return {query: [(hit.key, round(hit.score, 9), tuple(hit.terms)) for hit in index.search(query, top=20)]
            for query in QUERIES}


def summary(index: TextIndex) -> dict:
    statistics = index.statistics()
    return {"answers": answers(index), "documents": statistics["documents"],
            "average_lengths": statistics["average_lengths"]}


@pytest.fixture
def alone(tmp_path) -> dict:
    """What the nodes index answers in a store that holds no other index."""
    with Store.open(str(tmp_path / "alone")) as store:
        index = TextIndex(store, TOKENIZER, owner=NODES)
        index.add_many(NODE_DOCUMENTS)
        return summary(index)


def test_two_instances_keep_their_documents_counters_and_statistics_apart(tmp_path, alone):
    path = str(tmp_path / "store")
    store = Store.open(path)
    nodes, documents = (TextIndex(store, TOKENIZER, owner=owner) for owner in (NODES, DOCUMENTS))
    assert nodes.add_many(NODE_DOCUMENTS) == list(range(5))
    assert documents.add_many(OTHER_DOCUMENTS) == list(range(12))  # docnos of its own counter
    assert summary(nodes) == alone
    assert {hit.key for hit in documents.search("note", top=20)} == {f"k{number}" for number in range(12)}
    assert nodes.search("note") == []
    store.flush()
    entries = [(entry["kind"], entry["owner"]) for entry in store.manifest.segments]
    assert sorted(entries) == [("records", "records"), ("text.postings", DOCUMENTS), ("text.postings", NODES)]
    assert summary(nodes) == alone
    assert documents.delete("k0") and documents.get("k0") is None  # the same key lives on in the other index
    assert nodes.get("k0")["docno"] == 0 and summary(nodes) == alone
    store.flush()
    store.compact()
    assert [len(store.kind_segments[owner]) for owner in (NODES, DOCUMENTS)] == [1, 1]
    assert summary(nodes) == alone and documents.statistics()["documents"] == 11
    nodes.delete("k2")  # left in the WAL: the reopen replays it
    store.close()
    with Store.open(path) as reopened:
        nodes, documents = (TextIndex(reopened, TOKENIZER, owner=owner) for owner in (NODES, DOCUMENTS))
        assert nodes.search("Kyoto") == [] and documents.statistics()["documents"] == 11
        assert [len(reopened.kind_segments[owner]) for owner in (NODES, DOCUMENTS)] == [1, 1]
        assert {hit.key for hit in documents.search("note", top=20)} == {f"k{number}" for number in range(1, 12)}
        assert [reopened.counter(text_tables(owner).docno) for owner in (NODES, DOCUMENTS)] == [5, 12]
    assert check_store(path).clean


def test_a_flush_of_one_instance_leaves_the_other_alone(store, alone):
    nodes, documents = (TextIndex(store, TOKENIZER, owner=owner) for owner in (NODES, DOCUMENTS))
    nodes.add_many(NODE_DOCUMENTS)
    store.flush()
    documents.add_many(OTHER_DOCUMENTS)
    store.flush()  # only the documents index has changes: only it gets a segment
    owners = [entry["owner"] for entry in store.manifest.segments if entry["kind"] == "text.postings"]
    assert owners == [NODES, DOCUMENTS]
    assert summary(nodes) == alone


def test_check_checks_each_instance_over_its_own_segments(store, monkeypatch):
    for owner in (NODES, DOCUMENTS):
        TextIndex(store, TOKENIZER, owner=owner).add_many(OTHER_DOCUMENTS[:3])
        store.flush()
    checked = []
    original = TextKind.check

    def recording(self, segments):
        checked.append((self.tables.owner, [os.path.basename(segment.path) for segment in segments]))
        return original(self, segments)

    monkeypatch.setattr(TextKind, "check", recording)
    assert check_store(store.path).clean
    named = {owner: [entry["name"] for entry in store.manifest.segments if entry["owner"] == owner]
             for owner in (NODES, DOCUMENTS)}
    assert sorted(checked) == sorted(named.items()) and all(len(names) == 1 for names in named.values())


def test_a_manifest_naming_a_segment_of_another_kind_as_an_instance_is_corrupt(store):
    TextIndex(store, TOKENIZER, owner=NODES).add("a", "alpha")
    store.flush()
    store.close()
    manifest = manifest_module.load(store.path, manifest_module.read_current(store.path))
    [entry] = [entry for entry in manifest.segments if entry["owner"] == NODES]
    entry["owner"] = "graph"
    manifest.number = manifest.next_file_number
    manifest.next_file_number += 1
    manifest_module.publish(store.path, manifest)
    for writable in (False, True):
        with pytest.raises(CorruptionError, match="names 'graph' as the owner of a 'text.postings' segment"):
            Store.open(store.path, writable=writable)
    marker, problem = check_store(store.path).problems  # the failed opens marked the store damaged
    assert marker["file"] == DAMAGE_FILE
    assert problem["message"] == "the MANIFEST names 'graph' as the owner of a 'text.postings' segment"


@pytest.mark.parametrize("table, reason", [
    ("text:Nodes.doc", "does not match"),
    ("text:.doc", "does not match"),
    ("text:a:b.doc", "does not match"),
    ("text:" + "x" * 33 + ".doc", "does not match"),
    ("graph:other.node", "has no named instances"),
    ("nothing:here.rows", "no derived segment kind named 'nothing'"),
])
def test_a_table_of_no_instance_is_refused_and_nothing_is_written(store, table, reason):
    sequence = store.sequence
    with pytest.raises(InputError, match=reason):
        with store.batch() as batch:
            batch.put("plain.rows", "a", 1)
            batch.put(table, "k", 1)
    assert store.sequence == sequence and store.get("plain.rows", "a") is None


def test_owners_that_name_no_text_index(store):
    for owner in ("graph", "text:Bad", "notes", "text:nodes.doc"):
        with pytest.raises(ValueError):
            TextIndex(store, TOKENIZER, owner=owner)
    with pytest.raises(KeyError, match="does not match"):
        store.kind("text:Bad")
    assert TextIndex(store, TOKENIZER, owner="text:" + "a" * 32).search("x") == []  # the longest name
