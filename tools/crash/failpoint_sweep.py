"""Failpoint sweep, whitebox (REFERENCES C #1): every named failpoint x hits 1..3, each a real SIGKILL.

    python tools/crash/failpoint_sweep.py --seed S [--count HITS] [--only [migration:|repair:|facts:]NAME:HIT]
                                          [--workload store|migration|repair|facts] [--spawn] [--limit N]

Four workloads. "store": batches of records, raw chunks, text and graph writes with flushes, compactions,
rebuilds and reopens on a fresh store. "migration": `memctl migrate` of a copy of the format-3 fixture store
(tests/fixtures/format3_store; tools.testing.migration). "repair": `memctl repair` of a copy of a store damaged
three ways (a records segment block, a WAL record with batches after it, a raw blob; tools.testing.repair).
"facts": a version switch, `memctl fact add` moving ACTIVE_OF to a new value on a store built for it
(tools.testing.fact_switch).

Failpoints are found twice: by grepping engine/ and memctl/ for `failpoint(` (literal names and f-string patterns such
as `{label}.before_rename`) and by running each workload once in-process with fs.failpoint wrapped. Every
grepped pattern must be reached by a workload. Then for each workload, failpoint and hit, a child process
runs the workload with the failpoint armed at that hit and SIGKILLs itself there (forked from this process
and armed with fs.arm, as MEMCTL_FAILPOINT=name:hit arms it; --spawn starts a fresh interpreter with the
environment variable instead: the store workload's child script, or the `memctl migrate`, `memctl repair` or
`memctl fact add` command).

Store workload: the parent verifies the store (acknowledged batches present, the batch in flight all or
nothing, check_store clean, same answers after a second open). A second child then continues on the crashed
store with the same failpoint armed (a crash during recovery or during the work that follows it), and the
store is verified again.
Migration workload: the parent requires the old store intact (every file format-3 code reads, byte for byte)
or the migrated one complete (today's format, check_store clean, the content of an uninterrupted migration). A
second child migrates again with the same failpoint armed, the store is verified again, and a last migration,
unarmed, must leave the migrated store, after which one more changes nothing.
Repair workload: the same, with the damaged store intact (every file it reads byte for byte, writers still
refused) or the repaired one (check_store clean, the content of an uninterrupted repair, writers welcome) as the
two outcomes; after the last repair, one more finds nothing to repair.
Facts workload: the chains as they were (the new claim absent) or as an uninterrupted switch leaves them, and
check_store clean, after each kill; after the last, unarmed switch, the switched chains.
"""

from __future__ import annotations

import collections
import os
import random
import re
import shutil
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crashtool import REPOSITORY, Failures, describe_error, log, parser, resolve_seed, scratch_space  # noqa: E402

from tools.testing import crashchild, fact_switch, migration, repair  # noqa: E402
from tools.testing.workload import Progress, verify_recovery  # noqa: E402

BATCHES = 60
MINIMUM_FAILPOINTS = 30
WORKLOADS = ("store", "migration", "repair", "facts")
# A case of a maintenance workload is "<workload>:NAME:HIT"; the store workload's is "NAME:HIT".
MAINTENANCE = ("migration", "repair", "facts")
_CALL = re.compile(r"""failpoint\(\s*(f?)(["'])(.+?)\2""")


def grepped_patterns() -> dict:
    """{pattern text: compiled regex} for every failpoint( call in engine/ and memctl/ (f-string fields match
    anything)."""
    patterns = {}
    for directory, _subdirectories, files in (*os.walk(REPOSITORY / "engine"), *os.walk(REPOSITORY / "memctl")):
        for name in files:
            if not name.endswith(".py") or "testing" in directory:
                continue
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                for is_format, _quote, text in _CALL.findall(handle.read()):
                    if text == "name":
                        continue
                    parts = re.split(r"\{[^}]*\}", text) if is_format else [text]
                    patterns[text] = re.compile("^" + ".+".join(map(re.escape, parts)) + "$")
    return patterns


