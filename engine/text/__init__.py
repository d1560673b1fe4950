"""Full-text search: tokenizer, varint postings, front-coded term dictionary, BM25+ over fields.

Nothing here is imported eagerly: `memctl search` pays only for the modules its query touches.
"""

import importlib
import sys


def wants_numba(kernels: str) -> bool:
    """Whether a `kernels` choice ("numpy", "numba" or "auto": numba when it is loaded already) means numba."""
    if kernels not in ("numpy", "numba", "auto"):
        raise ValueError(f"kernels must be 'numpy', 'numba' or 'auto', not {kernels!r}")
    return kernels == "numba" or (kernels == "auto" and "numba" in sys.modules)


# How a segment build chooses its kernels: "auto", engine.text.build_kernels (numba) when numba is loaded in
# the process already, numpy otherwise; "numpy" or "numba" force one (tests build both ways and compare).
BUILD_KERNELS = "auto"


def chosen_build_kernels():
    """engine.text.build_kernels as BUILD_KERNELS chooses, else None: numpy does the work."""
    return kernels_module(BUILD_KERNELS, "build_kernels")


def kernels_module(choice: str, name: str):
    """The numba kernels module engine.text.`name` when `choice` means numba (see wants_numba), else None;
    under "auto" a module that cannot be imported is None too."""
    if not wants_numba(choice):
        return None
    try:
        return importlib.import_module(f"engine.text.{name}")
    except ImportError:
        if choice == "numba":
            raise
        return None
