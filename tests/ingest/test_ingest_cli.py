"""The drafted `memctl ingest` and `memctl raw cat|ls|gc` commands, on an app built as app.py would build it."""

import json
import os

import pytest
import typer
from typer.testing import CliRunner

from engine.raw import RawStore
from engine.store import Store
from memctl.cli import ingest_cmd, raw_cmd
from memctl.cli.app import global_options
from memctl.cli.common import MemctlGroup
from memctl.paths import tenant_dir

from ingest_testkit import SAMPLES


@pytest.fixture
def run(isolated_home):
    app = typer.Typer(cls=MemctlGroup, pretty_exceptions_enable=False)
    app.callback()(global_options)
    app.command("ingest")(ingest_cmd.ingest)
    raw_app = typer.Typer(cls=MemctlGroup)
    for name in ("cat", "ls", "gc"):
        raw_app.command(name)(getattr(raw_cmd, name))
    app.add_typer(raw_app, name="raw")
    runner = CliRunner()
    return lambda *arguments, input=None: runner.invoke(app, list(arguments), input=input, catch_exceptions=False)


def turn_records(home):
    with Store.open(tenant_dir(str(home), "default"), writable=False) as store:
        return list(RawStore(store).iter_turns())


def test_ingest_json_summary_and_idempotence(run, isolated_home):
    sample = os.path.join(SAMPLES, "win11-bluetooth.transcript.txt")
    first = run("ingest", "--raw", sample, "--json")
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert summary["chunks_new"] == 1 and summary["turns"] == 38
    again = run("ingest", "--raw", sample)
    assert again.exit_code == 0
    assert again.stdout.startswith("0 new, 1 already stored: 38 turns in 1 conversation(s)")
    assert run("ingest", "--raw", sample, "--quiet").stdout == ""


def test_ingest_directory_text_and_stdin(run, isolated_home):
    result = run("ingest", "--raw", SAMPLES, "--text", "以后优先中文回答", "--raw", "-", "--json",
                 input="Alice: hi\nBob: hello 😀\n")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["conversations"] == 5 + 2
    speakers = {record["speaker"] for record in turn_records(isolated_home)}
    assert {"用户", "助手", "小林", "user", "Alice", None} <= speakers


def test_raw_cat_prints_a_turn_exactly(run, isolated_home):
    run("ingest", "--text", "用户: 蓝牙打不开 👨‍👩‍👧 0x8007045D\n助手: 看看 BTHUSB EventID=17\n", "--quiet")
    records = turn_records(isolated_home)
    ref = records[0]["raw_ref"]
    span = run("raw", "cat", ref["raw_id"], "--offset", str(ref["offset"]), "--length", str(ref["length"]))
    assert span.exit_code == 0
    assert span.stdout_bytes == "蓝牙打不开 👨‍👩‍👧 0x8007045D".encode()
    whole = run("raw", "cat", ref["raw_id"])
    assert whole.stdout_bytes == "用户: 蓝牙打不开 👨‍👩‍👧 0x8007045D\n助手: 看看 BTHUSB EventID=17\n".encode()
    tail = run("raw", "cat", ref["raw_id"], "--offset", str(len(whole.stdout_bytes) - 3))
    assert tail.stdout_bytes == b"17\n"


def test_raw_ls(run, isolated_home):
    run("ingest", "--raw", os.path.join(SAMPLES, "xiaolin-life.locomo.json"), "--quiet")
    listed = json.loads(run("raw", "ls", "--json").stdout)
    assert len(listed) == 1  # its sessions fit in one chunk
    assert listed[0]["mime"] == "text/plain; charset=utf-8"
    assert listed[0]["meta"]["conv_id"] == "xiaolin-2024" and listed[0]["meta"]["lang"] == "zh"
    assert listed[0]["meta"]["source_id"].startswith("D1:1..") and listed[0]["meta"]["role"] is None
    assert all(chunk["raw_id"].startswith("raw_") and chunk["refcount"] > 0 for chunk in listed)
    assert all(chunk["path"] == f"raw/{chunk['created_at'][:10].replace('-', '/')}/{chunk['sha256'][:2]}/"
                                f"raw_{chunk['sha256']}.blob.zst" for chunk in listed)
    table = run("raw", "ls")
    assert table.exit_code == 0 and "1 chunk(s)" in table.stdout
    assert all(chunk["raw_id"] in table.stdout for chunk in listed)


def test_bad_input_exits_2_and_creates_no_store(run, isolated_home, tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    result = run("ingest", "--raw", str(bad))
    assert result.exit_code == 2
    assert f"error: {bad}: binary data: NUL byte at offset 8" in result.stderr
    assert not os.path.exists(tenant_dir(str(isolated_home), "default"))


@pytest.mark.parametrize("arguments, message", [
    (["ingest"], "nothing to ingest"),
    (["ingest", "--raw", "/no/such/file"], "/no/such/file: no such file or directory"),
    (["ingest", "--text", "x", "--format", "yaml"], "unknown format 'yaml'"),
    (["ingest", "--text", "x", "--errors", "ignore"], "--errors must be one of strict, replace"),
    (["raw", "cat", "raw_0123456789abcdef"], "no raw chunk raw_0123456789abcdef"),
])
def test_usage_errors_exit_2(run, arguments, message):
    if arguments[0] == "raw":
        run("ingest", "--text", "seed a store", "--quiet")
    result = run(*arguments)
    assert result.exit_code == 2
    assert message in result.stderr


def test_raw_cat_span_outside_the_chunk_exits_2(run, isolated_home):
    run("ingest", "--text", "short", "--quiet")
    raw_id = turn_records(isolated_home)[0]["raw_ref"]["raw_id"]
    result = run("raw", "cat", raw_id, "--offset", "3", "--length", "100")
    assert result.exit_code == 2 and "is outside" in result.stderr


def test_raw_gc_removes_orphans(run, isolated_home):
    run("ingest", "--text", "keep me", "--quiet")
    orphan = os.path.join(tenant_dir(str(isolated_home), "default"), "raw", "2020", "01", "01", "ab",
                          "raw_" + "ab" * 32 + ".blob.zst")
    os.makedirs(os.path.dirname(orphan))
    open(orphan, "wb").close()
    result = run("raw", "gc", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == ["raw/2020/01/01/ab/raw_" + "ab" * 32 + ".blob.zst"]
