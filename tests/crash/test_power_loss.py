"""Simulated power loss (REFERENCES C #3): tools/crash/power_loss.py over tools.testing.faultfs."""

from __future__ import annotations

import os

from tools.testing import faultfs
from tools.testing.scripts import crash_tool, seed

power_loss = crash_tool("power_loss")


def test_crash_points_times_damage_variants_recover():
    failures = power_loss.run(seed(301), count=80, draws=2, log=print)
    assert not failures, "\n".join(failures.items)
    assert failures.cases >= 50 * 5


def test_a_crash_during_recovery_after_a_power_cut_recovers():
    failures = power_loss.run(seed(302), count=30, variants=("drop", "combo"), double=True, log=print)
    assert not failures, "\n".join(failures.items)


class WalFsyncIgnored(faultfs.FaultOps):
    """A broken engine, as the model sees it: the WAL's fsync does not make its appends durable."""

    def _sync(self, inode):
        if any(path.endswith(".log") and self._inodes[index] is inode
               for path, index in self._current.items()):
            return
        super()._sync(inode)


class DirectoryFsyncIgnored(faultfs.FaultOps):
    """A broken engine, as the model sees it: no directory fsync ever happens."""

    def fsync_dir(self, path):
        self._before("fsync_dir", os.path.abspath(path))


def test_the_harness_catches_a_wal_without_fsync():
    failures = power_loss.run(seed(303), count=40, variants=("drop",), ops_class=WalFsyncIgnored, log=print)
    assert failures, "acknowledged batches whose WAL append was never synced must be reported lost"


def test_the_harness_catches_missing_directory_fsyncs():
    failures = power_loss.run(seed(304), count=60, variants=("forget",), ops_class=DirectoryFsyncIgnored,
                              log=print)
    assert failures, "renames and creates no directory fsync covered must be reported lost"
