"""Set operations on sorted numpy arrays for paths that a cold process runs.

np.unique and np.isin import numpy.ma, which costs a cold `memctl recall` or `memctl search` 40-50 ms before it
has ranked anything (8 ms with bytecode cached); these do the same with a sort and a binary search. Opening a
graph whose records are still in the WAL uses them too (`memctl stats`, recall after an unflushed r2g).
"""

from __future__ import annotations

import numpy as np


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """np.unique(values)."""
    values = np.sort(values)
    if values.size < 2:
        return values
    keep = np.empty(values.size, dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def members(sorted_values: np.ndarray, probes: np.ndarray) -> np.ndarray:
    """np.isin(probes, sorted_values) for an already sorted `sorted_values`."""
    if sorted_values.size == 0:
        return np.zeros(probes.size, dtype=bool)
    places = np.minimum(np.searchsorted(sorted_values, probes), sorted_values.size - 1)
    return sorted_values[places] == probes
