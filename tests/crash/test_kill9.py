"""Random kill -9 (REFERENCES C #2): tools/crash/kill9.py, 200 kills per CI run."""

from __future__ import annotations

from tools.testing.scripts import crash_tool, seed

kill9 = crash_tool("kill9")


def test_two_hundred_random_kills_lose_no_acknowledged_batch():
    failures = kill9.run(seed(201), count=200, min_delay=0.002, max_delay=0.2, log=print)
    assert not failures, "\n".join(failures.items)
    assert failures.cases == 200
