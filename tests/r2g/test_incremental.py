"""Incremental and idempotent conversion: r2g.done, a second run, new chunks later, --rebuild, batches."""

from __future__ import annotations

import os

import pytest

from engine.format import GRAPH_EDGE_TABLE, GRAPH_NODE_TABLE
from engine.graph.api import GraphStore
from r2g_testkit import convert, dump, ingest, nodes_of_type, open_memory, write_jsonl


def _session(conv: str, session: int, day: str, speakers=("Ann", "Ben"), turns: int = 4) -> list[dict]:
    topics = ["my puppy Biscuit loves the beach", "I went hiking at Mount Tam with Carla",
              "we watched a movie about Paris", "Ben plays guitar in a jazz band"]
    return [{"conv_id": conv, "id": f"D{session}:{number}", "speaker": speakers[number % 2],
             "ts": f"{day}T1{number}:00:00", "text": f"On day {day}, {topics[(session + number) % 4]}."}
            for number in range(1, turns + 1)]


def _without(snapshot: dict, edge_type: str) -> dict:
    return {**snapshot, "edges": {key: edge for key, edge in snapshot["edges"].items() if edge[1] != edge_type}}


def test_second_run_changes_nothing(isolated_home, tmp_path):
    ingest(isolated_home, write_jsonl(tmp_path / "a.jsonl", _session("c1", 1, "2023-05-01")))
    first = convert(isolated_home)
    before = dump(isolated_home)
    with open_memory(isolated_home, writable=False) as memory:
        sequence = memory.store.sequence
    second = convert(isolated_home)
    assert first["chunks_new"] == 1 and second["chunks_new"] == 0 and second["batches"] == 0
    assert dump(isolated_home) == before
    with open_memory(isolated_home, writable=False) as memory:
        assert memory.store.sequence == sequence  # not even an empty batch was written


def test_rebuild_regenerates_the_same_graph(isolated_home, tmp_path):
    ingest(isolated_home, write_jsonl(tmp_path / "a.jsonl", _session("c1", 1, "2023-05-01") +
                                      _session("c1", 2, "2023-05-02") + _session("c2", 1, "2023-06-01")))
    convert(isolated_home)
    before, ids = dump(isolated_home), _internal_ids(isolated_home)
    summary = convert(isolated_home, rebuild=True)
    assert summary["rebuild"] and summary["nodes_removed"] == 0
    assert summary["chunks_new"] == summary["chunks_total"] == 2
    assert dump(isolated_home) == before
    assert _internal_ids(isolated_home) == ids


def _internal_ids(home) -> dict:
    with open_memory(home, writable=False) as memory:
        return {key: record["id"] for key, record in memory.store.scan(GRAPH_NODE_TABLE)}


def test_rebuild_removes_what_it_no_longer_makes_and_keeps_other_nodes(isolated_home, tmp_path):
    ingest(isolated_home, write_jsonl(tmp_path / "a.jsonl", _session("c1", 1, "2023-05-01")))
    convert(isolated_home)
    before = dump(isolated_home)
    [episode] = list(nodes_of_type(isolated_home, "Episode"))[:1]
    with open_memory(isolated_home) as memory:
        graph = GraphStore(memory.store)
        with graph.batch() as writer:
            writer.add_node("fact_stale", "Fact", {"title": "old", "provenance": {"creator": "r2g", "version": 1}})
            writer.add_edge("fact_stale", "DERIVED_FROM", episode)
            writer.add_node("Task:call mom", "Task", {"title": "call mom"})
    summary = convert(isolated_home, rebuild=True)
    assert summary["nodes_removed"] == 1
    after = dump(isolated_home)
    assert "fact_stale" not in after["nodes"] and "Task:call mom" in after["nodes"]
    del after["nodes"]["Task:call mom"]
    assert after == before


