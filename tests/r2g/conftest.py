"""The R2G tests compare the graphs of separate runs (one batch against many, a rebuild against the first run,
--jobs 2 against --jobs 1): they share one store clock, since a fact version records when it was written and an
undated claim's version starts then (memctl/facts), both in whole seconds. The clock still advances, a
microsecond a reading, so that what orders by write time keeps its order."""

import itertools

import pytest

from engine.graph.api import GraphStore

START = 1_790_000_000.0


@pytest.fixture(autouse=True)
def store_clock(monkeypatch):
    ticks = itertools.count()
    monkeypatch.setattr(GraphStore.__init__, "__defaults__", (lambda: START + next(ticks) * 1e-6,))
