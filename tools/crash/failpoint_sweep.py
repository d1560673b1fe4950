"""Failpoint sweep, whitebox (REFERENCES C #1): every named failpoint x hits 1..3, each a real SIGKILL.

    python tools/crash/failpoint_sweep.py --seed S [--count HITS] [--only NAME:HIT] [--jobs J]

Failpoints are found twice: by grepping engine/ for `failpoint(` (literal names and f-string patterns such
as `{label}.before_rename`) and by running the workload once in-process with fs.failpoint wrapped. Every
grepped pattern must be reached by the workload. Then for each failpoint and hit, a child process runs the
workload on a fresh store with the failpoint armed at that hit and SIGKILLs itself there (forked from this
process and armed with fs.arm, as MEMCTL_FAILPOINT=name:hit arms it; --spawn starts a fresh interpreter with
the environment variable instead); the parent verifies the store (acknowledged batches present, the batch in flight
all or nothing, check_store clean, same answers after a second open). A second child then continues on the
crashed store with the same failpoint armed (a crash during recovery or during the work that follows it),
and the store is verified again.
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

from tools.testing import crashchild  # noqa: E402
from tools.testing.workload import Progress, verify_recovery  # noqa: E402

BATCHES = 60
MINIMUM_FAILPOINTS = 30
_CALL = re.compile(r"""failpoint\(\s*(f?)(["'])(.+?)\2""")


def grepped_patterns() -> dict:
    """{pattern text: compiled regex} for every failpoint( call in engine/ (f-string fields match anything)."""
    patterns = {}
    for directory, _subdirectories, files in os.walk(REPOSITORY / "engine"):
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


def discover(seed: int, scratch: str) -> collections.Counter:
    """Run the workload in-process and count the passes through each failpoint."""
    from engine import fs

    counts: collections.Counter = collections.Counter()
    original = fs.failpoint

    def counting(name: str) -> None:
        counts[name] += 1
        original(name)

    fs.failpoint = counting
    try:
        crashchild.run(os.path.join(scratch, "discover"), seed, 1, BATCHES, lambda line: None)
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


def run(seed: int, hits: int = 3, only: str | None = None, spawn: bool = False, limit: int | None = None,
        keep: bool = False, log=log) -> Failures:
    failures = Failures("failpoint_sweep.py", seed, log)
    with scratch_space("failpoints", keep) as scratch:
        counts = discover(seed, scratch)
        patterns = grepped_patterns()
        for text, pattern in sorted(patterns.items()):
            if not any(pattern.match(name) for name in counts):
                failures.add(f"pattern {text}", "the workload never reaches this failpoint")
        names = sorted(counts)
        log(f"failpoint_sweep.py: seed {seed}: {len(names)} failpoints reached ({len(patterns)} call sites in "
            f"engine/): " + ", ".join(f"{name} x{counts[name]}" for name in names))
        if len(names) < MINIMUM_FAILPOINTS:
            log(f"NOTE: {len(names)} distinct failpoints, fewer than the {MINIMUM_FAILPOINTS} the regimen asks for")
        cases = []
        for name in names:
            for hit in range(1, hits + 1):
                if hit <= counts[name]:
                    cases.append(f"{name}:{hit}")
                else:
                    log(f"NOTE: {name} passes only {counts[name]} time(s) in the workload; hit {hit} not run")
        if only:
            cases = [only]
        elif limit is not None:
            cases = random.Random(seed).sample(cases, min(limit, len(cases)))
        for case in cases:
            problem = sweep_case(scratch, seed, case, spawn)
            if problem:
                failures.add(case, problem)
        failures.cases = len(cases)
        log(f"failpoint_sweep.py: {len(cases)} cases, up to {2 * len(cases)} child processes killed")
    return failures


def main(argv=None) -> int:
    arguments_parser = parser(__doc__.splitlines()[0], default_count=3)
    arguments_parser.add_argument("--only", default=None, help="one NAME:HIT")
    arguments_parser.add_argument("--spawn", action="store_true",
                                  help="fresh interpreters armed through MEMCTL_FAILPOINT instead of forks")
    arguments_parser.add_argument("--limit", type=int, default=None, help="run a seeded sample of this many cases")
    arguments = arguments_parser.parse_args(argv)
    failures = run(resolve_seed(arguments.seed), arguments.count, arguments.only, arguments.spawn, arguments.limit,
                   arguments.keep)
    return failures.exit_code()


if __name__ == "__main__":
    sys.exit(main())
