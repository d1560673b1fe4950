"""GraphStore's typed reads, what memctl reads the graph through: nodes and edges as Node and Edge rows, by key
and by internal id, one at a time and in bulk, every live one in key order; the snapshot's ids, types and
edges as arrays. The same answers from the memtable, from flushed segments, after compaction and from a
reader; a deleted node or edge is no row."""

from __future__ import annotations

import numpy as np
import pytest

from engine.graph.api import GraphStore
from engine.graph.model import Edge, Node
from engine.graph.traverse import gather
from engine.store import Store


@pytest.fixture
def graph(store):
    graph = GraphStore(store, clock=lambda: 100.0)
    with graph.batch() as writer:
        writer.add_node("e1", "Episode", {"attributes": {"speaker": "Ann"}}, created_at=10.0)
        writer.add_node("f1", "Fact", {"title": "likes tea"})
        writer.add_node("gone", "Entity")
        writer.add_edge("f1", "DERIVED_FROM", "e1", weight=0.5, confidence=0.9, ts=7.0,
                        since="2024-01-01T00:00:00", properties={"why": "said so"})
        writer.add_edge("gone", "MENTIONS", "e1", key="custom-key")
    return graph


def states(store, graph):
    """The graph as stored now, flushed, compacted, and as a reader sees it."""
    yield "memtable", graph
    store.flush()
    yield "flushed", graph
    store.compact()
    yield "compacted", graph
    yield "reader", GraphStore(Store.open(store.path, writable=False))


def test_nodes_read_as_typed_rows(store, graph):
    graph.delete_node("gone")
    for state, reading in states(store, graph):
        episode = reading.node("e1")
        assert episode == Node("e1", 0, "Episode", {"attributes": {"speaker": "Ann"}}, 10.0, 100.0), state
        assert reading.node("f1") == Node("f1", 1, "Fact", {"title": "likes tea"}, 100.0, 100.0), state
        assert reading.node("gone") is None and reading.node("never") is None, state
        assert reading.nodes(["f1", "never", "gone", "e1"]) == [reading.node("f1"), None, None, episode], state
        assert reading.nodes_by_id([1, 2, 0, 99]) == [reading.node("f1"), None, episode, None], state
        assert [node.key for node in reading.iter_nodes()] == ["e1", "f1"], state
        assert reading.get_node("e1") == episode._asdict(), state


def test_edges_read_as_typed_rows(store, graph):
    key = '["f1","DERIVED_FROM","e1"]'
    for state, reading in states(store, graph):
        derived = reading.edge(key)
        assert derived == Edge(key, 0, 1, 0, "DERIVED_FROM", 0.5, 0.9, 7.0, 1704067200.0, None, {"why": "said so"},
                               100.0, 100.0), state
        custom = reading.edge("custom-key")
        assert (custom.type, custom.source_id, custom.target_id, custom.props) == ("MENTIONS", 2, 0, {}), state
        assert reading.edges([key, "missing", "custom-key"]) == [derived, None, custom], state
        assert reading.edges_by_id([1, 0, 5]) == [custom, derived, None], state
        assert [edge.key for edge in reading.iter_edges()] == sorted([key, "custom-key"]), state
        assert reading.get_edge(key)["src"] == "f1" and reading.get_edge(key)["temporal"]["since"] == 1704067200.0
    graph.delete_node("gone")  # its edge goes with it
    assert graph.edge("custom-key") is None and graph.edges_by_id([1]) == [None]
    assert [edge.key for edge in graph.iter_edges()] == [key]


def test_type_names_follow_new_types(graph):
    assert graph.type_names("node") == {0: "Episode", 1: "Fact", 2: "Entity"}
    graph.add_node("p1", "Preference")
    assert graph.node("p1").type == "Preference"
    assert graph.type_names("node")[3] == "Preference" and graph.type_ids("node")["Preference"] == 3


def test_allocated_node_ids_count_deleted_nodes(store):
    graph = GraphStore(store)
    assert graph.node_ids_allocated() == 0
    graph.add_node("a", "Concept")
    graph.delete_node("a", purge=True)
    assert graph.node_ids_allocated() == 1 and graph.node("a") is None


def test_snapshot_ids_types_and_edges(store, graph):
    for state, reading in states(store, graph):
        snapshot = reading.snapshot()
        assert snapshot.node_count == 3, state
        assert snapshot.node_types([2, 0, 1]).tolist() == [2, 0, 1], state
        edges = snapshot.gather(np.array([0], np.int64), "in", [reading.type_ids("edge")["DERIVED_FROM"]])
        assert edges.neighbor.tolist() == [1] and edges.edge_id.tolist() == [0], state
        both = snapshot.gather(np.array([0, 1], np.int64), "both")
        expected = gather(snapshot.view, np.array([0, 1], np.int64), "both")
        assert both.edge_id.tolist() == expected.edge_id.tolist() == [0, 0, 1], state
