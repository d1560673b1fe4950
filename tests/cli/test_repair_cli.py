"""`memctl repair`: the damaged fixture (tools/testing/repair.py) repaired from the command line, what it prints,
its dry run, and the exit codes of the commands around it (a writer refused with 3 until the repair ran)."""

from __future__ import annotations

import json
import os

from engine.format import DAMAGE_FILE, GC_LOCK_FILE, WRITER_LOCK_FILE
from engine_testkit import store_files
from memctl.paths import tenant_dir
from tools.testing import repair as fixture


def damaged_store() -> str:
    path = tenant_dir(None, "default")
    fixture.copy_damaged(path)
    return path


def data_files(path: str) -> dict:
    return {name: data for name, data in store_files(path).items() if name not in (WRITER_LOCK_FILE, GC_LOCK_FILE)}


def test_a_writer_is_refused_until_the_repair_and_welcome_after_it(cli):
    damaged_store()
    refused = cli("ingest", "--raw", "-", input="user: hello\n")
    assert refused.exit_code == 3
    assert "writers refuse this store until `memctl repair` has run" in refused.stderr
    result = cli("repair")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("found seg/") and "checksum mismatch" in lines[0]
    assert any(line.startswith("lost 1 logged batch(es): sequence ") for line in lines)
    assert any(line.startswith("lost raw chunk raw_") for line in lines)
    assert lines[-1].endswith("repaired, indexes rebuilt")
    assert cli("check").exit_code == 0
    assert cli("ingest", "--raw", "-", input="user: hello\n").exit_code == 0
    assert cli("repair").stdout.endswith("nothing to repair\n")


def test_a_dry_run_reports_what_would_be_lost_writes_nothing_and_exits_1(cli):
    path = damaged_store()
    before = data_files(path)
    result = cli("repair", "--dry-run", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["dry_run"] is True and report["repaired"] is False
    assert report["lost"]["wal_batches"]["count"] == 1 and report["kept"]["records"] > 0
    assert data_files(path) == before
    text = cli("repair", "--dry-run")
    assert text.exit_code == 1 and "nothing written (--dry-run)" in text.stdout


def test_the_json_report_names_what_was_lost(cli):
    path = damaged_store()
    report = json.loads(cli("repair", "--json").stdout)
    assert report["path"] == path and report["repaired"] and report["marker_cleared"]
    assert set(report["lost"]) == {"records", "wal_batches", "raw_chunks"}
    assert {finding["command"] for finding in report["marker"]} == {"memctl check"}
    assert not os.path.exists(os.path.join(path, DAMAGE_FILE))


def test_a_store_that_does_not_exist_is_bad_input(cli):
    result = cli("repair")
    assert result.exit_code == 2 and "no memctl store" in result.stderr
