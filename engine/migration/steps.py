"""The migration steps, in the order they run, and what a step hands the protocol."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

# Module names in this package. Format 3 → 4: split_text_index, turn_fields, raw_passages (which counts the chunks
# the rebuild indexes). Format 4 → 5: fact_chains.
STEPS = ("split_text_index", "turn_fields", "raw_passages", "fact_chains")


@dataclass
class Changes:
    """What one step changes: `counts` for the report (and `--dry-run`), record operations `runs` as
    engine.store.Batch collects them (counter values included), and the counters it retires."""

    counts: dict
    runs: list = field(default_factory=list)
    retired_counters: list = field(default_factory=list)


def pending_steps(version: int) -> list:
    """The step modules a store of format `version` needs, in order."""
    modules = [importlib.import_module(f"engine.migration.{name}") for name in STEPS]
    return [module for module in modules if version < module.TO_VERSION]
