"""GraphStore on a real store: random operations, then traversal and PageRank against a model, across
flushes, compactions, deletes, purges and reopening (writer and reader snapshot)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import InputError
from engine.graph import pagerank, traverse
from engine.graph.api import GraphStore
from engine.store import Store
from graph_reference import Model

NODE_KEYS = [f"Concept:概念{index}" if index % 3 == 0 else f"Episode:e{index}" for index in range(6)]
EDGE_TYPES = ["ABOUT", "SUPPORTS", "SIMILAR_TO", "TEMPORAL_NEXT"]
WEIGHTS = [0.0, 0.5, 1.0, 2.0]

node_key = st.sampled_from(NODE_KEYS)
OPERATION_STRATEGIES = {
    "add_node": st.tuples(st.just("add_node"), node_key, st.sampled_from(["Concept", "Episode"])),
    "add_edge": st.tuples(st.just("add_edge"), node_key, st.sampled_from(EDGE_TYPES), node_key,
                          st.sampled_from(WEIGHTS)),
    "delete_edge": st.tuples(st.just("delete_edge"), st.integers(0, 50)),
    "delete_node": st.tuples(st.just("delete_node"), node_key, st.booleans()),
    "flush": st.just(("flush",)), "compact": st.just(("compact",)), "reopen": st.just(("reopen",)),
}
# Edges are added most often so that flushes and deletes usually have something to act on.
OPERATION_MIX = ["add_edge"] * 5 + ["add_node", "delete_edge", "delete_edge", "delete_node", "flush", "flush",
                                     "compact", "reopen"]
operations = st.lists(st.sampled_from(OPERATION_MIX).flatmap(OPERATION_STRATEGIES.__getitem__), min_size=5,
                      max_size=40)


class Harness:
    """A store, its GraphStore, and the expected live graph by key."""

    def __init__(self, path):
        self.path = str(path)
        self.store = Store.open(self.path)
        self.graph = GraphStore(self.store, clock=lambda: 1_000_000.0)
        self.nodes = {}  # key -> type
        self.edges = {}  # edge key -> (source key, type, target key, weight)
        self.dead_ids = set()

    def apply(self, operation):
        name = operation[0]
        if name == "add_node":
            self.graph.add_node(operation[1], operation[2], {"title": operation[1]})
            self.nodes[operation[1]] = operation[2]
        elif name == "add_edge":
            _, source, edge_type, target, weight = operation
            if source in self.nodes and target in self.nodes:
                key = self.graph.add_edge(source, edge_type, target, weight=weight, ts=1000.0)
                self.edges[key] = (source, edge_type, target, weight)
            else:
                with pytest.raises(InputError):
                    self.graph.add_edge(source, edge_type, target, weight=weight)
        elif name == "delete_edge" and self.edges:
            key = sorted(self.edges)[operation[1] % len(self.edges)]
            self.graph.delete_edge(key)
            del self.edges[key]
        elif name == "delete_node" and operation[1] in self.nodes:
            key = operation[1]
            self.dead_ids.add(self.graph.node_id(key))
            removed = self.graph.delete_node(key, purge=operation[2])
            incident = [edge for edge, (source, _, target, _) in self.edges.items() if key in (source, target)]
            assert removed == len(incident)
            for edge in incident:
                del self.edges[edge]
            del self.nodes[key]
        elif name == "flush":
            self.store.flush()
        elif name == "compact":
            self.store.compact()
        elif name == "reopen":
            self.reopen()

    def reopen(self):
        self.store.close()
        self.store = Store.open(self.path)
        self.graph = GraphStore(self.store, clock=lambda: 1_000_000.0)

    def model(self, graph) -> Model:
        """The expected graph in internal ids, as the reference model takes it."""
        edge_rows = []
        for key, (_, edge_type, _, weight) in self.edges.items():
            record = graph.get_edge(key)
            assert record is not None and record["type"] == edge_type and record["weight"] == weight
            edge_rows.append((record["id"], graph.node_id(record["src"]), graph.node_id(record["dst"]),
                              graph.type_ids("edge")[edge_type], weight, 1000.0))
        node_count = graph.snapshot().view.node_count
        part = {"edges": edge_rows, "dropped": [], "dense": True,
                "nodes": {node: (0, True) for node in self.dead_ids}}
        return Model(node_count, [part])

    def check(self, graph):
        snapshot = graph.snapshot()
        model = self.model(graph)
        view = snapshot.view
        live = {graph.node_id(key): key for key in self.nodes}
        assert sorted(view.live_nodes().tolist()) == sorted(live)
        for node_type in ("Concept", "Episode"):
            assert sorted(graph.nodes_of_type(node_type)) == sorted(k for k, t in self.nodes.items() if t == node_type)
        for node in live:
            for direction in traverse.DIRECTIONS:
                found = traverse.neighbors(view, node, direction)
                expected = model.neighbors(node, direction)
                assert list(zip(found.neighbor.tolist(), found.edge_id.tolist())) == [(n, e) for n, e, *_ in expected]
            reached = traverse.khop(view, [node], 2, None, "both")
            assert {int(n): (int(h), int(e), int(p)) for n, h, e, p in
                    zip(reached.node, reached.hop, reached.edge_id, reached.parent)} == model.khop([node], 2, "both")
        if live:
            seeds = sorted(live)[:2]
            weights = pagerank.type_weights(graph.type_ids("edge"))
            for nodes in (None, sorted(live)[::2]):
                ranking = pagerank.personalized_pagerank(view, seeds, None, nodes, weights, iterations=12,
                                                         tolerance=0.0, direction="both")
                expected = model.pagerank(seeds, [1.0] * len(seeds), nodes, weights, "both", 0.85, 12)
                assert ranking.node.tolist() == sorted(expected)
                assert np.allclose(ranking.score, [expected[n] for n in ranking.node], atol=1e-12)
        for key in self.nodes:
            rows = graph.neighbors(key, "out").rows()
            expected = sorted((self.edges[e][2], e) for e in self.edges if self.edges[e][0] == key)
            assert sorted((row["key"], row["edge"]) for row in rows) == expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations)
def test_random_operations_match_model(tmp_path_factory, operations):
    harness = Harness(tmp_path_factory.mktemp("graph"))
    try:
        for operation in [("add_node", key, key.split(":")[0]) for key in NODE_KEYS] + operations:
            harness.apply(operation)
        harness.check(harness.graph)
        reader = Store.open(harness.path, writable=False)
        harness.check(GraphStore(reader))
        harness.store.compact()
        harness.check(harness.graph)
        harness.reopen()
        harness.check(harness.graph)
    finally:
        harness.store.close()


def test_key_level_api(tmp_path):
    with Store.open(str(tmp_path / "s")) as store:
        graph = GraphStore(store, clock=lambda: 5.0)
        graph.add_node("Concept:Win11蓝牙故障", "Concept", {"title": "Win11 蓝牙故障"})
        for index in range(3):
            graph.add_node(f"Episode:e{index}", "Episode")
            graph.add_edge(f"Episode:e{index}", "ABOUT", "Concept:Win11蓝牙故障", weight=0.5 + index,
                           since="2025-09-14T09:00:00Z")
        graph.add_edge("Episode:e0", "TEMPORAL_NEXT", "Episode:e1")
        assert [row["key"] for row in graph.neighbors("Concept:Win11蓝牙故障", "in").rows()] == \
            ["Episode:e2", "Episode:e1", "Episode:e0"]
        assert [row["key"] for row in graph.edges_of("ABOUT", target="Concept:Win11蓝牙故障", limit=1).rows()] == \
            ["Episode:e2"]
        assert graph.node_degrees("Episode:e0") == {"out": {"ABOUT": 1, "TEMPORAL_NEXT": 1}, "in": {}}
        statistics = graph.degree_statistics("in")
        assert statistics["ABOUT"]["max_degree"] == 3 and statistics["ABOUT"]["max_node"] == "Concept:Win11蓝牙故障"
        rows = graph.khop("Episode:e0", 2, types=["ABOUT"], direction="both").rows()
        assert [(row["key"], row["hop"]) for row in rows] == [
            ("Episode:e0", 0), ("Concept:Win11蓝牙故障", 1), ("Episode:e1", 2), ("Episode:e2", 2)]
        ranked = graph.personalized_pagerank({"Episode:e0": 1.0}, k=2, direction="both")
        assert ranked[0][0] in ("Episode:e0", "Concept:Win11蓝牙故障")
        assert sum(score for _, score in ranked) == pytest.approx(1)
        edge = graph.get_edge('["Episode:e0","ABOUT","Concept:Win11蓝牙故障"]')
        assert edge["temporal"]["since"] == 1757840400.0 and edge["created_at"] == 5.0
        graph.update_edge(edge["key"], weight=3.0, properties={"note": "x"})
        assert graph.get_edge(edge["key"])["weight"] == 3.0
        graph.update_node("Episode:e0", properties={"text": "蓝牙开不了"})
        assert graph.get_node("Episode:e0")["props"] == {"text": "蓝牙开不了"}
        assert graph.khop("Episode:e0", 1, types=["NO_SUCH_TYPE"]).rows() == [
            {"key": "Episode:e0", "hop": 0, "via": None, "parent": None}]
        graph.add_edge("Episode:e1", "SUPPORTS", "Episode:e2", key="my-edge")
        graph.update_edge('["Episode:e0","TEMPORAL_NEXT","Episode:e1"]', type="REFERS_TO")
        for step in (lambda: None, store.flush, store.compact):
            step()
            rows = {row["edge"]: row["type"] for key in ("Episode:e0", "Episode:e1")
                    for row in graph.neighbors(key, "out").rows()}
            assert rows == {'["Episode:e0","ABOUT","Concept:Win11蓝牙故障"]': "ABOUT",
                            '["Episode:e0","TEMPORAL_NEXT","Episode:e1"]': "REFERS_TO",
                            '["Episode:e1","ABOUT","Concept:Win11蓝牙故障"]': "ABOUT", "my-edge": "SUPPORTS"}


def test_a_time_of_zero_is_kept_and_none_is_written_one_way(tmp_path):
    """since/until 0.0 (the epoch) is a time like any other; a cleared time and empty properties are written as
    no field, the way a new record has none (MANIFEST.spec §4b), never as nil or {}."""
    from engine.format import GRAPH_EDGE_TABLE, GRAPH_NODE_TABLE

    with Store.open(str(tmp_path / "s")) as store:
        graph = GraphStore(store, clock=lambda: 50.0)
        graph.add_node("a", "Episode", {"title": "a"})
        key = graph.add_edge("a", "ABOUT", "a", since=0.0, until=0.0)
        assert (graph.edge(key).since, graph.edge(key).until) == (0.0, 0.0)
        assert store.get(GRAPH_EDGE_TABLE, key)["since"] == 0.0
        graph.update_edge(key, since=None, until=None, ts=None)
        record = store.get(GRAPH_EDGE_TABLE, key)
        assert "since" not in record and "until" not in record and record["ts"] == 50.0
        graph.update_node("a", properties={}, merge=False)
        assert "props" not in store.get(GRAPH_NODE_TABLE, "a") and graph.node("a").props == {}


@pytest.mark.parametrize("dead_key", ["n:1", "x:0000000000000001", "n:000000000000000A", "e:00000000000000001",
                                      "n:-000000000000001"])
def test_a_graph_dead_key_of_another_form_is_corruption(tmp_path, dead_key):
    from engine.errors import CorruptionError
    from engine.format import GRAPH_DEAD_TABLE

    with Store.open(str(tmp_path / "s")) as store:
        graph = GraphStore(store)
        graph.add_node("a", "Episode")
        with store.batch() as batch:
            batch.put(GRAPH_DEAD_TABLE, dead_key, 1)
        with pytest.raises(CorruptionError, match="graph.dead key"):
            graph.neighbors("a")


@pytest.mark.parametrize("call", [
    lambda g: g.add_edge("Episode:a", "ABOUT", "Episode:missing"),
    lambda g: g.add_edge("Episode:a", "ABOUT", "Episode:a", weight=-1),
    lambda g: g.add_edge("Episode:a", "ABOUT", "Episode:a", weight=float("nan")),
    lambda g: g.add_edge("Episode:a", "ABOUT", "Episode:a", confidence=2),
    lambda g: g.add_edge("Episode:a", "not a type", "Episode:a"),
    lambda g: g.add_edge("Episode:a", "ABOUT", "Episode:a", ts="yesterday"),
    lambda g: g.add_node("", "Episode"),
    lambda g: g.add_node("x" * 2000, "Episode"),
    lambda g: g.add_node("Episode:b", "Episode", properties=["not", "a", "map"]),
    lambda g: g.neighbors("Episode:missing"),
    lambda g: g.neighbors("Episode:a", direction="up"),
    lambda g: g.khop("Episode:a", k=-1),
    lambda g: g.delete_edge("no such edge"),
    lambda g: g.update_edge(g.add_edge("Episode:a", "ABOUT", "Episode:a"), colour="red"),
])
def test_bad_input_is_refused_and_changes_nothing(tmp_path, call):
    with Store.open(str(tmp_path / "s")) as store:
        graph = GraphStore(store)
        graph.add_node("Episode:a", "Episode")
        sequence = store.sequence
        with pytest.raises(InputError):
            call(graph)
        assert store.sequence in (sequence, sequence + 1)  # the update case commits its add_edge first
        assert graph.get_node("Episode:a") is not None


def test_hub_reads_stay_arrays(tmp_path):
    with Store.open(str(tmp_path / "s")) as store:
        graph = GraphStore(store)
        with graph.batch() as writer:
            writer.add_node("hub", "Concept")
            for index in range(3000):
                writer.add_node(f"leaf{index}", "Episode")
                writer.add_edge(f"leaf{index}", "ABOUT", "hub", weight=index / 3000)
        store.flush()
        found = graph.neighbors("hub", "in", limit=5)
        assert len(found) == 5 and isinstance(found.edges.neighbor, np.ndarray)
        assert [row["key"] for row in found.rows()] == [f"leaf{index}" for index in range(2999, 2994, -1)]
        assert len(graph.neighbors("hub", "in")) == 3000
        assert graph.delete_node("hub") == 3000
        assert graph.degree_statistics() == {}
