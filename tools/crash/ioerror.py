"""I/O error injection (REFERENCES C #9, SQLite's loop): fail the Nth operation, N = 1, 2, ... until done.

    python tools/crash/ioerror.py --seed S [--count MAX_N] [--only CASE]

Operations: commit, flush, compact, rebuild (every segment again from the records), raw (a batch storing a
blob), open (recovery of a store with a torn WAL tail and obsolete files) and create (a new store). For each operation, each file-operation type it uses
(write, fsync, rename, fsync_dir, open_new, unlink, mkdir, truncate, open_append), each error (ENOSPC, EIO;
a failing write first writes half its data) and each mode (the Nth call fails once; every call from the
Nth on fails), N runs from 1 until the operation completes without meeting an injected error.

Verdict: the operation succeeds or raises OSError or StoreClosed, nothing else. Then one more batch is
committed on the same handle: after a failed fsync (file or directory) it must be refused with StoreClosed
("fsyncgate": no retry); if it is accepted it is acknowledged. Finally the store on disk, and a copy of it
after a simulated power cut that drops everything not synced, must reopen with check_store clean, holding
every acknowledged batch, and the failed operation's own batch all or nothing. Cases listed in KNOWN_ISSUES
(engine issues reported, not yet fixed) print KNOWN instead of FAIL unless --enforce-known.
"""

from __future__ import annotations

import errno
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crashtool import Failures, describe_error, log, parser, resolve_seed, scratch_space  # noqa: E402

from engine.errors import StoreClosed  # noqa: E402
from engine.format import SEGMENT_DIR, WAL_DIR  # noqa: E402
from tools.testing import faultfs, reference  # noqa: E402
from tools.testing.workload import (  # noqa: E402
    Model,
    apply_to_store,
    batch_operations,
    raw_chunk,
    verify_alternatives,
)

OPERATIONS = ("commit", "flush", "compact", "rebuild", "raw", "open", "create")
ERRORS = {
    "write": (errno.ENOSPC, errno.EIO),
    "fsync": (errno.EIO, errno.ENOSPC),
    "rename": (errno.ENOSPC, errno.EIO),
    "fsync_dir": (errno.EIO,),
    "open_new": (errno.ENOSPC, errno.EIO),
    "open_append": (errno.EIO,),
    "unlink": (errno.EIO,),
    "mkdir": (errno.ENOSPC,),
    "truncate": (errno.EIO,),
    "sync_filesystem": (errno.EIO,),
}
SYNCS = ("fsync", "fsync_dir", "sync_filesystem")
# Engine issues reported and not fixed yet (see crashtool.Failures).
KNOWN_ISSUES: dict = {}


def templates(scratch: str, seed: int) -> tuple[str, Model]:
    """A store with segments and a WAL tail; `<it>-torn` adds a torn WAL tail and obsolete files."""
    path = os.path.join(scratch, "template")
    built = reference.build(path, seed)
    torn = path + "-torn"
    shutil.copytree(path, torn)
    wal = sorted(name for name in os.listdir(os.path.join(torn, WAL_DIR)) if name.endswith(".log"))[-1]
    with open(os.path.join(torn, WAL_DIR, wal), "ab") as handle:
        handle.write(b"\x12\x34\x56\x78\x40\x00\x01half a record")  # a header promising more than is there
    for relative in (os.path.join(SEGMENT_DIR, "000900.records.seg"), os.path.join(WAL_DIR, "000001.log"),
                     "MANIFEST-000001", "CURRENT.tmp"):
        with open(os.path.join(torn, relative), "wb") as handle:
            handle.write(b"left behind by a crash")
    return path, built.model


