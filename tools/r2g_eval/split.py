"""The tune / held-out split of the dev conversations for R2G precision work (issue 18).

Rules are written while reading "tune" conversations only; "held out" ones are judged to measure them and never
read while writing rules:

    LoCoMo dev   (locomo-dev.json, sample ids conv-NN)    tune: conv-26, conv-30    held out: conv-41, conv-42, conv-43
    MemDaily dev (zh-memdaily-dev.json, ids md-…)          tune: even positions      held out: odd positions

A MemDaily conversation's position is its 0-based index in the file's list (the first one, md-01-events-1, is
0: tune). A LoCoMo conversation not named above (those of the sealed hold-out set) belongs to neither half.
"""

from __future__ import annotations

SPLITS = ("tune", "heldout")
LOCOMO_TUNE = frozenset({"conv-26", "conv-30"})
LOCOMO_HELDOUT = frozenset({"conv-41", "conv-42", "conv-43"})
LOCOMO_PREFIX = "conv-"


def split_of(sample_id: str, position: int) -> str | None:
    """"tune", "heldout", or None for a conversation in neither half; `position` is its index in its file."""
    if sample_id.startswith(LOCOMO_PREFIX):
        if sample_id in LOCOMO_TUNE:
            return "tune"
        return "heldout" if sample_id in LOCOMO_HELDOUT else None
    return "tune" if position % 2 == 0 else "heldout"


def select(samples: list, split: str | None = None, conversations=None, limit: int | None = None) -> list:
    """The samples of a LoCoMo-shaped list that are in `split` (None: any), named in `conversations` (None: any),
    the first `limit` of them (None: all), in file order. ValueError names an unknown split or conversation."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"--split must be one of {', '.join(SPLITS)}, not {split!r}")
    wanted = None if conversations is None else list(conversations)
    known = {sample["sample_id"] for sample in samples}
    missing = [name for name in wanted or () if name not in known]
    if missing:
        raise ValueError(f"no conversation {', '.join(missing)} in the file (it has {len(known)}: "
                         f"{', '.join(sorted(known)[:5])}{', …' if len(known) > 5 else ''})")
    chosen = [sample for position, sample in enumerate(samples)
              if (split is None or split_of(sample["sample_id"], position) == split)
              and (wanted is None or sample["sample_id"] in wanted)]
    return chosen if limit is None else chosen[:limit]
