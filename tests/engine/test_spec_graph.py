"""MANIFEST.spec section 4b against the code: the worked example is built with the public API, and what it
writes is decoded with spec_reader (no engine code) and compared with the values the spec's text shows."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from engine.graph.api import GraphStore
from engine.store import Store
from msgpack_profile import decode
from spec_reader import RecordsSegment, Segment, hex_bytes, manifest, segment_paths, spec_block, spec_sentence

CLOCK = 1700000000.0  # "a clock reading 1700000000.0 for every write"
BATCH_ONE_TS = 1600000000.0


def _batch_one(graph: GraphStore) -> None:
    with graph.batch() as writer:
        writer.add_node("alice", "Person", {"age": 30})
        writer.add_node("bob", "Person")
        writer.add_node("paris", "Place")
        writer.add_edge("alice", "KNOWS", "bob", weight=0.5, ts=BATCH_ONE_TS)
        writer.add_edge("alice", "LIVES_IN", "paris", weight=1.0, ts=BATCH_ONE_TS)
        writer.add_edge("bob", "LIVES_IN", "paris", weight=2.0, ts=BATCH_ONE_TS)


def _batch_two(graph: GraphStore) -> None:
    with graph.batch() as writer:
        writer.delete_node("bob")
        writer.add_node("rome", "Place")
        writer.add_edge("alice", "VISITED", "rome", weight=0.25, ts=1650000000.0, key="trip-1")


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The worked example, run step by step: after each step, its live graph.csr segments and records
    segments decoded from the files, plus the counters its MANIFEST holds."""
    path = str(tmp_path_factory.mktemp("spec") / "store")
    store = Store.open(path)
    graph = GraphStore(store, clock=lambda: CLOCK)
    states = {}
    _batch_one(graph)
    store.flush()
    states["batch 1"] = _state(path)
    _batch_two(graph)
    store.flush()
    states["batch 2"] = _state(path)
    store.compact()
    states["compaction"] = _state(path)
    store.close()
    return states


def _state(path: str) -> dict:
    graph_segments = [Segment(item) for item in segment_paths(path, "graph")]
    return {"graph": {segment.name: segment for segment in graph_segments},
            "records": [RecordsSegment(item) for item in segment_paths(path, "records")],
            "counters": manifest(path)["counters"]}


def _example_columns() -> tuple[list[str], dict]:
    """(segment file names, {column: (dtype, [cell per segment])}) of the spec's example column table."""
    header = spec_sentence(r"column dtype (\d{6}) \([^)]*\) (\d{6}) \([^)]*\) (\d{6}) \([^)]*\)")
    table = {}
    for line in spec_block("column                   dtype  000004"):
        name, dtype, *cells = re.split(r"\s{2,}", line.strip())
        assert len(cells) == 3, line
        table[name] = (dtype, cells)
    return [f"{number}.graph.csr.seg" for number in header.groups()], table


def _cell_matches(cell: str, column: np.ndarray) -> bool:
    """A cell is a quoted string (a |u1 column's bytes as UTF-8) or a JSON array of the values."""
    if cell.startswith('"'):
        return column.tobytes() == json.loads(cell).encode("utf-8")
    expected = json.loads(cell)
    return column.tolist() == expected and list(map(type, column.tolist())) == list(map(type, expected))


