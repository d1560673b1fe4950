"""Damage trials: observe what a store does with a damaged file, then put the file back (tests only).

`observe` runs the sequence a user would: open a reader and read everything (records, counters, text
search, graph traversals), `check_store`, open a writer (recovery) and read everything, open a reader and
check again (when recovery changed a file; the same bytes give the same answers). Only the first read asks
the text and graph kinds their questions (and only when `derived_answers`): their answers are a function of
the records and the segments, and every later read reads every record again over the same segments.
Each step records the answers or the exception it raised, and with an exception the answers it had served
before it, so a test can judge the whole story: detected (a typed error before any wrong answer, or a check
problem naming the file), recovered (the answers of some allowed state), or wrong (anything else: other
exception types, a hang, or answers no correct store could give).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
from dataclasses import dataclass, field

from engine.errors import CorruptionError
from engine.format import GC_LOCK_FILE, WRITER_LOCK_FILE
from tools.testing.reference import fingerprint, records_only

_LOCKS = {WRITER_LOCK_FILE, GC_LOCK_FILE}


class Hang(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: float):
    """Raise Hang in this (main) thread if the block runs longer than `seconds`."""
    def expire(_signal, _frame):
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def snapshot(path: str) -> dict:
    """{relative path: bytes} of every file under `path` except the lock files (whose content is a note)."""
    found = {}
    for directory, _subdirectories, files in os.walk(path):
        for name in files:
            if name in _LOCKS and directory == path:
                continue
            full = os.path.join(directory, name)
            with open(full, "rb") as handle:
                found[os.path.relpath(full, path)] = handle.read()
    return found


def digest(files: dict) -> dict:
    return {name: hashlib.sha256(content).hexdigest() for name, content in files.items()}


def restore(path: str, files: dict) -> None:
    """Make the tree under `path` hold exactly `files` again (lock files aside)."""
    for relative, content in snapshot(path).items():
        if relative not in files:
            os.unlink(os.path.join(path, relative))
        elif content != files[relative]:
            _write(os.path.join(path, relative), files[relative])
    for relative, content in files.items():
        if not os.path.exists(os.path.join(path, relative)):
            os.makedirs(os.path.dirname(os.path.join(path, relative)), exist_ok=True)
            _write(os.path.join(path, relative), content)


def _write(path: str, content: bytes) -> None:
    # A new inode: a segment some earlier trial mapped must never change under that mapping.
    temporary = path + ".damage-restore"
    with open(temporary, "wb") as handle:
        handle.write(content)
    os.replace(temporary, path)


def replace_file(path: str, content: bytes) -> None:
    _write(path, content)


@dataclass
class Observation:
    reader: object = None  # a fingerprint, or the exception
    check: list = field(default_factory=list)  # problems before recovery
    writer: object = None
    reader_after: object = None
    check_after: list = field(default_factory=list)
    changed_by_failed_open: list = field(default_factory=list)  # files a refused writer open modified
    served: list = field(default_factory=list)  # per failed step: the answers it gave before its error
    derived: list = field(default_factory=lambda: [True, False, False])  # per step: derived answers read

    def steps(self) -> list:
        return [self.reader, self.writer, self.reader_after]

    def errors(self) -> list:
        return [step for step in self.steps() if isinstance(step, BaseException)]

    def answers(self) -> list:
        return [step for step in self.steps() if not isinstance(step, BaseException)]

    def answered_as(self, allowed: list) -> bool:
        """Whether every step that answered gave one of the `allowed` fingerprints (compared without their
        derived answers where the step did not read them)."""
        for step, derived in zip(self.steps(), self.derived):
            if isinstance(step, BaseException):
                continue
            if step not in (allowed if derived else [records_only(state) for state in allowed]):
                return False
        return True


def observe(path: str, seconds: float = 5.0, derived_answers: bool = True) -> Observation:
    from engine.check import check_store

    observation = Observation(derived=[derived_answers, False, False])
    with deadline(seconds):
        observation.reader = _read(path, False, observation.served, derived_answers)
        observation.check = check_store(path).problems
        before = snapshot(path)
        observation.writer = _read(path, True, observation.served, False)
        after = snapshot(path)
        changed = sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))
        if isinstance(observation.writer, CorruptionError):
            observation.changed_by_failed_open = changed
        if changed:
            observation.reader_after = _read(path, False, observation.served, False)
            observation.check_after = check_store(path).problems
        else:
            # The same bytes answer the same: only what recovery changed needs reading again.
            observation.reader_after, observation.check_after = observation.reader, observation.check
            observation.derived[2] = observation.derived[0]
    return observation


def _read(path: str, writable: bool, served: list, derived_answers: bool):
    """A fingerprint, or the exception that cut it short (what it had served goes to `served`)."""
    from engine.store import Store

    try:
        store = Store.open(path, writable=writable, holder="damage trial")
    except Hang:
        raise
    except Exception as error:  # the verdict belongs to the caller
        return error
    answers: dict = {}
    try:
        return fingerprint(store, answers, derived_answers)
    except Hang:
        raise
    except Exception as error:
        served.append(answers)
        return error
    finally:
        store.close()
