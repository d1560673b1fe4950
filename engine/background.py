"""Background: one call run on a thread of its own, its result (or its exception) collected later.

Worth it only for work that releases the GIL for most of its time (numba kernels declared nogil, large
numpy operations, zstd, I/O): Python code on two threads takes turns, it does not run side by side.

A responsive call lowers the interpreter's switch interval (sys.setswitchinterval) to SWITCH_INTERVAL while
it runs, put back when the last such call ends. A thread coming back from work without the GIL must take the
GIL again before its call can return, and a caller busy with Python code hands it over only when the interval
runs out: at the default 5 ms, zstd's 2 ms of work on LoCoMo's chunks came back 7.5 ms after it began
(measured), longer than the caller's work it was meant to overlap. For a call that holds the GIL much of its
time (the text index build: numpy steps between Python ones) a short interval only makes the two threads trade
the GIL 25 times as often: its builds took 5% longer.
"""

from __future__ import annotations

import sys
import threading

SWITCH_INTERVAL = 0.0002  # seconds

_lock = threading.Lock()
_running = 0
_previous_interval = None


def _lower_switch_interval() -> None:
    global _running, _previous_interval
    with _lock:
        if _running == 0 and sys.getswitchinterval() > SWITCH_INTERVAL:
            _previous_interval = sys.getswitchinterval()
            sys.setswitchinterval(SWITCH_INTERVAL)
        _running += 1


def _restore_switch_interval() -> None:
    global _running, _previous_interval
    with _lock:
        _running -= 1
        if _running == 0 and _previous_interval is not None:
            sys.setswitchinterval(_previous_interval)
            _previous_interval = None


class Background:
    def __init__(self, function, *arguments, name: str = "memctl-background", responsive: bool = False):
        self._function = function
        self._arguments = arguments
        self._result = None
        self._error: BaseException | None = None
        self._started = threading.Event()
        self._responsive = responsive
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        if responsive:
            _lower_switch_interval()
        try:
            self._thread.start()
        except BaseException:
            if responsive:
                _restore_switch_interval()
            raise
        # Until the new thread first holds the GIL it runs nothing: waiting here, without the GIL, lets it
        # start now and reach the call that releases the GIL.
        self._started.wait()

    def _run(self) -> None:
        self._started.set()
        try:
            self._result = self._function(*self._arguments)
        except BaseException as error:  # re-raised by result(), in the caller's thread
            self._error = error
        finally:
            if self._responsive:
                _restore_switch_interval()

    def done(self) -> bool:
        return not self._thread.is_alive()

    def result(self):
        """The call's return value, once it has finished; its exception, raised here, if it failed."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result
