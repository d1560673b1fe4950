"""Durable file primitives, routed through one replaceable `ops` object.

Every write, fsync, rename and unlink the engine performs goes through `fs.ops`, so that tests can swap in
`tools.testing.faultfs.FaultOps` and simulate power loss (drop unsynced data, forget renames that no
directory fsync covered) or inject ENOSPC/EIO. Directory fsyncs are explicit at every call site that needs
one: `atomic_write` does them, nothing relies on an implicit one (see REFERENCES A1).

Failpoints: `failpoint(name)` marks an instant where a crash is interesting. `MEMCTL_FAILPOINT=name:hit`
(or `arm()` in-process) makes the hit-th pass through that point kill the process with SIGKILL, or run a
callable given to `arm()`.
"""

from __future__ import annotations

import functools
import os
import signal
import sys

from engine.format import TEMP_SUFFIX


# What each operation was doing, as an error message says it: "cannot write …/wal/000001.log: File too large".
OPERATION_WORDS = {"open_new": "create", "open_append": "open", "write": "write", "fsync": "sync",
                   "rename": "rename", "unlink": "remove", "truncate": "truncate", "mkdir": "create directory",
                   "fsync_dir": "sync directory", "sync_filesystem": "sync the filesystem of"}

_open_paths: dict = {}  # descriptor → path of the files FileOps opened (descriptors are the process's)


def named_error(error: OSError, operation: str, path: str | None) -> OSError:
    """`error` naming the file (`filename`) and what was done to it (`operation`, OPERATION_WORDS' phrase of
    a FileOps method): a failed write or fsync happens on a descriptor, and Python's OSError then names no
    file. The class follows the errno (FileNotFoundError…), so callers catch what they caught before."""
    if getattr(error, "operation", None):
        return error
    named = OSError(error.errno, error.strerror or str(error), path if path is not None else error.filename)
    named.operation = OPERATION_WORDS.get(operation, operation)
    return named


def _naming_failures(method):
    """A FileOps method whose OSError names its file: its first argument, or the file of that descriptor."""
    @functools.wraps(method)
    def named(self, target, *arguments):
        try:
            return method(self, target, *arguments)
        except OSError as error:
            path = _open_paths.get(target) if isinstance(target, int) else target
            raise named_error(error, method.__name__, path) from error
    return named


class FileOps:
    """The real filesystem. Paths are str; file handles are OS file descriptors. An OSError of any operation
    names the file and the operation (`named_error`)."""

    @_naming_failures
    def open_new(self, path: str) -> int:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
        _open_paths[fd] = path
        return fd

    @_naming_failures
    def open_append(self, path: str) -> int:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
        _open_paths[fd] = path
        return fd

    @_naming_failures
    def write(self, fd: int, data) -> None:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]

    @_naming_failures
    def fsync(self, fd: int) -> None:
        # fdatasync also persists a grown file size; it skips only timestamps, which nothing reads.
        os.fdatasync(fd)

    def close(self, fd: int) -> None:
        _open_paths.pop(fd, None)
        os.close(fd)

    @_naming_failures
    def rename(self, source: str, target: str) -> None:
        os.replace(source, target)

    @_naming_failures
    def unlink(self, path: str) -> None:
        os.unlink(path)

    @_naming_failures
    def truncate(self, path: str, size: int) -> None:
        os.truncate(path, size)

    @_naming_failures
    def mkdir(self, path: str) -> None:
        os.mkdir(path)

    @_naming_failures
    def fsync_dir(self, path: str) -> None:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    @_naming_failures
    def sync_filesystem(self, path: str) -> None:
        """Make every file's data and every directory entry on the filesystem holding `path` durable: one
        syncfs(2) instead of an fsync per file and per directory (raw blobs publish thousands at once).

        Linux reports writeback errors through syncfs since 5.8, including one that happened before this
        open, unless another caller's syncfs has already consumed it; the sha256 every raw read checks is
        the backstop for that gap. Elsewhere os.sync() is used, which reports no error at all."""
        if not sys.platform.startswith("linux"):
            os.sync()
            return
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            if _libc().syncfs(fd) != 0:
                import ctypes

                error = ctypes.get_errno()
                raise OSError(error, os.strerror(error), path)
        finally:
            os.close(fd)


