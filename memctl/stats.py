"""`memctl stats`: sizes on disk and counts of the tenant's store (engine.statistics), named by tenant.

Each derived kind instance is listed under its owner name ("text:nodes", "text:documents", "graph"): its
segments under "<owner>.<label>" in `segments`, and its own figures (documents, terms…) as a section. The
"chinese_segmentation" section names the compiled Chinese dictionary (a per-user cache file, not in the store)."""

from __future__ import annotations


def collect(memory) -> dict:
    from engine.statistics import store_statistics

    statistics = store_statistics(memory.store)
    return {"path": statistics.pop("path"), "tenant": memory.tenant, **statistics,
            "chinese_segmentation": chinese_segmentation(memory.config)}


def chinese_segmentation(config) -> dict:
    """The compiled Chinese dictionary the text indexes and R2G segment with (engine.text.chinese): its file and
    state, and why this process cut Chinese with jieba itself, if it did."""
    import os

    from engine.text.chinese import notes, state
    from memctl.settings.effective import resolve

    user_dictionary = resolve(config).index.user_dictionary
    described = state(os.path.abspath(user_dictionary) if user_dictionary else None)
    if notes():
        described["notes"] = "; ".join(notes())
    return described