def test_new_chunks_later_give_the_graph_of_one_run(isolated_home, tmp_path):
    first, second = _session("c1", 1, "2023-05-01"), _session("c1", 2, "2023-05-03")
    ingest(isolated_home, write_jsonl(tmp_path / "a.jsonl", first))
    convert(isolated_home)
    ingest(isolated_home, write_jsonl(tmp_path / "b.jsonl", second))
    summary = convert(isolated_home)
    assert summary["chunks_new"] == 1
    incremental = dump(isolated_home)
    convert(isolated_home, rebuild=True)
    # SIMILAR_TO is decided within a batch (documented); everything else is the same.
    assert _without(incremental, "SIMILAR_TO") == _without(dump(isolated_home), "SIMILAR_TO")


def test_a_chunk_that_belongs_earlier_is_linked_into_the_chain(isolated_home, tmp_path):
    late, early = _session("c1", 2, "2023-05-09"), _session("c1", 1, "2023-05-01")
    ingest(isolated_home, write_jsonl(tmp_path / "late.jsonl", late))
    convert(isolated_home)
    ingest(isolated_home, write_jsonl(tmp_path / "early.jsonl", early))
    convert(isolated_home)
    incremental = dump(isolated_home)
    chain = sorted((edge[0], edge[2]) for edge in incremental["edges"].values() if edge[1] == "TEMPORAL_NEXT")
    episodes = sorted(nodes_of_type(isolated_home, "Episode").values(), key=lambda episode: episode["props"]["recency"])
    keys = [episode["key"] for episode in episodes]
    assert chain == sorted(zip(keys, keys[1:]))
    convert(isolated_home, rebuild=True)
    assert _without(incremental, "SIMILAR_TO") == _without(dump(isolated_home), "SIMILAR_TO")


def test_small_batches_give_the_graph_of_one_batch(isolated_home, tmp_path):
    turns = _session("c1", 1, "2023-05-01") + _session("c1", 2, "2023-05-02") + _session("c2", 1, "2023-06-01")
    ingest(isolated_home, write_jsonl(tmp_path / "a.jsonl", turns))
    one = convert(isolated_home)
    whole = dump(isolated_home)
    many = convert(isolated_home, rebuild=True, config_values={"r2g.batch_turns": 1})
    assert one["batches"] == 1 and many["batches"] > 1
    assert _without(dump(isolated_home), "SIMILAR_TO") == _without(whole, "SIMILAR_TO")


def test_an_interrupted_rebuild_resumes(isolated_home, tmp_path):
    ingest(isolated_home, write_jsonl(tmp_path / "a.jsonl", _session("c1", 1, "2023-05-01")))
    convert(isolated_home)
    before = dump(isolated_home)
    with open_memory(isolated_home) as memory:
        with memory.store.batch() as batch:
            batch.put("r2g.meta", "rebuild", 1)  # what a crash right after the removal began leaves
    summary = convert(isolated_home)
    assert summary["rebuild"] and summary["chunks_new"] == 1
    assert dump(isolated_home) == before
    with open_memory(isolated_home, writable=False) as memory:
        assert memory.store.get("r2g.meta", "rebuild") is None


def test_graph_edges_keep_no_stale_temporal_links(isolated_home, tmp_path):
    ingest(isolated_home, write_jsonl(tmp_path / "a.jsonl", _session("c1", 3, "2023-05-05")))
    convert(isolated_home)
    ingest(isolated_home, write_jsonl(tmp_path / "b.jsonl", _session("c1", 1, "2023-05-01")))
    ingest(isolated_home, write_jsonl(tmp_path / "c.jsonl", _session("c1", 4, "2023-05-07")))
    convert(isolated_home)
    with open_memory(isolated_home, writable=False) as memory:
        temporal = [key for key, record in memory.store.scan(GRAPH_EDGE_TABLE) if '"TEMPORAL_NEXT"' in key]
    assert len(temporal) == 3 * 4 - 1


