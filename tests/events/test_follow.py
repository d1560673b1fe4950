"""`memctl events --follow`: a reader that sees later commits, never blocks the writer, and ends cleanly on
Ctrl-C."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading

import pytest

from events_testkit import FIRST, SECOND, node_keys, open_memory, remember


class _Lines:
    """The lines a process prints, read on a thread so that waiting for one can time out."""

    def __init__(self, stream):
        self.queue: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [self.queue.put(line) for line in stream], daemon=True).start()

    def next_event(self, timeout: float = 20.0) -> dict:
        return json.loads(self.queue.get(timeout=timeout))


def test_follow_prints_later_commits_and_exits_0_on_ctrl_c(isolated_home):
    remember(isolated_home, FIRST)
    process = subprocess.Popen([sys.executable, "-m", "memctl", "--home", str(isolated_home), "events", "--follow",
                                "--json", "--interval", "0.05"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "MEMCTL_FAILPOINT": "", "PYTHONFAULTHANDLER": "1"},
                               preexec_fn=_interruptible)
    lines = _Lines(process.stdout)
    try:
        # NodeCreated, EdgeCreated, then Alice's residence and employer put in force (FactPromoted × 2)
        assert [lines.next_event()["seq"] for _ in range(4)] == [1, 2, 3, 4]
        # Writers while the follower polls: they open with wait=0, so a lock the follower held would make them
        # fail at once (Busy) rather than wait; no clock is needed to see that they were not blocked.
        remember(isolated_home, SECOND)
        key = sorted(node_keys(isolated_home))[0]
        with open_memory(isolated_home) as memory:
            memory.feedback(key, "pin")
        later = [lines.next_event() for _ in range(4)]  # "my sister Carol": a sibling slot fact put in force
        assert [(event["seq"], event["type"]) for event in later] == [
            (5, "NodeCreated"), (6, "EdgeCreated"), (7, "FactPromoted"), (8, "WeightUpdated")]
        assert later[3]["payload"]["id"] == key
    finally:
        process.send_signal(signal.SIGINT)
        _wait_or_show_where(process)
    errors = process.stderr.read()
    assert process.returncode == 0
    assert "Traceback" not in errors and errors == ""


def _interruptible() -> None:
    """Ctrl-C as at a terminal: a test run started in the background by a shell without job control (`cmd &`)
    ignores SIGINT, its children inherit that, and Python then installs no KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_or_show_where(process, timeout: float = 20.0) -> None:
    """Wait for the follower; one still running is aborted (faulthandler prints every thread's stack on
    SIGABRT) and the test fails with where it was."""
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        _, errors = process.communicate(timeout=timeout)
        pytest.fail(f"events --follow still ran {timeout:g} s after SIGINT; its stacks:\n{errors}")


class _Polls:
    """follow()'s sleep: counts the polls, and ends a follower that would wait for good."""

    def __init__(self, limit: int = 50):
        self.count, self.limit = 0, limit

    def __call__(self, _seconds: float) -> None:
        self.count += 1
        if self.count > self.limit:
            raise TimeoutError("the follower saw nothing new")


def test_follow_resumes_after_a_sequence_number_and_sees_each_later_commit_once(isolated_home):
    from engine.store import Store
    from memctl import event_log

    remember(isolated_home, FIRST)
    tenant = str(isolated_home / "tenants" / "default")
    polls = _Polls()
    follower = event_log.follow(lambda: Store.open(tenant, writable=False), after=3, interval=0, sleep=polls)
    assert next(follower).sequence == 4
    remember(isolated_home, SECOND)
    assert [next(follower).sequence for _ in range(3)] == [5, 6, 7]  # SECOND's sibling fact is promoted
    with pytest.raises(TimeoutError):
        next(follower)  # nothing is printed twice
