"""Simulated power loss (REFERENCES C #3): crash a workload at N points, damage the disk, verify recovery.

    python tools/crash/power_loss.py --seed S --count N [--variants drop,prefix,...] [--draws D] [--double]

A workload of batches with automatic and explicit flushes, compactions and reopens runs in-process over
tools.testing.faultfs. A dry run lists its file operations; then for each of `count` crash points (half
spread over all operations, half just before an fsync, directory fsync or rename) it reruns the workload,
stops it just before that operation, and for each damage variant writes a post-crash disk (unsynced data
dropped, cut to a prefix, zeroed, pages scrambled, directory operations forgotten, or a mix) and requires:
every acknowledged batch present, the batch in flight all or nothing, nothing else, check_store without
problems before and after recovery, the same answers from a second open. With --double, every other crash
point also crashes the recovery itself once, at a random operation, before the final verification.
"""

from __future__ import annotations

import os
import random
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crashtool import Failures, describe_error, log, parser, resolve_seed, scratch_space  # noqa: E402

from tools.testing import crashchild, faultfs  # noqa: E402
from tools.testing.workload import Progress, verify_recovery  # noqa: E402

STORE = "store"
FLUSH_BYTES = 12 << 10
RANDOM_VARIANTS = ("prefix", "scramble", "combo")


def run_workload(root: str, seed: int, batches: int, crash_at: int | None, ops_class=faultfs.FaultOps):
    """Run the workload over a FaultOps rooted at `root`; returns (fault, progress)."""
    progress = Progress(seed)
    with faultfs.installed(root, seed=seed + (crash_at or 0), ops_class=ops_class) as fault:
        if crash_at is not None:
            fault.crash(crash_at)
        try:
            crashchild.run(os.path.join(root, STORE), seed, 1, batches, progress.emit, FLUSH_BYTES)
        except faultfs.SimulatedCrash:
            pass
    return fault, progress


def crash_recovery(directory: str, seed: int, scratch: str) -> str:
    """Crash the recovery of the store in `directory` at a random operation; returns the damaged copy."""
    from engine.store import Store

    dry = os.path.join(scratch, "recovery-dry")
    shutil.copytree(directory, dry)
    with faultfs.installed(dry) as dry_fault:
        Store.open(os.path.join(dry, STORE), writable=True, holder="recovery").close()
    if dry_fault.total == 0:
        return directory
    target = os.path.join(scratch, "recovery-crash")
    shutil.copytree(directory, target)
    with faultfs.installed(target, seed=seed) as fault:
        fault.crash(random.Random(seed).randint(1, dry_fault.total))
        try:
            Store.open(os.path.join(target, STORE), writable=True, holder="recovery").close()
        except faultfs.SimulatedCrash:
            pass
    damaged = os.path.join(scratch, "recovery-damaged")
    fault.materialise("combo", into=damaged)
    return damaged


def crash_points(log: list, count: int, rng: random.Random) -> list[int]:
    """Half spread evenly over every operation, half just before a sync or rename (where unsynced data and
    uncovered directory entries pile up)."""
    total = len(log)
    if total <= count:
        return list(range(1, total + 1))
    barriers = [index for index, (operation, _path) in enumerate(log, start=1)
                if operation in ("fsync", "fsync_dir", "rename")]
    chosen = set(rng.sample(barriers, min(len(barriers), count // 2)))
    step = total / (count - len(chosen))
    chosen |= {min(total, int(index * step) + 1 + rng.randrange(max(1, int(step))))
               for index in range(count - len(chosen))}
    return sorted(chosen)


def run(seed: int, count: int, variants=faultfs.VARIANTS, batches: int = 40, draws: int = 1,
        double: bool = False, only: str | None = None, keep: bool = False, ops_class=faultfs.FaultOps,
        log=log) -> Failures:
    failures = Failures("power_loss.py", seed, log)
    with scratch_space("power-loss", keep) as scratch:
        verdicts: dict = {}  # damaged disks are thrown away: identical ones are verified once
        fault, _progress = run_workload(os.path.join(scratch, "dry"), seed, batches, None, ops_class)
        points = crash_points(fault.log, count, random.Random(seed))
        log(f"power_loss.py: seed {seed}: {fault.total} file operations, {len(points)} crash points x "
            f"{len(variants)} variants")
        cases = 0
        for point in points:
            root = os.path.join(scratch, f"run-{point}")
            fault, progress = run_workload(root, seed, batches, point, ops_class)
            for variant in variants:
                for draw in range(draws if variant in RANDOM_VARIANTS else 1):
                    case = f"point={point} variant={variant} draw={draw}"
                    if only and only != case:
                        continue
                    cases += 1
                    damaged = os.path.join(scratch, f"run-{point}-{variant}-{draw}")
                    fault.materialise(variant, into=damaged)
                    try:
                        if double and point % 2 == 0:
                            damaged = crash_recovery(damaged, seed + point + draw, damaged + "-recovery")
                        verify_recovery(os.path.join(damaged, STORE), progress.model, progress.pending,
                                        progress.pending_number, verdicts=verdicts)
                    except Exception as error:  # reported with its case; the sweep goes on
                        failures.add(case, f"crash before {fault.describe(point)}: " + describe_error(error))
            shutil.rmtree(root, ignore_errors=True)
            for name in os.listdir(scratch):
                if name.startswith(f"run-{point}-"):
                    shutil.rmtree(os.path.join(scratch, name), ignore_errors=True)
        failures.cases = cases
        log(f"power_loss.py: {cases} damaged disks verified")
    return failures


def main(argv=None) -> int:
    arguments_parser = parser(__doc__.splitlines()[0], default_count=60)
    arguments_parser.add_argument("--variants", default=",".join(faultfs.VARIANTS))
    arguments_parser.add_argument("--batches", type=int, default=40)
    arguments_parser.add_argument("--draws", type=int, default=1, help="damage draws per random variant")
    arguments_parser.add_argument("--double", action="store_true", help="also crash during recovery")
    arguments_parser.add_argument("--only", default=None, help="one case, as printed by a failure")
    arguments = arguments_parser.parse_args(argv)
    failures = run(resolve_seed(arguments.seed), arguments.count, arguments.variants.split(","), arguments.batches,
                   arguments.draws, arguments.double, arguments.only, arguments.keep)
    return failures.exit_code()


if __name__ == "__main__":
    sys.exit(main())
