"""A query over a few nodes of a stored (compacted) graph checks only the checksum blocks it reads: a flipped
byte in a block it reads raises CorruptionError naming the segment file, one in a block it does not read
leaves its answer unchanged, and `memctl check` still finds every damaged block."""

from __future__ import annotations

import os
import random
import shutil

import numpy as np
import pytest

from engine.check import check_store
from engine.errors import CorruptionError
from engine.format import DAMAGE_FILE, SEGMENT_CHECKSUM_BLOCK_BYTES, SEGMENT_DIR
from engine.graph.api import GraphStore
from engine.graph.memo import ImportMemo
from engine.graph.part import GraphPart, build_columns, encode_keys
from engine.graph.traverse import gather
from engine.segment import Segment, SegmentWriter
from engine import store as store_module
from engine.store import Store
from engine_testkit import flip_byte

NODES = 9000
PER_NODE = 5  # 45,000 edges: each int32/float32 edge column spans three checksum blocks, node.key_offsets two
LAST = NODES - 1
NODES_COMPRESSED = 20000  # random targets: 100,000 edges whose neighbor columns compress to three stored blocks


def key(index: int) -> str:
    return f"node-{index:05d}-" + "k" * 20  # long enough that node.keys spans several checksum blocks


def compacted_store(path: str, nodes: int, targets) -> str:
    """A compacted store of `nodes` nodes, each with PER_NODE edges to `targets(node)`."""
    with Store.open(path) as store:
        graph = GraphStore(store, clock=lambda: 1.0)
        with graph.batch(ImportMemo(store_is_empty=True)) as writer:
            assert writer.add_new_nodes([(key(index), "Concept", None, None) for index in range(nodes)])
            assert writer.add_new_edges([(key(index), "ABOUT", key(target), 1.0 + step, 1.0, None, None, None, {}, None)
                                         for index in range(nodes) for step, target in enumerate(targets(index))])
        store.compact()
    return path


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> str:
    """Columns stored as is (as a column that does not compress is), so each spans several checksum blocks."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store_module, "SEGMENT_COMPACTION_LEVEL", None)
        return compacted_store(str(tmp_path_factory.mktemp("rows") / "store"), NODES,
                               lambda index: [(index * 7 + step + 1) % NODES for step in range(PER_NODE)])


@pytest.fixture(scope="module")
def pristine_compressed(tmp_path_factory) -> str:
    """Compressed columns; random targets keep the neighbor and edge_row columns several stored blocks long."""
    choices = random.Random(3)
    return compacted_store(str(tmp_path_factory.mktemp("rows") / "store"), NODES_COMPRESSED,
                           lambda index: choices.sample(range(NODES_COMPRESSED), PER_NODE))


def graph_segment(path: str) -> str:
    names = [name for name in os.listdir(os.path.join(path, SEGMENT_DIR)) if name.endswith(".graph.csr.seg")]
    assert len(names) == 1
    return os.path.join(path, SEGMENT_DIR, names[0])


def damaged_copy(pristine: str, tmp_path, column: str, block: str) -> tuple[str, str]:
    """A copy of the store with one byte flipped in the first or last checksum block of `column` (of its stored
    bytes: a compressed column's frames)."""
    path = str(tmp_path / "store")
    shutil.copytree(pristine, path)
    segment_path = graph_segment(path)
    _dtype, _shape, offset, length, _crcs = Segment.open(segment_path)._columns[column]
    blocks = -(-length // SEGMENT_CHECKSUM_BLOCK_BYTES)
    index = 0 if block == "first" else blocks - 1
    flip_byte(segment_path, offset + index * SEGMENT_CHECKSUM_BLOCK_BYTES + 1)
    return path, segment_path


def edges_of(path: str, node: int, side: str = "out"):
    with Store.open(path, writable=False) as store:
        snapshot = GraphStore(store).snapshot()
        assert snapshot.parts[0].dense
        edges = gather(snapshot.view, np.array([node]), side)
        return sorted(zip(edges.neighbor.tolist(), edges.weight.tolist(), edges.edge_id.tolist()))


def node_keys(path: str, ids: list) -> list:
    with Store.open(path, writable=False) as store:
        return GraphStore(store).snapshot().node_keys(ids)


@pytest.mark.parametrize("column", ["out.neighbor", "out.weight", "out.edge_row", "edge.id"])
def test_a_damaged_block_fails_the_gather_that_reads_it_and_no_other(pristine, tmp_path, column):
    expected_first, expected_last = edges_of(pristine, 0), edges_of(pristine, LAST)
    assert len(expected_first) == PER_NODE
    path, segment_path = damaged_copy(pristine, tmp_path, column, "last")

    with pytest.raises(CorruptionError) as caught:
        edges_of(path, LAST)
    assert caught.value.path == segment_path and f"'{column}'" in caught.value.reason
    assert edges_of(path, 0) == expected_first  # its rows lie in the first block
    assert edges_of(pristine, LAST) == expected_last
    # The failed read marked the store damaged: check reports the marker, then the segment.
    assert [problem["file"] for problem in check_store(path).problems] == \
        [DAMAGE_FILE, os.path.relpath(segment_path, path)]


@pytest.mark.parametrize("column, side", [("out.neighbor", "out"), ("in.neighbor", "in"), ("in.edge_row", "in")])
def test_a_damaged_stored_block_of_a_compressed_column_fails_only_the_reads_of_its_frames(
        pristine_compressed, tmp_path, column, side):
    segment = Segment.open(graph_segment(pristine_compressed))
    assert column in segment._compressed and segment._columns[column][3] > 2 * SEGMENT_CHECKSUM_BLOCK_BYTES
    expected_first = edges_of(pristine_compressed, 0, side)
    path, segment_path = damaged_copy(pristine_compressed, tmp_path, column, "last")
    with pytest.raises(CorruptionError) as caught:
        edges_of(path, NODES_COMPRESSED - 1, side)
    assert caught.value.path == segment_path and f"'{column}'" in caught.value.reason
    assert edges_of(path, 0, side) == expected_first  # its frames lie in the first stored block
    assert [problem["file"] for problem in check_store(path).problems] == \
        [DAMAGE_FILE, os.path.relpath(segment_path, path)]


@pytest.mark.parametrize("column", ["in.neighbor", "in.edge_type", "in.indptr"])
def test_the_in_direction_is_checked_where_it_is_read(pristine, tmp_path, column):
    path, segment_path = damaged_copy(pristine, tmp_path, column, "first")
    with pytest.raises(CorruptionError, match="graph.csr.seg"):
        edges_of(path, 1, "in")
    assert edges_of(path, 1, "out") == edges_of(pristine, 1, "out")


@pytest.mark.parametrize("column", ["node.keys", "node.key_offsets"])
def test_node_keys_check_the_blocks_holding_them(pristine, tmp_path, column):
    path, segment_path = damaged_copy(pristine, tmp_path, column, "last")
    assert node_keys(path, [0, 1]) == [key(0), key(1)]
    with pytest.raises(CorruptionError) as caught:
        node_keys(path, [0, LAST])
    assert caught.value.path == segment_path and f"'{column}'" in caught.value.reason


def test_row_reads_answer_as_whole_column_reads(pristine):
    nodes = np.array([0, 17, 2500, LAST])
    with Store.open(pristine, writable=False) as store:
        snapshot = GraphStore(store).snapshot()
        part = snapshot.parts[0]
        few = [gather(snapshot.view, nodes, side) for side in ("out", "in")]
        keys = snapshot.node_keys(nodes)
        assert "out" not in part.__dict__ and "node_key_columns" not in part.__dict__  # nothing whole was loaded
        part.out, part.inn, part.edge_id, part.node_key_columns  # now load and check every column
        for side, edges in zip(("out", "in"), few):
            whole = gather(snapshot.view, nodes, side)
            for field in ("origin", "neighbor", "edge_type", "weight", "edge_id"):
                assert getattr(edges, field).tolist() == getattr(whole, field).tolist()
        assert snapshot.node_keys(nodes) == keys == [key(node) for node in nodes.tolist()]


def crafted_part(tmp_path, column: str, values: list) -> GraphPart:
    """A dense part of edges 0→1 and 1→2 whose `column` holds `values`, written with valid checksums."""
    node_offsets, node_keys_bytes = encode_keys(["a", "b", "c"])
    custom_offsets, custom_keys = encode_keys([])
    edges = {"id": np.array([0, 1]), "source": np.array([0, 1]), "target": np.array([1, 2]), "type": np.array([0, 0]),
             "weight": np.array([1.0, 2.0], np.float32), "time": np.zeros(2), "custom_id": np.zeros(0, np.int64),
             "custom_key_offsets": custom_offsets, "custom_keys": custom_keys}
    nodes = {"id": np.arange(3), "type": np.zeros(3), "deleted": np.zeros(3, bool), "key_offsets": node_offsets,
             "keys": node_keys_bytes}
    built, meta = build_columns(edges, [], nodes, 3, 2, dense=True)
    built[column] = np.array(values, dtype=built[column].dtype)
    path = str(tmp_path / "000001.graph.csr.seg")
    writer = SegmentWriter(path, "graph.csr")
    for name, array in built.items():
        writer.add_column(name, array)
    writer.set_meta(meta)
    writer.finish()
    return GraphPart.from_segment(Segment.open(path))


@pytest.mark.parametrize("column, values, reason", [
    ("out.neighbor", [1, 9], "out.neighbor holds a value outside 0..2"),
    ("out.weight", [1.0, float("nan")], "negative, NaN or infinite"),
    ("out.edge_row", [0, 5], "out.edge_row holds a value outside 0..1"),
    ("out.indptr", [0, 2, 1, 2], "not monotone"),
    ("edge.id", [0, 7], "edge.id holds a value outside 0..1"),
    ("node.key_offsets", [0, 1, 9, 3], "node.key_offsets holds a value outside 0..3"),
    ("node.key_offsets", [0, 2, 1, 3], "do not partition"),
])
def test_values_a_row_read_returns_are_checked(tmp_path, column, values, reason):
    """A writer's bug or a crafted file with valid checksums still never reaches numpy indexing unchecked."""
    part = crafted_part(tmp_path, column, values)
    with pytest.raises(CorruptionError, match=reason):
        *_, edge_row = part.gather_rows("out", np.array([1]), None)
        part.edge_ids_at(edge_row)
        part.decode_keys("node", [1])


def test_a_sound_crafted_part_reads(tmp_path):
    part = crafted_part(tmp_path, "out.indptr", [0, 1, 2, 2])
    origin, neighbor, _types, weight, edge_row = part.gather_rows("out", np.array([1, 2]), None)
    assert (origin.tolist(), neighbor.tolist(), weight.tolist(), part.edge_ids_at(edge_row).tolist()) == \
        ([1], [2], [2.0], [1])
    assert part.decode_keys("node", [1, 2]) == ["b", "c"]