def _typed(value):
    """A value with its msgpack types visible: 1 and 1.0 and True differ."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return (type(value).__name__, value)


def _example_segments(example) -> dict:
    return {**example["batch 2"]["graph"], **example["compaction"]["graph"]}


def test_each_segment_holds_exactly_the_columns_of_the_spec_table(example):
    names, table = _example_columns()
    segments = _example_segments(example)
    for index, name in enumerate(names):
        segment = segments[name]
        expected = [column for column, (_dtype, cells) in table.items() if cells[index] != "(absent)"]
        assert segment.names() == expected, name  # in the order the spec says the writer follows
        for column in expected:
            dtype, cells = table[column]
            assert segment.dtypes[column] == dtype, (name, column)
            assert _cell_matches(cells[index], segment.columns[column]), (name, column, cells[index])


def test_the_format_table_lists_the_columns_in_the_example_order():
    _names, table = _example_columns()
    described = [line.split()[0] for line in spec_block("column                   dtype    shape   content")
                 if re.match(r"(edge|node|out)\.\S+ +\S", line)]
    assert described == [name for name in table if not name.startswith("in.")]


def test_each_segment_meta_is_the_spec_meta(example):
    names, _table = _example_columns()
    segments = _example_segments(example)
    rows = {line.split()[0]: [json.loads(cell) for cell in line.split()[1:]]
            for line in spec_block("meta        000004")}
    types = {match[1]: json.loads(match[2])
             for match in re.finditer(r"types of (\d{6})\s+(\{[^}]*\})", spec_sentence(r"types of 000004.*").group())}
    for index, name in enumerate(names):
        meta = segments[name].meta
        expected = {field: values[index] for field, values in rows.items()}
        assert _typed({field: meta[field] for field in expected}) == _typed(expected), name
        assert _typed(meta["types"]) == _typed(types[name[:6]]), name
        assert set(meta) == set(expected) | {"types"}, name


def _spec_records() -> dict:
    """{(table, key): value} of batch 1's node and edge tables as the spec lists them, with the fields its
    sentence gives every record (created_at, updated_at; confidence and ts of edges)."""
    common = {"created_at": CLOCK, "updated_at": CLOCK}
    records = {}
    for line in spec_block("graph.node  key"):
        if line.strip().startswith("graph.edge"):
            break
        key, node_id, node_type, *props = re.split(r"\s{2,}", line.strip())
        value = {"id": int(node_id), "type": int(node_type), **common}
        if props:
            value["props"] = json.loads(props[0])
        records[("graph.node", key)] = value
    for line in spec_block("graph.edge  key"):
        key, edge_id, source, target, edge_type, weight = re.split(r"\s{2,}", line.strip())
        records[("graph.edge", key)] = {"id": int(edge_id), "src": int(source), "dst": int(target),
                                        "type": int(edge_type), "weight": float(weight), "confidence": 1.0,
                                        "ts": BATCH_ONE_TS, **common}
    return records


def test_batch_one_records_are_the_spec_records(example):
    (records,) = example["batch 1"]["records"]
    found = {(table, key): _typed(decode(value)) for table, key, value in records.rows
             if table in ("graph.node", "graph.edge")}
    assert found == {key: _typed(value) for key, value in _spec_records().items()}
    types = {key: decode(value) for key, value in records.values("graph.type").items()}
    assert types == example["batch 1"]["graph"]["000004.graph.csr.seg"].meta["types"]


def test_bobs_node_record_is_the_spec_bytes(example):
    (records,) = example["batch 1"]["records"]
    lines = spec_block("bob's graph.node value is these")
    expected = hex_bytes(" ".join(re.match(r"((?:[0-9a-f]{2} ?)+)", line.replace("  ", " ")).group(1)
                                  for line in lines))
    assert len(expected) == int(spec_sentence(r"bob's graph.node value is these (\d+) bytes")[1])
    assert records.values("graph.node")["bob"] == expected


def test_batch_two_records_and_counters_are_the_spec_ones(example):
    newest = example["batch 2"]["records"][-1]
    dead = {key: decode(value) for key, value in newest.values("graph.dead").items()}
    named = spec_sentence(r"puts graph.dead (e:\w{16}), (e:\w{16}) and (n:\w{16}) \(each 1\)")
    assert _typed(dead) == _typed(dict.fromkeys(named.groups(), 1))
    nodes = {key: decode(value) for key, value in newest.values("graph.node").items()}
    edges = {key: decode(value) for key, value in newest.values("graph.edge").items()}
    assert _typed(nodes["rome"]) == _typed({"id": 3, "type": 1, "created_at": CLOCK, "updated_at": CLOCK})
    assert nodes["bob"]["deleted"] is True
    assert _typed(edges["trip-1"]) == _typed({"id": 3, "src": 0, "dst": 3, "type": 2, "weight": 0.25,
                                              "confidence": 1.0, "ts": 1650000000.0, "created_at": CLOCK,
                                              "updated_at": CLOCK, "custom": True})
    assert {key: edges[key]["deleted"] for key in edges if key != "trip-1"} == \
        {'["alice","KNOWS","bob"]': True, '["bob","LIVES_IN","paris"]': True}
    said = spec_sentence(r"The counters are then graph.node_id (\d+), graph.edge_id (\d+), graph.node_type (\d+) "
                         r"and graph.edge_type (\d+)")
    assert example["batch 2"]["counters"] == dict(zip(("graph.node_id", "graph.edge_id", "graph.node_type",
                                                       "graph.edge_type"), map(int, said.groups())))
    assert [records.segment.name for records in example["batch 2"]["records"]] == \
        ["000003.records.seg", "000007.records.seg"]


def test_default_edge_keys_are_the_json_the_spec_describes(tmp_path):
    store = Store.open(str(tmp_path / "store"))
    graph = GraphStore(store, clock=lambda: CLOCK)
    awkward = ['q"uote', "back\\slash", "tab\tnew\nline", "\x01\x1f", "中文 é", "\u2028", "\x7f"]
    with graph.batch() as writer:
        writer.add_node("n", "Thing")
        for key in awkward:
            writer.add_node(key, "Thing")
    for key in awkward:
        expected = "[" + ",".join(_json_string(text) for text in (key, "LINKS", "n")) + "]"
        assert graph.add_edge(key, "LINKS", "n") == expected
        assert "custom" not in store.get("graph.edge", expected)
    store.close()


def _json_string(text: str) -> str:
    """The JSON string the spec describes, escape by escape (not json.dumps, which the code uses)."""
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
    return '"' + "".join(short.get(character, f"\\u{ord(character):04x}" if ord(character) < 0x20 else character)
                         for character in text) + '"'
