"""The crash workload's model (tools.testing.workload and .derived) against the real store, crash-free.

Every crash test trusts the model's predictions: records, counters, raw chunks, text rankings (a fresh
index built from the model's documents) and graph answers (neighbours, k-hop with the engine's path edge
rule, nodes by type). Here the workload runs with flushes, compactions and reopens, and every few batches
the store must answer exactly what the model predicts, by a writer and by a reader.
"""

from __future__ import annotations

import pytest

from engine.store import Store
from tools.testing.derived import Ranking
from tools.testing.scripts import seed
from tools.testing.workload import Model, apply_to_store, batch_operations, describe_difference, read_state, schedule

FLUSH_BYTES = 16 << 10


@pytest.mark.parametrize("workload_seed", [seed(801), seed(802)])
def test_the_model_predicts_every_answer_through_flushes_compactions_and_reopens(tmp_path, workload_seed):
    path = str(tmp_path / "store")
    model = Model()
    store = Store.open(path, flush_bytes=FLUSH_BYTES)
    try:
        for step in schedule(workload_seed, 1, 120):
            if step[0] == "batch":
                operations = batch_operations(workload_seed, step[1])
                apply_to_store(store, operations)
                model.apply(operations, step[1])
                if step[1] % 15 == 0:
                    found = read_state(store)
                    assert found == model.state(), describe_difference(model.state(), found)
            elif step[0] == "reopen":
                store.close()
                store = Store.open(path, flush_bytes=FLUSH_BYTES)
            else:
                getattr(store, step[0])(*step[1:])
    finally:
        store.close()
    assert model.derived.documents and model.derived.edges, "the workload must exercise text and graph"
    with Store.open(path, writable=False) as reader:
        found = read_state(reader)
    assert found == model.state(), describe_difference(model.state(), found)


def test_rankings_agree_to_a_tolerance_and_up_to_ties_at_the_cut():
    complete = Ranking([("a", 3.0, ("x",)), ("b", 2.0, ("x",)), ("c", 2.0, ("y",))], top=11)
    assert complete == Ranking([("a", 3.0 + 1e-9, ("x",)), ("c", 2.0, ("y",)), ("b", 2.0, ("x",))], top=11)
    assert complete != Ranking([("a", 3.0, ("x",)), ("b", 2.0, ("x",)), ("c", 2.0, ("x",))], top=11)
    assert complete != Ranking([("a", 3.0001, ("x",)), ("b", 2.0, ("x",)), ("c", 2.0, ("y",))], top=11)
    assert complete != Ranking([("b", 2.0, ("x",)), ("a", 3.0, ("x",)), ("c", 2.0, ("y",))], top=11)
    # A top-2 cut inside the tie of b and c: either may be the second hit, but never someone else.
    cut = Ranking([("a", 3.0, ("x",)), ("b", 2.0, ("x",))], top=2)
    assert cut == Ranking([("a", 3.0, ("x",)), ("c", 2.0, ("y",))], top=2)
    assert cut != Ranking([("c", 3.0, ("x",)), ("b", 2.0, ("x",))], top=2)
    assert cut != Ranking([("a", 3.0, ("x",)), ("b", 2.0, ("x",)), ("c", 2.0, ("y",))], top=2)


def test_batches_are_a_pure_function_of_seed_and_number():
    assert batch_operations(5, 17) == batch_operations(5, 17)
    kinds = {operation[0] for number in range(1, 60) for operation in batch_operations(5, number)}
    assert {"text_add", "text_delete", "graph"} <= kinds
