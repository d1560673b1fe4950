"""CSR construction and the validation that guards every array loaded from disk."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import CorruptionError
from engine.graph import csr


def small_adjacency(dense=True):
    source = np.array([0, 0, 2, 1, 2])
    target = np.array([1, 2, 0, 2, 2])
    edge_type = np.array([1, 0, 0, 1, 0], np.uint8)
    weight = np.array([0.5, 2.0, 1.0, 1.0, 3.0], np.float32)
    return csr.build(source, target, edge_type, weight, node_count=3, dense=dense)


def test_rows_hold_edges_ordered_by_type_then_weight():
    adjacency = small_adjacency()
    assert adjacency.indptr.tolist() == [0, 2, 3, 5]
    assert adjacency.neighbor.tolist() == [2, 1, 2, 2, 0]
    assert adjacency.edge_row.tolist() == [1, 0, 3, 4, 2]
    sparse = small_adjacency(dense=False)
    assert sparse.rows.tolist() == [0, 1, 2] and sparse.indptr.tolist() == [0, 2, 3, 5]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30), st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29), st.integers(0, 300),
                                              st.floats(0, 10, width=32)), max_size=80), st.booleans())
def test_build_keeps_every_edge_once_and_validates(node_count, edges, dense):
    edges = [(a % node_count, b % node_count, t, w) for a, b, t, w in edges]
    arrays = np.array(edges, dtype=np.float64).reshape(-1, 4)
    out, inn = csr.build_both(arrays[:, 0], arrays[:, 1], arrays[:, 2].astype(np.uint16), arrays[:, 3],
                              node_count, dense)
    for adjacency, key_column, other_column in ((out, 0, 1), (inn, 1, 0)):
        csr.validate(adjacency, node_count, len(edges))
        assert sorted(adjacency.edge_row.tolist()) == list(range(len(edges)))
        rows = np.arange(adjacency.row_count) if adjacency.rows is None else adjacency.rows
        keys = np.repeat(rows, np.diff(adjacency.indptr))
        assert (keys == arrays[adjacency.edge_row, key_column]).all()
        assert (adjacency.neighbor == arrays[adjacency.edge_row, other_column]).all()


def broken(change):
    return dataclasses.replace(small_adjacency(), **change(small_adjacency()))


@pytest.mark.parametrize("change", [
    lambda a: {"indptr": np.array([1, 2, 3, 5])},
    lambda a: {"indptr": np.array([0, 2, 3, 4])},
    lambda a: {"indptr": np.array([0, 3, 2, 5])},
    lambda a: {"indptr": a.indptr.astype(np.int32)},
    lambda a: {"indptr": np.array([0, 1, 2, 3, 5])},
    lambda a: {"neighbor": np.array([2, 1, 2, 3, 0], np.int32)},
    lambda a: {"neighbor": np.array([2, 1, -1, 2, 0], np.int32)},
    lambda a: {"neighbor": np.array([2, 1, 2, 2], np.int32)},
    lambda a: {"edge_row": np.array([1, 0, 3, 5, 2], np.int32)},
    lambda a: {"weight": np.array([1, np.nan, 1, 1, 1], np.float32)},
    lambda a: {"weight": np.array([1, -1, 1, 1, 1], np.float32)},
    lambda a: {"weight": a.weight.astype(np.float64)},
    lambda a: {"edge_type": a.edge_type.astype(np.int8)},
    lambda a: {"neighbor": a.neighbor.astype(np.float32)},
    lambda a: {"rows": np.array([0, 2, 1])},
    lambda a: {"rows": np.array([0, 1, 3])},
    lambda a: {"rows": np.array([0, 1])},
    lambda a: {"neighbor": np.zeros((5, 1), np.int32)},
    lambda a: {"weight": np.ones(10, np.float32)[::2]},
])
def test_validation_rejects_damaged_arrays(change):
    with pytest.raises(CorruptionError):
        csr.validate(broken(change), node_count=3, edge_rows=5, path="seg/000009.graph.csr.seg")


def test_validation_names_the_file():
    with pytest.raises(CorruptionError, match="000009"):
        csr.validate(broken(lambda a: {"indptr": np.array([1, 2, 3, 5])}), 3, 5, "seg/000009.graph.csr.seg")


def test_narrow_dtypes_are_chosen_by_range():
    assert csr.index_dtype(2**31 - 1) == np.int32 and csr.index_dtype(2**31) == np.int64
    assert csr.type_dtype(256) == np.uint8 and csr.type_dtype(257) == np.uint16
