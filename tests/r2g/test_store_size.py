"""Store bytes per byte of turn text after ingest + r2g + compaction of samples/ (issue 17: "a store that stays
small"; tools/bench/size_bench.py measures the dev sets and RESULTS.md records them).

The bound: samples/ measured 20.5x (369,131 store bytes for 18,010 bytes of turn text) with records in
compressed blocks (MANIFEST.spec §4, layout 2) cut at 128 KiB by compaction; the code before issue 17 stored
the same records as is (layout 1) in 2,151,571 bytes (119x), and 1 KiB blocks make it 55x. With fewer nodes
from R2G it measured 11.9x (215,047 bytes), and 11.3x (203,437) once compaction cut every table but
graph.node into 2 MiB blocks. MAX_RATIO leaves 10% for changes that add a little to what r2g extracts; a
change that stores records less compactly, or repeats what is stored, fails it."""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

from engine.raw import RawStore
from engine.store import Store
from memctl.cli.app import app

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
MAX_RATIO = 12.5


def turn_text_bytes(tenant: str) -> int:
    with Store.open(tenant, writable=False) as store:
        return sum(turn["raw_ref"]["length"] for turn in RawStore(store).iter_turns())


def tree_bytes(directory: str) -> int:
    return sum(os.path.getsize(os.path.join(path, name)) for path, _, names in os.walk(directory) for name in names)


def test_the_samples_store_after_r2g_and_compaction_stays_within_its_bytes_per_turn_text_byte(tmp_path):
    runner = CliRunner()
    for arguments in (["ingest", "--raw", str(SAMPLES), "--quiet"], ["r2g"], ["compact"]):
        result = runner.invoke(app, arguments, env={"MEMCTL_HOME": str(tmp_path)}, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    tenant = str(tmp_path / "tenants" / "default")
    text_bytes = turn_text_bytes(tenant)
    assert text_bytes > 15_000  # every sample's turns are there
    ratio = tree_bytes(tenant) / text_bytes
    assert ratio <= MAX_RATIO, f"the samples store is {ratio:.1f}x its turn text, above {MAX_RATIO}x"
