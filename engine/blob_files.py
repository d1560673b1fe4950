"""Raw blob files on disk: writing a batch's new files (and taking them away again if the batch fails), the
zstd frames they hold, and the directory hint that keeps file creation cheap.

Durability is the batch's business (engine.raw.writer.RawWriter.publish: one sync_filesystem before the commit,
or for a few files an fsync of each file and of the directories holding their names, which this module makes).
"""

from __future__ import annotations

import os
import sys

import zstandard

from engine import fs
from engine.format import RAW_ZSTD_LEVEL, TEMP_SUFFIX

FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_TOPDIR_FL = 0x80086601, 0x40086602, 0x00020000  # linux/fs.h


def mark_top_directory(path: str) -> None:
    """Ask ext2/3/4 to spread the subdirectories of `path` over the filesystem's block groups (the "top of
    directory hierarchies" attribute, FS_TOPDIR_FL, `chattr +T`) instead of keeping them in the group of
    `path`, where the store's other directories and the files of other programs live: a new inode is taken in
    its directory's group, and on an ext4 without a journal every allocation there first steps over each inode
    freed in the last minutes (recently_deleted()), which made a blob file in a busy group cost six to ten times
    more kernel time. A hint only: it changes no byte; other filesystems and systems refuse it, and it stays
    unset."""
    if not sys.platform.startswith("linux"):
        return
    import fcntl
    import struct

    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        flags = struct.unpack("i", fcntl.ioctl(fd, FS_IOC_GETFLAGS, bytes(4)))[0]
        if not flags & FS_TOPDIR_FL:
            fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("i", flags | FS_TOPDIR_FL))
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_file(path: str, data: bytes, synced: bool = False) -> None:
    """Write a new file (a file a crash left under the name, which no record names, is replaced); `synced`:
    fsync its data, else its durability comes from the batch's one sync_filesystem."""
    try:
        handle = fs.ops.open_new(path)
    except FileExistsError:
        fs.remove(path)
        handle = fs.ops.open_new(path)
    try:
        fs.ops.write(handle, data)
        if synced:
            fs.ops.fsync(handle)
    finally:
        fs.ops.close(handle)


def compress_all(datas: list[bytes]) -> list[bytes]:
    """zstd frames of `datas`, made by one call into zstd (multi_compress_to_buffer), which runs without the GIL:
    on a thread of its own (engine.background), it overlaps the Python work of the caller's thread. A call per
    blob would not: each would wait for the GIL, which a busy thread hands over only once a switch interval.
    While it runs, the caller should not compress: each compression lets go of the GIL and takes it back, and
    this thread, waiting to take it, starts its interval over each time (engine.raw compresses its turn rows
    together, after the puts, for that reason).
    The frames are those ZstdCompressor.compress gives at the same level."""
    compressor = zstandard.ZstdCompressor(level=RAW_ZSTD_LEVEL)
    return [frame.tobytes() for frame in compressor.multi_compress_to_buffer(datas, threads=1)]


class BlobFileWriter:
    """Writes a batch's blob files, with the directories they need, and remembers what it created so that a
    failed batch can take it away again.

    A new blob is written under its final name at once (no temp file, no rename): until the batch commits no
    record names it, so a crash can leave it partial only as an orphan, which nothing reads and gc deletes.
    `replace` writes a temp file and renames it over the name instead, for a path a committed record names.

    Files are written by the caller's thread: a thread writing them beside Python work (record encoding) waited
    for the GIL between every two system calls."""

    def __init__(self, root: str):
        self._root = root  # the raw directory: its subdirectories are spread (see mark_top_directory)
        self._directories: set[str] = set()  # known to exist
        self._created_directories: list[str] = []
        self._created_files: list[str] = []
        self._temp_files: list[str] = []

    def write(self, path: str, data: bytes, replace: bool = False, synced: bool = False) -> None:
        """synced: fsync the file's data now (sync_entries then makes its name durable)."""
        self.ensure_directory(os.path.dirname(path))
        if replace:
            temp = path + TEMP_SUFFIX
            self._temp_files.append(temp)
            _write_file(temp, data, synced)
            fs.ops.rename(temp, path)
        else:
            self._created_files.append(path)
            _write_file(path, data, synced)

    def sync_entries(self, paths) -> None:
        """Make durable the names of the files `paths` (written synced) and of the directories this writer
        created: an fsync of each directory whose entries changed. For a few files this costs a few fsyncs,
        where a sync_filesystem costs whatever the whole filesystem holds unwritten, other programs' files
        included."""
        directories = {os.path.dirname(path) for path in paths}
        directories.update(os.path.dirname(directory) for directory in self._created_directories)
        for directory in sorted(directories, key=len, reverse=True):
            fs.ops.fsync_dir(directory)

    def ensure_directory(self, directory: str) -> None:
        """Create a missing directory and its missing parents, without an fsync each: the batch's
        sync_filesystem makes them durable."""
        if directory in self._directories:
            return
        if os.path.dirname(directory) == self._root:
            self.ensure_directory(self._root)  # marked before a year directory is made in it
        try:
            fs.ops.mkdir(directory)
        except FileExistsError:
            pass
        except FileNotFoundError:
            self.ensure_directory(os.path.dirname(directory))
            fs.ops.mkdir(directory)
            self._created_directories.append(directory)
        else:
            self._created_directories.append(directory)
        if directory == self._root:
            mark_top_directory(directory)  # also in a store whose raw directory was made before this attribute
        self._directories.add(directory)

    def discard(self, keep_blobs: bool) -> None:
        paths = self._temp_files if keep_blobs else self._temp_files + self._created_files
        for path in paths:
            try:
                fs.remove(path)
            except OSError:
                pass
        if not keep_blobs:
            for directory in reversed(self._created_directories):
                try:
                    os.rmdir(directory)
                except OSError:
                    pass  # not empty: holds what another batch wrote since, or a file that would not go