class Trial:
    """One operation under one injected error, and the outcomes it may leave (models)."""

    def __init__(self, scratch: str, template: str, model: Model, seed: int, operation: str):
        self.root = os.path.join(scratch, "trial")
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(self.root)
        self.store_path = os.path.join(self.root, "store")
        self.seed = seed
        self.operation = operation
        self.number = model.applied[-1] + 1
        if operation == "create":
            self.allowed = [Model()]
        else:
            self.allowed = [model.copy()]
            shutil.copytree(template + ("-torn" if operation == "open" else ""), self.store_path)
        self.store = None

    def _acknowledge(self, operations: list) -> None:
        for model in self.allowed:
            model.apply(operations, self.number)
        self.number += 1

    def prepare(self) -> None:
        from engine.store import Store

        if self.operation in ("open", "create"):
            return
        self.store = Store.open(self.store_path, holder="ioerror trial")
        if self.operation in ("flush", "compact", "rebuild"):
            operations = batch_operations(self.seed, self.number)
            apply_to_store(self.store, operations)
            self._acknowledge(operations)

    def perform(self) -> None:
        from engine.store import Store

        if self.operation in ("open", "create"):
            self.store = Store.open(self.store_path, holder="ioerror trial")
        elif self.operation in ("commit", "raw"):
            operations = batch_operations(self.seed, self.number)
            if self.operation == "raw":
                operations = [("raw_put", raw_chunk(self.seed, self.number))] + operations
            try:
                apply_to_store(self.store, operations)
            except BaseException:
                # The failed batch may still be durable (its bytes reached the disk before the error).
                with_it = self.allowed[0].copy()
                with_it.apply(operations, self.number)
                self.allowed.append(with_it)
                self.number += 1
                raise
            self._acknowledge(operations)
        else:
            getattr(self.store, self.operation)()  # flush, compact or rebuild

    def commit_after(self) -> bool:
        """One more batch on the same handle; True when it was acknowledged."""
        operations = batch_operations(self.seed, self.number)
        try:
            apply_to_store(self.store, operations)
        except StoreClosed:
            return False
        except OSError:
            # Refused by a later injected error, yet its bytes may have reached the disk: all or nothing.
            self.allowed += [model.copy() for model in self.allowed]
            for model in self.allowed[len(self.allowed) // 2:]:
                model.apply(operations, self.number)
            self.number += 1
            return False
        self._acknowledge(operations)
        return True

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def run_case(scratch: str, template: str, model: Model, seed: int, operation: str, kind: str, error: int,
             persistent: bool, nth: int, verdicts: dict | None = None) -> tuple[bool, str]:
    """(an injected error was met, problem or '')."""
    trial = Trial(scratch, template, model, seed, operation)
    trial.prepare()
    raised = None
    with faultfs.installed(trial.root, seed=seed + nth) as fault:
        fault.fail(kind, nth, error, persistent=persistent, partial=kind == "write")
        try:
            trial.perform()
        except (OSError, StoreClosed) as caught:
            raised = caught
        except Exception as caught:  # the failure being looked for
            trial.close()
            return True, "raised " + describe_error(caught)
        met = bool(fault.failures)  # errors the operation itself met (not the batch after it)
        synced_failed = [failed[0] for failed in fault.failures if failed[0] in SYNCS]
        problem = ""
        if trial.store is not None:
            accepted = trial.commit_after()
            if accepted and synced_failed:
                problem = f"a batch was accepted after a failed {synced_failed[0]} on the same handle"
        trial.close()
    if raised is not None and not met:
        return False, f"raised {raised!r} with no injected error"
    if not problem:
        problem = _verify(trial, fault, verdicts)
    return met, problem


def _verify(trial: Trial, fault, verdicts: dict | None) -> str:
    try:
        power_cut = os.path.join(trial.root, "after-power-cut")
        fault.materialise("drop", into=power_cut)
        verify_alternatives(trial.store_path, trial.allowed, verdicts=verdicts)
        verify_alternatives(os.path.join(power_cut, "store"), trial.allowed, verdicts=verdicts)
    except Exception as error:  # reported with its case by the caller
        return describe_error(error)
    return ""


def run(seed: int, limit: int = 60, only: str | None = None, enforce_known: bool = False, keep: bool = False,
        log=log) -> Failures:
    failures = Failures("ioerror.py", seed, log, known=KNOWN_ISSUES, enforce_known=enforce_known)
    with scratch_space("ioerror", keep) as scratch:
        verdicts: dict = {}  # trial stores are thrown away: identical ones are verified once
        template, model = templates(scratch, seed)
        for operation in OPERATIONS:
            cases_before = failures.cases
            for kind, errors in ERRORS.items():
                for error in errors:
                    for persistent in (False, True):
                        for nth in range(1, limit + 1):
                            case = (f"{operation} {kind} {errno.errorcode[error]} "
                                    f"{'persistent' if persistent else 'once'} n={nth}")
                            if only and only != case:
                                continue
                            failures.cases += 1
                            met, problem = run_case(scratch, template, model, seed, operation, kind, error,
                                                    persistent, nth, verdicts)
                            if problem:
                                failures.add(case, problem)
                            if not met:
                                break  # the operation completed: every N that matters was tried
            log(f"ioerror.py: {operation}: {failures.cases - cases_before} cases")
        log(f"ioerror.py: {failures.cases} cases")
    return failures


def main(argv=None) -> int:
    arguments_parser = parser(__doc__.splitlines()[0], default_count=60)
    arguments_parser.add_argument("--only", default=None, help="one case, as printed by a failure")
    arguments_parser.add_argument("--enforce-known", action="store_true", help="count KNOWN_ISSUES cases as failures")
    arguments = arguments_parser.parse_args(argv)
    failures = run(resolve_seed(arguments.seed), arguments.count, arguments.only, arguments.enforce_known,
                   arguments.keep)
    return failures.exit_code()


if __name__ == "__main__":
    sys.exit(main())
