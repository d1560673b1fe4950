"""Tier merges of derived segments (Store.merge_tiers, each kind's merge_newest): text postings, graph CSR and
raw passage segments written one per flush are merged in size tiers as records segments are, every query
answers exactly as before, deletions of documents, edges and passages held by older segments survive the
merge, and a crash leaves the merged segments or the merge of them."""

from __future__ import annotations

import random
import shutil

import numpy as np
import pytest

from engine import fs
from engine.check import check_store
from engine.format import RAW_KIND, TEXT_KIND
from engine.graph.api import GraphStore
from engine.graph.kind import KIND_NAME as GRAPH_KIND
from engine.raw import RawStore
from engine.records import tiers
from engine.store import Store
from engine.text.index import TextIndex
from engine.text.tokenizer import Tokenizer
from engine_testkit import SimulatedCrash, crash_at

TOKENIZER = Tokenizer()
WORDS = ["memory", "driver", "bluetooth", "kyoto", "peanut", "journal", "蓝牙", "耳机", "日志", "恢复", "segment"]
TEXT_QUERIES = ("memory driver", "蓝牙 耳机", "kyoto peanut journal", "segment 日志 恢复", '"memory driver"')
PASSAGE_QUERIES = ("locker password", "bakery bread", "driver restarts", "蓝牙")
NODE_KEYS = [f"Concept:c{index}" for index in range(12)]
EDGE_TYPES = ["ABOUT", "SUPPORTS", "SIMILAR_TO"]
DERIVED = (TEXT_KIND, GRAPH_KIND, RAW_KIND)
FANOUT = 2


class Workload:
    """Random writes to the three derived kinds, flushed often: the first flush is big (a tier above the
    others, so it stays below every merge), later ones delete and replace what it and each other hold."""

    def __init__(self, store: Store, seed: int):
        self.store = store
        self.random = random.Random(seed)
        self.text = TextIndex(store, TOKENIZER)
        self.graph = GraphStore(store, clock=lambda: 1_000_000.0)
        self.raw = RawStore(store)
        self.documents: set = set()
        self.edges: set = set()
        self.nodes: set = set()
        self.chunks: list = []

    def sentence(self, words: int) -> str:
        return " ".join(self.random.choice(WORDS) for _ in range(words))

    def first_flush(self) -> None:
        self.text.add_many([{"key": f"d{number}", "fields": {"text": self.sentence(40)}} for number in range(150)])
        self.documents.update(f"d{number}" for number in range(150))
        for key in NODE_KEYS:
            self.graph.add_node(key, "Concept")
            self.nodes.add(key)
        for _ in range(60):
            self.add_edge()
        for number in range(40):
            self.put_chunk(number)
        self.store.flush()

    def step(self, number: int) -> None:
        """A flush's worth of changes: adds, replacements and deletions of what older flushes wrote."""
        rng = self.random
        for _ in range(rng.randrange(1, 4)):
            key = f"d{rng.randrange(200)}"  # new, or a replacement (an update retires the old docno)
            self.text.add(key, {"text": self.sentence(6)})
            self.documents.add(key)
        for key in rng.sample(sorted(self.documents), 2):
            self.text.delete(key)
            self.documents.discard(key)
        for _ in range(rng.randrange(1, 4)):
            self.add_edge()
        for key in rng.sample(sorted(self.edges), min(2, len(self.edges))):
            self.graph.delete_edge(key)
            self.edges.discard(key)
        if number % 5 == 4 and len(self.nodes) > 6:
            doomed = rng.choice(sorted(self.nodes))
            self.graph.delete_node(doomed)
            self.nodes.discard(doomed)
            self.edges = {key for key in self.edges if self.graph.edge(key) is not None}
        self.put_chunk(100 + number)
        if rng.random() < 0.5:
            self.put_chunk(rng.randrange(12))  # stored again: its older passages are retired
        if rng.random() < 0.5 and self.chunks:
            raw_id = self.chunks.pop(rng.randrange(len(self.chunks)))
            with self.raw.batch() as writer:
                writer.release(raw_id, self.raw.get(raw_id)["refcount"])
        self.store.flush()

    def add_edge(self) -> None:
        source, target = self.random.sample(sorted(self.nodes), 2)
        weight = self.random.choice([0.5, 1.0, 2.0])
        self.edges.add(self.graph.add_edge(source, self.random.choice(EDGE_TYPES), target, weight=weight, ts=1000.0))

    def put_chunk(self, number: int) -> None:
        texts = [f"Ann: my locker password is tulip-{number}.", f"Bo: the bakery sells bread {number}.",
                 f"Cy: step {number} checks the driver and restarts the service.", f"Di: 蓝牙耳机 {number}"]
        data = ("\n".join(texts) + "\n").encode()
        turns, offset = [], 0
        for index, text in enumerate(texts):
            length = len(text.encode())
            turns.append({"speaker": None, "ts": None, "source_id": f"t:{index}", "offset": offset,
                          "length": length, "extra": None})
            offset += length + 1
        with self.raw.batch() as writer:
            raw_id = writer.put_turns(data, {}, "c", turns).raw_id
        if raw_id not in self.chunks:
            self.chunks.append(raw_id)


