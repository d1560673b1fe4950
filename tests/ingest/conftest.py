"""Fixtures of the ingest tests; helpers live in ingest_testkit.py."""

from __future__ import annotations

import os
import sys

import pytest

from engine import fs
from engine.store import Store

# Lets test modules import ingest_testkit whatever pytest's import mode is.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _disarm_failpoints():
    yield
    fs.disarm_all()


@pytest.fixture
def store(tmp_path):
    opened = Store.open(str(tmp_path / "store"), writable=True)
    yield opened
    opened.close()
