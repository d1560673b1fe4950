"""repair_store: salvage a damaged store and publish what it holds, atomically (engine/repair/__init__.py)."""

from __future__ import annotations

import os
import tempfile
from contextlib import ExitStack

from engine import damage, fs, manifest as manifest_module
from engine.check import check_store
from engine.errors import InputError
from engine.format import DAMAGE_FILE, KIND_RECORDS
from engine.lock import GcLock
from engine.migration.protocol import stage_pending_steps
from engine.records import merge_records, open_segment
from engine.repair.raw import drop_unservable_chunks
from engine.repair.records import RecordsLoss, salvage_segments
from engine.repair.wal import WalLoss, salvage_batches
from engine.segment import Segment, SegmentWriter
from engine.store import Store, runs_of


def repair_store(path: str, wait: float = 0.0, holder: str = "memctl repair", dry_run: bool = False,
                 hooks: dict | None = None) -> dict:
    """Repair the store at `path` (MANIFEST.spec §15); returns what was found, lost and kept (with dry_run: what
    would be, nothing written, no lock taken). A store `check` finds sound is left as it is, but for its DAMAGE
    marker, which is deleted. hooks: as engine.migration's, for a store of an older format, which is migrated
    on the way (repair publishes today's format)."""
    path = os.path.abspath(path)
    if manifest_module.read_current(path) is None:
        raise InputError(f"no memctl store at {path}: nothing to repair")
    with damage.quiet(), ExitStack() as stack:
        if dry_run:  # no writer lock: keep a writer's clean-up from deleting files while they are read
            gc_lock = GcLock(path)
            gc_lock.acquire_shared()
            stack.callback(gc_lock.release)
        store = Store.open(path, writable=not dry_run, wait=wait, holder=holder, migrating=True, repairing=True)
        stack.callback(store.close)
        return _repair(store, dry_run, hooks or {}, stack)


def _repair(store: Store, dry_run: bool, hooks: dict, stack: ExitStack) -> dict:
    marker = damage.read(store.path)
    report = {"path": store.path, "dry_run": dry_run, "format": store.manifest.version,
              "marker": marker.findings if marker else [], "found": [], "repaired": False, "marker_cleared": False}
    if not store.outdated:
        report["found"] = [problem for problem in check_store(store.path).problems if problem["file"] != DAMAGE_FILE]
        if not report["found"]:
            if marker and not dry_run:
                damage.clear(store.path)
                report["marker_cleared"] = True
            return report
    fs.failpoint("repair.start")
    records_loss, wal_loss = RecordsLoss(), WalLoss()
    kept_rows = _salvage_records(store, records_loss, dry_run, stack)
    batches = _stage_batches(store, salvage_batches(store.path, store.manifest, wal_loss), wal_loss)
    store.sequence = max([store.manifest.last_sequence, store.manifest.wal_sequence, *(batch[0] for batch in batches)])
    report["lost"] = {"records": records_loss.as_dict(), "wal_batches": wal_loss.as_dict(),
                      "raw_chunks": drop_unservable_chunks(store)}
    report["kept"] = {"records": kept_rows, "wal_batches": len(batches)}
    report["rebuilt"] = sorted({entry["owner"] for entry in store.manifest.segments if entry["kind"] != KIND_RECORDS})
    report["migration_steps"] = stage_pending_steps(store, hooks) if store.outdated else []
    fs.failpoint("repair.after_salvage")
    if not dry_run:
        store.resolving = marker.crc if marker else None
        store.rebuild(new_wal_at_commit=True)  # the commit point: a MANIFEST naming none of the damaged files
        fs.failpoint("repair.after_commit")
        damage.clear(store.path)
        report["repaired"] = report["marker_cleared"] = True
    return report


def _stage_batches(store: Store, batches: list, loss: WalLoss) -> list:
    """Stage each batch; one whose operations no commit would have taken (a crafted record whose CRC passes) is
    lost. Returns the batches staged."""
    staged = []
    for batch in batches:
        try:
            store.stage(runs_of(batch[1]))
        except InputError:
            loss.lose(batch[0])
            continue
        staged.append(batch)
    return staged


def _salvage_records(store: Store, loss: RecordsLoss, dry_run: bool, stack: ExitStack) -> int:
    """Write every readable record of the store's records segments into one segment (in seg/, named by no
    MANIFEST until the rebuild replaces it; for a dry run in a temporary directory) and make it the handle's only
    records segment, its derived segments dropped; returns its row count."""
    if dry_run:
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="memctl-repair-"))
        writer = SegmentWriter(os.path.join(scratch, f"salvaged.{KIND_RECORDS}.seg"), KIND_RECORDS)
    else:
        writer = store.new_segment(KIND_RECORDS)
    rows = merge_records(writer, salvage_segments(store.path, store.manifest.segments, loss))
    store.kind_segments = {}
    if not rows:
        writer.abort()
        store.records = []
        return 0
    salvaged = Segment.open(writer.path, expected_size=writer.finish()["size"])
    store.records = [open_segment(salvaged, store.block_cache)]
    return rows
