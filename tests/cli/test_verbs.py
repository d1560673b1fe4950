"""Verbs are subcommands (issue 16, point 7), and every older flag form stays an alias printing exactly what
its subcommand prints: seed 001 §25.5's `graph --add-node … --add-edge …`, `index --add FILES…` and
`recall --q "…" --budget 1500 --trace`, and the rest (--khop, --ppr, --stats, --delete, --explain, --queries,
--extract-keywords). Writing forms run on two stores, one per form, whose contents are then compared."""

from __future__ import annotations

import json

import pytest

from recall_testkit import SAMPLES, recall_command, samples_home  # noqa: F401 - fixtures

CONCEPT = "Concept:Win11蓝牙故障"
NODES = [CONCEPT, "Episode:e1", "Episode:e2"]
NOW = "2025-10-01T12:00:00+00:00"  # recency depends on "now": both forms of a recall get the same one


def same_output(new, old) -> str:
    assert new.exit_code == 0, new.stderr
    assert old.exit_code == 0, old.stderr
    assert new.stdout == old.stdout
    return new.stdout


@pytest.fixture
def two_homes(cli, tmp_path):
    """memctl in two stores: (new form, alias)."""
    def home(name):
        return lambda *arguments, input=None: cli("--home", str(tmp_path / name), *arguments, input=input)
    return home("new"), home("old")


# --- graph ------------------------------------------------------------------------------------------------------


def _graph(run) -> None:
    assert run("graph", "node", "add", *NODES).exit_code == 0
    for source, weight in (("Episode:e1", "1"), ("Episode:e2", "0.7")):
        assert run("graph", "edge", "add", source, "ABOUT", CONCEPT, "--weight", weight).exit_code == 0


@pytest.mark.parametrize("output", [[], ["--json"]])
def test_graph_writes_alias_forms(two_homes, output):
    new, old = two_homes
    printed = same_output(new("graph", "node", "add", *NODES, *output),
                          old("graph", *[word for key in NODES for word in ("--add-node", key)], *output))
    assert all(key in printed for key in NODES)
    printed = same_output(new("graph", "edge", "add", "Episode:e1", "ABOUT", CONCEPT, "--weight", "0.5", *output),
                          old("graph", "--add-edge", "Episode:e1", "ABOUT", CONCEPT, "--weight", "0.5", *output))
    assert '["Episode:e1","ABOUT","Concept:Win11蓝牙故障"]' in printed.replace('\\"', '"')
    exported = [_untimed(new("graph", "export").stdout), _untimed(old("graph", "export").stdout)]
    assert exported[0] == exported[1]
    assert [row["kind"] for row in exported[0]] == ["node"] * 3 + ["edge"] and exported[0][-1]["weight"] == 0.5


def _untimed(jsonl: str) -> list:
    """Exported rows without the times they were written at."""
    rows = [json.loads(line) for line in jsonl.splitlines()]
    return [{name: value for name, value in row.items() if name not in ("created_at", "updated_at", "ts")} for row in rows]


QUERIES = [
    (["neighbors", CONCEPT, "--direction", "both"], ["--neighbors", CONCEPT, "--direction", "both"], "Episode:e2"),
    (["khop", "Episode:e1", "--k", "2", "--direction", "both"], ["--khop", "Episode:e1", "--k", "2", "--direction",
                                                                  "both"], "Episode:e2"),
    (["ppr", "Episode:e1", "--whole-graph", "--limit", "2"], ["--ppr", "Episode:e1", "--whole-graph", "--limit", "2"],
     "Episode:e1"),
    (["stats", "--direction", "in"], ["--stats", "--direction", "in"], "ABOUT"),
]


@pytest.mark.parametrize("output", [[], ["--json"]])
@pytest.mark.parametrize("new_form, alias, expected", QUERIES, ids=[query[0][0] for query in QUERIES])
def test_graph_query_alias_forms(cli, new_form, alias, expected, output):
    _graph(cli)
    printed = same_output(cli("graph", *new_form, *output), cli("graph", *alias, *output))
    assert expected in printed


def test_the_seed_graph_form_writes_first_then_answers_each_query(two_homes):
    new, old = two_homes
    parts = [new("graph", "node", "add", *NODES), new("graph", "edge", "add", "Episode:e1", "ABOUT", CONCEPT),
             new("graph", "neighbors", CONCEPT), new("graph", "stats")]
    combined = old("graph", *[word for key in NODES for word in ("--add-node", key)],
                   "--add-edge", "Episode:e1", "ABOUT", CONCEPT, "--neighbors", CONCEPT, "--stats")
    assert all(part.exit_code == 0 for part in parts) and combined.exit_code == 0, combined.stderr
    assert combined.stdout == "".join(part.stdout for part in parts)


