"""Full-text search: tokenizer, varint postings, front-coded term dictionary, BM25+ over fields.

Nothing here is imported eagerly: `memctl search` pays only for the modules its query touches.
"""

import sys


def wants_numba(kernels: str) -> bool:
    """Whether a `kernels` choice ("numpy", "numba" or "auto": numba when it is loaded already) means numba."""
    if kernels not in ("numpy", "numba", "auto"):
        raise ValueError(f"kernels must be 'numpy', 'numba' or 'auto', not {kernels!r}")
    return kernels == "numba" or (kernels == "auto" and "numba" in sys.modules)
