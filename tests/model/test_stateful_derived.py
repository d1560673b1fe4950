"""Text and graph through flushes, compactions and power cuts, against the workload model (REFERENCES C #8).

Rules: a batch of text documents and graph changes (tools.testing.derived: adds, updates and deletes of
documents; nodes, edges, edge and node deletions), flush, compact, close_reopen, crash_reopen (a power cut
through tools.testing.faultfs) and crash_during (a power cut at a random file operation inside a flush or
a compaction). Every commit was acknowledged, so after any crash the store must equal the model exactly:
the documents and their rankings for fixed queries (against an index rebuilt from the model's documents),
the graph's nodes, edges, neighbours and k-hop answers, every counter, and check_store without problems.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import rule
from powercut_machine import PowerCutStoreMachine

from engine.check import check_store
from tools.testing.derived import derived_operations
from tools.testing.workload import Model, apply_to_store, describe_difference, read_state

FLUSH_BYTES = 4096


class DerivedKindsVersusModel(PowerCutStoreMachine):
    flush_bytes = FLUSH_BYTES
    prefix = "memctl-model-derived-"

    def start_model(self):
        self.model = Model()
        self.number = 0

    def has_commits(self) -> bool:
        return bool(self.number)

    def after_reopen(self):
        self._check()

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


DerivedKindsVersusModel.TestCase.settings = settings(
    max_examples=15, stateful_step_count=25, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
test_text_and_graph_match_the_model_through_flushes_compactions_and_crashes = DerivedKindsVersusModel.TestCase
