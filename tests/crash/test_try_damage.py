"""tools/crash/crashtool.try_damage, the step every damage sweep repeats: a verdict's problem is recorded under
its case, a verdict that raises counts as a failure naming where it raised, and the store is restored after."""

from __future__ import annotations

import os

from tools.testing import damage
from tools.testing.scripts import crash_tool

crashtool = crash_tool("crashtool")


def _store(tmp_path) -> tuple[str, dict, str]:
    store = tmp_path / "store"
    (store / "seg").mkdir(parents=True)
    (store / "seg" / "1.records.seg").write_bytes(b"intact bytes")
    return str(store), damage.snapshot(str(store)), os.path.join(str(store), "seg", "1.records.seg")


def test_a_problem_is_recorded_and_the_file_restored(tmp_path):
    store, pristine, path = _store(tmp_path)
    failures = crashtool.Failures("test", 1, log=lambda message: None)
    seen = []

    def verdict():
        seen.append(open(path, "rb").read())
        return "accepted damaged bytes"

    crashtool.try_damage(failures, "records cut", store, pristine, path, b"intact", verdict)
    assert seen == [b"intact"]
    assert failures.items == ["records cut: accepted damaged bytes"]
    assert damage.snapshot(store) == pristine


def test_a_verdict_that_raises_is_a_failure_and_no_problem_is_none(tmp_path):
    store, pristine, path = _store(tmp_path)
    failures = crashtool.Failures("test", 1, log=lambda message: None)

    def broken():
        raise TimeoutError("reader hung")

    crashtool.try_damage(failures, "hang", store, pristine, path, b"", broken)
    crashtool.try_damage(failures, "fine", store, pristine, path, b"x", lambda: "")
    assert len(failures.items) == 1 and failures.items[0].startswith("hang: TimeoutError: reader hung (at ")
    assert damage.snapshot(store) == pristine
