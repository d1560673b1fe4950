"""Documents apart from memories (issue 16 point 1): `memctl index/search` keep their own text index, so indexing
notes into a store with a memory graph changes no recall, and a search finds documents only."""

from __future__ import annotations

import ast
import json

import pytest

from engine.store import Store
from engine_testkit import rewrite_manifest_as
from memctl.paths import tenant_dir
from recall_testkit import SAMPLES

NOW = "2024-06-01T12:00:00"  # recency is measured from --now, so two recalls score alike
# Words of the samples' conversations in every note, so the notes would compete with Episodes for these queries.
NOTE_WORDS = ("蓝牙 Win11 打不开 驱动 耳机", "Kyoto peanut allergy trip", "Dana job interview moving",
              "京都 旅行 花生 过敏", "error 0x8007045D bluetooth driver")
QUERIES = ("Win11 蓝牙 打不开", "Kyoto peanut allergy", "Dana new job", "错误码 0x8007045D",
           "小林 周末 做了什么")
NOTE_QUERY = "蓝牙 耳机 驱动 打不开"  # every word of it is in the notes


@pytest.fixture
def memories(cli, isolated_home):
    """The samples ingested and converted into a memory graph, through the CLI."""
    assert cli("ingest", "--raw", str(SAMPLES), "--quiet").exit_code == 0
    assert cli("r2g").exit_code == 0
    return isolated_home


@pytest.fixture
def notes(tmp_path):
    """30 note files, each holding words the queries and the samples' conversations use."""
    root = tmp_path / "notes"
    root.mkdir()
    for number in range(30):
        words = NOTE_WORDS[number % len(NOTE_WORDS)]
        (root / f"note{number:02d}.txt").write_text(f"note {number}\n{words} {words.split()[0]}\n", encoding="utf-8")
    return root


def recall_answers(cli) -> list:
    """recall --json of every query, without its wall-clock timings (trace total_ms and each stage's ms):
    everything else, down to every stage's candidates, notes and scores, must not move."""
    answers = []
    for query in (*QUERIES, NOTE_QUERY):
        result = cli("recall", "--q", query, "--now", NOW, "--allow-raw", "--json")
        assert result.exit_code == 0, result.stderr
        answer = json.loads(result.stdout)
        del answer["trace"]["total_ms"]
        for stage in answer["trace"]["stages"]:
            del stage["ms"]
        answers.append(answer)
    return answers


def search_hits(cli, query: str) -> list:
    result = cli("search", query, "--top", "100", "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["hits"]


def test_indexing_documents_changes_no_recall(cli, memories, notes):
    before = recall_answers(cli)
    assert any(answer["results"] for answer in before)
    assert cli("index", "--add", str(notes)).exit_code == 0
    assert recall_answers(cli) == before
    assert cli("compact").exit_code == 0  # and once both indexes are compacted segments
    assert recall_answers(cli) == before


def test_search_finds_documents_only(cli, memories, notes):
    assert search_hits(cli, NOTE_QUERY) == []  # the memory graph's nodes are no documents
    assert search_hits(cli, "Kyoto") == []
    cli("index", "--add", str(notes))
    expected = {str(notes / f"note{number:02d}.txt") for number in range(0, 30, len(NOTE_WORDS))}
    hits = search_hits(cli, "蓝牙 打不开")
    assert {hit["key"] for hit in hits} == expected and {hit["type"] for hit in hits} == {None}
    assert {hit["key"] for hit in search_hits(cli, "Kyoto")} == {str(notes / f"note{number:02d}.txt")
                                                               for number in range(1, 30, len(NOTE_WORDS))}


def test_each_index_is_named_in_the_store(cli, memories, notes):
    """memctl writes the `nodes` and `documents` instances of the text kind, never the unnamed one."""
    cli("index", "--add", str(notes))
    cli("index", "--delete", str(notes / "note00.txt"))
    directory = tenant_dir(str(memories), "default")
    for compacted in (False, True):
        with Store.open(directory, writable=False) as store:
            owners = {entry["owner"] for entry in store.manifest.segments} | \
                {table.split(".", 1)[0] for table in store.tables}
            owners |= {table.split(".", 1)[0] for segment in store.records for table in segment.tables}
            owners |= {counter.split(".", 1)[0] for counter in store.counters}
            assert {"text:nodes", "text:documents"} <= owners and "text" not in owners
            assert not compacted or {entry["kind"] for entry in store.manifest.segments
                                     if entry["owner"].startswith("text")} == {"text.postings"}
        cli("compact")
    stats = json.loads(cli("stats", "--json").stdout)
    assert stats["text:documents"]["documents"] == 29
    assert stats["text:nodes"]["documents"] > 29 and "text" not in stats
    assert {"text:nodes.postings", "text:documents.postings"} <= set(stats["segments"])


def test_a_store_of_format_3_is_refused_with_the_advice_to_migrate(cli, memories, notes):
    """A format-3 store holds nodes and documents in one unnamed index, which format 4 reads as neither."""
    rewrite_manifest_as(tenant_dir(str(memories), "default"), 3)
    for command in (("recall", "--q", "蓝牙"), ("search", "蓝牙"), ("index", "--add", str(notes)), ("r2g",)):
        result = cli(*command)
        assert result.exit_code == 3, command
        assert "format version 3 is not supported" in result.stderr and "run `memctl migrate`" in result.stderr


def test_memctl_names_the_text_index_it_opens():
    """Every TextIndex memctl builds names its owner, and no store.kind() call of memctl opens the unnamed
    text index: memories and documents each stay in their own (memctl.indexes)."""
    root = SAMPLES.parent / "memctl"
    calls = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "attr", getattr(node.func, "id", None))
                if name in ("TextIndex", "kind"):
                    calls.append((path.relative_to(root).as_posix(), name, node))
    text_indexes = [(path, node) for path, name, node in calls if name == "TextIndex"]
    assert text_indexes
    assert all(any(keyword.arg == "owner" for keyword in node.keywords) for _path, node in text_indexes)
    opened = [node.args[0] for _path, name, node in calls if name == "kind"]
    assert opened and not any(isinstance(argument, ast.Constant) and argument.value == "text" for argument in opened)
