"""A damaged graph segment is reported as corruption (file named), never answered from."""

import os

import numpy as np
import pytest

from engine.errors import CorruptionError
from engine.graph.api import GraphStore
from engine.graph.part import GraphPart, build_columns, encode_keys
from engine.store import Store


def small_store(path):
    store = Store.open(path)
    graph = GraphStore(store)
    with graph.batch() as writer:
        for index in range(20):
            writer.add_node(f"n{index}", "Episode")
        for index in range(19):
            writer.add_edge(f"n{index}", "TEMPORAL_NEXT", f"n{index + 1}", weight=1 + index)
    store.flush()
    store.close()
    segments = [name for name in os.listdir(os.path.join(path, "seg")) if name.endswith(".graph.csr.seg")]
    return os.path.join(path, "seg", segments[0])


def column_offset(segment, name: str) -> int:
    """Where a column starts in its file (segment.py's column table: a tuple or, with block CRCs, an object)."""
    column = segment._columns[name]
    return column[2] if isinstance(column, tuple) else column.offset


def test_flipped_byte_in_adjacency_is_detected(tmp_path):
    path = str(tmp_path / "store")
    segment_path = small_store(path)
    store = Store.open(path, writable=False)
    segment = next(s for s in store.kind_segments["graph"])
    offset = column_offset(segment, "out.neighbor")
    with open(segment_path, "r+b") as handle:
        handle.seek(offset + 4)
        value = handle.read(1)
        handle.seek(offset + 4)
        handle.write(bytes([value[0] ^ 0x10]))
    reader = GraphStore(Store.open(path, writable=False))
    with pytest.raises(CorruptionError, match="graph.csr.seg"):
        reader.khop("n0", 3)


def columns(**changes):
    offsets, keys = encode_keys(["a", "b"])
    custom_offsets, custom_keys = encode_keys(["custom edge key"])
    edges = {"id": np.array([0]), "source": np.array([0]), "target": np.array([1]), "type": np.array([0]),
             "weight": np.array([1.0], np.float32), "time": np.array([0.0]), "custom_id": np.array([0]),
             "custom_key_offsets": custom_offsets, "custom_keys": custom_keys}
    nodes = {"id": np.array([0, 1]), "type": np.array([0, 0]), "deleted": np.array([False, False]),
             "key_offsets": offsets, "keys": keys}
    built, meta = build_columns(edges, [], nodes, 2, 1, dense=False)
    built.update(changes.pop("columns", {}))
    meta.update(changes)
    return GraphPart.from_columns(built, meta, "seg/000042.graph.csr.seg")


@pytest.mark.parametrize("damage", [
    lambda: columns(version=99).out,
    lambda: columns(version="x").out,
    lambda: columns(node_count=-1).out,
    lambda: columns(edges=2).out,
    lambda: columns(columns={"edge.id": np.array([5])}).edge_id,
    lambda: columns(columns={"edge.id": np.array([0.0])}).edge_id,
    lambda: columns(columns={"node.id": np.array([1, 0])}).node_id,
    lambda: columns(columns={"node.deleted": np.array([0, 7], np.uint8)}).node_deleted,
    lambda: columns(columns={"node.key_offsets": np.array([0, 5, 2], np.uint64)}).decode_keys("node", [0]),
    lambda: columns(columns={"node.keys": np.array([0xFF, 0xFE], np.uint8)}).decode_keys("node", [0]),
    lambda: columns(columns={"out.rows": np.array([3])}).out,
    lambda: columns(columns={"in.edge_row": np.array([1], np.int32)}).inn,
    lambda: columns(columns={"edge.dropped": np.array([9])}).dropped_edges,
    lambda: columns(columns={"edge.custom_id": np.array([3])}).custom_edge_ids,
    lambda: columns(columns={"edge.custom.key_offsets": np.array([0, 99], np.uint64)}).decode_keys("custom", [0]),
])
def test_damaged_columns_raise_corruption(damage):
    with pytest.raises(CorruptionError):
        damage()


def test_check_reports_a_damaged_segment_and_passes_a_sound_one(tmp_path):
    from engine.graph.kind import GraphKind

    path = str(tmp_path / "store")
    segment_path = small_store(path)
    store = Store.open(path, writable=False)
    assert list(GraphKind(store).check(store.kind_segments["graph"])) == []
    offset = column_offset(store.kind_segments["graph"][0], "in.neighbor")
    with open(segment_path, "r+b") as handle:
        handle.seek(offset)
        handle.write(b"\x07")
    damaged = Store.open(path, writable=False)
    problems = list(GraphKind(damaged).check(damaged.kind_segments["graph"]))
    assert len(problems) == 1 and "checksum" in problems[0].reason


def test_check_finds_in_and_out_disagreeing():
    part = columns(columns={"in.neighbor": np.array([1], np.int32)})
    with pytest.raises(CorruptionError, match="same edges"):
        part.verify()


def test_intact_columns_load():
    part = columns()
    assert part.out.neighbor.tolist() == [1] and part.decode_keys("node", [0, 1]) == ["a", "b"]
    assert part.decode_keys("custom", [0]) == ["custom edge key"]
    assert [array.tolist() for array in part.edge_ends(np.array([0]))] == [[0], [1], [0]]
    part.verify()
