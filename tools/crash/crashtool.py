"""Shared by the crash-injection scripts: imports from the repository tree, scratch space, reporting."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))


@contextlib.contextmanager
def scratch_space(prefix: str, keep: bool):
    """A fresh directory, on tmpfs when there is one: the scripts model durability themselves or only kill
    processes, so a real disk's fsync latency would only slow them down. Removed afterwards unless `keep`."""
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    path = tempfile.mkdtemp(prefix=f"memctl-{prefix}-", dir=base)
    try:
        yield path
    finally:
        if not keep:
            shutil.rmtree(path, ignore_errors=True)


def try_damage(failures, case: str, store: str, pristine: dict, path: str, damaged: bytes, verdict) -> None:
    """Put `damaged` at `path`, record the problem `verdict()` names (a hang or a harness error counts as one),
    then give the store its `pristine` files back (tools.testing.damage.snapshot)."""
    from tools.testing import damage

    damage.replace_file(path, damaged)
    try:
        problem = verdict()
    except Exception as error:  # a hang or a harness error: reported like any failure
        problem = describe_error(error)
    damage.restore(store, pristine)
    if problem:
        failures.add(case, problem)


def describe_error(error: BaseException) -> str:
    """`Type: message (at file:line)` of the innermost frame, so a failure names where it was raised."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" (at {os.path.relpath(frames[-1].filename, REPOSITORY)}:{frames[-1].lineno})" if frames else ""
    return f"{error.__class__.__name__}: {error}{where}"


def log(message: str) -> None:
    print(message, flush=True)


def parser(description: str, default_count: int) -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(description=description)
    result.add_argument("--seed", type=int, default=None, help="random seed (printed; default: random)")
    result.add_argument("--count", type=int, default=default_count, help="how many cases to run")
    result.add_argument("--keep", action="store_true", help="keep the scratch directory for inspection")
    return result


def resolve_seed(seed: int | None) -> int:
    if seed is None:
        seed = int.from_bytes(os.urandom(4), "little")
    return seed


class Failures:
    """Failures with a replay command each; `exit_code()` prints the summary and is 1 when there were any."""

    def __init__(self, script: str, seed: int, log=print, replay_by_case: bool = True, known: dict | None = None,
                 enforce_known: bool = False):
        """`known`: {case prefix: engine issue reported and not fixed yet}; matching cases print KNOWN instead
        of FAIL unless `enforce_known` (the strict xfail tests set it, so that a fix is noticed)."""
        self.script = script
        self.replay_by_case = replay_by_case
        self.known = {} if enforce_known else dict(known or {})
        self.known_seen: list[str] = []
        self.seed = seed
        self.log = log
        self.items: list[str] = []
        self.cases = 0

    def add(self, case: str, message: str) -> None:
        message = message if len(message) < 1500 else message[:1500] + " …"
        issue = next((text for prefix, text in self.known.items() if case.startswith(prefix)), None)
        if issue is not None:
            self.known_seen.append(case)
            self.log(f"KNOWN {case}: {issue}")
            return
        self.items.append(f"{case}: {message}")
        only = f" --only '{case}'" if self.replay_by_case else ""
        self.log(f"FAIL {case}: {message}\n  replay: python tools/crash/{self.script} --seed {self.seed}{only}")

    def __bool__(self) -> bool:
        return bool(self.items)

    def summary(self) -> str:
        known = f", {len(self.known_seen)} known engine issue case(s)" if self.known_seen else ""
        return f"{self.script}: seed {self.seed}: {len(self.items)} failure(s) in {self.cases} case(s){known}"

    def exit_code(self) -> int:
        self.log(self.summary())
        return 1 if self.items else 0
