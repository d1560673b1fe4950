"""Size tiers of records segments: which of the newest to merge so that a store written by many flushes keeps
a bounded number of them. Every point read checks one filter per segment, and a batch lookup (Store.get_many)
holds each segment's block index while it runs: with one segment per flush, both grew with the input.

A segment's tier is how many times `fanout` its size is above TIER_BASE_BYTES (0 below base × fanout). Once the
newest `fanout` segments are all in the newest one's tier or below, they become one, a tier higher: like a
counter in base `fanout`, each row is rewritten about once per tier, and a store keeps fewer than `fanout`
segments per tier, so log_fanout(bytes / base) × fanout at most.

A merge may also be capped at `max_bytes` of input: it then takes the newest segments of the run that fit under
the cap together (two at least), and a segment past the cap is merged only by `memctl compact`. What a merge of a
derived kind holds grows with its input (a graph merge decodes every edge of its inputs, some 30× their bytes),
so r2g caps those merges to keep its peak bounded whatever the size of its input."""

from __future__ import annotations

TIER_BASE_BYTES = 1 << 20


def tier(size: int, fanout: int) -> int:
    level = 0
    while size >= TIER_BASE_BYTES * fanout ** (level + 1):
        level += 1
    return level


def newest_to_merge(sizes: list[int], fanout: int, max_bytes: int | None = None) -> int:
    """How many of the newest segments (`sizes` in bytes, oldest first) to merge into one: the newest run of
    segments in the newest one's tier or below, once it holds `fanout` of them, and of those, with `max_bytes`,
    the newest that fit under it together; 0 when that leaves fewer than two."""
    if not sizes:
        return 0
    top = tier(sizes[-1], fanout)
    run = 0
    for size in reversed(sizes):
        if tier(size, fanout) > top:
            break
        run += 1
    if run < fanout:
        return 0
    if max_bytes is None:
        return run
    fitting, total = 0, 0
    for size in reversed(sizes[-run:]):
        total += size
        if total > max_bytes:
            break
        fitting += 1
    return fitting if fitting >= 2 else 0
