"""Replay every input the fuzzers ever caught (SQLite's fuzzcheck): each must now be answered properly."""

from __future__ import annotations

import os

import pytest

from fuzz_targets import CORPUS, TARGETS, run_target

CASES = sorted((target, name) for target in TARGETS if os.path.isdir(os.path.join(CORPUS, target))
               for name in os.listdir(os.path.join(CORPUS, target)))


@pytest.mark.parametrize(("target", "name"), CASES or [("varint", None)])
def test_corpus_input_is_answered(target, name):
    if name is None:
        return  # an empty corpus is a valid corpus; the parametrization needs one case
    with open(os.path.join(CORPUS, target, name), "rb") as handle:
        run_target(target, handle.read())
