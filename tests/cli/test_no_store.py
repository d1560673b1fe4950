"""A command that reads a store that was never created (a new home, a tenant nobody wrote to, a --home that is a
file) says so, exit 2, and creates nothing; only a writer creates a store. `config show` reads no store and
works before the first ingest."""

from __future__ import annotations

import json

import pytest

from engine.errors import NoStore
from memctl.memory import Memory
from memctl.paths import tenant_dir

READERS = [
    ["recall", "Kyoto"],
    ["recall", "explain", "Episode:e1"],
    ["recall", "keywords", "Kyoto"],
    ["search", "Kyoto"],
    ["stats"],
    ["check"],
    ["check", "--json"],
    ["graph", "neighbors", "Episode:e1"],
    ["graph", "khop", "Episode:e1"],
    ["graph", "ppr", "Episode:e1"],
    ["graph", "stats"],
    ["graph", "export"],
    ["raw", "ls"],
    ["raw", "cat", "raw_0123456789abcdef"],
]


def no_store_message(directory) -> str:
    return f"error: no memctl store at {directory} (create one with memctl ingest)\n"


@pytest.mark.parametrize("arguments", READERS, ids=" ".join)
def test_a_reader_of_a_missing_store_exits_2_and_creates_nothing(cli, isolated_home, arguments):
    result = cli(*arguments)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == no_store_message(tenant_dir(str(isolated_home), "default"))
    assert not isolated_home.exists()


@pytest.mark.parametrize("arguments", [["recall", "Kyoto"], ["check"], ["stats", "--json"]], ids=" ".join)
def test_a_missing_tenant_of_an_existing_home_is_no_store(cli, isolated_home, arguments):
    assert cli("ingest", "--text", "alice: hello", "--quiet").exit_code == 0
    result = cli("--tenant", "bob", *arguments)
    assert result.exit_code == 2
    assert result.stderr == no_store_message(tenant_dir(str(isolated_home), "bob"))
    assert sorted(path.name for path in (isolated_home / "tenants").iterdir()) == ["default"]


@pytest.mark.parametrize("arguments", [["recall", "Kyoto"], ["check"], ["raw", "ls"]], ids=" ".join)
def test_a_file_as_home_is_no_store_for_a_reader(cli, tmp_path, arguments):
    home = tmp_path / "passwd"
    home.write_text("root:x:0:0\n")
    result = cli("--home", str(home), *arguments)
    assert result.exit_code == 2
    assert result.stderr == no_store_message(home / "tenants" / "default")
    assert home.read_text() == "root:x:0:0\n"


def test_a_file_as_home_is_a_usage_error_for_a_writer(cli, tmp_path):
    home = tmp_path / "passwd"
    home.write_text("root:x:0:0\n")
    result = cli("--home", str(home), "ingest", "--text", "alice: hello")
    assert result.exit_code == 2
    assert result.stderr == (f"error: --home: cannot create a store at {home / 'tenants' / 'default'}: {home} is a "
                             "file, not a directory\n")


def test_check_of_a_missing_store_prints_no_empty_report(cli):
    result = cli("check")
    assert "problem" not in result.output and "()" not in result.output


def test_config_show_needs_no_store(cli, isolated_home):
    result = cli("config", "show", "recall.k_hop", "--json")
    assert result.exit_code == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["settings"] == [{"key": "recall.k_hop", "value": 2, "origin": "default", "file": None, "line": None}]
    assert shown["files"][0]["found"] is False
    assert not isolated_home.exists()


def test_a_memory_reader_needs_a_store_a_writer_creates_one(isolated_home):
    with pytest.raises(NoStore) as caught:
        Memory.open(home=str(isolated_home), writable=False)
    assert caught.value.exit_code == 2 and caught.value.path == tenant_dir(str(isolated_home), "default")
    Memory.open(home=str(isolated_home), writable=True).close()
    with Memory.open(home=str(isolated_home), writable=False) as memory:
        assert memory.recall("anything")["results"] == []
