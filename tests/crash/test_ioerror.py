"""ENOSPC/EIO at the Nth operation, N = 1.. until done (REFERENCES C #9): tools/crash/ioerror.py."""

from __future__ import annotations

from tools.testing.scripts import crash_tool, seed

ioerror = crash_tool("ioerror")


def test_every_operation_fails_cleanly_at_every_injected_error():
    failures = ioerror.run(seed(601), limit=60, log=print)
    assert not failures, "\n".join(failures.items)
    assert failures.cases > 500


def test_regression_r1_a_failed_raw_sync_refuses_later_batches():
    failures = ioerror.run(seed(602), only="raw sync_filesystem EIO once n=1", enforce_known=True, log=print)
    assert not failures, "\n".join(failures.items)
