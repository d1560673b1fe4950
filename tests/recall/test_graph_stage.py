"""Stage C on a graph built by hand: which TEMPORAL_NEXT edges are reply edges, hubs, PPR additions."""

from __future__ import annotations


import numpy as np
import pytest

from engine.graph.api import GraphStore
from engine.store import Store
from memctl.recall.nodes import Nodes
from memctl.settings import defaults
from memctl.recall.stage_c import GraphStage

TURNS = {"e1": ("Bob", "S1"), "e2": ("Ann", "S1"), "e3": ("Ann", "S1"), "e4": ("Bob", "S2"), "e5": ("Bob", "S2")}


@pytest.fixture
def store(tmp_path):
    store = Store.open(str(tmp_path / "store"), writable=True)
    graph = GraphStore(store)
    with graph.batch() as writer:
        for key, (speaker, session) in TURNS.items():
            writer.add_node(key, "Episode", {"attributes": {"speaker": speaker, "session": session}})
        writer.add_node("c", "Concept", {"title": "topic"})
        for source, target in (("e1", "e2"), ("e2", "e3"), ("e3", "e4"), ("e4", "e5")):
            same = TURNS[source][1] == TURNS[target][1]
            change = TURNS[source][0] != TURNS[target][0]
            writer.add_edge(source, "TEMPORAL_NEXT", target,
                            properties={"same_session": same, "speaker_change": change})
        for key in TURNS:
            writer.add_edge(key, "ABOUT", "c")
    yield store
    store.close()


def _stage(store, **settings) -> GraphStage:
    graph = GraphStore(store)
    tuned = defaults().with_values({"recall": settings})
    return GraphStage(graph, Nodes(graph), tuned)


def test_reply_edges_join_other_speakers_of_one_session(store):
    stage = _stage(store)
    scores, via, facts = stage.reply_hop({"e1": 10.0}, 0.3)
    assert scores == {"e1": 10.0, "e2": 3.0}
    assert via == {"e2": ("e1", "TEMPORAL_NEXT", "reply")}
    # e2 → e3: same speaker; e3 → e4: another session. Neither is a reply edge.
    scores, via, _ = stage.reply_hop({"e3": 10.0}, 0.3)
    assert scores == {"e3": 10.0} and via == {}
    scores, _, _ = stage.reply_hop({"e1": 10.0, "e2": 4.0}, 0.3)
    assert scores == {"e1": 10.0 + 0.3 * 4.0, "e2": 4.0 + 0.3 * 10.0}


def test_hubs_join_the_subgraph_but_are_not_expanded(store):
    types = [GraphStore(store).type_ids("edge")["ABOUT"]]
    seeds = np.array([GraphStore(store).get_node("e1")["id"]], np.int64)
    through = _stage(store, hub_degree=10).neighbourhood(seeds, 2, types, 100)
    assert len(through) == 6  # e1, the concept, then e2..e5
    blocked = _stage(store, hub_degree=3).neighbourhood(seeds, 2, types, 100)
    assert len(blocked) == 2 and list(blocked.hop) == [0, 1]


def test_max_nodes_caps_the_subgraph(store):
    types = [GraphStore(store).type_ids("edge")["ABOUT"]]
    seeds = np.array([GraphStore(store).get_node("e1")["id"]], np.int64)
    assert len(_stage(store, hub_degree=10).neighbourhood(seeds, 2, types, 3)) == 3


def test_ppr_scores_the_seeds_and_adds_reached_episodes(store):
    stage = _stage(store, hub_degree=10, ppr_seeds=5)
    ppr, added, facts = stage.expand({"e1": 5.0}, 2, ["ABOUT", "TEMPORAL_NEXT"], ["Episode"], 10)
    assert set(ppr) == {"e1"} and ppr["e1"] > 0
    keys = [key for key, _, _, _ in added]
    assert set(keys) == {"e2", "e3", "e4", "e5"}
    assert all(node_type == "Episode" for _, _, node_type, _ in added)
    [(_, _, _, via)] = [entry for entry in added if entry[0] == "e2"]
    assert via[0] in ("e1", "c")
    assert facts["subgraph"] == 6


def test_episode_sources_of_facts(store):
    graph = GraphStore(store)
    with graph.batch() as writer:
        writer.add_node("f1", "Fact", {"title": "fact"})
        writer.add_edge("f1", "DERIVED_FROM", "e3")
    assert _stage(store).episodes_of(["f1", "e1"]) == {"f1": "e3"}


def test_edge_props_decide_for_nodes_without_speaker_attributes(tmp_path):
    store = Store.open(str(tmp_path / "bare"), writable=True)
    graph = GraphStore(store)
    with graph.batch() as writer:
        for key in ("x1", "x2", "x3"):
            writer.add_node(key, "Episode", {"title": key})
        writer.add_edge("x1", "TEMPORAL_NEXT", "x2", properties={"same_session": True, "speaker_change": True})
        writer.add_edge("x2", "TEMPORAL_NEXT", "x3", properties={"same_session": True, "speaker_change": False})
    try:
        stage = _stage(store)
        assert stage.reply_hop({"x2": 1.0}, 0.5)[0] == {"x2": 1.0, "x1": 0.5}
    finally:
        store.close()
