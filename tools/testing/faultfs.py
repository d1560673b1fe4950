"""A fault-injecting file layer: simulated power loss and I/O errors (tests only).

`FaultOps` replaces `engine.fs.ops` (see `installed()`). It performs every operation on the real
filesystem, so the engine under test reads what it wrote, and beside it keeps a model of what would
survive a power cut, the way LevelDB's FaultInjectionTestEnv, SQLite's crash VFS and ALICE do:

- per file: the content as of its last successful fsync, plus the unsynced operations since (appends,
  truncations), in order;
- per directory: its entries as of its last directory fsync, plus the unsynced entry operations since
  (create, rename, unlink, mkdir), in order.

It can raise ENOSPC/EIO at the Nth operation of a type, once or from then on (`fail`), and stop the
workload at the Nth operation (`crash`: a SimulatedCrash, which is a BaseException so that no `except
Exception` in the engine swallows it). `materialise(variant)` then rewrites the directory tree to one
post-crash disk state:

    drop       every unsynced byte and every uncovered directory operation is lost (only what fsync made
               durable survives; a rename not covered by a directory fsync is undone, restoring the old
               file; an unlinked file comes back)
    prefix     each file keeps a random prefix of its unsynced operations (the last append cut at a random
               byte); every directory operation persisted
    zero       unsynced appends keep their length but read as zeros (size persisted, data not); every
               directory operation persisted
    scramble   each 4 KiB page of unsynced appends independently survives or reads as zeros (writeback in
               any order); every directory operation persisted
    forget     all unsynced file data survives, but every directory operation not covered by a directory
               fsync is forgotten
    combo      each file picks one of drop/prefix/zero/scramble/keep, each directory keeps a random prefix
               of its unsynced operations

After a failed fsync the pages it covered are treated as lost for good (Linux marks them clean after a
writeback error): a later successful fsync does not make them durable, so code that retries an fsync and
trusts it loses data at the next crash (PostgreSQL "fsyncgate").

Only paths under `root` are modelled; files the engine opens without `fs.ops` (the lock files) are left
as they are.
"""

from __future__ import annotations

import contextlib
import errno as errno_module
import os
import random
import shutil
from dataclasses import dataclass, field

from engine import fs

OPERATIONS = ("open_new", "open_append", "write", "fsync", "rename", "unlink", "truncate", "mkdir", "fsync_dir",
              "sync_filesystem")
VARIANTS = ("drop", "prefix", "zero", "scramble", "forget", "combo")
PAGE_SIZE = 4096


class SimulatedCrash(BaseException):
    """The simulated machine lost power: the workload stops here."""


@dataclass
class _Inode:
    is_dir: bool
    durable: bytes = b""
    current: bytearray = field(default_factory=bytearray)
    unsynced: list = field(default_factory=list)  # ("append", offset, bytes) | ("truncate", size)
    lost: list = field(default_factory=list)  # (start, end): pages a failed fsync dropped for good


@dataclass
class _Injection:
    operation: str  # one of OPERATIONS, or "any"
    nth: int
    error: int | None  # an errno, or None for a crash
    persistent: bool
    partial: bool  # a failing write first writes half of its data


