"""What `memctl check` prints: problems, then notes, many notes of one kind (orphan blobs after a crash) as one
summary with a count, the first five files and the command that removes them (every file with --verbose, and
always in --json); a partial WAL record with its size; a verdict that never says "clean" beside notes."""

from __future__ import annotations

import json
import os

import pytest

from engine.check import ORPHAN_NOTE
from memctl.paths import tenant_dir


@pytest.fixture
def store(cli, isolated_home):
    assert cli("ingest", "--text", "alice: the store holds one chunk", "--quiet").exit_code == 0
    return tenant_dir(str(isolated_home), "default")


def plant_orphans(store: str, count: int) -> list:
    """Blob files no record names, as an ingest killed before its commit leaves them."""
    names = []
    for number in range(count):
        digest = f"{number:02x}" * 32
        relative = os.path.join("raw", "2020", "01", "01", digest[:2], f"raw_{digest}.blob.zst")
        os.makedirs(os.path.join(store, os.path.dirname(relative)), exist_ok=True)
        with open(os.path.join(store, relative), "wb") as handle:
            handle.write(b"partial")
        names.append(relative)
    return sorted(names)


def verdict(output: str) -> str:
    return output.splitlines()[-1].split(": ", 1)[1]


def test_many_orphans_are_one_summary(cli, store):
    orphans = plant_orphans(store, 12)
    result = cli("check")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == f"note 12 files {ORPHAN_NOTE}:"
    assert len(lines) == 8 and all(line.startswith("  raw/") for line in lines[1:6])
    assert {line.strip() for line in lines[1:6]} <= set(orphans)
    assert lines[6] == "  … and 7 more (`memctl check --verbose` lists every one)"
    assert verdict(result.stdout).startswith("no problems, 12 notes (manifest ")
    assert "`memctl raw gc` removes such files" in lines[0]


def test_verbose_and_json_list_every_orphan(cli, store):
    orphans = plant_orphans(store, 12)
    verbose = cli("check", "--verbose").stdout.splitlines()
    assert sorted(line.strip() for line in verbose[1:-1]) == orphans
    report = json.loads(cli("check", "--json").stdout)
    assert report["clean"] is True
    assert sorted(note["file"] for note in report["notes"]) == orphans
    assert {note["message"] for note in report["notes"]} == {ORPHAN_NOTE}


def test_one_orphan_is_one_line(cli, store):
    [orphan] = plant_orphans(store, 1)
    assert cli("check").stdout.splitlines()[0] == f"note {orphan}: {ORPHAN_NOTE}"


def test_raw_gc_then_check_is_clean(cli, store):
    plant_orphans(store, 3)
    assert cli("raw", "gc").stdout == "removed 3 unreferenced file(s)\n"
    assert verdict(cli("check").stdout).startswith("clean (manifest ")


def test_a_partial_wal_record_is_a_note_with_its_size(cli, store):
    wal = os.path.join(store, "wal", "000001.log")
    size = os.path.getsize(wal)
    with open(wal, "ab") as handle:
        handle.write(b"\x00\x01\x02")
    result = cli("check")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0] == (
        f"note wal/000001.log: partial record at the end: 3 bytes from offset {size:,} (record header cut short at "
        "EOF), left by an interrupted write; the next writer drops them")
    assert verdict(result.stdout).startswith("no problems, 1 note (")


def test_problems_are_counted_in_words(cli, store):
    [blob] = [os.path.join(root, name) for root, _dirs, names in os.walk(os.path.join(store, "raw")) for name in names]
    with open(blob, "wb") as handle:
        handle.write(b"not the chunk it names")  # a damaged blob: a problem, found by the raw check
    plant_orphans(store, 2)
    result = cli("check")
    assert result.exit_code == 1
    assert result.stdout.startswith(f"problem {os.path.relpath(blob, store)} at offset 0: ")
    assert verdict(result.stdout).startswith("1 problem, 2 notes (")
