"""CLI contract of `memctl index` and `memctl search`: documents in, ranked hits out, atomic refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from engine.store import Store
from memctl.paths import tenant_dir

DAY = 86400.0
BASE_TIME = 1_714_521_600.0  # 2024-05-01T00:00:00Z

DOCUMENTS = {
    "bluetooth.txt": "蓝牙打不开了\nWin11 更新以后蓝牙耳机连接不上，错误代码 0x8007045D。\n",
    "wifi.txt": "网络问题\nWiFi 经常断开，重启路由器以后好了一会儿。\n",
    "fox.md": "The quick brown fox\nThe quick brown fox jumps over the lazy dog near the river.\n",
    "dogs.md": "Dogs\nLazy dogs sleep all day; quick dogs chase foxes.\n",
    "mixed.txt": "会议纪要\n讨论了 bluetooth driver 的 rollback 计划，蓝牙驱动需要回滚到 v2.3.1。\n",
}


@pytest.fixture
def corpus(tmp_path):
    """The documents as files (modification times one day apart, in DOCUMENTS order) under docs/."""
    root = tmp_path / "docs"
    (root / "notes").mkdir(parents=True)
    for number, (name, text) in enumerate(DOCUMENTS.items()):
        path = root / ("notes" if name.endswith(".md") else "") / name
        path.write_text(text, encoding="utf-8")
        os.utime(path, (BASE_TIME + number * DAY, BASE_TIME + number * DAY))
    return root


def keys_of(result) -> list:
    assert result.exit_code == 0, result.stderr
    return [os.path.basename(hit["key"]) for hit in json.loads(result.stdout)["hits"]]


def hits_of(result) -> list:
    assert result.exit_code == 0, result.stderr
    return [(hit["key"], hit["score"], hit["terms"]) for hit in json.loads(result.stdout)["hits"]]


def text_rows(isolated_home) -> int:
    directory = tenant_dir(str(isolated_home), "default")
    if not os.path.exists(directory):
        return 0
    with Store.open(directory, writable=False) as store:
        return sum(1 for _ in store.scan("text:documents.doc"))


def test_index_a_directory_then_search_chinese_english_and_codes(cli, corpus):
    result = cli("index", "add", str(corpus), "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["indexed"] == 5 and summary["replaced"] == 0
    assert str(corpus / "notes" / "fox.md") in summary["keys"]  # directories are read recursively

    assert keys_of(cli("search", "蓝牙 打不开", "--json"))[0] == "bluetooth.txt"
    assert set(keys_of(cli("search", "蓝牙", "--json"))) == {"bluetooth.txt", "mixed.txt"}
    assert keys_of(cli("search", "8007045d", "--json")) == ["bluetooth.txt"]
    assert keys_of(cli("search", "0x8007045D", "--json")) == ["bluetooth.txt"]
    assert keys_of(cli("search", "foxes", "--json"))[:2] == ["fox.md", "dogs.md"]  # stemmed: fox = foxes
    assert keys_of(cli("search", '"brown fox"', "--json")) == ["fox.md"]
    assert keys_of(cli("search", "no such words anywhere", "--json")) == []


def test_hits_carry_scores_matched_terms_type_and_time(cli, corpus, monkeypatch):
    monkeypatch.chdir(corpus)
    cli("index", "add", "bluetooth.txt", "--type", "note", "--tag", "pc")
    result = cli("search", "蓝牙 打不开", "--json")
    output = json.loads(result.stdout)
    assert output["query"] == "蓝牙 打不开"
    [hit] = output["hits"]
    assert hit["rank"] == 1 and hit["score"] > 0 and hit["type"] == "note"
    assert {"蓝牙", "打不开"} <= set(hit["terms"])
    assert hit["time"].startswith("2024-0")  # the file's modification time, ISO 8601

    table = cli("search", "蓝牙 打不开")
    assert table.exit_code == 0
    assert "bluetooth.txt" in table.stdout and "蓝牙" in table.stdout and f"{hit['score']:.4f}" in table.stdout
    assert "no documents match" in cli("search", "giraffe").stdout


def test_filters_by_type_tag_and_time_window(cli, corpus):
    cli("index", "add", str(corpus / "notes"), "--type", "doc")
    cli("index", "add", str(corpus / "bluetooth.txt"), str(corpus / "mixed.txt"), "--tag", "pc")
    assert keys_of(cli("search", "quick", "--type", "doc", "--json")) == ["fox.md", "dogs.md"]
    assert keys_of(cli("search", "quick", "--type", "chat", "--json")) == []
    assert set(keys_of(cli("search", "蓝牙", "--tag", "pc", "--json"))) == {"bluetooth.txt", "mixed.txt"}
    assert keys_of(cli("search", "quick", "--tag", "pc", "--json")) == []
    # fox.md was modified on 2024-05-03 and dogs.md on 2024-05-04 (UTC): a bare --until date covers its day.
    assert keys_of(cli("search", "quick", "--since", "2024-05-03T12:00:00+00:00", "--json")) == ["dogs.md"]
    assert keys_of(cli("search", "quick", "--until", "2024-05-03T23:59:59+00:00", "--json")) == ["fox.md"]
    assert keys_of(cli("search", "quick", "--since", "2024-05-05T00:00:00+00:00", "--json")) == []


def test_a_bare_until_date_includes_its_whole_day(cli, corpus, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    cli("index", "add", str(corpus / "notes"))
    assert keys_of(cli("search", "quick", "--since", "2024-05-03", "--until", "2024-05-03", "--json")) == ["fox.md"]


@pytest.mark.parametrize("arguments, message", [
    (["--since", "yesterday"], "--since: 'yesterday' is not an ISO date"),
    (["--until", "2024-02-30"], "--until: '2024-02-30' is not an ISO date"),
    (["--since", "2024-05-02", "--until", "2024-05-01"], "is after --until"),
])
def test_bad_dates_exit_2_with_a_clear_message(cli, corpus, arguments, message):
    cli("index", "add", str(corpus))
    result = cli("search", "quick", *arguments)
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_bad_utf8_and_binary_files_exit_2_and_store_nothing(cli, corpus, isolated_home):
    bad = corpus / "bad.txt"
    bad.write_bytes("好的\n".encode() + b"abc\xff\xfe tail")
    result = cli("index", "add", str(corpus))
    assert result.exit_code == 2
    assert "invalid UTF-8 at byte offset 10" in result.stderr and str(bad) in result.stderr
    assert text_rows(isolated_home) == 0

    bad.write_bytes(b"text\x00\x01binary")
    result = cli("index", "add", str(corpus))
    assert result.exit_code == 2 and "NUL byte at offset 4" in result.stderr
    assert text_rows(isolated_home) == 0

    bad.write_bytes(b"  \n")
    result = cli("index", "add", str(bad))
    assert result.exit_code == 2 and "empty document" in result.stderr

    result = cli("index", "add", str(corpus / "missing.txt"))
    assert result.exit_code == 2 and "no such file" in result.stderr


def test_replacement_keeps_one_document_and_errors_replace_accepts_bad_bytes(cli, corpus):
    path = corpus / "bluetooth.txt"
    cli("index", "add", str(path))
    path.write_bytes(b"giraffe \xff notes\n")
    assert cli("index", "add", str(path)).exit_code == 2
    result = cli("index", "add", str(path), "--errors", "replace", "--json")
    assert json.loads(result.stdout)["replaced"] == 1
    assert keys_of(cli("search", "giraffe", "--json")) == ["bluetooth.txt"]
    assert keys_of(cli("search", "蓝牙", "--json")) == []


def test_stdin_is_one_document(cli):
    result = cli("index", "add", "-", input="Stdin title\nkangaroo facts\n")
    assert result.exit_code == 0, result.stderr
    assert keys_of(cli("search", "kangaroo", "--json")) == ["stdin"]


def test_delete_is_atomic_and_refuses_unknown_keys(cli, corpus):
    cli("index", "add", str(corpus))
    fox, dogs = str(corpus / "notes" / "fox.md"), str(corpus / "notes" / "dogs.md")
    result = cli("index", "delete", fox, "nope.txt")
    assert result.exit_code == 2 and "nope.txt" in result.stderr
    assert keys_of(cli("search", "quick", "--json")) == ["fox.md", "dogs.md"]
    result = cli("index", "delete", fox, "--json")
    assert json.loads(result.stdout) == {"deleted": [fox]}
    assert keys_of(cli("search", "quick", "--json")) == ["dogs.md"]
    assert cli("index", "delete", dogs).stdout.startswith("deleted 1 document")


@pytest.mark.parametrize("arguments", [[], ["some.txt"], ["--add"], ["--add", "x.txt", "--delete", "y"]])
def test_index_alias_usage_errors_exit_2(cli, arguments):
    result = cli("index", *arguments)
    assert result.exit_code == 2
    assert "--add FILES" in result.stderr


def test_results_identical_after_flushes_and_compaction(cli, corpus, tmp_path, isolated_home):
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text("engine:\n  flush_bytes: 1\n")  # every batch becomes its own segments
    queries = ["蓝牙 打不开", "quick brown dogs", "bluetooth 回滚", "WiFi 重启", '"lazy dog"']
    for name in DOCUMENTS:
        found = corpus / ("notes" if name.endswith(".md") else "") / name
        assert cli("--config", str(tiny), "index", "add", str(found)).exit_code == 0
    cli("--config", str(tiny), "index", "delete", str(corpus / "wifi.txt"))
    before = [hits_of(cli("search", query, "--json")) for query in queries]
    with Store.open(tenant_dir(str(isolated_home), "default"), writable=False) as store:
        assert len(store.kind_segments["text:documents"]) >= 5
    assert cli("compact").exit_code == 0
    with Store.open(tenant_dir(str(isolated_home), "default"), writable=False) as store:
        assert len(store.kind_segments["text:documents"]) == 1
    after = [hits_of(cli("search", query, "--json")) for query in queries]
    assert after == before
    assert before[0][0][0].endswith("bluetooth.txt") and before[3] == []


def test_results_identical_in_a_fresh_process(cli, corpus, isolated_home):
    cli("index", "add", str(corpus))
    in_process = cli("search", "蓝牙 bluetooth quick", "--top", "3", "--json").stdout
    command = [sys.executable, "-c", "from memctl.cli.app import main; main()",
               "search", "蓝牙 bluetooth quick", "--top", "3", "--json"]
    fresh = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, MEMCTL_HOME=str(isolated_home)),
                           cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert fresh.returncode == 0, fresh.stderr
    assert json.loads(fresh.stdout) == json.loads(in_process)
    assert len(json.loads(in_process)["hits"]) == 3


def test_search_of_a_store_without_documents_finds_nothing(cli):
    assert cli("ingest", "--text", "a memory, not a document", "--quiet").exit_code == 0
    assert keys_of(cli("search", "蓝牙", "--json")) == []


def test_search_without_a_store_says_there_is_none(cli, isolated_home):
    result = cli("search", "蓝牙", "--json")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == f"error: no memctl store at {isolated_home}/tenants/default (create one with memctl ingest)\n"


def test_tokenizer_and_bm25_settings_come_from_the_config(cli, corpus, tmp_path):
    cli("index", "add", str(corpus))
    default_score = hits_of(cli("search", "quick", "--json"))[0][1]
    settings = tmp_path / "k1.yaml"
    settings.write_text("index:\n  k1: 2.0\n  field_weights: {title: 5.0}\n")
    assert hits_of(cli("--config", str(settings), "search", "quick", "--json"))[0][1] != default_score

    stopwords = tmp_path / "stop.txt"
    stopwords.write_text("# my list\nquick\n", encoding="utf-8")
    settings.write_text(f"index:\n  stopwords_en: {stopwords}\n")
    assert keys_of(cli("--config", str(settings), "search", "quick", "--json")) == []

    settings.write_text("index:\n  b: 2.5\n")
    result = cli("--config", str(settings), "search", "quick")
    assert result.exit_code == 2 and "index.b" in result.stderr
    settings.write_text(f"index:\n  stopwords_zh: {tmp_path / 'missing.txt'}\n")
    result = cli("--config", str(settings), "search", "quick")
    assert result.exit_code == 2 and "index.stopwords_zh" in result.stderr


def test_stats_show_the_text_index_and_its_cjk_mode(cli, corpus):
    cli("index", "add", str(corpus))
    cli("index", "delete", str(corpus / "wifi.txt"))
    text = json.loads(cli("stats", "--json").stdout)["text:documents"]
    assert text["documents"] == 4 and text["cjk_mode"] == "jieba" and text["stemmer"] == "english"
    assert set(text["average_field_tokens"]) == {"title", "text"}
    assert "cjk_mode" in cli("stats").stdout


def test_indexing_and_flushing_in_a_fresh_process_never_load_numba(corpus, isolated_home):
    """The build's numba kernels are for processes that have numba already: a command pays numpy only."""
    probe = ("import sys\nfrom memctl.cli.app import app\nfrom engine.store import Store\n"
             "from memctl.paths import tenant_dir\n"
             f"app(['index', 'add', {str(corpus)!r}], standalone_mode=False)\n"
             f"store = Store.open(tenant_dir({str(isolated_home)!r}, 'default'))\n"
             "store.flush()\nstore.close()\n"
             f"app(['search', '蓝牙', '--json'], standalone_mode=False)\n"
             "print('NUMBA', 'numba' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            env=dict(os.environ, MEMCTL_HOME=str(isolated_home)),
                            cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "NUMBA False"
    with Store.open(tenant_dir(str(isolated_home), "default"), writable=False) as store:
        assert len(store.kind_segments["text:documents"]) == 1  # the flush built a text segment, with numpy