class FaultOps(fs.FileOps):
    def __init__(self, root: str, seed: int = 0, real_sync: bool = False):
        self.root = os.path.abspath(root)
        # The model decides what survives, so real fsyncs only cost time unless a test wants them.
        self.real_sync = real_sync
        self.random = random.Random(seed)
        self.log: list = []  # (operation, path) of every counted operation, in order
        self.counts: dict = {name: 0 for name in OPERATIONS}
        self.crashed = False
        self.failures: list = []  # (operation, path, errno) of every injected error
        self._injections: list = []
        self._inodes: list = []
        self._current: dict = {}  # path -> inode index (files and directories under root)
        self._durable: dict = {}  # directory path -> {name: inode index} as of its last fsync
        self._pending: dict = {}  # directory path -> [(kind, name, inode or None)] since its last fsync
        self._fds: dict = {}  # fd -> inode index
        self._fd_paths: dict = {}  # fd -> path, for the log
        self._snapshot()

    # --- configuration ------------------------------------------------------------------------------------

    def fail(self, operation: str, nth: int, error: int = errno_module.EIO, persistent: bool = False,
             partial: bool = False) -> None:
        """Make the nth `operation` ("any" counts every type) raise OSError(error); with `persistent`,
        every later one of that type too."""
        self._injections.append(_Injection(operation, nth, error, persistent, partial))

    def crash(self, nth: int, operation: str = "any") -> None:
        """Stop the workload (SimulatedCrash) just before the nth `operation` would run."""
        self._injections.append(_Injection(operation, nth, None, False, False))

    @property
    def total(self) -> int:
        return len(self.log)

    # --- the model's starting point --------------------------------------------------------------------

    def _new_inode(self, is_dir: bool, content: bytes = b"") -> int:
        self._inodes.append(_Inode(is_dir, bytes(content), bytearray(content)))
        return len(self._inodes) - 1

    def _snapshot(self) -> None:
        """Everything already under root counts as durable."""
        os.makedirs(self.root, exist_ok=True)
        self._current[self.root] = self._new_inode(True)
        for directory, subdirectories, files in os.walk(self.root):
            entries = {}
            for name in subdirectories:
                entries[name] = self._current[os.path.join(directory, name)] = self._new_inode(True)
            for name in files:
                path = os.path.join(directory, name)
                with open(path, "rb") as handle:
                    entries[name] = self._current[path] = self._new_inode(False, handle.read())
            self._durable[directory] = entries

    def _inside(self, path: str) -> bool:
        return path == self.root or path.startswith(self.root + os.sep)

    def _inode_at(self, path: str) -> int | None:
        index = self._current.get(path)
        if index is None and self._inside(path) and os.path.isfile(path):
            # Created outside fs.ops (never by the engine's data paths); adopt it as durable.
            with open(path, "rb") as handle:
                index = self._current[path] = self._new_inode(False, handle.read())
            self._durable.setdefault(os.path.dirname(path), {})[os.path.basename(path)] = index
        return index

    def _entry_changed(self, kind: str, path: str, inode: int | None) -> None:
        directory = os.path.dirname(path)
        self._pending.setdefault(directory, []).append((kind, os.path.basename(path), inode))

    # --- injection --------------------------------------------------------------------------------------

    def _before(self, operation: str, path: str) -> _Injection | None:
        if self.crashed:
            raise SimulatedCrash(f"{operation} after the crash")
        self.counts[operation] += 1
        self.log.append((operation, path))
        for injection in self._injections:
            count = self.total if injection.operation == "any" else self.counts.get(injection.operation)
            if injection.operation not in ("any", operation):
                continue
            if count == injection.nth or (injection.persistent and count > injection.nth):
                if injection.error is None:
                    self.crashed = True
                    raise SimulatedCrash(f"crash before {operation} #{count} ({path})")
                return injection
        return None

    def _raise(self, injection: _Injection, operation: str, path: str):
        self.failures.append((operation, path, injection.error))
        raise fs.named_error(OSError(injection.error, f"{os.strerror(injection.error)} (injected)"), operation, path)

    # --- FileOps -------------------------------------------------------------------------------------

    def open_new(self, path: str) -> int:
        path = os.path.abspath(path)
        injection = self._before("open_new", path)
        if injection:
            self._raise(injection, "open_new", path)
        fd = super().open_new(path)
        self._fd_paths[fd] = path
        if self._inside(path):
            index = self._new_inode(False)
            self._current[path] = index
            self._entry_changed("link", path, index)
            self._fds[fd] = index
        return fd

    def open_append(self, path: str) -> int:
        path = os.path.abspath(path)
        injection = self._before("open_append", path)
        if injection:
            self._raise(injection, "open_append", path)
        fd = super().open_append(path)
        self._fd_paths[fd] = path
        index = self._inode_at(path)
        if index is not None:
            self._fds[fd] = index
        return fd

    def _adopt(self, fd: int) -> None:
        """A descriptor opened before this FaultOps was installed: find its file."""
        if fd in self._fd_paths:
            return
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            self._fd_paths[fd] = f"fd {fd}"
            return
        self._fd_paths[fd] = path
        index = self._inode_at(path)
        if index is not None:
            self._fds[fd] = index

    def write(self, fd: int, data) -> None:
        self._adopt(fd)
        index = self._fds.get(fd)
        data = bytes(data)
        path = self._fd_paths[fd]
        injection = self._before("write", path)
        if injection:
            if injection.partial and len(data) > 1:
                self._write(fd, index, data[: len(data) // 2])
            self._raise(injection, "write", path)
        self._write(fd, index, data)

    def _write(self, fd: int, index: int | None, data: bytes) -> None:
        super().write(fd, data)
        if index is not None:
            inode = self._inodes[index]
            inode.unsynced.append(("append", len(inode.current), data))
            inode.current += data

    def fsync(self, fd: int) -> None:
        self._adopt(fd)
        index = self._fds.get(fd)
        path = self._fd_paths[fd]
        injection = self._before("fsync", path)
        if injection:
            if index is not None:
                self._lose_unsynced(self._inodes[index])
            self._raise(injection, "fsync", path)
        if self.real_sync:
            super().fsync(fd)
        if index is not None:
            self._sync(self._inodes[index])

    def _lose_unsynced(self, inode: _Inode) -> None:
        for change in inode.unsynced:
            if change[0] == "append":
                inode.lost.append((change[1], change[1] + len(change[2])))

    def _sync(self, inode: _Inode) -> None:
        content = bytearray(inode.current)
        _keep_lost_pages(inode, content)
        inode.durable = bytes(content)
        inode.unsynced.clear()

    def close(self, fd: int) -> None:
        self._fds.pop(fd, None)
        self._fd_paths.pop(fd, None)
        super().close(fd)

    def rename(self, source: str, target: str) -> None:
        source, target = os.path.abspath(source), os.path.abspath(target)
        injection = self._before("rename", source)
        if injection:
            self._raise(injection, "rename", source)
        super().rename(source, target)
        index = self._current.pop(source, None)
        if index is None:
            return
        self._current[target] = index
        self._entry_changed("unlink", source, None)
        self._entry_changed("link", target, index)

    def unlink(self, path: str) -> None:
        path = os.path.abspath(path)
        injection = self._before("unlink", path)
        if injection:
            self._raise(injection, "unlink", path)
        super().unlink(path)
        if self._current.pop(path, None) is not None:
            self._entry_changed("unlink", path, None)

    def truncate(self, path: str, size: int) -> None:
        path = os.path.abspath(path)
        injection = self._before("truncate", path)
        if injection:
            self._raise(injection, "truncate", path)
        super().truncate(path, size)
        index = self._inode_at(path)
        if index is not None:
            inode = self._inodes[index]
            inode.unsynced.append(("truncate", size))
            inode.lost = [(start, min(end, size)) for start, end in inode.lost if start < size]
            del inode.current[size:]
            inode.current += bytes(size - len(inode.current))

    def mkdir(self, path: str) -> None:
        path = os.path.abspath(path)
        injection = self._before("mkdir", path)
        if injection:
            self._raise(injection, "mkdir", path)
        super().mkdir(path)
        if self._inside(path):
            index = self._new_inode(True)
            self._current[path] = index
            self._durable[path] = {}
            self._entry_changed("link", path, index)

    def fsync_dir(self, path: str) -> None:
        path = os.path.abspath(path)
        injection = self._before("fsync_dir", path)
        if injection:
            self._raise(injection, "fsync_dir", path)
        if self.real_sync:
            super().fsync_dir(path)
        if self._inside(path):
            self._durable[path] = self._entries_after(path, len(self._pending.get(path, [])))
            self._pending.pop(path, None)

    def sync_filesystem(self, path: str) -> None:
        """syncfs(2): every file's data and every directory entry become durable at once."""
        path = os.path.abspath(path)
        injection = self._before("sync_filesystem", path)
        if injection:
            for inode in self._inodes:
                self._lose_unsynced(inode)
            self._raise(injection, "sync_filesystem", path)
        if self.real_sync:
            super().sync_filesystem(path)
        for inode in self._inodes:
            if not inode.is_dir:
                self._sync(inode)
        for directory, pending in list(self._pending.items()):
            self._durable[directory] = self._entries_after(directory, len(pending))
        self._pending.clear()

    # --- power loss -------------------------------------------------------------------------------------

    def _entries_after(self, directory: str, kept: int) -> dict:
        """The entries of `directory`: its durable ones, then the first `kept` unsynced operations."""
        entries = dict(self._durable.get(directory, {}))
        for kind, name, index in self._pending.get(directory, [])[:kept]:
            if kind == "link":
                entries[name] = index
            else:
                entries.pop(name, None)
        return entries

    def _content(self, inode: _Inode, mode: str) -> bytes:
        if mode == "keep":
            changes = list(inode.unsynced)
        elif mode == "drop" or not inode.unsynced:
            return inode.durable
        elif mode == "prefix":
            changes = inode.unsynced[: self.random.randint(0, len(inode.unsynced))]
            if changes and changes[-1][0] == "append" and self.random.random() < 0.7:
                offset, data = changes[-1][1], changes[-1][2]
                changes[-1] = ("append", offset, data[: self.random.randint(0, len(data))])
        else:
            changes = list(inode.unsynced)
        content = bytearray(inode.durable)
        for change in changes:
            if change[0] == "truncate":
                del content[change[1]:]
                content += bytes(change[1] - len(content))
                continue
            offset, data = change[1], change[2]
            if mode == "zero":
                data = bytes(len(data))
            elif mode == "scramble":
                data = self._scramble(offset, data)
            content[offset: offset + len(data)] = data
        _keep_lost_pages(inode, content)
        return bytes(content)

    def _scramble(self, offset: int, data: bytes) -> bytes:
        out = bytearray(data)
        position = 0
        while position < len(data):
            page_end = min(len(data), (offset + position) // PAGE_SIZE * PAGE_SIZE + PAGE_SIZE - offset)
            if self.random.random() < 0.5:
                out[position:page_end] = bytes(page_end - position)
            position = page_end
        return bytes(out)

    def post_crash_state(self, variant: str) -> dict:
        """{path: bytes for a file, None for a directory} of everything under root after the power cut."""
        if variant not in VARIANTS:
            raise ValueError(f"unknown damage variant {variant!r}; choose from {VARIANTS}")
        state = {self.root: None}
        directories = [self.root]
        while directories:
            directory = directories.pop()
            pending = len(self._pending.get(directory, []))
            if variant in ("drop", "forget"):
                kept = 0
            elif variant == "combo":
                kept = self.random.randint(0, pending)
            else:
                kept = pending
            for name, index in sorted(self._entries_after(directory, kept).items()):
                path = os.path.join(directory, name)
                inode = self._inodes[index]
                if inode.is_dir:
                    state[path] = None
                    directories.append(path)
                else:
                    state[path] = self._content(inode, self._file_mode(variant))
        return state

    def _file_mode(self, variant: str) -> str:
        if variant == "forget":
            return "keep"
        if variant == "combo":
            return self.random.choice(("drop", "prefix", "zero", "scramble", "keep"))
        return variant

    def materialise(self, variant: str, into: str | None = None) -> dict:
        """Write a post-crash state: over root itself, or (`into`) as a fresh tree there, so that one crash
        can be examined under several damage variants. Returns the state (paths under root). Files are
        replaced by new inodes, so mappings the crashed process still holds keep their old bytes."""
        state = self.post_crash_state(variant)
        if into is not None:
            into = os.path.abspath(into)
            for path, content in sorted(state.items()):
                target = os.path.join(into, os.path.relpath(path, self.root))
                if content is None:
                    os.makedirs(target, exist_ok=True)
                else:
                    with open(target, "wb") as handle:
                        handle.write(content)
            return state
        modelled = set(self._current) | {
            os.path.join(directory, name) for directory, entries in self._durable.items() for name in entries
        }
        for directory, subdirectories, files in os.walk(self.root, topdown=True):
            for name in list(subdirectories):
                path = os.path.join(directory, name)
                if path not in state and path in modelled:
                    shutil.rmtree(path)
                    subdirectories.remove(name)
            for name in files:
                path = os.path.join(directory, name)
                if path not in state and path in modelled:
                    os.unlink(path)
        for path, content in sorted(state.items()):
            if content is None:
                os.makedirs(path, exist_ok=True)
            elif not _same_content(path, content):
                temporary = path + ".faultfs-materialise"
                with open(temporary, "wb") as handle:
                    handle.write(content)
                os.replace(temporary, path)
        return state

    def describe(self, index: int) -> str:
        """The index-th operation (1-based), for failure messages."""
        if 1 <= index <= len(self.log):
            operation, path = self.log[index - 1]
            return f"#{index} {operation} {os.path.relpath(path, self.root) if self._inside(path) else path}"
        return f"#{index} (beyond the {len(self.log)} operations)"


def _keep_lost_pages(inode: _Inode, content: bytearray) -> None:
    """Pages dropped by a failed fsync hold what the disk had before (zeros past its old end)."""
    for start, end in inode.lost:
        end = min(end, len(content))
        if start < end:
            old = inode.durable[start:end]
            content[start:end] = old + bytes(end - start - len(old))


def _same_content(path: str, content: bytes) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read() == content
    except (FileNotFoundError, IsADirectoryError):
        return False


@contextlib.contextmanager
def installed(root: str, seed: int = 0, real_sync: bool = False, ops_class=FaultOps):
    """Route engine.fs through a FaultOps (or `ops_class`) over `root` for the duration of the block."""
    fault = ops_class(root, seed, real_sync)
    previous = fs.set_ops(fault)
    try:
        yield fault
    finally:
        fs.set_ops(previous)
