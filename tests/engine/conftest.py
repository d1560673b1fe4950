"""Fixtures of the engine tests; helpers live in engine_testkit.py."""

from __future__ import annotations

import pytest


@pytest.fixture
def store_path(tmp_path) -> str:
    return str(tmp_path / "store")
