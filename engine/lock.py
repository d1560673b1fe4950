"""Cross-process locks on dedicated files (never on data files), with flock(2).

flock belongs to the open file description, so a writer killed with SIGKILL frees its lock: no stale lock
files to clean up. Local filesystems only (flock over NFS is emulated and not trusted here).

WRITER_LOCK ("LOCK"): exclusive, one writer per store. A second writer retries until `wait` seconds pass,
then raises StoreBusy naming the holder, which the holder wrote into the file ("pid N (memctl job …)").

GC_LOCK ("LOCK.gc"): readers hold it shared while they resolve CURRENT → MANIFEST and open its files; the
writer deletes obsolete files only while holding it exclusively, and skips deletion (for the next writer to
redo) when a reader is opening. Once open, a reader's mmaps and fds keep unlinked files readable.
"""

from __future__ import annotations

import fcntl
import os
import time

from engine.errors import StoreBusy
from engine.format import GC_LOCK_FILE, WRITER_LOCK_FILE


class FileLock:
    def __init__(self, path: str):
        self.path = path
        self._fd: int | None = None

    def _open(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        return self._fd

    def _open_for_reading(self) -> int | None:
        """A read-only descriptor suffices for a shared flock; None when the store is read-only media without
        the lock file (then no writer can run there either)."""
        try:
            return self._open()
        except (PermissionError, OSError):
            try:
                self._fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError:
                return None
            return self._fd

    def try_acquire(self, exclusive: bool) -> bool:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        try:
            fcntl.flock(self._open(), mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def acquire_shared(self) -> None:
        fd = self._open_for_reading()
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_SH)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = None


class WriterLock(FileLock):
    def __init__(self, directory: str):
        super().__init__(os.path.join(directory, WRITER_LOCK_FILE))

    def acquire(self, wait: float, holder: str) -> None:
        deadline = time.monotonic() + max(wait, 0.0)
        delay = 0.005
        while not self.try_acquire(exclusive=True):
            if time.monotonic() >= deadline:
                raise StoreBusy(self.path, self._read_holder())
            time.sleep(min(delay, max(deadline - time.monotonic(), 0.0)))
            delay = min(delay * 2, 0.25)
        self._write_note(f"pid {os.getpid()} ({holder})\n".encode("utf-8", "replace"))

    def _write_note(self, note: bytes) -> None:
        """Name the holder for the busy message of the next writer. Informational only (no fsync), and written
        only whole: over the old note first, then cut to its length (which needs no space), so a full disk or
        a file size limit leaves the previous note as it was instead of an empty file; the writer then fails
        at its first real write, whose error names the file."""
        try:
            if os.pwrite(self._fd, note, 0) == len(note):
                os.ftruncate(self._fd, len(note))
        except OSError:
            pass

    def _read_holder(self) -> str:
        try:
            with open(self.path, "rb") as handle:
                text = handle.read(512).decode("utf-8", "replace").strip()
        except OSError:
            text = ""
        return text or "another process"


class GcLock(FileLock):
    def __init__(self, directory: str):
        super().__init__(os.path.join(directory, GC_LOCK_FILE))
