"""`memctl graph` through CliRunner: JSON output, exit codes, import/export."""

import json

import pytest


@pytest.fixture
def run(cli):
    return cli


def test_seed_flag_forms_add_then_query_with_json(run):
    result = run("graph", "--add-node", "Concept:Win11蓝牙故障", "--add-node", "Episode:e1", "--add-node",
                 "Episode:e2", "--add-edge", "Episode:e1", "ABOUT", "Concept:Win11蓝牙故障", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["added_nodes"] == ["Concept:Win11蓝牙故障", "Episode:e1", "Episode:e2"]
    result = run("graph", "--add-edge", "Episode:e2", "ABOUT", "Concept:Win11蓝牙故障", "--weight", "0.7")
    assert result.output == 'added edge ["Episode:e2","ABOUT","Concept:Win11蓝牙故障"]\n'
    result = run("graph", "--neighbors", "Concept:Win11蓝牙故障", "--types", "ABOUT", "--khop", "Episode:e1",
                 "--k", "2", "--direction", "both", "--ppr", "Episode:e1", "--stats", "--json")
    answer = json.loads(result.output)
    assert sorted(row["key"] for row in answer["neighbors"]) == ["Episode:e1", "Episode:e2"]
    assert [row["key"] for row in answer["khop"]] == ["Episode:e1", "Concept:Win11蓝牙故障", "Episode:e2"]
    assert sorted(row["key"] for row in answer["ppr"]) == ["Concept:Win11蓝牙故障", "Episode:e1", "Episode:e2"]
    assert sum(row["score"] for row in answer["ppr"]) == pytest.approx(1.0)
    assert answer["stats"]["ABOUT"]["edges"] == 2
    assert "hop 1  Concept:Win11蓝牙故障" in run("graph", "--khop", "Episode:e1", "--k", "1").output


@pytest.mark.parametrize("args", [
    ["graph", "node", "add", "Episode:a", "no-type-here"],
    ["graph", "--add-node", "no-type-here"],
    ["graph", "edge", "add", "Episode:a", "ABOUT", "Episode:missing"],
    ["graph", "--add-node", "Episode:a", "--add-edge", "Episode:a", "ABOUT", "Episode:missing"],
    ["graph", "neighbors", "Episode:missing"],
    ["graph", "--add-node", "Episode:a", "--add-edge", "Episode:a", "ABOUT", "Episode:a", "--weight", "-2"],
])
def test_bad_input_exits_2_and_stores_nothing(run, args):
    assert run("ingest", "--text", "a store without a graph", "--quiet").exit_code == 0
    result = run(*args)
    assert result.exit_code == 2 and "error:" in result.output
    assert run("graph", "stats", "--json").output.strip() == '{"stats": {}}'
    assert run("graph", "export").output == ""


def test_import_and_export(run, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text('{"kind":"node","id":"a","type":"Entity"}\n{"kind":"node","id":"b","type":"Entity"}\n'
                      '{"kind":"edge","src":"a","type":"MENTIONS","dst":"b","weight":0.5}\n', encoding="utf-8")
    result = run("graph", "import", str(source), "--json")
    assert json.loads(result.output) == {"nodes": 2, "edges": 1, "lines": 3, "batches": 1}
    out = tmp_path / "g.dot"
    assert run("graph", "export", "--out", str(out), "--around", "a").exit_code == 0
    assert '"a" -> "b"' in out.read_text(encoding="utf-8")
    lines = run("graph", "export").output.splitlines()
    assert [json.loads(line)["kind"] for line in lines] == ["node", "node", "edge"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind":"edge","src":"a","type":"MENTIONS","dst":"nowhere"}\n', encoding="utf-8")
    result = run("graph", "import", str(bad))
    assert result.exit_code == 2 and "bad.jsonl:1" in result.output
