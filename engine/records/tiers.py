"""Size tiers of records segments: which of the newest to merge so that a store written by many flushes keeps
a bounded number of them. Every point read checks one filter per segment, and a batch lookup (Store.get_many)
holds each segment's block index while it runs: with one segment per flush, both grew with the input.

A segment's tier is how many times `fanout` its size is above TIER_BASE_BYTES (0 below base × fanout). Once the
newest `fanout` segments are all in the newest one's tier or below, they become one, a tier higher: like a
counter in base `fanout`, each row is rewritten about once per tier, and a store keeps fewer than `fanout`
segments per tier, so log_fanout(bytes / base) × fanout at most."""

from __future__ import annotations

TIER_BASE_BYTES = 1 << 20


def tier(size: int, fanout: int) -> int:
    level = 0
    while size >= TIER_BASE_BYTES * fanout ** (level + 1):
        level += 1
    return level


def newest_to_merge(sizes: list[int], fanout: int) -> int:
    """How many of the newest segments (`sizes` in bytes, oldest first) to merge into one: the newest run of
    segments in the newest one's tier or below, once it holds `fanout` of them; 0 before."""
    if not sizes:
        return 0
    top = tier(sizes[-1], fanout)
    run = 0
    for size in reversed(sizes):
        if tier(size, fanout) > top:
            break
        run += 1
    return run if run >= fanout else 0