_libc_handle = None


def _libc():
    """The C library, loaded on first use (ctypes stays off the start-up path of read-only commands)."""
    global _libc_handle
    if _libc_handle is None:
        import ctypes

        _libc_handle = ctypes.CDLL(None, use_errno=True)
        _libc_handle.syncfs.argtypes = [ctypes.c_int]
        _libc_handle.syncfs.restype = ctypes.c_int
    return _libc_handle


ops: FileOps = FileOps()


def set_ops(new_ops: FileOps) -> FileOps:
    """Install another implementation (tests); returns the previous one so it can be restored."""
    global ops
    previous, ops = ops, new_ops
    return previous


# --- failpoints -----------------------------------------------------------------------------------------

_armed: dict[str, tuple[int, object]] = {}
_hits: dict[str, int] = {}
_environment_read = False


def _read_environment() -> None:
    global _environment_read
    _environment_read = True
    spec = os.environ.get("MEMCTL_FAILPOINT", "")
    for item in filter(None, spec.split(",")):
        name, _, hit = item.partition(":")
        _armed[name] = (int(hit or 1), "kill")


def arm(name: str, hit: int = 1, action="kill") -> None:
    """Make the hit-th pass through `name` run `action` ("kill" = SIGKILL self, or a callable)."""
    if not _environment_read:
        _read_environment()
    _armed[name] = (hit, action)
    _hits[name] = 0


def disarm_all() -> None:
    _armed.clear()
    _hits.clear()


def failpoint(name: str) -> None:
    if not _environment_read:
        _read_environment()
    if not _armed:
        return
    armed = _armed.get(name)
    if armed is None:
        return
    count = _hits.get(name, 0) + 1
    _hits[name] = count
    hit, action = armed
    if count != hit:
        return
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    else:
        action()


# --- durable helpers ------------------------------------------------------------------------------------


def fsync_dir(path: str) -> None:
    ops.fsync_dir(path)


def sync_filesystem(path: str) -> None:
    ops.sync_filesystem(path)


def ensure_dir(path: str) -> None:
    """Create `path` (and missing parents) durably: each new entry is fsynced in its parent."""
    path = os.path.abspath(path)
    if os.path.isdir(path):
        return
    parent = os.path.dirname(path)
    ensure_dir(parent)
    try:
        ops.mkdir(path)
    except FileExistsError:
        return
    failpoint("mkdir.before_dirsync")
    ops.fsync_dir(parent)


def _write_synced(path: str, data, label: str) -> None:
    if os.path.exists(path):
        ops.unlink(path)  # a temp file left by a crash
    fd = ops.open_new(path)
    try:
        ops.write(fd, data)
        failpoint(f"{label}.write.before_fsync")
        ops.fsync(fd)
    finally:
        ops.close(fd)


def atomic_write(path: str, data, label: str = "fs", temp: str | None = None) -> None:
    """Replace `path` with `data` atomically and durably: temp in the same directory (a rename across
    filesystems is not atomic), write, fsync, rename, fsync the directory. `label` names the failpoints
    (`<label>.write.before_fsync`, `<label>.before_rename`, `<label>.after_rename.before_dirsync`); `temp`,
    the temp file (default `path` + ".tmp"), ends in ".tmp" and is unique to the caller when several
    processes may replace `path` at once."""
    temp = temp or path + TEMP_SUFFIX
    _write_synced(temp, data, label)
    failpoint(f"{label}.before_rename")
    ops.rename(temp, path)
    failpoint(f"{label}.after_rename.before_dirsync")
    ops.fsync_dir(os.path.dirname(os.path.abspath(path)))


def remove(path: str) -> None:
    """Unlink if present; the caller fsyncs the directory when the removal must be durable."""
    try:
        ops.unlink(path)
    except FileNotFoundError:
        pass
