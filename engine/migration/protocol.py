"""migrate_store: upgrade one store in place, atomically (the protocol of engine/migration/__init__.py)."""

from __future__ import annotations

import os

from engine import manifest as manifest_module
from engine.errors import InputError
from engine.format import FORMAT_VERSION
from engine.migration.steps import pending_steps
from engine.store import Store


def migrate_store(path: str, wait: float = 0.0, holder: str = "memctl migrate", dry_run: bool = False,
                  hooks: dict | None = None) -> dict:
    """Upgrade the store at `path` to FORMAT_VERSION; returns what was (or, with dry_run, would be) done:
    {"path", "from_version", "to_version", "dry_run", "migrated", "wal_batches": unflushed batches folded in,
    "steps": [{"name", "to_version", "counts"}]}. A store of this format is left alone ("migrated": False).
    dry_run: the same report, from a reader's snapshot (no lock taken, nothing written). hooks: what steps need
    to know of the layer above the engine, by name (turn_fields.HOOK: how a turn's input format maps onto the
    generic turn fields); a step without its hook does without (see each step's docstring)."""
    path = os.path.abspath(path)
    if manifest_module.read_current(path) is None:
        raise InputError(f"no memctl store at {path}: nothing to migrate")
    store = Store.open(path, writable=not dry_run, wait=wait, holder=holder, migrating=True)
    try:
        report = {"path": path, "from_version": store.manifest.version, "to_version": FORMAT_VERSION,
                  "dry_run": dry_run, "migrated": False,
                  "wal_batches": store.sequence - store.manifest.last_sequence, "steps": []}
        report["steps"] = stage_pending_steps(store, hooks or {})
        if store.manifest.version < FORMAT_VERSION and not dry_run:
            store.rebuild()
            report["migrated"] = True
    finally:
        store.close()
    return report


def stage_pending_steps(store, hooks: dict) -> list:
    """Run every step the store's format needs on `store`, staging its changes (published by the caller's
    rebuild); returns [{"name", "to_version", "counts"}] of them. `memctl repair` of an older store runs them
    too, on the records it salvaged."""
    done = []
    for step in pending_steps(store.manifest.version):
        changes = step.plan(store, hooks)
        store.stage(changes.runs, changes.retired_counters)
        done.append({"name": step.NAME, "to_version": step.TO_VERSION, "counts": changes.counts})
    return done