@pytest.mark.parametrize("arguments, message", [
    (["graph", "--json", "neighbors", CONCEPT], "put it first"),
    (["graph", "node", "add", "no-type-here"], "TYPE:NAME"),
    (["graph", "edge", "add", "Episode:e1", "ABOUT"], "Missing argument"),
    (["graph", "neighbors", "Episode:nowhere"], "no node"),
    (["graph", "khop", "Episode:e1", "--direction", "sideways"], "direction"),
])
def test_graph_usage_errors_exit_2(cli, arguments, message):
    _graph(cli)
    result = cli(*arguments)
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.stderr


# --- index and search -------------------------------------------------------------------------------------------


@pytest.fixture
def notes(tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    for name, text in {"bluetooth.txt": "蓝牙打不开了\nWin11 更新以后蓝牙耳机连接不上。\n",
                       "wifi.txt": "网络问题\nWiFi 经常断开。\n",
                       "fox.md": "The quick brown fox\njumps over the lazy dog.\n"}.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("output", [[], ["--json"]])
def test_index_alias_forms(two_homes, notes, output):
    new, old = two_homes
    printed = same_output(new("index", "add", str(notes), "--tag", "home", *output),
                          old("index", "--add", str(notes), "--tag", "home", *output))
    assert "3" in printed
    found = same_output(new("search", "蓝牙", "--tag", "home", "--json"), old("search", "蓝牙", "--tag", "home", "--json"))
    assert [hit["key"] for hit in json.loads(found)["hits"]] == [str(notes / "bluetooth.txt")]
    keys = [str(notes / "wifi.txt"), str(notes / "fox.md")]
    same_output(new("index", "delete", *keys, *output), old("index", "--delete", keys[0], "--delete", keys[1], *output))
    for query in ("quick", "WiFi", "蓝牙"):
        same_output(new("search", query, "--json"), old("search", query, "--json"))
    assert json.loads(new("search", "quick", "--json").stdout)["hits"] == []


def test_the_seed_index_form_takes_a_glob_of_samples(cli):
    files = sorted(str(path) for path in SAMPLES.glob("*.txt"))
    result = cli("index", "--add", *files, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["keys"] == files
    assert str(SAMPLES / "win11-bluetooth.transcript.txt") in cli("search", "蓝牙").stdout


def test_index_add_of_a_bad_file_creates_no_store(cli, notes, isolated_home):
    (notes / "bad.txt").write_bytes(b"caf\xe9\n")
    result = cli("index", "add", str(notes))
    assert result.exit_code == 2 and "invalid UTF-8" in result.stderr
    assert not isolated_home.exists()


@pytest.mark.parametrize("arguments", [["index"], ["index", "add"], ["index", "delete"], ["index", "notes.txt"],
                                       ["index", "--add"], ["index", "--add", "x.txt", "--delete", "y"]])
def test_index_usage_errors_exit_2(cli, arguments):
    result = cli(*arguments)
    assert result.exit_code == 2 and "Traceback" not in result.stderr


def test_search_takes_its_query_as_argument_or_as_q(cli, notes):
    cli("index", "add", str(notes))
    printed = same_output(cli("search", "蓝牙 打不开", "--json"), cli("search", "--q", "蓝牙 打不开", "--json"))
    assert json.loads(printed)["hits"][0]["key"].endswith("bluetooth.txt")
    assert "QUERY or as --q" in cli("search", "蓝牙", "--q", "蓝牙").stderr
    assert cli("search").exit_code == 2 and "give a query" in cli("search").stderr


# --- recall -----------------------------------------------------------------------------------------------------


def _timeless(printed: str) -> dict:
    """A recall --json answer without its wall-clock timings, the only part that differs between runs."""
    answer = json.loads(printed)
    answer["trace"].pop("total_ms")
    for stage in answer["trace"]["stages"]:
        stage.pop("ms")
    return answer


@pytest.mark.parametrize("options", [[], ["--mvp", "--top", "3"], ["--budget", "1500"], ["--types", "Fact"]])
def test_recall_query_as_argument_or_as_q(recall, options):
    new = recall("Win11 蓝牙 打不开", "--now", NOW, *options, "--json")
    old = recall("--q", "Win11 蓝牙 打不开", "--now", NOW, *options, "--json")
    assert new.exit_code == 0 and old.exit_code == 0, new.stderr + old.stderr
    assert _timeless(new.stdout) == _timeless(old.stdout)
    assert _timeless(new.stdout)["query"] == "Win11 蓝牙 打不开"


def test_the_seed_recall_form_with_budget_and_trace(recall):
    seed = recall("--q", "Win11 蓝牙 开不了", "--budget", "1500", "--trace")
    assert seed.exit_code == 0, seed.stderr
    assert "A: NodeIndex BM25F" in seed.stdout and "pack" in seed.stdout and "蓝牙" in seed.stdout
    new = recall("Win11 蓝牙 开不了", "--budget", "1500", "--trace", "--now", NOW, "--json")
    old = recall("--q", "Win11 蓝牙 开不了", "--budget", "1500", "--trace", "--now", NOW, "--json")
    answer = _timeless(new.stdout)
    assert answer == _timeless(old.stdout)
    assert 0 < sum(card["tokens"] for card in answer["results"]) <= 1500


def test_recall_explain_and_its_alias(recall):
    node = json.loads(recall("Kyoto peanut allergy", "--now", NOW, "--json").stdout)["results"][0]["id"]
    explained = same_output(recall("explain", node, "--now", NOW, "--json"),
                            recall("--explain", node, "--now", NOW, "--json"))
    assert json.loads(explained)["id"] == node
    ranked = same_output(recall("explain", node, "--q", "Kyoto peanut allergy", "--now", NOW, "--json"),
                         recall("--explain", node, "--q", "Kyoto peanut allergy", "--now", NOW, "--json"))
    assert json.loads(ranked)["rank"] == 1
    text = same_output(recall("explain", node, "--q", "Kyoto peanut allergy", "--now", NOW),
                       recall("--explain", node, "--q", "Kyoto peanut allergy", "--now", NOW))
    assert "rank 1" in text
    assert recall("explain", "no-such-node").exit_code == 2


@pytest.mark.parametrize("output", [[], ["--json"]])
def test_recall_batch_and_its_alias(recall, tmp_path, output):
    batch = tmp_path / "q.jsonl"
    batch.write_text('{"id": "a", "q": "Kyoto peanut allergy"}\n{"q": "蓝牙 驱动", "top": 2}\n', encoding="utf-8")
    printed = same_output(recall("batch", str(batch), "--now", NOW, "--top", "4", *output),
                          recall("--queries", str(batch), "--now", NOW, "--top", "4", *output))
    if output:
        lines = [json.loads(line) for line in printed.splitlines()]
        assert [line["id"] for line in lines] == ["a", 2] and [len(line["results"]) for line in lines] == [4, 2]
    else:
        assert printed.count("== ") == 2
    stdin = recall("batch", "-", "--now", NOW, "--top", "4", *output, input=batch.read_text(encoding="utf-8"))
    assert stdin.stdout == printed


@pytest.mark.parametrize("output", [[], ["--json"]])
def test_recall_keywords_and_its_alias(recall, output):
    printed = same_output(recall("keywords", "Win11 蓝牙 打不开 0x8007045D", *output),
                          recall("--q", "Win11 蓝牙 打不开 0x8007045D", "--extract-keywords", *output))
    assert "0x8007045D" in printed and "蓝牙" in printed


def test_a_query_that_is_a_subcommand_name_goes_after_double_dash_or_in_q(recall):
    for arguments in (["--json", "--", "explain"], ["--q", "explain", "--json"], ["--q", "batch", "--json"]):
        result = recall(*arguments)
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["query"] in ("explain", "batch")
    misplaced = recall("--json", "explain", "Episode:x")
    assert misplaced.exit_code == 2 and "put it first" in misplaced.stderr
    several = recall("蓝牙", "驱动")
    assert several.exit_code == 2 and "quote a query" in several.stderr


@pytest.mark.parametrize("arguments, message", [
    ([], "give a query"),
    (["蓝牙", "--q", "蓝牙"], "not both"),
    (["--queries", "q.jsonl", "--q", "x"], "--queries runs its own queries"),
    (["explain"], "Missing argument"),
    (["keywords"], "Missing argument"),
    (["batch", "missing.jsonl"], "no such file"),
])
def test_recall_usage_errors_exit_2(recall, arguments, message):
    result = recall(*arguments)
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.stderr
