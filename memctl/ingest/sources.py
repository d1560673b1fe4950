"""Turning `--raw PATH` / `--raw -` / `--text` arguments into Sources, refusing oversized files unread.

A PATH is a file, a directory (read recursively, hidden entries skipped, in name order) or a glob pattern
(`**` allowed). A file's name, as given or found under its directory, labels it in errors and is the conv_id of
formats that carry none.
"""

from __future__ import annotations

import glob
import os
from typing import BinaryIO

from engine.errors import InputError
from memctl.ingest.decode import DEFAULT_SIZE_LIMIT, check_size
from memctl.ingest.model import Source
from memctl.standard_input import STDIN_ARGUMENT, binary_stdin

STDIN_NAME = "stdin"
TEXT_NAME = "text"


def collect(paths=(), texts=(), size_limit: int = DEFAULT_SIZE_LIMIT, stdin: BinaryIO | None = None) -> list[Source]:
    sources = []
    for path in paths:
        if path == STDIN_ARGUMENT:
            sources.append(read_stream(stdin or binary_stdin(), STDIN_NAME, size_limit))
        else:
            sources.extend(read_file(file, size_limit) for file in expand(path))
    for index, text in enumerate(texts):
        name = TEXT_NAME if len(texts) == 1 else f"{TEXT_NAME}{index + 1}"
        sources.append(Source(name, text.encode("utf-8", errors="surrogateescape")))
    if not sources:
        raise InputError("nothing to ingest: pass --raw PATH (a file, directory, glob or -) or --text TEXT")
    return sources


def expand(path: str) -> list[str]:
    if os.path.isdir(path):
        files = sorted(_walk(path))
        if not files:
            raise InputError("directory holds no files", where=path)
        return files
    if os.path.exists(path):
        return [path]
    if glob.has_magic(path):
        files = sorted(file for file in glob.glob(path, recursive=True) if os.path.isfile(file))
        if not files:
            raise InputError("no file matches this pattern", where=path)
        return files
    raise InputError("no such file or directory", where=path)


def read_file(path: str, size_limit: int = DEFAULT_SIZE_LIMIT) -> Source:
    try:
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            check_size(size, path, size_limit)
            return read_stream(stream, path, size_limit, size)
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", where=path) from None


def read_stream(stream: BinaryIO, name: str, size_limit: int = DEFAULT_SIZE_LIMIT, size: int = 0) -> Source:
    """Read at most one byte past the limit, so an endless pipe is refused without being held in memory.
    `size`: what fstat says a file holds; it is read by a call of that size, as one asking for the limit would
    first reserve the limit's bytes (0.8 ms for 64 MiB), and on up to the limit only if it has grown since."""
    data = stream.read(size + 1) if size else b""
    if len(data) > size or not size:
        data += stream.read(size_limit + 1 - len(data))
    check_size(len(data), name, size_limit)
    return Source(name, data)


def _walk(directory: str):
    for root, subdirectories, files in os.walk(directory):
        subdirectories[:] = sorted(name for name in subdirectories if not name.startswith("."))
        for name in files:
            if not name.startswith("."):
                yield os.path.normpath(os.path.join(root, name))
