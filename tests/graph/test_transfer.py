"""JSONL import (streaming, batched, with line-precise errors) and JSONL / GraphML / DOT export."""

import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from engine.errors import InputError
from engine.graph.api import GraphStore
from engine.graph.transfer import export, import_jsonl
from engine.store import Store

TOOLS = Path(__file__).resolve().parents[2] / "tools"
LINES = [
    {"kind": "node", "id": "Concept:Win11蓝牙故障", "type": "Concept", "title": "Win11 蓝牙故障"},
    {"kind": "node", "id": "Episode:e1", "type": "Episode", "text": "蓝牙开不了", "props": {"importance": 0.8}},
    {"kind": "node", "id": 'Episode:"quoted"', "type": "Episode"},
    {"kind": "edge", "src": "Episode:e1", "type": "ABOUT", "dst": "Concept:Win11蓝牙故障", "weight": 0.9,
     "ts": "2025-09-15T10:35:10Z", "temporal": {"since": "2025-09-14T09:00:00Z", "until": None}},
    {"kind": "edge", "id": "edge-7", "src": 'Episode:"quoted"', "type": "TEMPORAL_NEXT", "dst": "Episode:e1",
     "confidence": 0.5, "creator": "LinkerAgent@v1"},
]


def jsonl(lines) -> bytes:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")


@pytest.fixture
def graph(tmp_path):
    store = Store.open(str(tmp_path / "store"))
    yield GraphStore(store)
    store.close()


def test_import_then_export_round_trips(graph, tmp_path):
    reports = []
    report = import_jsonl(graph, io.BytesIO(jsonl(LINES)), batch_lines=2, progress=reports.append)
    assert (report.nodes, report.edges, report.batches, report.lines) == (3, 2, 3, 5)
    assert [entry.lines for entry in reports][-1] == 5
    assert graph.get_node("Episode:e1")["props"] == {"importance": 0.8, "text": "蓝牙开不了"}
    assert graph.get_edge("edge-7")["props"] == {"creator": "LinkerAgent@v1"}
    exported = io.StringIO()
    assert export(graph, exported, "jsonl") == {"nodes": 3, "edges": 2}
    with Store.open(str(tmp_path / "copy")) as copy_store:
        copy = GraphStore(copy_store)
        import_jsonl(copy, io.StringIO(exported.getvalue()))
        again = io.StringIO()
        export(copy, again, "jsonl")
    strip = [{k: v for k, v in json.loads(line).items() if k not in ("created_at", "updated_at")}
             for line in exported.getvalue().splitlines()]
    assert strip == [{k: v for k, v in json.loads(line).items() if k not in ("created_at", "updated_at")}
                     for line in again.getvalue().splitlines()]


def test_graphml_and_dot_around_a_node(graph):
    import_jsonl(graph, io.BytesIO(jsonl(LINES)))
    graphml = io.StringIO()
    assert export(graph, graphml, "graphml", around="Episode:e1", k=1, types=["ABOUT"]) == {"nodes": 2, "edges": 1}
    root = ElementTree.fromstring(graphml.getvalue())
    namespace = "{http://graphml.graphdrawing.org/xmlns}"
    exported_nodes = sorted(node.get("id") for node in root.iter(namespace + "node"))
    assert exported_nodes == ["Concept:Win11蓝牙故障", "Episode:e1"]
    dot = io.StringIO()
    export(graph, dot, "dot", around='Episode:"quoted"', k=2)
    text = dot.getvalue()
    assert text.startswith("digraph memctl {") and '"Episode:\\"quoted\\"" -> "Episode:e1"' in text


def test_reimport_updates_in_place(graph):
    import_jsonl(graph, io.BytesIO(jsonl(LINES)))
    changed = LINES[:3] + [{**LINES[3], "weight": 0.1}]
    import_jsonl(graph, io.BytesIO(jsonl(changed)))
    assert graph.store.counter("graph.node_id") == 3 and graph.store.counter("graph.edge_id") == 2
    assert [row["weight"] for row in graph.neighbors("Episode:e1", types=["ABOUT"]).rows()] == [pytest.approx(0.1)]


@pytest.mark.parametrize("bad_line, message", [
    (b"{not json", "not valid JSON"),
    (b'["a list"]', "must be an object"),
    (b'{"kind": "vertex"}', "must be an object"),
    (b'{"kind": "edge", "src": "Episode:e1", "type": "ABOUT", "dst": "nowhere"}', "no node"),
    (b'{"kind": "edge", "src": "Episode:e1", "type": "ABOUT", "dst": "Episode:e1", "weight": "heavy"}', "weight"),
    (b'{"kind": "node", "id": "x", "type": "bad type"}', "type"),
    (b'{"kind": "node", "id": "x", "type": ["Episode"]}', "type"),
    (b'{"kind": "node", "id": 7, "type": "Episode"}', "node key"),
    (b'{"kind": "edge", "id": 7, "src": "Episode:e1", "type": "ABOUT", "dst": "Episode:e1"}', "edge key"),
    (b'{"kind": "node", "id": "x", "type": "Episode", "props": {"n": 123456789012345678901234567890}}', "stored"),
    (b'{"kind": "node", "id": "\xff\xfe", "type": "Episode"}', "UTF-8"),
    (b"[" * 100000 + b"]" * 100000, "JSON"),
])
def test_bad_line_names_file_and_line_and_writes_nothing_of_its_batch(graph, tmp_path, bad_line, message):
    path = tmp_path / "input.jsonl"
    path.write_bytes(jsonl(LINES[:2]) + b"\n" + bad_line + b"\n" + jsonl(LINES[2:]))
    sequence = graph.store.sequence
    with pytest.raises(InputError, match=message) as caught:
        import_jsonl(graph, str(path))
    assert caught.value.where == f"{path}:4"
    assert graph.store.sequence == sequence and graph.get_node("Episode:e1") is None


def test_earlier_batches_stay_and_the_error_says_so(graph):
    data = jsonl(LINES[:2]) + b'{"kind": "node"}\n'
    with pytest.raises(InputError, match="lines before 3 were imported"):
        import_jsonl(graph, io.BytesIO(data), batch_lines=2)
    assert graph.get_node("Episode:e1") is not None


def test_generated_graph_imports_and_is_deterministic(graph, tmp_path):
    command = [sys.executable, str(TOOLS / "gen_synthetic.py"), "--nodes", "300", "--edges", "900", "--seed", "3"]
    first = subprocess.run(command + ["--out", str(tmp_path / "a.jsonl")], check=True, capture_output=True)
    subprocess.run(command + ["--out", str(tmp_path / "b.jsonl")], check=True, capture_output=True)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    report = import_jsonl(graph, str(tmp_path / "a.jsonl"), batch_lines=250)
    assert report.nodes == 300 and report.edges >= 800 and b"edges" in first.stderr
    graph.store.compact()
    statistics = graph.degree_statistics("in")
    assert {"ABOUT", "MENTIONS", "TEMPORAL_NEXT"} <= set(statistics)
    assert statistics["ABOUT"]["max_degree"] > 3 * statistics["ABOUT"]["mean_degree"]  # heavy-tailed
