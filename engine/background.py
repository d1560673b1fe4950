"""Background: one call run on a thread of its own, its result (or its exception) collected later.

Worth it only for work that releases the GIL for most of its time (numba kernels declared nogil, large
numpy operations, zstd, I/O): Python code on two threads takes turns, it does not run side by side.
"""

from __future__ import annotations

import threading


class Background:
    def __init__(self, function, *arguments, name: str = "memctl-background"):
        self._function = function
        self._arguments = arguments
        self._result = None
        self._error: BaseException | None = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        # Until the new thread first holds the GIL it runs nothing, and a caller busy with Python code hands
        # the GIL over only every few milliseconds (sys.getswitchinterval()): waiting here, without the GIL,
        # lets it start now and reach the call that releases the GIL.
        self._started.wait()

    def _run(self) -> None:
        self._started.set()
        try:
            self._result = self._function(*self._arguments)
        except BaseException as error:  # re-raised by result(), in the caller's thread
            self._error = error

    def done(self) -> bool:
        return not self._thread.is_alive()

    def result(self):
        """The call's return value, once it has finished; its exception, raised here, if it failed."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result