def answers(store: Store) -> dict:
    """Every answer the three kinds give: text and passage rankings with scores and statistics, each node's
    edges both ways, node and edge keys, node types, and personalized PageRank."""
    text = TextIndex(store, TOKENIZER)
    graph = GraphStore(store)
    snapshot = graph.snapshot()
    live = snapshot.view.live_nodes()
    edges = {}
    for direction in ("out", "in"):
        gathered = snapshot.gather(live, direction)
        edges[direction] = sorted(zip(gathered.origin.tolist(), gathered.neighbor.tolist(),
                                      gathered.edge_type.tolist(), gathered.weight.tolist(),
                                      gathered.edge_id.tolist()))
    edge_ids = sorted({edge[4] for edge in edges["out"]})
    seeds = [key for key in NODE_KEYS if snapshot.node_id(key) is not None][:2]
    passages = RawStore(store).passages().searcher()
    return {
        "text": {query: [(hit.key, hit.score, tuple(hit.terms)) for hit in text.search(query, top=50)]
                 for query in TEXT_QUERIES},
        "text statistics": {name: value for name, value in text.statistics().items()
                            if name not in ("parts", "deleted")},
        "edges": edges,
        "node keys": snapshot.node_keys(np.arange(snapshot.node_count)),
        "node ids": [snapshot.node_id(key) for key in NODE_KEYS],
        "node types": snapshot.node_types(np.arange(snapshot.node_count)).tolist(),
        "edge keys": snapshot.edge_keys(edge_ids),
        # Rounded: a merged part lists a node's edges in another order, so sums may differ in the last bit.
        "pagerank": [(key, round(score, 12)) for key, score in
                     (graph.personalized_pagerank(seeds, k=None, top=None) if seeds else [])],
        "passages": {query: [(hit.key, hit.score) for hit in passages.search(query, 50)]
                     for query in PASSAGE_QUERIES},
    }


def derived_counts(store: Store) -> dict:
    return {owner: len(store.kind_segments.get(owner, [])) for owner in DERIVED}


@pytest.fixture
def small_tiers(monkeypatch):
    """Tiers of 1 KiB: the first flush's segments are a few tiers above the later, small ones."""
    monkeypatch.setattr(tiers, "TIER_BASE_BYTES", 1024)


def test_merged_derived_segments_answer_every_query_as_the_flushed_ones(tmp_path, small_tiers):
    path = str(tmp_path / "store")
    partial_merges = {owner: 0 for owner in DERIVED}
    with Store.open(path, holder="pytest") as store:
        workload = Workload(store, seed=11)
        workload.first_flush()
        for number in range(24):
            workload.step(number)
            before, counts = answers(store), derived_counts(store)
            store.merge_tiers(FANOUT)
            after = derived_counts(store)
            for owner in DERIVED:
                assert after[owner] <= counts[owner]
                partial_merges[owner] += after[owner] < counts[owner] and after[owner] > 1
                assert after[owner] < 2 + FANOUT * 8, f"{owner}: {after[owner]} segments after 24 flushes"
            assert answers(store) == before, f"after flush {number}"
        expected = answers(store)
    assert all(partial_merges.values()), partial_merges  # merges with older segments left below them
    with Store.open(path, holder="pytest") as reopened:
        assert answers(reopened) == expected
        reopened.compact()
        assert answers(reopened) == expected
    assert check_store(path).clean


