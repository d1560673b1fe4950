"""Random kill -9, blackbox (REFERENCES C #2): kill a writing child at random instants, verify each time.

    python tools/crash/kill9.py --seed S --count KILLS [--min-delay 0.002] [--max-delay 0.2] [--spawn]

One store lives through all the kills. Each round starts a child that opens the store (recovering from the
last kill), then commits batches with flushes, compactions and reopens mixed in, printing `ACK n` only
after commit returned. The parent SIGKILLs it after a uniform random delay (seeded; the delay and the last
lines are printed on failure), then requires: every acknowledged batch present, the one in flight all or
nothing, nothing un-issued, check_store without problems before and after recovery, identical answers after
a second open. The next child continues from the recovered state, so kills also land inside recovery.

Children are forked from this process (the engine is already imported, so a round costs milliseconds, not
an interpreter start); --spawn runs `python -m tools.testing.crashchild` instead.
"""

from __future__ import annotations

import os
import random
import select
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crashtool import Failures, describe_error, log, parser, resolve_seed, scratch_space  # noqa: E402

from tools.testing import crashchild, derived  # noqa: E402
from tools.testing.workload import Progress, verify_recovery  # noqa: E402

CHILD_BATCHES = 100_000  # more than any child lives to write


def read_until(fd: int, deadline: float) -> bytes:
    """Everything the child writes before `deadline` (or until it closes the pipe)."""
    chunks = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return b"".join(chunks)
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def one_round(store: str, seed: int, progress: Progress, delay: float, spawn: bool) -> list[str]:
    """Run one child for `delay` seconds, SIGKILL it, return the lines it wrote."""
    start = progress.next_number()
    if spawn:
        child = crashchild.spawn(store, seed, start, CHILD_BATCHES)
        pid, fd = child.pid, child.stdout.fileno()
    else:
        pid, fd = crashchild.fork(store, seed, start, CHILD_BATCHES)
    output = read_until(fd, time.monotonic() + delay)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    output += crashchild.read_all(fd)
    if spawn:
        child.communicate()
    else:
        os.waitpid(pid, 0)
        os.close(fd)
    return output.decode("utf-8", "replace").splitlines()


def run(seed: int, count: int, min_delay: float = 0.002, max_delay: float = 0.2, spawn: bool = False,
        keep: bool = False, log=log) -> Failures:
    failures = Failures("kill9.py", seed, log, replay_by_case=False)
    rng = random.Random(seed)
    with scratch_space("kill9", keep) as scratch:
        store = os.path.join(scratch, "store")
        progress = Progress(seed)
        derived.warm_up()  # forked children inherit jieba's dictionary instead of dying while they load it
        log(f"kill9.py: seed {seed}: {count} kills, delays {min_delay * 1000:.0f}-{max_delay * 1000:.0f} ms")
        for kill in range(1, count + 1):
            delay = rng.uniform(min_delay, max_delay)
            lines = one_round(store, seed, progress, delay, spawn)
            errors = [line for line in lines if line.startswith("ERROR")]
            try:
                if errors:
                    raise RuntimeError(f"the child failed on its own: {errors[0]}")
                for line in lines:
                    progress.emit(line)
                progress.model = verify_recovery(store, progress.model, progress.pending, progress.pending_number)
            except Exception as error:  # reported with the kill's number; the store cannot be trusted after it
                failures.add(f"kill={kill}", f"killed after {delay * 1000:.1f} ms, last lines {lines[-3:]}: "
                                             + describe_error(error))
                break
            finally:
                failures.cases = kill
            progress.pending = progress.pending_number = None
        log(f"kill9.py: {failures.cases} kills, {len(progress.model.applied)} batches acknowledged and verified")
    return failures


def main(argv=None) -> int:
    arguments_parser = parser(__doc__.splitlines()[0], default_count=200)
    arguments_parser.add_argument("--min-delay", type=float, default=0.002, help="seconds")
    arguments_parser.add_argument("--max-delay", type=float, default=0.2, help="seconds")
    arguments_parser.add_argument("--spawn", action="store_true", help="fresh interpreters instead of fork")
    arguments = arguments_parser.parse_args(argv)
    failures = run(resolve_seed(arguments.seed), arguments.count, arguments.min_delay, arguments.max_delay,
                   arguments.spawn, arguments.keep)
    return failures.exit_code()


if __name__ == "__main__":
    sys.exit(main())
