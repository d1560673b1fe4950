"""Every command that reads standard input ("-") ends with exit 2 and a message when the process has none
(`memctl ingest --raw - <&-`: Python starts with sys.stdin None), never with a traceback, and leaves no store
behind."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from memctl import standard_input

MESSAGE = "error: - reads standard input, which is closed: pipe the input in, or give a file\n"
READERS_OF_STDIN = [
    ["ingest", "--raw", "-"],
    ["remember", "--raw", "-"],
    ["add", "--raw", "-"],
    ["recall", "batch", "-"],
    ["recall", "--queries", "-"],
    ["index", "add", "-"],
    ["index", "--add", "-"],
    ["graph", "import", "-"],
    ["r2g", "--from", "jsonl", "-"],
]


@pytest.mark.parametrize("arguments", READERS_OF_STDIN, ids=" ".join)
def test_a_closed_stdin_is_exit_2_in_a_real_process(tmp_path, arguments):
    home = tmp_path / "home"
    completed = subprocess.run([sys.executable, "-m", "memctl", "--home", str(home), *arguments],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                               preexec_fn=lambda: os.close(0))  # `<&-`: the child starts without descriptor 0
    assert (completed.returncode, completed.stderr, completed.stdout) == (2, MESSAGE, "")
    assert not home.exists()


@pytest.mark.parametrize("arguments", READERS_OF_STDIN, ids=" ".join)
def test_a_closed_stdin_is_exit_2_in_process(cli, isolated_home, monkeypatch, arguments):
    monkeypatch.setattr(standard_input, "sys", SimpleNamespace(stdin=None))  # what Python gives such a process
    result = cli(*arguments)
    assert (result.exit_code, result.stderr) == (2, MESSAGE)
    assert not isolated_home.exists()
