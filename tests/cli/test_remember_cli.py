"""`memctl remember` / `memctl add`: ids printed, --json, stdin, bad input exit 2 with the store unchanged, busy 75."""

from __future__ import annotations

import json
import os

import pytest

from engine.store import Store
from engine_testkit import store_files
from memctl.paths import tenant_dir

EXCHANGE = "user: I adopted a corgi named Biscuit last week\nassistant: Congratulations on Biscuit the corgi!"


def _tree(home) -> dict:
    """Every file under the store with its bytes, LOCK files aside (a writer leaves its name in them)."""
    return {name: data for name, data in store_files(str(home)).items()
            if not os.path.basename(name).startswith("LOCK")}


@pytest.mark.parametrize("verb", ["remember", "add"])
def test_remember_prints_the_chunk_and_node_ids_it_created(cli, verb):
    result = cli(verb, "--text", EXCHANGE)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("chunk raw_")
    kinds = [line.split(" ")[0] for line in lines[1:]]
    assert "RawChunk" in kinds and kinds.count("Episode") == 2
    stored = [row["raw_id"] for row in json.loads(cli("raw", "ls", "--json").stdout)]
    assert [line.split(" ")[1] for line in lines if line.startswith("chunk ")] == stored


def test_remember_json_and_recall_finds_it(cli):
    created = json.loads(cli("remember", "--text", EXCHANGE, "--json").stdout)
    assert len(created["chunks"]) == 1 and created["sequence"] is not None
    episodes = [node["key"] for node in created["nodes"] if node["type"] == "Episode"]
    found = json.loads(cli("recall", "corgi Biscuit", "--json").stdout)
    assert found["results"][0]["id"] in episodes


def test_remember_reads_stdin(cli):
    result = cli("remember", "--raw", "-", "--json", input=EXCHANGE)
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)["chunks"]) == 1
    again = cli("remember", "--raw", "-", input=EXCHANGE)
    assert again.stdout == "nothing new: this input was remembered before\n"


def test_bad_input_is_exit_2_and_leaves_the_store_as_it_was(cli, isolated_home, tmp_path):
    assert cli("remember", "--text", EXCHANGE, "--quiet").stdout == ""
    before = _tree(isolated_home)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"user: caf\xe9 au lait\n")
    for arguments in (["--raw", str(bad)], ["--raw", str(tmp_path / "missing.txt")], ["--format", "yaml",
                                                                                          "--text", "x"], []):
        result = cli("remember", *arguments)
        assert result.exit_code == 2, arguments
        assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
        assert _tree(isolated_home) == before


def test_bad_input_creates_no_store(cli, isolated_home, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe binary")
    assert cli("remember", "--raw", str(bad)).exit_code == 2
    assert not isolated_home.exists()


def test_a_busy_store_is_exit_75_and_unchanged(cli, isolated_home):
    cli("remember", "--text", EXCHANGE, "--quiet")
    before = _tree(isolated_home)
    holder = Store.open(tenant_dir(str(isolated_home), "default"), holder="memctl r2g")
    try:
        result = cli("--wait", "0.1", "remember", "--text", "user: another exchange about kayaks")
    finally:
        holder.close()
    assert result.exit_code == 75 and "memctl r2g" in result.stderr
    assert _tree(isolated_home) == before


# A cold `memctl remember` (as cli_testkit.cold_modules runs one), counting the collector's runs inside
# Memory.remember: the imports of the store and of R2G, the open, the conversion and the commit.
_COUNTING_PROBE = """
import gc, sys
from memctl.cli.app import app
from memctl.memory import Memory
inside, runs = [False], []
gc.callbacks.append(lambda phase, info: phase == "start" and runs.append(inside[0]))
remember = Memory.remember
def watched(*arguments, **keywords):
    inside[0] = True
    try:
        return remember(*arguments, **keywords)
    finally:
        inside[0] = False
Memory.remember = watched
app(sys.argv[1:], standalone_mode=False)
print(runs.count(True), runs.count(False), gc.isenabled())
"""


def test_a_cold_remember_runs_with_the_cyclic_collector_paused_and_leaves_it_on(isolated_home):
    import subprocess
    import sys

    from cli_testkit import ROOT

    result = subprocess.run([sys.executable, "-c", _COUNTING_PROBE, "--home", str(isolated_home), "remember",
                             "--text", EXCHANGE, "--quiet"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    inside, outside, enabled = result.stdout.split()
    # Inside, at most the one that importing engine.collector itself may start; outside, the CLI's imports run.
    assert int(inside) <= 1 and int(outside) > 0 and enabled == "True"


@pytest.mark.parametrize("exchange", [EXCHANGE, "用户: 我把红色的麒麟雕像寄存在杭州的仓库了。\n助手: 好的，记下了。"])
def test_a_cold_remember_loads_only_what_a_write_runs(isolated_home, exchange):
    from cli_testkit import COMMAND_MODULES, cold_modules, loaded

    cold_modules(isolated_home, "remember", "--text", exchange, "--quiet")  # a first use keeps parsed lexicons
    modules = cold_modules(isolated_home, "remember", "--text", exchange + " !", "--quiet")
    assert "memctl.cli.remember_cmd" in modules and "engine.graph.batch" in modules
    # numba and jieba (seconds), the queries (recall, the graph's results and pagerank), the other commands, and
    # what the store needed only for a WAL salt (random) or a reader prints (rich, yaml).
    never = ["numba", "jieba", "rich", "yaml", "numpy.ma", "random", "memctl.recall", "engine.graph.results",
             "engine.graph.pagerank", *COMMAND_MODULES]
    assert loaded(modules, never) == []
