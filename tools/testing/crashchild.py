"""The process a crash test kills: runs a deterministic workload and reports progress line by line.

    python -m tools.testing.crashchild STORE --seed S --start N --count K [--flush-bytes B]

Prints `OPEN` once the store is open, `BEGIN n` before batch n is committed and `ACK n` only after the
commit returned (its WAL fsync is done, or the flush that committed it), `FLUSH`/`MERGE`/`COMPACT`/`REBUILD`/
`REOPEN` before those steps, and `DONE` at the end. A parent reads the lines and kills the process (or a failpoint from
MEMCTL_FAILPOINT kills it).
"""

from __future__ import annotations

import argparse
import os
import sys

from tools.testing.workload import apply_to_store, batch_operations, schedule

CHILD_FLUSH_BYTES = 24 << 10  # small, so automatic flushes happen inside commits too


def run(path: str, seed: int, start: int, count: int, emit, flush_bytes: int = CHILD_FLUSH_BYTES) -> None:
    from engine.store import Store

    def open_store():
        return Store.open(path, writable=True, holder="crash child", flush_bytes=flush_bytes)

    store = open_store()
    try:
        emit("OPEN")
        for step in schedule(seed, start, count):
            if step[0] == "batch":
                emit(f"BEGIN {step[1]}")
                apply_to_store(store, batch_operations(seed, step[1]), joined=step[1] % 3 == 1)
                emit(f"ACK {step[1]}")
            elif step[0] == "flush":
                emit("FLUSH")
                store.flush()
            elif step[0] == "merge_tiers":
                emit("MERGE")
                store.merge_tiers(step[1])
            elif step[0] == "compact":
                emit("COMPACT")
                store.compact()
            elif step[0] == "rebuild":
                emit("REBUILD")
                store.rebuild()
            else:
                emit("REOPEN")
                store.close()
                _leave_torn_tail(path)
                store = open_store()
    finally:
        # Only an in-process simulated crash gets here with an error: it must free the lock for the verifier.
        store.close()
    emit("DONE")


def _leave_torn_tail(path: str) -> None:
    """What a crash in the middle of an append leaves: the first bytes of a record header at the WAL's end,
    so that the reopen exercises recovery's truncation (and its failpoints)."""
    wal_dir = os.path.join(path, "wal")
    newest = max(name for name in os.listdir(wal_dir) if name.endswith(".log"))
    with open(os.path.join(wal_dir, newest), "ab") as handle:
        handle.write(b"\x01\x02\x03")


def fork(path: str, seed: int, start: int, count: int, failpoint: str | None = None) -> tuple[int, int]:
    """Run the workload in a forked child (the engine is already imported: no interpreter start-up).
    `failpoint` "name:hit" is armed in the child as MEMCTL_FAILPOINT would arm it. Returns (pid, read end of
    the child's line pipe); the child exits 0 after DONE, 1 after writing `ERROR …`, or dies by SIGKILL."""
    from engine import fs

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns into the parent's stack (no test teardown, no atexit handlers)
        status = 0
        try:
            os.close(read_end)
            if failpoint:
                name, _, hit = failpoint.partition(":")
                fs.disarm_all()
                fs.arm(name, int(hit or 1))
            run(path, seed, start, count, line_writer(write_end))
        except BaseException as error:  # noqa: BLE001  reported to the parent through the pipe
            os.write(write_end, f"ERROR {error.__class__.__name__}: {error}\n".encode("utf-8", "replace"))
            status = 1
        os._exit(status)
    os.close(write_end)
    return pid, read_end


def spawn(path: str, seed: int, start: int, count: int, failpoint: str | None = None):
    """Run the workload in a fresh interpreter (`failpoint` through MEMCTL_FAILPOINT); returns the Popen."""
    import subprocess

    repository = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    environment = dict(os.environ, PYTHONPATH=repository)
    environment.pop("MEMCTL_FAILPOINT", None)
    if failpoint:
        environment["MEMCTL_FAILPOINT"] = failpoint
    return subprocess.Popen(
        [sys.executable, "-m", "tools.testing.crashchild", path, "--seed", str(seed), "--start", str(start),
         "--count", str(count)],
        cwd=repository, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def line_writer(fd: int):
    def emit(line: str) -> None:
        os.write(fd, (line + "\n").encode("ascii"))
    return emit


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--start", type=int, default=1)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--flush-bytes", type=int, default=CHILD_FLUSH_BYTES)
    arguments = parser.parse_args(argv)
    run(arguments.store, arguments.seed, arguments.start, arguments.count, line_writer(sys.stdout.fileno()),
        arguments.flush_bytes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
