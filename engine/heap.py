"""Giving the C heap's free memory back to the system between the phases of a large write.

glibc keeps what Python frees in the middle of its heap (small objects' arenas among live ones, numpy buffers
below its adaptive mmap threshold) for later allocations, so a process' resident size stays where its largest
phase left it and the next phase adds to it: after parsing a 50 MB line, 100 MB that nothing used any more.
malloc_trim(0) returns every free page of the heap (madvise), not only its top.
"""

from __future__ import annotations


def release_free_memory() -> None:
    """Return the C heap's free pages to the system, where the C library can (glibc); a few milliseconds."""
    from engine.fs import _libc

    trim = getattr(_libc(), "malloc_trim", None)
    if trim is not None:
        trim(0)
