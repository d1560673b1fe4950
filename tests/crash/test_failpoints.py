"""Failpoint sweep (REFERENCES C #1): tools/crash/failpoint_sweep.py with CI-sized counts."""

from __future__ import annotations

from tools.testing.scripts import crash_tool, seed

failpoint_sweep = crash_tool("failpoint_sweep")


def test_every_failpoint_at_hits_one_to_three_kills_and_recovers():
    """Every workload: the store's batches, flushes, compactions and rebuilds; a migration of the format-3
    fixture (which must leave the old store intact or the new one complete); a repair of the damaged fixture
    (which must leave the damaged store, still refused to writers, or the repaired one)."""
    failures = failpoint_sweep.run(seed(101), hits=3, log=print)
    assert not failures, "\n".join(failures.items)
    assert failures.cases >= 3 * 20 + 30


def test_failpoints_armed_through_the_environment_in_fresh_interpreters():
    # The forked sweep arms failpoints with fs.arm; this checks MEMCTL_FAILPOINT itself on a seeded sample
    # (two cases: every fresh interpreter loads jieba's dictionary, about a second, before its first batch).
    failures = failpoint_sweep.run(seed(102), hits=3, spawn=True, limit=2, log=print)
    assert not failures, "\n".join(failures.items)
    assert failures.cases == 2


def test_memctl_migrate_armed_through_the_environment_leaves_the_old_store_or_the_new_one():
    failures = failpoint_sweep.run(seed(103), spawn=True, only="migration:manifest.before_current:2", log=print)
    assert not failures, "\n".join(failures.items)
    assert failures.cases == 1


def test_the_migration_workload_passes_every_step_of_its_publication(tmp_path):
    """The open that replays the old WAL, the new segments, the MANIFEST naming them, then the new WAL and the
    MANIFEST naming it: each is a case of the sweep."""
    counts = failpoint_sweep.discover(seed(104), str(tmp_path))["migration"]
    assert {"recover.after_replay", "rebuild.start", "segment.before_rename", "rebuild.after_segments",
            "manifest.before_current", "compact.after_manifest.before_unlink", "wal.create.before_rename",
            "flush.after_new_wal"} <= set(counts)
    assert counts["manifest.before_current"] == 2 and counts["flush.after_new_wal"] == 1


def test_the_grep_finds_the_engine_failpoints():
    patterns = failpoint_sweep.grepped_patterns()
    assert "wal.append.before_fsync" in patterns
    assert patterns["{label}.before_rename"].match("manifest.before_rename")


def test_memctl_repair_armed_through_the_environment_leaves_the_damaged_store_or_the_repaired_one():
    failures = failpoint_sweep.run(seed(105), spawn=True, only="repair:manifest.before_current:1", log=print)
    assert not failures, "\n".join(failures.items)
    assert failures.cases == 1


def test_the_repair_workload_passes_every_step_of_its_publication(tmp_path):
    """Its own steps, the salvaged segment, the rebuilt ones, the new WAL and the one MANIFEST naming them all:
    each is a case of the sweep."""
    counts = failpoint_sweep.discover(seed(106), str(tmp_path))["repair"]
    assert {"repair.start", "repair.after_salvage", "segment.before_rename", "rebuild.after_segments",
            "wal.create.before_rename", "flush.after_new_wal", "manifest.before_current",
            "repair.after_commit"} <= set(counts)
    assert counts["manifest.before_current"] == 1  # the new WAL is named at the commit point, not after it


def test_a_version_switch_killed_anywhere_leaves_the_chains_before_or_after_it():
    """`memctl fact add` moving ACTIVE_OF: every failpoint it passes (the chain write's own, the WAL append's…),
    killed at hits one to three, leaves the old chains or the switched ones, check_store clean."""
    failures = failpoint_sweep.run(seed(107), hits=3, workloads=("facts",), log=print)
    assert not failures, "\n".join(failures.items)
    assert failures.cases >= 5


def test_memctl_fact_add_armed_through_the_environment_at_the_chain_write():
    failures = failpoint_sweep.run(seed(108), spawn=True, only="facts:facts.chain_write:1", log=print)
    assert not failures, "\n".join(failures.items)
    assert failures.cases == 1
