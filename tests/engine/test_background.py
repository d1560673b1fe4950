"""engine.background: results and errors come back to the caller; the switch interval is lowered only while
some responsive call runs."""

import sys
import threading

import pytest

from engine.background import SWITCH_INTERVAL, Background


def test_a_result_and_an_error_come_back_to_the_caller():
    assert Background(sum, [1, 2, 3]).result() == 6
    failing = Background(int, "not a number")
    with pytest.raises(ValueError):
        failing.result()
    assert failing.done()


def test_the_switch_interval_is_lowered_while_calls_run_and_restored_after_the_last():
    original = sys.getswitchinterval()
    sys.setswitchinterval(0.004)
    try:
        first_release, second_release = threading.Event(), threading.Event()
        first = Background(first_release.wait, responsive=True)
        second = Background(second_release.wait, responsive=True)
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
        first_release.set()
        first.result()
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)  # the second still runs
        second_release.set()
        second.result()
        assert sys.getswitchinterval() == pytest.approx(0.004)
    finally:
        sys.setswitchinterval(original)


def test_a_caller_with_a_lower_interval_keeps_it():
    original = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL / 2)
    try:
        release = threading.Event()
        running = Background(release.wait, responsive=True)
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL / 2)
        release.set()
        running.result()
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL / 2)
    finally:
        sys.setswitchinterval(original)


def test_a_call_that_is_not_responsive_leaves_the_interval_alone():
    original = sys.getswitchinterval()
    sys.setswitchinterval(0.004)
    try:
        release = threading.Event()
        running = Background(release.wait)
        assert sys.getswitchinterval() == pytest.approx(0.004)
        release.set()
        running.result()
    finally:
        sys.setswitchinterval(original)