def discover(seed: int, scratch: str) -> dict:
    """{workload: Counter of the passes through each failpoint}, from running each workload in-process."""
    store = os.path.join(scratch, "discover")
    migrated = os.path.join(scratch, "discover-migration")
    migration.copy_fixture(migrated)
    repaired = os.path.join(scratch, "discover-repair")
    repair.copy_damaged(repaired)
    switched = os.path.join(scratch, "discover-facts", "tenants", "default")
    fact_switch.build(switched)
    return {"store": _counted(lambda: crashchild.run(store, seed, 1, BATCHES, lambda line: None)),
            "migration": _counted(lambda: migration.migrate(migrated)),
            "repair": _counted(lambda: repair.repair(repaired)),
            "facts": _counted(lambda: fact_switch.switch(switched))}


def _counted(workload) -> collections.Counter:
    from engine import fs

    counts: collections.Counter = collections.Counter()
    original = fs.failpoint

    def counting(name: str) -> None:
        counts[name] += 1
        original(name)

    fs.failpoint = counting
    try:
        workload()
    finally:
        fs.failpoint = original
    return counts


def run_child(store: str, seed: int, start: int, failpoint: str, spawn: bool) -> tuple[bool, list]:
    """(killed, lines) of one child run with `failpoint` armed."""
    if spawn:
        child = crashchild.spawn(store, seed, start, BATCHES, failpoint)
        output, errors = child.communicate(timeout=120)
        returncode = child.returncode
    else:
        pid, fd = crashchild.fork(store, seed, start, BATCHES, failpoint)
        output = crashchild.read_all(fd)
        os.close(fd)
        status = os.waitpid(pid, 0)[1]
        returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        errors = b""
    lines = output.decode("utf-8", "replace").splitlines()
    if returncode not in (0, -signal.SIGKILL):
        raise RuntimeError(f"child exited {returncode}: {lines[-1:]} {errors.decode('utf-8', 'replace')[-2000:]}")
    return returncode == -signal.SIGKILL, lines


def sweep_case(scratch: str, seed: int, failpoint: str, spawn: bool) -> str:
    """Kill, verify, kill again while continuing, verify; returns '' or why it failed."""
    store = os.path.join(scratch, failpoint.replace(":", "-"))
    progress = Progress(seed)
    try:
        for round_number in (1, 2):
            killed, lines = run_child(store, seed, progress.next_number(), failpoint, spawn)
            for line in lines:
                progress.emit(line)
            if not killed:
                return "the child finished without reaching the failpoint" if round_number == 1 else ""
            try:
                progress.model = verify_recovery(store, progress.model, progress.pending, progress.pending_number)
            except Exception as error:  # reported with its case by the caller
                return f"after kill {round_number}: {describe_error(error)}"
            progress.pending = progress.pending_number = None
        return ""
    finally:
        shutil.rmtree(store, ignore_errors=True)


class Maintenance:
    """A maintenance workload: the command line it runs, its in-process function, and its fixture and verdicts
    (tools.testing.migration, tools.testing.repair or tools.testing.fact_switch)."""

    def __init__(self, arguments: tuple, module, run, copy):
        self.arguments, self.module, self.run, self.copy = arguments, module, run, copy
        self.command = " ".join(arguments[:2])


MAINTENANCE_WORKLOADS = {"migration": Maintenance(("migrate",), migration, migration.migrate, migration.copy_fixture),
                         "repair": Maintenance(("repair",), repair, repair.repair, repair.copy_damaged),
                         "facts": Maintenance(fact_switch.ARGUMENTS, fact_switch, fact_switch.switch,
                                              fact_switch.build)}


def run_maintenance_child(home: str, failpoint: str, spawn: bool, workload: Maintenance) -> bool:
    """Whether the workload's command on the store of `home` (tenant "default"), run with `failpoint` armed,
    was killed there; an error exit is an exception."""
    store = os.path.join(home, "tenants", "default")
    if spawn:
        import subprocess

        environment = dict(os.environ, PYTHONPATH=str(REPOSITORY), MEMCTL_FAILPOINT=failpoint)
        child = subprocess.run([sys.executable, "-m", "memctl", "--home", home, *workload.arguments],
                               env=environment, capture_output=True, timeout=120)
        returncode, errors = child.returncode, child.stderr
    else:
        from engine import fs

        pid = os.fork()
        if pid == 0:  # never returns into the parent's stack
            status = 0
            try:
                name, _, hit = failpoint.partition(":")
                fs.disarm_all()
                fs.arm(name, int(hit or 1))
                workload.run(store)
            except BaseException:  # noqa: BLE001  the exit status tells the parent
                status = 1
            os._exit(status)
        status = os.waitpid(pid, 0)[1]
        returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        errors = b""
    if returncode not in (0, -signal.SIGKILL):
        raise RuntimeError(f"{workload.command} exited {returncode}: {errors.decode('utf-8', 'replace')[-2000:]}")
    return returncode == -signal.SIGKILL


