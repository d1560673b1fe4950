"""The part of the stateful model tests that every store machine shares: a store on faultfs, and the rules
that flush, compact, rebuild, reopen and cut the power (whatever was not synced is dropped, directory
operations not covered by a directory fsync are forgotten), also in the middle of a flush, a compaction or a
rebuild.

A subclass starts its model in `start_model`, says whether anything was committed yet in `has_commits`, and
may verify the reopened store in `after_reopen`; its own rules and invariants compare the store with its model.
"""

from __future__ import annotations

import shutil
import tempfile

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from engine import fs
from engine.store import Store
from tools.testing import faultfs


class PowerCutStoreMachine(RuleBasedStateMachine):
    flush_bytes = 2048
    prefix = "memctl-model-"

    def start_model(self):
        raise NotImplementedError

    def has_commits(self) -> bool:
        raise NotImplementedError

    def after_reopen(self):
        """Checks a subclass wants right after every reopen (its invariants run after each rule anyway)."""

    @initialize()
    def open_store(self):
        self.root = tempfile.mkdtemp(prefix=self.prefix)
        self.path = f"{self.root}/store"
        self.fault = None
        self._install_faults()
        self.store = Store.open(self.path, flush_bytes=self.flush_bytes)
        self.start_model()

    def teardown(self):
        if getattr(self, "store", None) is not None:
            self.store.close()
        if getattr(self, "fault", None) is not None:
            fs.set_ops(self.previous_ops)
        shutil.rmtree(getattr(self, "root", ""), ignore_errors=True)

    def _install_faults(self):
        if self.fault is not None:
            fs.set_ops(self.previous_ops)
        self.fault = faultfs.FaultOps(self.root)
        self.previous_ops = fs.set_ops(self.fault)

    def _reopen(self):
        self.store = Store.open(self.path, flush_bytes=self.flush_bytes)
        self.after_reopen()

    @rule()
    def flush(self):
        self.store.flush()

    @rule()
    def compact(self):
        self.store.compact()

    @rule()
    def rebuild(self):
        self.store.rebuild()

    @rule()
    def close_reopen(self):
        self.store.close()
        self._reopen()

    def _power_cut(self, variant: str):
        self.store.close()
        self.store = None
        self.fault.materialise(variant)
        self._install_faults()
        self._reopen()

    @rule(variant=st.sampled_from(("drop", "forget", "combo", "scramble")))
    def crash_reopen(self, variant):
        self._power_cut(variant)

    @precondition(lambda self: self.has_commits())
    @rule(operation=st.sampled_from(("flush", "compact", "rebuild")), after=st.integers(min_value=1, max_value=60),
          variant=st.sampled_from(("drop", "combo")))
    def crash_during(self, operation, after, variant):
        self.fault.crash(self.fault.total + after)
        try:
            getattr(self.store, operation)()
        except faultfs.SimulatedCrash:
            pass
        self._power_cut(variant)
