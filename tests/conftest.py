"""Fixtures shared by every test directory."""

from __future__ import annotations

import os
import sys

import pytest

# Each test directory keeps its helpers in a module of a unique name (engine_testkit, graph_reference…);
# with --import-mode=importlib those directories are not on sys.path by themselves. The repository root
# comes first for tools.testing, the fault-injection harness, which is not installed with the package.
_TESTS = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_TESTS)] + [os.path.join(_TESTS, name) for name in sorted(os.listdir(_TESTS))
                                            if os.path.isdir(os.path.join(_TESTS, name))
                                            and not name.startswith((".", "_"))]


@pytest.fixture(autouse=True, scope="session")
def _session_cache(tmp_path_factory):
    """No test reads or writes the real ~/.cache/memctl: the compiled Chinese dictionary is built once per test
    session into a cache of its own (subprocesses inherit it)."""
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    """No test reads or writes the real ~/.local/share/memctl."""
    home = tmp_path / "memctl-home"
    monkeypatch.setenv("MEMCTL_HOME", str(home))
    monkeypatch.delenv("MEMCTL_FAILPOINT", raising=False)
    return home


@pytest.fixture(autouse=True)
def _disarm_failpoints():
    """A test that arms a failpoint in-process never leaks it into the next test."""
    yield
    from engine import fs

    fs.disarm_all()


@pytest.fixture
def store(tmp_path):
    """A fresh writable engine store."""
    from engine.store import Store

    opened = Store.open(str(tmp_path / "store"), writable=True)
    yield opened
    opened.close()


@pytest.fixture
def cli(isolated_home):
    """Run `memctl ARGS…` in-process with Typer's CliRunner; returns the Result."""
    from typer.testing import CliRunner

    from memctl.cli.app import app

    runner = CliRunner()

    def run(*args, input=None):
        return runner.invoke(app, list(args), input=input, catch_exceptions=False)

    return run
