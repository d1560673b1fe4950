"""Parsed lexicon files kept across processes: memctl runs as a fresh process per command, and parsing the YAML
of memctl/data costs every process that converts text 50-100 ms (PyYAML's import and its constructor, even over
libyaml), where reading it back from a marshal file costs well under 1 ms.

A parsed file is kept as `$XDG_CACHE_HOME/memctl/lexicons/<name>-<key>.marshal` (engine.text.chinese's cache
directory), `key` naming the source file's path, size and modification time and the Python version (marshal's
format may change with it): an edited lexicon, or one of another `r2g.lexicon_directory`, gets a file of its
own. The content is CRC32 | marshal bytes; a file that fails its checksum or does not load is parsed again.
Writing it is best effort: a read-only or full cache directory only costs the parse.

`remembered` keeps other results derived from the lexicons the same way, under an identity its caller names (the
change phrases' regular expressions, checked to compile: memctl/r2g/changes.py).
"""

from __future__ import annotations

import marshal
import os
import sys
import zlib

from engine.text.chinese.cache import cache_directory

CHECKSUM_BYTES = 4


def cached(path: str, parse):
    """The parsed content of the file `path`: from the cache when it holds it, else parse(path), kept."""
    try:
        status = os.stat(path)
    except OSError:
        return parse(path)
    identity = f"{os.path.abspath(path)}\0{status.st_size}\0{status.st_mtime_ns}"
    return remembered(os.path.basename(path), identity, lambda: parse(path))


def remembered(name: str, identity: str, compute):
    """compute()'s result, kept as `name`-<CRC32 of identity and the Python version>: from the cache when it
    holds it, else computed and kept. `identity` must name everything the result depends on."""
    identity = f"{identity}\0{sys.version_info[:2]}"
    kept = os.path.join(cache_directory(), "lexicons",
                        f"{name}-{zlib.crc32(identity.encode('utf-8', 'surrogatepass')):08x}.marshal")
    found = read_kept(kept)
    if found is not None:
        return found[0]
    content = compute()
    write_kept(kept, content)
    return content


def read_kept(kept: str) -> tuple | None:
    """(content,) of the file `kept` (CRC32 | marshal bytes); None when it is missing, damaged or unreadable."""
    try:
        with open(kept, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    body = data[CHECKSUM_BYTES:]
    if len(data) < CHECKSUM_BYTES or int.from_bytes(data[:CHECKSUM_BYTES], "little") != zlib.crc32(body):
        return None
    try:
        return (marshal.loads(body),)
    except (EOFError, ValueError, TypeError):
        return None


def write_kept(kept: str, content) -> None:
    """Keep `content` as the file `kept`, whole or not at all: best effort (errors only cost the next reader)."""
    try:
        body = marshal.dumps(content)
    except ValueError:  # a type marshal cannot keep (a YAML timestamp): parse it each time
        return
    temporary = f"{kept}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(kept), exist_ok=True)
        with open(temporary, "wb") as handle:
            handle.write(zlib.crc32(body).to_bytes(CHECKSUM_BYTES, "little") + body)
        os.replace(temporary, kept)  # whole or absent for a reader: never a file half written
    except OSError:
        try:
            os.remove(temporary)
        except OSError:
            pass