def test_a_text_merge_keeps_the_retirements_of_older_documents(tmp_path, small_tiers):
    """Documents of the big first segment deleted and replaced in two later flushes: once those two are one
    segment, its deleted column still names the old docnos and search does not find them again."""
    with Store.open(str(tmp_path / "store"), holder="pytest") as store:
        index = TextIndex(store, TOKENIZER)
        index.add_many([{"key": f"d{number}", "fields": {"text": f"kyoto peanut {number} " + "memory " * 30}}
                        for number in range(100)])
        store.flush()
        index.delete("d1")
        index.add("d2", {"text": "bluetooth only"})
        index.add("fresh", {"text": "kyoto again"})
        store.flush()
        index.delete("fresh")  # held by the merged segments: dropped together with its retirement
        store.flush()
        before = [(hit.key, hit.score) for hit in index.search("kyoto peanut", top=200)]
        assert store.merge_tiers(FANOUT) >= 1
        assert len(store.kind_segments[TEXT_KIND]) == 2
        assert [(hit.key, hit.score) for hit in index.search("kyoto peanut", top=200)] == before
        assert {"d1", "d2", "fresh"}.isdisjoint(key for key, _ in before) and len(before) == 98
        merged = store.kind(TEXT_KIND).parts[1]
        assert merged.deleted.tolist() == [1, 2]  # d1's and d2's first docnos; fresh's went with it


def test_a_graph_merge_keeps_the_deletions_of_older_edges(tmp_path, small_tiers):
    """An edge of the first segment replaced in one later flush and deleted in the next: the merged segment
    drops it, so that its first version does not show again."""
    with Store.open(str(tmp_path / "store"), holder="pytest") as store:
        graph = GraphStore(store, clock=lambda: 1_000_000.0)
        nodes = [f"Concept:n{index}" for index in range(200)]
        for key in nodes:
            graph.add_node(key, "Concept")
        keys = [graph.add_edge(nodes[index], edge_type, nodes[(index + 1) % 200], weight=1.0)
                for edge_type in EDGE_TYPES for index in range(200)]
        store.flush()
        graph.update_edge(keys[0], weight=2.0)
        store.flush()
        graph.delete_edge(keys[0])
        graph.update_edge(keys[1], weight=3.0)
        store.flush()
        before = answers(store)
        assert store.merge_tiers(FANOUT) >= 1
        assert len(store.kind_segments[GRAPH_KIND]) == 2
        assert answers(store) == before
        assert [(row["key"], row["type"], row["weight"]) for row in graph.neighbors(nodes[1]).rows()] == \
            [("Concept:n2", "ABOUT", 3.0), ("Concept:n2", "SUPPORTS", 1.0), ("Concept:n2", "SIMILAR_TO", 1.0)]
        assert [row["type"] for row in graph.neighbors(nodes[0]).rows()] == ["SUPPORTS", "SIMILAR_TO"]


MERGE_POINTS = ["merge.derived.start", "segment.before_rename", "merge.derived.after_segments",
                "manifest.before_current", "compact.after_manifest.before_unlink"]


@pytest.mark.parametrize("failpoint", MERGE_POINTS)
def test_a_crash_at_any_pass_of_a_tier_merge_leaves_the_segments_or_their_merge(tmp_path, small_tiers, failpoint):
    """Every pass through `failpoint` during merge_tiers (records and derived merges), one crash each, on a copy
    of the same store: after reopening, every answer is the same, nothing obsolete is left, check is clean."""
    prepared = str(tmp_path / "prepared")
    with Store.open(prepared, holder="pytest") as store:
        workload = Workload(store, seed=5)
        workload.first_flush()
        for number in range(3):
            workload.step(number)
        workload.text.add("unflushed", {"text": "memory driver kyoto"})  # only in the WAL during the merges
        expected = answers(store)
    hit, crashed = 0, True
    while crashed:
        hit += 1
        path = str(tmp_path / f"hit{hit}")
        shutil.copytree(prepared, path)
        store = Store.open(path, holder="pytest")
        crash_at(failpoint, hit)
        try:
            store.merge_tiers(FANOUT)
            crashed = False
        except SimulatedCrash:
            pass
        finally:
            fs.disarm_all()
            store.close()
        with Store.open(path, holder="pytest") as reopened:
            assert answers(reopened) == expected, f"{failpoint}:{hit}"
            assert not reopened.obsolete_files(), "the next writer removes what the crash left"
            reopened.merge_tiers(FANOUT)
            assert derived_counts(reopened) == {owner: 2 for owner in DERIVED}  # the first flush's, and a merge
            assert answers(reopened) == expected
        assert check_store(path).clean
    assert hit > 3 if failpoint.startswith("merge.derived") else hit > 4  # three kinds' merges, and the records'
