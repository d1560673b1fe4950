"""`memctl r2g` on the command line, and the samples/ walk-through of seed 001 §4.y (W1 → W2)."""

from __future__ import annotations

import json
import os

from engine.graph.api import GraphStore
from memctl.model import concept_id, entity_id
from r2g_testkit import TENANT, open_memory

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "samples")


def _json(result) -> dict:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_samples_end_to_end(cli, isolated_home):
    assert cli("ingest", "--raw", SAMPLES, "--quiet").exit_code == 0
    summary = _json(cli("r2g", "--from", "raw", "--to", "graph", "--json"))
    assert summary["chunks_new"] == summary["chunks_total"] > 0
    assert cli("r2g").stdout.startswith("0 new chunks")
    with open_memory(isolated_home, writable=False) as memory:
        graph = GraphStore(memory.store)
        win11_bluetooth = concept_id(TENANT, "win11_bluetooth")
        about = [graph.get_node(row["key"]) for row in graph.neighbors(win11_bluetooth, "in", ["ABOUT"]).rows()]
        episodes = [node for node in about if node["type"] == "Episode"]
        assert any("蓝牙" in node["props"]["text"] and node["props"]["attributes"]["speaker"] == "用户"
                   for node in episodes)
        bluetooth = entity_id(TENANT, "Bluetooth", "Product")
        mentioning = {row["key"] for row in graph.neighbors(bluetooth, "in", ["MENTIONS"]).rows()}
        assert len(mentioning) >= 5
        preferences = [graph.get_node(key) for key in graph.nodes_of_type("Preference")]
        [chinese] = [node for node in preferences if node["props"]["title"] == "以后优先中文回答"]
        assert chinese["props"]["attributes"]["holder"] == "用户"
        assert chinese["props"]["attributes"]["polarity"] == 1
        assert concept_id(TENANT, "language_preference") in {
            row["key"] for row in graph.neighbors(chinese["key"], "out", ["ABOUT"]).rows()}
        from memctl.r2g.nodeindex import open_index

        hits = open_index(memory.store, memory.config).search("Win11 蓝牙 打不开", top=5, types=["Episode"])
        assert any("蓝牙" in graph.get_node(hit.key)["props"]["text"] for hit in hits)


def test_jsonl_from_stdin_and_a_bad_line(cli):
    good = json.dumps({"node": {"type": "Fact", "text": "Dana moved to Somerville"}}) + "\n"
    result = cli("r2g", "--from", "jsonl", "-", "--json", input=good)
    assert _json(result)["nodes"] == 1
    bad = good.replace("Dana", "Ann") + '{"edge": {"src": "nope", "dst": "nope", "type": "ABOUT"}}\n'
    result = cli("r2g", "--from", "jsonl", "-", input=bad)
    assert result.exit_code == 2
    assert "<stdin>:2" in result.stderr and "Traceback" not in result.stderr
    assert cli("r2g", "--from", "jsonl", "-", "--json", input=good).exit_code == 0  # already imported: no-op


def test_usage_errors(cli, tmp_path):
    assert cli("r2g", "--to", "vectors").exit_code == 2
    assert cli("r2g", "--from", "jsonl").exit_code == 2
    assert cli("r2g", "--from", "jsonl", str(tmp_path / "missing.jsonl")).exit_code == 2
    assert cli("r2g", "--from", "csv").exit_code == 2
    assert cli("r2g", "--from", "jsonl", "-", "--rebuild", input="").exit_code == 2


def test_rebuild_on_the_command_line(cli):
    assert cli("ingest", "--text", "小明在公园里踢足球", "--quiet").exit_code == 0
    first = _json(cli("r2g", "--json"))
    second = _json(cli("r2g", "--rebuild", "--json"))
    assert second["rebuild"] and second["nodes_removed"] == 0
    assert second["nodes_created"] == first["nodes_created"]
    assert second["edges_written"] == first["edges_written"]
    assert cli("r2g", "--quiet").stdout == ""