def test_a_first_conversion_in_many_batches_gives_the_graph_of_one(isolated_home, tmp_path):
    """A first conversion skips the lookups of nodes and SAME_AS candidates it has not written yet; later
    batches must still find what earlier ones wrote, as they do when the graph held something before."""
    told = [{"conv_id": f"t{number}", "id": "D1:1", "speaker": "Ann", "ts": f"2023-05-10T1{number}:00:00",
             "text": text} for number, text in ((0, "Tom played soccer in the park yesterday."),
                                                (1, "Tom played soccer with friends."))]
    turns = _session("c1", 1, "2023-05-01") + _session("c2", 1, "2023-05-01") + told
    homes = {name: tmp_path / name for name in ("one", "many", "not_empty")}
    for home in homes.values():
        ingest(home, write_jsonl(tmp_path / "a.jsonl", turns))
    with open_memory(homes["not_empty"]) as memory:
        with GraphStore(memory.store).batch() as writer:
            writer.add_node("note_user", "Meta", {"title": "made by hand"})
    one = convert(homes["one"])
    many = convert(homes["many"], config_values={"r2g.batch_turns": 1})
    convert(homes["not_empty"], config_values={"r2g.batch_turns": 1})
    assert one["batches"] == 1 and many["batches"] > 1
    whole = _without(dump(homes["one"]), "SIMILAR_TO")
    assert any(edge[1] == "SAME_AS" for edge in whole["edges"].values())
    assert max(node[1].get("frequency", 1) for node in whole["nodes"].values()) > 1
    assert _without(dump(homes["many"]), "SIMILAR_TO") == whole
    not_empty = _without(dump(homes["not_empty"]), "SIMILAR_TO")
    assert not_empty["nodes"].pop("note_user")[0] == "Meta"
    assert not_empty == whole


def test_a_same_as_edge_to_an_earlier_batch_is_written_with_the_bulk_edges(isolated_home, tmp_path, monkeypatch):
    """The ids of the nodes earlier batches wrote are at hand, so a new Fact's SAME_AS to an earlier one does not
    go one by one (each such write cut the bulk run of the batch's edges around it)."""
    from engine.graph.batch import GraphBatch

    told = [{"conv_id": "c1", "id": f"D1:{number}", "speaker": "Ann", "ts": f"2023-05-10T1{number}:00:00",
             "text": text} for number, text in ((0, "Tom played soccer in the park yesterday."),
                                                (1, "Tom played soccer with friends."))]
    ingest(isolated_home, write_jsonl(tmp_path / "a.jsonl", told[:1]), write_jsonl(tmp_path / "b.jsonl", told[1:]))
    one_by_one = []
    add_edge = GraphBatch.add_edge

    def recorded(self, source, edge_type, target, *arguments, **keywords):
        one_by_one.append(edge_type)
        return add_edge(self, source, edge_type, target, *arguments, **keywords)

    monkeypatch.setattr(GraphBatch, "add_edge", recorded)
    summary = convert(isolated_home, config_values={"r2g.batch_turns": 1})
    assert summary["batches"] == 2 and summary["edges_written"]["SAME_AS"] == 1
    assert "SAME_AS" not in one_by_one


