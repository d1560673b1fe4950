"""neighbors / khop / degree over merged parts equal a plain-Python model, before and after compaction."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.graph import traverse
from engine.graph.traverse import DegreeCap
from graph_reference import TYPE_COUNT, TIMES, Model, build_view, histories

directions = st.sampled_from(traverse.DIRECTIONS)
type_filters = st.one_of(st.none(), st.sets(st.integers(0, TYPE_COUNT - 1), max_size=TYPE_COUNT))
caps = st.one_of(st.none(), st.builds(
    DegreeCap, st.dictionaries(st.integers(0, TYPE_COUNT - 1), st.integers(0, 3), max_size=TYPE_COUNT),
    st.sampled_from(TIMES), st.sampled_from([1.0, 90.0])))


def edge_rows(edges):
    return [(int(n), int(e), int(t), float(w)) for n, e, t, w in
            zip(edges.neighbor, edges.edge_id, edges.edge_type, edges.weight)]


@settings(max_examples=300, deadline=None)
@given(histories(), directions, type_filters, caps, st.data())
def test_neighbors_match_model(history, direction, types, cap, data):
    node_count, parts = history
    model = Model(node_count, parts)
    node = data.draw(st.integers(0, node_count - 1))
    expected = [(n, e, t, float(w)) for n, e, t, w, _ in model.neighbors(node, direction, types, cap)]
    for view in (build_view(node_count, parts), model.compacted()):
        found = traverse.neighbors(view, node, direction, types, cap=cap)
        assert edge_rows(found) == expected
        limited = traverse.neighbors(view, node, direction, types, limit=2, cap=cap)
        assert edge_rows(limited) == expected[:2]


@settings(max_examples=300, deadline=None)
@given(histories(), directions, type_filters, caps, st.integers(0, 3), st.one_of(st.none(), st.integers(0, 12)),
       st.data())
def test_khop_matches_breadth_first_search(history, direction, types, cap, k, max_nodes, data):
    node_count, parts = history
    model = Model(node_count, parts)
    seeds = data.draw(st.lists(st.integers(0, node_count - 1), max_size=4))
    expected = model.khop(seeds, k, direction, types, max_nodes, cap)
    for view in (build_view(node_count, parts), model.compacted()):
        reached = traverse.khop(view, seeds, k, types, direction, max_nodes, cap)
        found = {int(n): (int(h), int(e), int(p)) for n, h, e, p in
                 zip(reached.node, reached.hop, reached.edge_id, reached.parent)}
        assert found == expected
        assert list(zip(reached.hop, reached.node)) == sorted(zip(reached.hop, reached.node))


@settings(max_examples=150, deadline=None)
@given(histories(), directions, type_filters)
def test_degrees_match_model(history, direction, types):
    node_count, parts = history
    model = Model(node_count, parts)
    view = build_view(node_count, parts)
    nodes = np.arange(node_count)
    expected = [0 if node in model.dead else len(model.steps(node, direction, types)) for node in nodes]
    assert traverse.degree(view, nodes, direction, types).tolist() == expected
    for node in range(node_count):
        by_type = {}
        for _, _, kind, _, _ in ([] if node in model.dead else model.steps(node, direction)):
            by_type[kind] = by_type.get(kind, 0) + 1
        assert traverse.type_degrees(view, node, direction) == by_type


@settings(max_examples=100, deadline=None)
@given(histories())
def test_type_statistics_count_every_live_edge(history):
    node_count, parts = history
    model = Model(node_count, parts)
    statistics = traverse.type_statistics(build_view(node_count, parts))
    for kind in range(TYPE_COUNT):
        sources = [src for src, _, edge_kind, _, _ in model.edges.values() if edge_kind == kind]
        if not sources:
            assert kind not in statistics
            continue
        counts = {node: sources.count(node) for node in set(sources)}
        assert statistics[kind]["edges"] == len(sources)
        assert statistics[kind]["nodes"] == len(counts)
        assert statistics[kind]["max_degree"] == max(counts.values())
        assert counts[statistics[kind]["max_node"]] == max(counts.values())


@pytest.mark.parametrize("call", [lambda view: traverse.neighbors(view, 0, "sideways"),
                                  lambda view: traverse.neighbors(view, 2),
                                  lambda view: traverse.khop(view, [0, -1], 1)])
def test_bad_arguments_are_refused(call):
    view = build_view(2, [{"edges": [(0, 0, 1, 0, 1.0, 0.0)], "dropped": [], "nodes": {}, "dense": True}])
    with pytest.raises(ValueError):
        call(view)


def test_hub_neighbors_come_back_as_arrays():
    hub_edges = [(edge_id, 0, 1 + edge_id % 999, edge_id % 3, float(edge_id % 7), 0.0) for edge_id in range(5000)]
    view = build_view(1000, [{"edges": hub_edges, "dropped": [], "nodes": {}, "dense": False}])
    found = traverse.neighbors(view, 0, types={1}, limit=10)
    assert isinstance(found.neighbor, np.ndarray) and len(found) == 10
    assert (found.edge_type == 1).all() and (np.diff(found.weight) <= 0).all()