def maintenance_case(scratch: str, name: str, failpoint: str, spawn: bool) -> str:
    """Kill the workload `name` on its fixture, verify, kill the next run, verify, finish it; '' or why it
    failed."""
    workload = MAINTENANCE_WORKLOADS[name]
    home = os.path.join(scratch, f"{name}-" + failpoint.replace(":", "-"))
    store = os.path.join(home, "tenants", "default")
    workload.copy(store)
    try:
        for round_number in (1, 2):
            if not run_maintenance_child(home, failpoint, spawn, workload):
                if round_number == 1:
                    return f"the {workload.command} finished without reaching the failpoint"
                break
            problems = workload.module.outcome_problems(store)
            if problems:
                return f"after kill {round_number}: {'; '.join(problems[:5])}"
        workload.run(store)
        return "; ".join(workload.module.finished_problems(store)[:5])
    except Exception as error:  # reported with its case by the caller
        return describe_error(error)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def run(seed: int, hits: int = 3, only: str | None = None, spawn: bool = False, limit: int | None = None,
        keep: bool = False, log=log, workloads=WORKLOADS) -> Failures:
    failures = Failures("failpoint_sweep.py", seed, log)
    with scratch_space("failpoints", keep) as scratch:
        counts = discover(seed, scratch)
        patterns = grepped_patterns()
        reached = set().union(*counts.values())
        for text, pattern in sorted(patterns.items()):
            if not any(pattern.match(name) for name in reached):
                failures.add(f"pattern {text}", "no workload reaches this failpoint")
        log(f"failpoint_sweep.py: seed {seed}: {len(reached)} failpoints reached ({len(patterns)} call sites in "
            f"engine/ and memctl/)")
        if len(reached) < MINIMUM_FAILPOINTS:
            log(f"NOTE: {len(reached)} distinct failpoints, fewer than the {MINIMUM_FAILPOINTS} the regimen asks for")
        cases = []
        for workload in workloads:
            prefix = f"{workload}:" if workload in MAINTENANCE else ""
            log(f"  {workload}: " + ", ".join(f"{name} x{count}" for name, count in sorted(counts[workload].items())))
            for name, count in sorted(counts[workload].items()):
                cases += [f"{prefix}{name}:{hit}" for hit in range(1, min(hits, count) + 1)]
            fewer = [f"{name} x{count}" for name, count in sorted(counts[workload].items()) if count < hits]
            if fewer:
                log(f"NOTE: in the {workload} workload these pass fewer than {hits} times (hits above not run): "
                    + ", ".join(fewer))
        if only:
            cases = [only]
        elif limit is not None:
            cases = random.Random(seed).sample(cases, min(limit, len(cases)))
        for case in cases:
            workload, _, rest = case.partition(":")
            if workload in MAINTENANCE:
                problem = maintenance_case(scratch, workload, rest, spawn)
            else:
                problem = sweep_case(scratch, seed, case, spawn)
            if problem:
                failures.add(case, problem)
        failures.cases = len(cases)
        log(f"failpoint_sweep.py: {len(cases)} cases, up to {2 * len(cases)} child processes killed")
    return failures


def main(argv=None) -> int:
    arguments_parser = parser(__doc__.splitlines()[0], default_count=3)
    arguments_parser.add_argument("--only", default=None,
                                  help="one case: NAME:HIT, migration:NAME:HIT, repair:NAME:HIT or facts:NAME:HIT")
    arguments_parser.add_argument("--workload", choices=WORKLOADS, default=None,
                                  help="sweep the cases of one workload (default: all)")
    arguments_parser.add_argument("--spawn", action="store_true",
                                  help="fresh interpreters armed through MEMCTL_FAILPOINT instead of forks")
    arguments_parser.add_argument("--limit", type=int, default=None, help="run a seeded sample of this many cases")
    arguments = arguments_parser.parse_args(argv)
    failures = run(resolve_seed(arguments.seed), arguments.count, arguments.only, arguments.spawn, arguments.limit,
                   arguments.keep, workloads=(arguments.workload,) if arguments.workload else WORKLOADS)
    return failures.exit_code()


if __name__ == "__main__":
    sys.exit(main())