def test_a_long_run_of_flushed_batches_keeps_few_records_segments_and_the_graph_of_one_batch(isolated_home,
                                                                                            tmp_path):
    """Every batch flushes (a tiny engine.flush_bytes): r2g merges the records segments as they pile up
    (Store.merge_tiers), so their number stays below the fanout instead of growing with the batches."""
    from memctl.r2g.builder import RECORDS_TIER_FANOUT

    files = [write_jsonl(tmp_path / f"s{session:02d}.jsonl",
                         _session(f"c{session % 3}", session, f"2023-05-{session + 1:02d}"))
             for session in range(24)]
    homes = {name: tmp_path / name for name in ("one", "many")}
    for home in homes.values():
        ingest(home, *files)
    convert(homes["one"])
    with open_memory(homes["many"]) as memory:
        memory.store.flush_bytes = 1
        memory.config = memory.config.with_values({"r2g.batch_turns": 1}, "test")
        summary = memory.r2g()
        segments = len(memory.store.records)
    assert summary["batches"] >= 3 * RECORDS_TIER_FANOUT
    assert segments < RECORDS_TIER_FANOUT
    assert _without(dump(homes["many"]), "SIMILAR_TO") == _without(dump(homes["one"]), "SIMILAR_TO")


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="smaps is Linux-only")
def test_a_run_gives_back_the_mapped_pages_of_the_segments_it_read(isolated_home, tmp_path):
    """Each batch's reads land on older segments (chain maintenance reads every claim of a chain it touches):
    their pages stayed resident until the run closed them (0.4 GB of a 32 MiB transcript's r2g). After every
    batch r2g gives them back, so none are left when it returns."""
    from engine_testkit import mapped_resident_bytes

    files = [write_jsonl(tmp_path / f"s{session:02d}.jsonl",
                         _session(f"c{session % 2}", session, f"2023-05-{session + 1:02d}"))
             for session in range(6)]
    home = tmp_path / "home"
    ingest(home, *files)
    with open_memory(home) as memory:
        memory.store.flush_bytes = 1
        memory.config = memory.config.with_values({"r2g.batch_turns": 1}, "test")
        summary = memory.r2g()
        assert summary["batches"] >= 6 and len(memory.store.records) > 1
        resident = mapped_resident_bytes(str(home))
    assert resident == 0


def test_every_batch_gives_the_free_heap_back(isolated_home, tmp_path, monkeypatch):
    """The objects of a batch are freed among the run's long-lived ones, and glibc kept their pages (50 MB by the
    28th batch of a 6 MiB transcript): each batch that commits ends with engine.heap.release_free_memory."""
    import memctl.r2g.builder as builder

    calls = []
    monkeypatch.setattr(builder, "release_free_memory", lambda: calls.append(1))
    files = [write_jsonl(tmp_path / f"s{session:02d}.jsonl", _session("c", session, f"2023-05-{session + 1:02d}"))
             for session in range(3)]
    home = tmp_path / "home"
    ingest(home, *files)
    with open_memory(home) as memory:
        memory.config = memory.config.with_values({"r2g.batch_turns": 1}, "test")
        summary = memory.r2g()
    assert summary["batches"] >= 3
    assert len(calls) == summary["batches"]


def test_the_readers_of_segments_a_tier_merge_replaced_are_freed_during_the_run(isolated_home, tmp_path, monkeypatch):
    """A merged-away segment's reader holds itself in a cycle (a text segment's readers point back at it) and the
    collector is paused for the run: each kept its mapped file and decompressed columns to the end of the run,
    92 deleted segment files mapped late in a 32 MiB transcript (issue 17)."""
    import gc

    from engine.segment import Segment
    from memctl.r2g.builder import Builder

    turns = [turn for session in range(1, 25) for turn in _session(f"c{session}", session, f"2023-05-{session:02d}")]
    ingest(isolated_home, *[write_jsonl(tmp_path / f"{index}.jsonl", [turn]) for index, turn in enumerate(turns)])
    kept = []
    commit = Builder._commit

    def checked(builder):
        builder.store.flush_bytes = 1  # a segment of every kind each batch: merges every few batches
        commit(builder)
        kept.append(sum(isinstance(item, Segment) and not os.path.exists(item.path) for item in gc.get_objects()))

    monkeypatch.setattr(Builder, "_commit", checked)
    summary = convert(isolated_home, config_values={"r2g.batch_turns": 1})
    with open_memory(isolated_home, writable=False) as memory:
        merged = len(os.listdir(memory.store.path + "/seg"))
    assert summary["batches"] == len(turns) and merged < summary["batches"]  # merges happened
    assert max(kept) == 0
