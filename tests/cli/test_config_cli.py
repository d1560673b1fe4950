"""`memctl config show|doc`, and settings refused or used by the commands that read them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memctl.paths import CONFIG_FILE, tenant_dir
from memctl.settings import reference
from memctl.settings.schema import KEYS

ROOT = Path(__file__).resolve().parents[2]
TURNS = [{"id": f"t{number}", "ts": f"2024-03-01T09:0{number}:00", "role": speaker, "content": text}
         for number, (speaker, text) in enumerate([
             ("Bob", "Which city did you move to last spring?"),
             ("Ann", "Lisbon, close to the river and the old tram."),
             ("Bob", "My sister keeps bees in her garden in Lisbon."),
             ("Ann", "Honey from her bees tastes of lavender.")])]


def _tenant_file(home, text: str) -> str:
    directory = tenant_dir(str(home), "default")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, CONFIG_FILE)
    Path(path).write_text(text, encoding="utf-8")
    return path


def _config_file(tmp_path, text: str) -> str:
    path = tmp_path / "override.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _show(cli, *arguments) -> dict:
    result = cli(*arguments, "config", "show", "--json")
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)
    return {row["key"]: row for row in answer["settings"]} | {"": answer["files"]}


def test_show_names_the_origin_of_every_value(cli, isolated_home, tmp_path):
    tenant = _tenant_file(isolated_home, "recall:\n  k_hop: 1\n  seeds_top: 50\n")
    user = _config_file(tmp_path, "recall.k_hop: 3\ngraph:\n  edge_weights: {ABOUT: 2}\n")
    rows = _show(cli, "--config", user)
    assert rows[""] == [{"layer": "tenant", "path": tenant, "found": True},
                        {"layer": "--config", "path": user, "found": True}]
    assert rows["recall.k_hop"] == {"key": "recall.k_hop", "value": 3, "origin": "--config", "file": user, "line": 1}
    assert rows["recall.seeds_top"] | {"key": None} == {"key": None, "value": 50, "origin": "tenant", "file": tenant,
                                                          "line": 3}
    assert (rows["recall.ppr_iterations"]["value"], rows["recall.ppr_iterations"]["origin"]) == (20, "default")
    assert rows["graph.edge_weights.ABOUT"]["origin"] == "--config"
    assert rows["graph.edge_weights.SUPPORTS"]["origin"] == "default"
    assert len(rows) - 1 == sum(len(key.default) if isinstance(key.default, dict) else 1 for key in KEYS)

    text = cli("--config", user, "config", "show")
    assert text.exit_code == 0
    lines = {line.split()[0]: line for line in text.stdout.splitlines() if line.strip()}
    assert lines["recall.k_hop"].split()[1:] == ["3", "--config", f"{user}:1"]
    assert lines["recall.seeds_top"].split()[1:] == ["50", "tenant", f"{tenant}:3"]
    assert lines["recall.ppr_iterations"].split()[1:] == ["20", "default"]
    assert f"tenant: {tenant}" in text.stdout and f"--config: {user}" in text.stdout


def test_show_without_files_says_the_tenant_file_is_absent(cli, isolated_home):
    rows = _show(cli)
    assert rows[""] == [{"layer": "tenant", "path": os.path.join(tenant_dir(str(isolated_home), "default"),
                                                                 CONFIG_FILE), "found": False}]
    assert {row["origin"] for key, row in rows.items() if key} == {"default"}
    assert not os.path.exists(tenant_dir(str(isolated_home), "default"))  # show creates no store


def test_show_one_group(cli):
    rows = _show(cli, "--tenant", "other")
    assert "recall.raw.top" in rows
    result = cli("config", "show", "recall.raw", "--json")
    assert [row["key"] for row in json.loads(result.stdout)["settings"]] == \
        [key.name for key in KEYS if key.name.startswith("recall.raw.")]
    result = cli("config", "show", "recall.rwa")
    assert result.exit_code == 2 and "unknown setting 'recall.rwa'; did you mean 'recall.raw'?" in result.stderr


def test_doc_prints_the_reference_of_every_key(cli):
    result = cli("config", "doc")
    assert result.exit_code == 0
    assert result.stdout == (ROOT / reference.REFERENCE_FILE).read_text(encoding="utf-8")
    listed = json.loads(cli("config", "doc", "--json").stdout)
    assert [entry["key"] for entry in listed] == [key.name for key in KEYS]
    k_hop = listed[0]
    assert k_hop == {"key": "recall.k_hop", "type": "a whole number from 0 to 5", "default": 2, "doc": KEYS[0].doc,
                     "source": KEYS[0].source, "readers": ["memctl/recall/pipeline.py"]}


@pytest.mark.parametrize("command", [["stats"], ["recall", "--q", "bees"], ["ingest", "--text", "A: hi"],
                                     ["config", "show"]])
def test_config_naming_a_directory_is_exit_2_naming_the_option(cli, isolated_home, tmp_path, command):
    result = cli("--config", str(tmp_path), *command)
    assert result.exit_code == 2
    assert result.stderr == f"error: --config: {tmp_path} is a directory, not a YAML settings file\n"
    assert not os.path.exists(isolated_home)


@pytest.mark.parametrize("setting, message", [
    ("recall:\n  ppr_iterations: 1000000000000\n",
     "setting 'recall.ppr_iterations': 1000000000000 is out of range: expected a whole number from 1 to 1000"),
    ("recall:\n  budget_tokens: -5\n", "setting 'recall.budget_tokens': -5 is out of range"),
    ("recall:\n  lambda:\n    bm25: .nan\n", "setting 'recall.lambda.bm25': .nan is not a finite number"),
    ("engine:\n  flush_bytes: -1\n", "setting 'engine.flush_bytes': -1 is out of range"),
    ("recall:\n  k_hop: 9999\n", "setting 'recall.k_hop': 9999 is out of range"),
    ("recall:\n  ann_top: {Episode: 200}\n", "unknown setting 'recall.ann_top'"),
])
def test_a_bad_setting_stops_every_command_before_it_touches_the_store(cli, isolated_home, tmp_path, setting,
                                                                       message):
    jsonl = tmp_path / "turns.jsonl"
    jsonl.write_text("".join(json.dumps(turn) + "\n" for turn in TURNS), encoding="utf-8")
    assert cli("ingest", "--raw", str(jsonl), "-q").exit_code == 0
    before = sorted((path, path.stat().st_size) for path in Path(isolated_home).rglob("*"))
    user = _config_file(tmp_path, setting)
    for command in (["recall", "--q", "bees"], ["ingest", "--text", "A: new"], ["r2g"]):
        result = cli("--config", user, *command)
        assert result.exit_code == 2, command
        assert message in result.stderr and user in result.stderr
    assert sorted((path, path.stat().st_size) for path in Path(isolated_home).rglob("*")) == before


def test_k_hop_from_each_layer_reaches_the_recall_trace(cli, isolated_home, tmp_path):
    jsonl = tmp_path / "turns.jsonl"
    jsonl.write_text("".join(json.dumps(turn) + "\n" for turn in TURNS), encoding="utf-8")
    assert cli("ingest", "--raw", str(jsonl), "-q").exit_code == 0
    assert cli("r2g").exit_code == 0

    def expansion(*arguments) -> list:
        answer = json.loads(cli(*arguments, "recall", "--q", "Which city has bees?", "--json").stdout)
        return [stage["notes"].get("k") for stage in answer["trace"]["stages"] if stage["name"].endswith("+ PPR")] \
            + [entry["reason"] for entry in answer["trace"]["fallbacks"] if entry["name"] == "no_ppr"]

    assert expansion() == [2]
    _tenant_file(isolated_home, "recall:\n  k_hop: 1\n")
    assert expansion() == [1]
    assert expansion("--config", _config_file(tmp_path, "recall.k_hop: 0\n")) == \
        ["k = 0: stage C stops after the reply hop"]
