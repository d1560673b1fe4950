"""Text and graph through flushes, compactions and power cuts, against the workload model (REFERENCES C #8).

Rules: a batch of text documents and graph changes (engine.testing.derived: adds, updates and deletes of
documents; nodes, edges, edge and node deletions), flush, compact, close_reopen, crash_reopen (a power cut
through engine.testing.faultfs) and crash_during (a power cut at a random file operation inside a flush or
a compaction). Every commit was acknowledged, so after any crash the store must equal the model exactly:
the documents and their rankings for fixed queries (against an index rebuilt from the model's documents),
the graph's nodes, edges, neighbours and k-hop answers, every counter, and check_store without problems.
"""

from __future__ import annotations

import random
import shutil
import tempfile

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from engine import fs
from engine.check import check_store
from engine.store import Store
from engine.testing import faultfs
from engine.testing.derived import derived_operations
from engine.testing.workload import Model, apply_to_store, describe_difference, read_state

FLUSH_BYTES = 4096


class DerivedKindsVersusModel(RuleBasedStateMachine):
    @initialize()
    def open_store(self):
        self.root = tempfile.mkdtemp(prefix="memctl-model-derived-")
        self.path = f"{self.root}/store"
        self.fault = None
        self._install_faults()
        self.store = Store.open(self.path, flush_bytes=FLUSH_BYTES)
        self.model = Model()
        self.number = 0

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

    def _check(self):
        found = read_state(self.store)
        expected = self.model.state()
        assert found == expected, describe_difference(expected, found)
        assert check_store(self.path).problems == []

    @rule(batch_seed=st.integers(min_value=0, max_value=1 << 30), dense=st.booleans())
    def batch(self, batch_seed, dense):
        self.number += 1
        operations = derived_operations(random.Random(batch_seed), self.number, dense)
        if operations:
            apply_to_store(self.store, operations)
            self.model.apply(operations, self.number)

    @rule()
    def flush(self):
        self.store.flush()

    @rule()
    def compact(self):
        self.store.compact()

    @rule()
    def close_reopen(self):
        self.store.close()
        self.store = Store.open(self.path, flush_bytes=FLUSH_BYTES)
        self._check()

    def _power_cut(self, variant: str):
        self.store.close()
        self.store = None
        self.fault.materialise(variant)
        self._install_faults()
        self.store = Store.open(self.path, flush_bytes=FLUSH_BYTES)
        self._check()

    @rule(variant=st.sampled_from(("drop", "forget", "combo", "scramble")))
    def crash_reopen(self, variant):
        self._power_cut(variant)

    @precondition(lambda self: self.number)
    @rule(operation=st.sampled_from(("flush", "compact")), after=st.integers(min_value=1, max_value=60),
          variant=st.sampled_from(("drop", "combo")))
    def crash_during(self, operation, after, variant):
        self.fault.crash(self.fault.total + after)
        try:
            getattr(self.store, operation)()
        except faultfs.SimulatedCrash:
            pass
        self._power_cut(variant)


DerivedKindsVersusModel.TestCase.settings = settings(
    max_examples=15, stateful_step_count=25, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
test_text_and_graph_match_the_model_through_flushes_compactions_and_crashes = DerivedKindsVersusModel.TestCase
