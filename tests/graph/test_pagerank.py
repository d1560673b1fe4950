"""Personalized PageRank equals dense power iteration on random merged parts, subgraphs and the whole graph."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.graph import pagerank, traverse
from graph_reference import TYPE_COUNT, Model, build_view, histories

TYPE_NAMES = {"ABOUT": 0, "SUPPORTS": 1, "SIMILAR_TO": 2, "TEMPORAL_NEXT": 3}


@settings(max_examples=200, deadline=None)
@given(histories(), st.sampled_from(traverse.DIRECTIONS), st.data())
def test_pagerank_matches_dense_power_iteration(history, direction, data):
    node_count, parts = history
    model = Model(node_count, parts)
    seeds = data.draw(st.lists(st.integers(0, node_count - 1), min_size=1, max_size=4))
    seed_weights = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=len(seeds),
                                      max_size=len(seeds)))
    subset = data.draw(st.one_of(st.none(), st.lists(st.integers(0, node_count - 1), max_size=node_count)))
    weights = pagerank.type_weights(TYPE_NAMES)
    expected = model.pagerank(seeds, seed_weights, subset, weights, direction, 0.85, 15)
    for view in (build_view(node_count, parts), model.compacted()):
        ranking = pagerank.personalized_pagerank(view, seeds, seed_weights, subset, weights, iterations=15,
                                                 tolerance=0.0, direction=direction)
        assert ranking.node.tolist() == sorted(expected)
        assert np.allclose(ranking.score, [expected[node] for node in ranking.node], atol=1e-12)
        if ranking.score.any():
            assert ranking.score.sum() == pytest.approx(1.0)


def test_default_type_weights_follow_seed_appendix_a():
    table = pagerank.type_weights({"ABOUT": 3, "SUPPORTS": 4, "SIMILAR_TO": 5, "TEMPORAL_NEXT": 6, "MENTIONS": 7})
    assert table[[3, 4, 5, 6, 7]].tolist() == [1.0, 0.8, 0.5, 0.3, 0.5]
    assert pagerank.type_weights({"ABOUT": 0}, {"ABOUT": 2.0}, other=0.1)[[0, 1]].tolist() == [2.0, 0.1]


def test_tolerance_stops_early_and_converges():
    edges = [(edge_id, edge_id % 20, (edge_id * 7 + 1) % 20, edge_id % TYPE_COUNT, 1.0, 0.0) for edge_id in range(60)]
    view = build_view(20, [{"edges": edges, "dropped": [], "nodes": {}, "dense": True}])
    loose = pagerank.personalized_pagerank(view, [0], iterations=1000, tolerance=1e-10)
    assert loose.iterations < 1000 and loose.change < 1e-10
    exact = pagerank.personalized_pagerank(view, [0], iterations=loose.iterations + 200, tolerance=0.0)
    assert np.allclose(loose.score, exact.score, atol=1e-9)
    nodes, scores = loose.top(3)
    assert nodes[0] == 0 and (np.diff(scores) <= 0).all()


def test_numba_kernel_agrees_with_numpy():
    rng = np.random.default_rng(7)
    edges = [(edge_id, int(a), int(b), int(t), float(w), 0.0) for edge_id, (a, b, t, w) in
             enumerate(zip(rng.integers(0, 50, 400), rng.integers(0, 50, 400), rng.integers(0, 4, 400),
                           rng.choice([0.25, 1.0, 2.0], 400)))]
    view = build_view(50, [{"edges": edges, "dropped": [], "nodes": {}, "dense": True}])
    view.edge_count = len(edges)
    weights = pagerank.type_weights(TYPE_NAMES)
    numpy_result = pagerank.personalized_pagerank(view, [1, 2], [1.0, 2.0], weights=weights, kernel="numpy")
    numba_result = pagerank.personalized_pagerank(view, [1, 2], [1.0, 2.0], weights=weights, kernel="numba")
    assert np.allclose(numpy_result.score, numba_result.score, atol=1e-12)


@pytest.mark.parametrize("bad", [dict(damping=1.0), dict(kernel="gpu"), dict(seed_weights=[-1.0]),
                                 dict(seed_weights=[1.0, 2.0])])
def test_bad_parameters_are_refused(bad):
    view = build_view(3, [{"edges": [(0, 0, 1, 0, 1.0, 0.0)], "dropped": [], "nodes": {}, "dense": True}])
    with pytest.raises(ValueError):
        pagerank.personalized_pagerank(view, [0], **bad)
