"""memctl.Memory.remember: ingest + r2g of new input in one commit, leaving the store ingest then r2g leaves."""

from __future__ import annotations

import pytest

from engine.errors import InputError
from engine.graph.api import GraphStore
from engine.raw import RawStore
from memctl.memory import Memory
from r2g_testkit import convert, dump, ingest, open_memory, write_jsonl

EXCHANGES = [
    "user: I adopted a corgi named Biscuit last week\nassistant: Congratulations on Biscuit the corgi!",
    "user: Biscuit chewed my hiking boots from Mount Tam\nassistant: Corgis love boots; try a chew toy.",
    "用户: 我下周三要去杭州出差\n助手: 好的，已记下你下周三去杭州出差。",
]


def _turns(conv: str, day: str, texts: list) -> list[dict]:
    return [{"conv_id": conv, "id": f"{conv}:{day}:{number}", "speaker": ("Ann", "Ben")[number % 2],
             "ts": f"{day}T1{number}:00:00", "text": text} for number, text in enumerate(texts)]


def _remember(home, **inputs) -> dict:
    with open_memory(home) as memory:
        return memory.remember(**inputs)


def _recalled(home, query: str) -> list:
    with open_memory(home, writable=False) as memory:
        return [(result["id"], result["score"]) for result in memory.recall(query, top=5)["results"]]


@pytest.fixture
def homes(tmp_path):
    """Two stores holding the same converted conversation."""
    earlier = write_jsonl(tmp_path / "earlier.jsonl", _turns("c1", "2023-05-01", ["Ann walks Biscuit daily.",
                                                                               "Ben bought a kayak in May."]))
    pair = tmp_path / "remembered", tmp_path / "ingested"
    for home in pair:
        ingest(home, earlier)
        convert(home)
    return pair


def test_remember_leaves_the_store_ingest_then_r2g_leaves(homes, tmp_path):
    remembered, ingested = homes
    later = write_jsonl(tmp_path / "later.jsonl", _turns("c1", "2023-05-02", ["Biscuit loves the kayak too.",
                                                                             "Ben paddles at Mount Tam."]))
    inputs = [{"paths": [str(later)]}] + [{"texts": [text]} for text in EXCHANGES]
    for given in inputs:
        _remember(remembered, **given)
        ingest(ingested, *given.get("paths", ()), texts=given.get("texts", ()))
        convert(ingested)
    assert dump(remembered) == dump(ingested)
    for query in ("corgi Biscuit boots", "kayak Mount Tam", "杭州 出差"):
        assert _recalled(remembered, query) == _recalled(ingested, query)


def test_remember_is_one_commit_and_lists_what_it_created(homes):
    home = homes[0]
    before = dump(home)
    with open_memory(home) as memory:
        sequence = memory.store.sequence
        created = memory.remember(texts=[EXCHANGES[0]])
        assert created["sequence"] == memory.store.sequence == sequence + 1
    after = dump(home)
    nodes = {node["key"]: node["type"] for node in created["nodes"]}
    assert nodes == {key: after["nodes"][key][0] for key in set(after["nodes"]) - set(before["nodes"])}
    assert {"Episode", "RawChunk", "Entity"} <= set(nodes.values())
    with open_memory(home, writable=False) as memory:
        assert [RawStore(memory.store).get(raw_id) is not None for raw_id in created["chunks"]] == [True]
        assert GraphStore(memory.store).node(created["chunks"][0]) is not None
    assert created["edges_written"] > 0 and created["documents"] > 0


def test_remembered_exchanges_are_recalled_first(tmp_path):
    home = tmp_path / "home"
    for text in EXCHANGES:
        _remember(home, texts=[text])
    with open_memory(home, writable=False) as memory:
        top = memory.recall("hiking boots chew toy", top=1)["results"][0]
        assert "boots" in top["text"]
        top = memory.recall("杭州出差", top=1)["results"][0]
        assert "杭州" in top["text"]


def test_remembering_the_same_input_again_creates_nothing(homes):
    home = homes[0]
    _remember(home, texts=[EXCHANGES[0]])
    before = dump(home)
    again = _remember(home, texts=[EXCHANGES[0]])
    assert (again["chunks"], again["nodes"], again["chunks_duplicate"]) == ([], [], 1)
    assert dump(home) == before


def test_bad_input_changes_nothing_and_creates_no_store(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"user: caf\xe9\n")
    home = tmp_path / "home"
    with Memory.open(home=str(home), writable=True, lazy=True) as memory:
        with pytest.raises(InputError, match="UTF-8"):
            memory.remember(paths=[str(bad)])
    assert not (home / "tenants").exists()


def _listing_counter(monkeypatch) -> list:
    """Counts the runs that list every conversation of the store (what `r2g` does)."""
    import memctl.r2g.builder as builder

    calls: list = []
    listing = builder.conversations

    def counted(raw):
        calls.append(1)
        return listing(raw)
    monkeypatch.setattr(builder, "conversations", counted)
    return calls


def _both(homes, given: dict) -> None:
    remembered, ingested = homes
    _remember(remembered, **given)
    ingest(ingested, *given.get("paths", ()), texts=given.get("texts", ()))
    convert(ingested)


def test_remember_reads_only_the_tails_of_its_conversations(homes, tmp_path, monkeypatch):
    listed = _listing_counter(monkeypatch)
    later = write_jsonl(tmp_path / "later.jsonl", _turns("c1", "2023-05-03", ["Ann sold the kayak.", "Why?"]))
    # One-turn chunks too: a new turn's old neighbour is indexed again with its own neighbour, two chunks back.
    singles = ["Ann: Biscuit learned to sit.", "Ben: Biscuit learned to roll over.",
               "Ann: Biscuit fetched the kayak paddle."]
    inputs = [{"texts": [EXCHANGES[0]]}, {"texts": [EXCHANGES[1]]}, {"paths": [str(later)]}]
    inputs += [{"texts": [text]} for text in singles]
    for given in inputs:
        _both(homes, given)
    assert len(listed) == len(inputs)  # the r2g runs of the ingested store; none for remember
    assert dump(homes[0]) == dump(homes[1])


def test_a_chunk_that_lands_before_a_tail_is_placed_by_listing_the_store(homes, tmp_path, monkeypatch):
    listed = _listing_counter(monkeypatch)
    earlier = write_jsonl(tmp_path / "earlier.jsonl", _turns("c1", "2023-04-20", ["Ann met Biscuit's breeder."]))
    _both(homes, {"paths": [str(earlier)]})
    assert len(listed) == 2
    assert dump(homes[0]) == dump(homes[1])


def test_remember_converts_what_an_ingest_left_unconverted(homes, tmp_path, monkeypatch):
    backlog = write_jsonl(tmp_path / "backlog.jsonl", _turns("c2", "2023-06-01", ["Carla plays jazz guitar."]))
    for home in homes:
        ingest(home, backlog)
    listed = _listing_counter(monkeypatch)
    _both(homes, {"texts": [EXCHANGES[2]]})
    assert len(listed) == 2
    assert dump(homes[0]) == dump(homes[1])
    assert "Carla" in str(dump(homes[0])["nodes"])
