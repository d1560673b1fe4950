"""`memctl recall` on samples/ (seed 001 §4.y CLI examples, W3–W6) and its options, output and errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine.raw import RawStore
from recall_testkit import SAMPLES, open_memory, samples_store


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return samples_store(tmp_path_factory)


@pytest.fixture
def run(cli, home):
    def invoke(*args, input=None):
        return cli("--home", str(home), "recall", *args, input=input)
    return invoke


def _json(result) -> dict:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_seed_example_win11_bluetooth(run, home):
    result = run("--q", "Win11 蓝牙 打不开", "--mvp", "--trace")
    assert result.exit_code == 0, result.stderr
    assert "蓝牙" in result.stdout and "A: NodeIndex BM25F" in result.stdout and "C: 1-hop + PPR" in result.stdout
    answer = _json(run("--q", "Win11 蓝牙 打不开", "--mvp", "--json"))
    top = answer["results"][:3]
    assert all(card["type"] == "Episode" and "蓝牙" in card["citations"][0]["snippet"] for card in top)
    assert "打不开" in top[0]["citations"][0]["snippet"]
    assert all(card["citations"][0]["source_id"].startswith("samples/win11-bluetooth") or
               "win11-bluetooth" in card["citations"][0]["source_id"] for card in top)
    _check_snippets(home, answer)


def test_seed_example_error_code_graph_only_with_raw(run, home):
    answer = _json(run("--q", "错误码 0x8007045D", "--mvp", "--graph-only", "--allow-raw", "--json"))
    names = [entry["name"] for entry in answer["trace"]["fallbacks"]]
    assert "graph_filter" in names and "raw:requested" in names and "raw:pattern_tokens" in names
    snippets = [citation["snippet"] for card in answer["results"][:3] for citation in card["citations"]]
    assert any("0x8007045D" in snippet for snippet in snippets)
    assert answer["trace"]["variant"].startswith("G")
    _check_snippets(home, answer)


def _check_snippets(home, answer: dict) -> None:
    """Every snippet is exactly the cited bytes of its chunk."""
    with open_memory(home) as memory:
        raw = RawStore(memory.store)
        for card in answer["results"]:
            for citation in card["citations"]:
                exact = raw.read_span(citation["raw_id"], citation["offset"], citation["length"]).decode("utf-8")
                assert citation["snippet"] == exact


def test_json_schema(run):
    answer = _json(run("Kyoto peanut allergy", "--json", "--top", "5"))
    assert set(answer) == {"query", "results", "packing", "trace"}
    assert answer["query"] == "Kyoto peanut allergy"
    assert 1 <= len(answer["results"]) <= 5
    for card in answer["results"]:
        assert {"id", "type", "title", "text", "score", "scores", "path", "citations", "tokens"} <= set(card)
        assert set(card["scores"]) >= {"bm25", "vec", "ppr", "weight"}
        assert card["path"] and card["path"][-1]["id"] == card["id"]
        for citation in card["citations"]:
            assert set(citation) >= {"raw_id", "offset", "length", "source_id", "ts", "snippet"}
    scores = [card["score"] for card in answer["results"]]
    assert scores == sorted(scores, reverse=True)
    trace = answer["trace"]
    assert {"total_ms", "variant", "lambda", "fallbacks", "stages"} <= set(trace)
    assert [stage["name"] for stage in trace["stages"]][:2] == ["query", "A: NodeIndex BM25F"]
    assert all({"name", "ms", "candidates", "top", "notes"} <= set(stage) for stage in trace["stages"])


# The `recall --json` schema of README.md: (keys always printed, keys printed only sometimes) per object.
DOCUMENTED = {
    "answer": ({"query", "results", "packing", "trace"}, set()),
    "packing": ({"budget", "tokens", "matched", "dropped", "smallest_dropped"}, set()),
    "card": ({"id", "type", "title", "text", "score", "scores", "path", "citations", "tokens"}, {"supports"}),
    "scores": ({"bm25", "vec", "ppr", "weight"}, {"recency"}),
    "citation": ({"raw_id", "offset", "length", "source_id", "ts", "snippet"}, {"error"}),
    "matched node": ({"id", "type", "title", "matched", "words", "fields"}, set()),
    "node": ({"id", "type", "title"}, set()),
    "edge": ({"edge", "kind"}, set()),
    "trace": ({"total_ms", "variant", "lambda", "fallbacks", "stages"}, set()),
    "fallback": ({"name", "reason"}, set()),
    "stage": ({"name", "ms", "candidates", "top", "notes"}, set()),
    "batch line": ({"id", "results", "packing"}, {"trace"}),
}


def _readme_section() -> str:
    text = (SAMPLES.parent / "README.md").read_text(encoding="utf-8")
    start = text.index("### recall --json")
    return text[start: text.index("\n#", start + 1)]


def _conforms(value: dict, kind: str, seen: set) -> None:
    always, sometimes = DOCUMENTED[kind]
    assert always <= set(value) <= always | sometimes, (kind, sorted(value))
    seen.update((kind, key) for key in value)


def test_printed_keys_are_the_readme_schema(run, tmp_path):
    section = _readme_section()
    for always, sometimes in DOCUMENTED.values():
        assert all(f'"{key}"' in section for key in always | sometimes), section
    seen: set = set()
    queries = [("Kyoto peanut allergy", "--top", "30", "--budget", "0"), ("Win11 蓝牙 打不开", "--mvp"),
               ("错误码 0x8007045D", "--allow-raw")]
    for arguments in queries:
        answer = _json(run(*arguments, "--json"))
        _conforms(answer, "answer", seen)
        _conforms(answer["packing"], "packing", seen)
        for card in answer["results"]:
            _conforms(card, "card", seen)
            _conforms(card["scores"], "scores", seen)
            for citation in card["citations"]:
                _conforms(citation, "citation", seen)
            for support in card.get("supports", ()):
                _conforms(support, "node", seen)
            if len(card["path"]) == 1:
                _conforms(card["path"][0], "matched node", seen)
            else:
                parent, edge, node = card["path"]
                _conforms(parent, "node", seen), _conforms(edge, "edge", seen), _conforms(node, "node", seen)
        _conforms(answer["trace"], "trace", seen)
        for fallback in answer["trace"]["fallbacks"]:
            _conforms(fallback, "fallback", seen)
        for stage in answer["trace"]["stages"]:
            _conforms(stage, "stage", seen)
    assert {("card", "supports"), ("edge", "edge"), ("fallback", "name")} <= seen, "the queries cover every form"
    batch = tmp_path / "q.jsonl"
    batch.write_text('{"id": "a", "q": "Kyoto"}\n{"q": "蓝牙"}\n', encoding="utf-8")
    for extra in ((), ("--trace",)):
        result = run("batch", str(batch), "--json", *extra)
        lines = [json.loads(line) for line in result.stdout.splitlines()]
        assert [line["id"] for line in lines] == ["a", 2]
        for line in lines:
            _conforms(line, "batch line", seen)
            assert ("trace" in line) == bool(extra)


def test_budget_is_respected(run):
    full = _json(run("蓝牙 驱动", "--json", "--top", "10", "--budget", "0"))
    assert len(full["results"]) == 10
    for budget in (150, 400):
        packed = _json(run("蓝牙 驱动", "--json", "--top", "10", "--budget", str(budget)))
        assert 0 < sum(card["tokens"] for card in packed["results"]) <= budget
        assert len(packed["results"]) < 10
        pack = next(stage for stage in packed["trace"]["stages"] if stage["name"] == "pack")
        assert pack["notes"]["budget"] == budget and pack["notes"]["dropped"] > 0


def test_batch_queries_one_line_each_in_order(run, tmp_path):
    lines = [{"id": "q1", "q": "Kyoto peanut allergy"}, {"id": 2, "q": "蓝牙 驱动", "top": 2, "mvp": True},
             {"id": "q3", "q": "Somerville commute", "types": "Episode", "budget": 0}]
    batch = tmp_path / "q.jsonl"
    batch.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n", encoding="utf-8")
    result = run("batch", str(batch), "--json", "--top", "5")
    assert result.exit_code == 0, result.stderr
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["id"] for line in printed] == ["q1", 2, "q3"]
    assert all(set(line) == {"id", "results", "packing"} for line in printed)
    assert len(printed[1]["results"]) == 2 and len(printed[0]["results"]) <= 5
    assert {card["type"] for card in printed[2]["results"]} == {"Episode"}
    from_stdin = run("batch", "-", "--json", "--top", "5", input=batch.read_text(encoding="utf-8"))
    assert [json.loads(line) for line in from_stdin.stdout.splitlines()] == printed
    traced = run("batch", str(batch), "--json", "--trace")
    assert all("trace" in json.loads(line) for line in traced.stdout.splitlines())
    plain = run("batch", str(batch))
    assert plain.exit_code == 0 and plain.stdout.count("== ") == 3


def test_batch_bad_line_names_it_and_prints_nothing(run, tmp_path):
    batch = tmp_path / "q.jsonl"
    batch.write_text('{"id": 1, "q": "Kyoto"}\n{"id": 2}\n', encoding="utf-8")
    result = run("batch", str(batch), "--json")
    assert result.exit_code == 2 and f"{batch}:2" in result.stderr and result.stdout == ""
    batch.write_text('{"id": 1, "q": "Kyoto", "colour": "red"}\n', encoding="utf-8")
    assert "unknown option 'colour'" in run("batch", str(batch)).stderr
    batch.write_text('{"id": 1, "q": "Kyoto", "top": 0}\n', encoding="utf-8")
    assert run("batch", str(batch)).exit_code == 2
    assert run("batch", str(tmp_path / "missing.jsonl")).exit_code == 2


def test_explain_a_node(run):
    answer = _json(run("Kyoto peanut allergy", "--json"))
    node = answer["results"][0]["id"]
    explained = _json(run("explain", node, "--json"))
    assert explained["id"] == node and explained["neighbors"] and explained["citations"][0]["snippet"]
    ranked = _json(run("explain", node, "--q", "Kyoto peanut allergy", "--json"))
    assert ranked["rank"] == 1 and ranked["result"]["id"] == node
    text = run("explain", node, "--q", "Kyoto peanut allergy")
    assert text.exit_code == 0 and "rank 1" in text.stdout
    assert run("explain", "no-such-node").exit_code == 2


def test_extract_keywords(run):
    extracted = _json(run("keywords", "Win11 蓝牙 打不开 0x8007045D", "--json"))
    assert "蓝牙" in extracted["keywords"] and "win11" in extracted["keywords"]
    assert extracted["patterns"] == {"hex": ["0x8007045D"]}
    assert {"Windows 11", "Bluetooth"} <= {entity["name"] for entity in extracted["entities"]}
    text = run("keywords", "Win11 蓝牙 打不开")
    assert text.exit_code == 0 and text.stdout.startswith("keywords:")


def test_time_window_and_types(run):
    answer = _json(run("蓝牙", "--json", "--since", "2025-09-20", "--until", "2025-09-30", "--top", "20"))
    assert answer["results"]
    assert all("2025-09-2" in card["citations"][0]["ts"] or card["citations"][0]["ts"].startswith("2025-09-30")
               for card in answer["results"])
    facts = _json(run("蓝牙 驱动", "--json", "--types", "Fact,Preference"))
    assert {card["type"] for card in facts["results"]} <= {"Fact", "Preference"}


def test_usage_errors(run, tmp_path):
    assert run().exit_code == 2
    assert run("x", "--since", "2025-10-01", "--until", "2025-09-01").exit_code == 2
    assert run("x", "--since", "yesterday").exit_code == 2
    assert run("   ").exit_code == 2
    batch = tmp_path / "q.jsonl"
    batch.write_text('{"q": "x"}\n', encoding="utf-8")
    assert run("--queries", str(batch), "--q", "x").exit_code == 2
    assert "Traceback" not in run("x", "--types", "Bad-Type").stderr


def test_memory_api(home):
    with open_memory(home) as memory:
        answer = memory.recall("Kyoto peanut allergy", top=3)
        again = memory.recall("Kyoto peanut allergy", top=3)
    assert answer["results"] and [card["id"] for card in answer["results"]] == [card["id"] for card in again["results"]]


WRITING_MODULES = ("engine.raw.writer", "engine.graph.batch", "engine.text.pieces")


def test_cold_process_loads_neither_numba_nor_jieba_nor_the_writers(home):
    probe = ("import sys\nfrom memctl.cli.app import app\n"
             f"app(['--home', {str(home)!r}, 'recall', 'Win11 蓝牙 打不开', '--json', '--trace'], "
             "standalone_mode=False)\n"
             "print('HEAVY', sorted(name for name in ('numba', 'jieba') if name in sys.modules))\n"
             f"print('WRITING', sorted(name for name in {WRITING_MODULES!r} if name in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-2:] == ["HEAVY []", "WRITING []"]
