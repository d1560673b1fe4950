"""The store against a dict (REFERENCES B7, C #8): every rule is followed by a full comparison of reads.

Rules: put, delete, allocate, a multi-operation batch, flush, compact, close_reopen, crash_reopen (a power
cut through tools.testing.faultfs: whatever was not synced is dropped, directory operations not covered
by a directory fsync are forgotten) and crash_during (a power cut at a random file operation inside a flush
or a compaction). Every commit was acknowledged, so after any crash the store must equal the model exactly.
Invariants: get agrees with the model for every key ever used, scan (whole table and by prefix) returns
the model's records in key order, counters match, and check_store finds no problem.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import invariant, rule
from powercut_machine import PowerCutStoreMachine

from engine.check import check_store

TABLES = ("test.a", "test.b", "x.y")
KEYS = ("", "a", "ab", "abc", "b", "b/1", "b/2", "é", "记忆", "z" * 40)
PREFIXES = ("", "a", "b/", "记")
COUNTERS = ("doc", "edge")
FLUSH_BYTES = 2048

scalars = (st.none() | st.booleans() | st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1)
           | st.floats(allow_nan=False) | st.text(max_size=30) | st.binary(max_size=300))
values = st.recursive(scalars, lambda children: st.lists(children, max_size=4)
                      | st.dictionaries(st.text(max_size=8), children, max_size=4), max_leaves=10)
operations = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(TABLES), st.sampled_from(KEYS), values),
    st.tuples(st.just("delete"), st.sampled_from(TABLES), st.sampled_from(KEYS)),
)


class StoreVersusDict(PowerCutStoreMachine):
    flush_bytes = FLUSH_BYTES

    def start_model(self):
        self.records: dict = {}
        self.counters = {name: 0 for name in COUNTERS}

    def has_commits(self) -> bool:
        return bool(self.records)

    def _commit(self, batch_operations: list):
        with self.store.batch() as batch:
            for operation in batch_operations:
                if operation[0] == "put":
                    batch.put(operation[1], operation[2], operation[3])
                else:
                    batch.delete(operation[1], operation[2])
        for operation in batch_operations:
            if operation[0] == "put":
                self.records[(operation[1], operation[2])] = operation[3]
            else:
                self.records.pop((operation[1], operation[2]), None)

    @rule(table=st.sampled_from(TABLES), key=st.sampled_from(KEYS), value=values)
    def put(self, table, key, value):
        self._commit([("put", table, key, value)])

    @rule(table=st.sampled_from(TABLES), key=st.sampled_from(KEYS))
    def delete(self, table, key):
        self._commit([("delete", table, key)])

    @rule(batch=st.lists(operations, min_size=1, max_size=8))
    def batch(self, batch):
        self._commit(batch)

    @rule(counter=st.sampled_from(COUNTERS), count=st.integers(min_value=1, max_value=1000),
          key=st.sampled_from(KEYS))
    def allocate(self, counter, count, key):
        with self.store.batch() as batch:
            first = batch.allocate(counter, count)
            batch.put("test.a", key, first)
        assert first == self.counters[counter]
        self.counters[counter] += count
        self.records[("test.a", key)] = first

    @invariant()
    def reads_match_the_model(self):
        if getattr(self, "store", None) is None:
            return
        for table in TABLES:
            for key in KEYS:
                assert self.store.get(table, key) == self.records.get((table, key)), (table, key)
            for prefix in PREFIXES:
                expected = sorted((key, value) for (name, key), value in self.records.items()
                                  if name == table and key.startswith(prefix))
                assert list(self.store.scan(table, prefix)) == expected, (table, prefix)
        for name in COUNTERS:
            assert self.store.counter(name) == self.counters[name]

    @invariant()
    def check_is_clean(self):
        if getattr(self, "store", None) is not None:
            assert check_store(self.path).problems == []


StoreVersusDict.TestCase.settings = settings(
    max_examples=60, stateful_step_count=30, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
test_store_matches_a_dict_through_flushes_compactions_and_crashes = StoreVersusDict.TestCase
