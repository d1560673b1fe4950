"""numba kernels for bulk, offline graph work (whole-graph PageRank). Never imported on a query path:
importing numba costs about half a second, more than a cold `memctl graph --khop` may spend in total.

Inputs come from `pagerank.transition`, which derives every index from validated adjacency with
searchsorted, so they are in range; numba does not check bounds (REFERENCES B8).
"""

from __future__ import annotations

import numpy as np

_compiled = None


def _push_kernel():
    global _compiled
    if _compiled is None:
        import numba

        @numba.njit("void(i8[::1], i8[::1], f8[::1], f8[::1], f8[::1], f8[::1])", cache=True, nogil=True)
        def push(source, target, weight, inverse_out_weight, scores, out):
            out[:] = 0.0
            for edge in range(source.shape[0]):
                node = source[edge]
                out[target[edge]] += scores[node] * inverse_out_weight[node] * weight[edge]

        _compiled = push
    return _compiled


def transition_product(walk):
    """A function scores → Pᵀ·scores for `walk`, reusing one output buffer (callers must not keep it)."""
    kernel = _push_kernel()
    source = np.ascontiguousarray(walk.source, dtype=np.int64)
    target = np.ascontiguousarray(walk.target, dtype=np.int64)
    weight = np.ascontiguousarray(walk.weight, dtype=np.float64)
    inverse = np.ascontiguousarray(walk.inverse_out_weight, dtype=np.float64)
    out = np.empty(walk.size)

    def product(scores: np.ndarray) -> np.ndarray:
        kernel(source, target, weight, inverse, np.ascontiguousarray(scores, dtype=np.float64), out)
        return out

    return product
