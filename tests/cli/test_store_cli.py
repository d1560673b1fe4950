"""CLI contract of the store commands: help, version, global options, check, stats, compact, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from engine.errors import InputError
from engine.store import Store
from memctl.cli.app import app
from memctl.paths import check_tenant, tenant_dir


def _populate(home, tenant="default"):
    with Store.open(tenant_dir(str(home), tenant)) as store:
        with store.batch() as batch:
            for number in range(50):
                batch.put("test.rows", f"{number:04d}", {"n": number, "text": "蓝牙 " * 3})
        store.flush()
        with store.batch() as batch:
            batch.delete("test.rows", "0001")


def test_version(cli):
    result = cli("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith("memctl ")


def test_python_dash_m_runs_the_command(tmp_path):
    """`python -m memctl` is the same command as `memctl` (a module run that printed nothing once went unnoticed)."""
    completed = subprocess.run([sys.executable, "-m", "memctl", "--home", str(tmp_path), "config", "show",
                                "recall.k_hop", "--json"], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["settings"][0]["key"] == "recall.k_hop"


@pytest.mark.parametrize("command", [name for name in ("check", "stats", "compact")])
def test_every_command_has_help(cli, command):
    result = cli(command, "--help")
    assert result.exit_code == 0
    assert "--json" in result.stdout


def test_commands_have_docstrings():
    for command in app.registered_commands:
        assert (command.callback.__doc__ or "").strip(), command.name


@pytest.mark.parametrize("tenant", ["../x", "a/b", "", "x" * 65, "dot.dot"])
def test_bad_tenant_names_are_refused(cli, isolated_home, tenant):
    result = cli("--tenant", tenant, "stats")
    assert result.exit_code == 2
    assert "tenant name" in result.stderr
    assert not os.path.exists(isolated_home)


CONTROL_CHARACTERS = [chr(code) for code in range(0x20)] + ["\x7f"]


@pytest.mark.parametrize("character", CONTROL_CHARACTERS, ids=lambda character: f"U+{ord(character):04X}")
def test_a_control_character_anywhere_in_a_tenant_name_is_refused(character):
    for name in (f"abc{character}", f"{character}abc", f"a{character}c"):
        with pytest.raises(InputError, match="tenant name"):
            check_tenant(name)


def test_a_tenant_name_with_a_trailing_newline_creates_nothing(cli, isolated_home):
    result = cli("--tenant", "abc\n", "ingest", "--text", "hello")
    assert result.exit_code == 2 and "tenant name 'abc\\n' is not allowed" in result.stderr
    assert not os.path.exists(isolated_home)


def test_stats_json_counts(cli, isolated_home):
    _populate(isolated_home)
    result = cli("stats", "--json")
    assert result.exit_code == 0
    stats = json.loads(result.stdout)
    assert stats["tenant"] == "default"
    assert stats["stored_rows"]["test.rows"] == 51  # 50 flushed rows + 1 unflushed tombstone
    assert stats["segments"]["records"]["segments"] == 1
    assert stats["bytes"]["total"] == stats["bytes"]["segments"] + stats["bytes"]["wal"] + stats["bytes"]["raw"]


def test_tenants_are_separate(cli, isolated_home):
    _populate(isolated_home, "alice")
    alice = json.loads(cli("--tenant", "alice", "stats", "--json").stdout)
    assert alice["stored_rows"]
    bob = cli("--tenant", "bob", "stats", "--json")
    assert bob.exit_code == 2 and f"no memctl store at {tenant_dir(str(isolated_home), 'bob')}" in bob.stderr


def test_check_clean_then_damaged(cli, isolated_home):
    _populate(isolated_home)
    clean = cli("check", "--json")
    assert clean.exit_code == 0, clean.stdout
    assert json.loads(clean.stdout)["clean"] is True

    directory = tenant_dir(str(isolated_home), "default")
    segment = os.path.join(directory, "seg", sorted(os.listdir(os.path.join(directory, "seg")))[0])
    data = bytearray(open(segment, "rb").read())
    data[100] ^= 0x40
    open(segment, "wb").write(bytes(data))

    damaged = cli("check")
    assert damaged.exit_code == 1
    assert "seg/" in damaged.stdout and "problem" in damaged.stdout


def test_corrupt_store_exits_3_without_traceback(cli, isolated_home):
    _populate(isolated_home)
    directory = tenant_dir(str(isolated_home), "default")
    with open(os.path.join(directory, "CURRENT"), "w") as handle:
        handle.write("garbage\n")
    result = cli("stats")
    assert result.exit_code == 3
    assert result.stderr.startswith("error: corruption in")
    assert "Traceback" not in result.stderr


def test_compact_drops_deleted_rows(cli, isolated_home):
    _populate(isolated_home)
    result = cli("compact", "--json")
    assert result.exit_code == 0
    with Store.open(tenant_dir(str(isolated_home), "default"), writable=False) as store:
        keys = [key for key, _ in store.scan("test.rows")]
        assert "0001" not in keys and len(keys) == 49
        assert len(store.records) == 1


def test_second_writer_gets_exit_75(cli, isolated_home):
    _populate(isolated_home)
    holder = Store.open(tenant_dir(str(isolated_home), "default"), holder="memctl job --run promoter")
    try:
        result = cli("--wait", "0.1", "compact")
    finally:
        holder.close()
    assert result.exit_code == 75
    assert "store busy: held by pid" in result.stderr
    assert "memctl job --run promoter" in result.stderr


def test_bad_config_file_is_refused_with_location(cli, isolated_home, tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("recall:\n  k_hop: two\n")
    result = cli("--config", str(config), "stats")
    assert result.exit_code == 2
    assert "recall.k_hop" in result.stderr and str(config) in result.stderr
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("recal:\n  k_hop: 1\n")
    result = cli("--config", str(unknown), "stats")
    assert result.exit_code == 2 and "unknown setting 'recal'" in result.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text("recall: [\n")
    result = cli("--config", str(broken), "stats")
    assert result.exit_code == 2 and "invalid YAML" in result.stderr and ":2:" in result.stderr
