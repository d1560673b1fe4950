"""Failpoint sweep (REFERENCES C #1): tools/crash/failpoint_sweep.py with CI-sized counts."""

from __future__ import annotations

from tools.testing.scripts import crash_tool, seed

failpoint_sweep = crash_tool("failpoint_sweep")


def test_every_failpoint_at_hits_one_to_three_kills_and_recovers():
    failures = failpoint_sweep.run(seed(101), hits=3, log=print)
    assert not failures, "\n".join(failures.items)
    assert failures.cases >= 3 * 20


def test_failpoints_armed_through_the_environment_in_fresh_interpreters():
    # The forked sweep arms failpoints with fs.arm; this checks MEMCTL_FAILPOINT itself on a seeded sample
    # (two cases: every fresh interpreter loads jieba's dictionary, about a second, before its first batch).
    failures = failpoint_sweep.run(seed(102), hits=3, spawn=True, limit=2, log=print)
    assert not failures, "\n".join(failures.items)
    assert failures.cases == 2


def test_the_grep_finds_the_engine_failpoints():
    patterns = failpoint_sweep.grepped_patterns()
    assert "wal.append.before_fsync" in patterns
    assert patterns["{label}.before_rename"].match("manifest.before_rename")
