"""Pausing Python's cyclic garbage collector.

Bulk writes build millions of small acyclic dicts and lists that live until a flush or the end of the run, and
a short process (a `memctl remember`) imports a few hundred modules whose functions, classes and dicts all
live until it ends: every collection their allocations trigger rescans all of them for nothing (a cost that
grows with the square of a bulk run; ~40 collections, 5% of a remember's CPU). Pausing it frees nothing less:
these objects die by reference counting, and a cycle made meanwhile waits for the next collection.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def paused():
    """The collector off inside the block; on again after it unless it was off before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
