"""Fixtures of the engine tests; helpers live in engine_testkit.py."""

from __future__ import annotations

import os
import sys

import pytest

from engine import fs

# Lets test modules import engine_testkit whatever pytest's import mode is.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _disarm_failpoints():
    yield
    fs.disarm_all()


@pytest.fixture
def store_path(tmp_path) -> str:
    return str(tmp_path / "store")
