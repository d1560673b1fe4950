"""Where the compiled Chinese dictionary lives, and when it is built again.

One file per jieba installation, user dictionary and list of added words: $XDG_CACHE_HOME/memctl (default
~/.cache/memctl)/zh-dictionary-<key>.bin, key = the CRC-32 (8 hex digits) of jieba's directory, the user
dictionary's absolute path and the words' digest (a collision costs rebuilds, never a wrong dictionary: the
file records its sources). A file is used when it opens cleanly (engine.text.chinese.compiled) and its sources
are unchanged: the same jieba version and directory, the same main dictionary and user dictionary (size and
modification time, or SHA-256 when only the time moved), the same added words. Otherwise it is built again
into a temporary file of the same directory, read back whole against its checksums and renamed over the old
one, under an exclusive lock of <file>.lock so that processes starting together build it once; a process
still mapping the old file keeps reading it.
"""

from __future__ import annotations

import os
import zlib
from contextlib import contextmanager

from engine.text.chinese import jieba_files
from engine.text.chinese.compiled import CompiledDictionary, DamagedFile


class Unavailable(Exception):
    """The compiled dictionary can be neither read nor built; str() says why (jieba is used instead)."""


def cache_directory() -> str:
    """$XDG_CACHE_HOME/memctl; ~/.cache/memctl when it is unset or relative (the XDG rule: ignore it then)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memctl")


def file_path(package, user_dictionary: str | None, words: tuple = ()) -> str:
    identity = f"{package.directory}\0{user_dictionary or ''}\0{words_digest(words) or ''}"
    key = zlib.crc32(identity.encode("utf-8", "surrogatepass"))
    return os.path.join(cache_directory(), f"zh-dictionary-{key:08x}.bin")


def load(user_dictionary: str | None = None, words: tuple = ()) -> CompiledDictionary:
    """The compiled dictionary of the installed jieba, `user_dictionary` (an absolute path or None) and `words`
    ((word, class) pairs added last), built first when missing, out of date or damaged. Unavailable when it can
    be neither read nor built; InputError when the user dictionary is unreadable."""
    try:
        package = jieba_files.locate()
    except jieba_files.JiebaMissing as error:
        raise Unavailable(str(error)) from None
    path = file_path(package, user_dictionary, words)
    compiled, _problem = _open_fresh(path, package, user_dictionary, words)
    if compiled is not None:
        return compiled
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with _exclusive(path + ".lock"):
            compiled, _problem = _open_fresh(path, package, user_dictionary, words)  # built while we waited?
            if compiled is None:
                _build(path, package, user_dictionary, words)
                compiled = CompiledDictionary(path)
    except (OSError, DamagedFile, ValueError, jieba_files.JiebaMissing) as error:
        raise Unavailable(f"cannot build {path}: {error}") from None
    return compiled


def state(user_dictionary: str | None = None) -> dict:
    """What `memctl stats` shows: the file and whether it is ready, without building it."""
    try:
        package = jieba_files.locate()
    except jieba_files.JiebaMissing as error:
        return {"file": None, "state": f"unavailable: {error}"}
    path = file_path(package, user_dictionary)
    compiled, problem = _open_fresh(path, package, user_dictionary)
    if compiled is not None:
        return {"file": path, "state": f"ready ({compiled.description['keys']:,} keys, jieba {package.version})"}
    return {"file": path, "state": f"{problem}: built at the next Chinese text"}


def words_digest(words: tuple) -> str | None:
    """What identifies a list of added words (None for none): SHA-256 of its "word TAB class" lines."""
    if not words:
        return None
    import hashlib

    return hashlib.sha256("\n".join(f"{word}\t{word_class}" for word, word_class in words).encode("utf-8")).hexdigest()


def discard(path: str) -> None:
    """Remove a damaged file (the next load builds it again); a file already gone or replaced is fine."""
    try:
        os.unlink(path)
    except OSError:
        pass


def _open_fresh(path: str, package, user_dictionary: str | None, words: tuple = ()):
    """(the open file, None) when it is usable, else (None, why not)."""
    try:
        compiled = CompiledDictionary(path)
    except FileNotFoundError:
        return None, "not built yet"
    except (OSError, DamagedFile) as error:
        return None, f"damaged ({error})"
    problem = _outdated(compiled.sources, package, user_dictionary, words)
    return (None, problem) if problem else (compiled, None)


def _outdated(sources: dict, package, user_dictionary: str | None, words: tuple) -> str | None:
    if sources["jieba_version"] != package.version or sources["jieba_directory"] != package.directory:
        return f"out of date (built for jieba {sources['jieba_version']} in {sources['jieba_directory']})"
    if not jieba_files.unchanged(sources["dictionary"]):
        return "out of date (jieba's dictionary changed)"
    recorded = sources["user_dictionary"]
    if (recorded is None) != (user_dictionary is None):
        return "out of date (another user dictionary)"
    if recorded is not None and (recorded["path"] != user_dictionary or not jieba_files.unchanged(recorded)):
        return "out of date (the user dictionary changed)"
    if sources.get("words") != words_digest(words):
        return "out of date (other added words)"
    return None


def _build(path: str, package, user_dictionary: str | None, words: tuple) -> None:
    import tempfile

    from engine.text.chinese.build import build

    # No fsync: a file torn by a crash fails its checksum and is built again, like a missing one.
    handle = tempfile.NamedTemporaryFile(dir=os.path.dirname(path), prefix=".zh-dictionary-", suffix=".tmp",
                                         delete=False)
    try:
        with handle:
            build(handle, package, user_dictionary, words)
        CompiledDictionary(handle.name).check_all()
        os.replace(handle.name, path)
    finally:
        if os.path.exists(handle.name):
            os.unlink(handle.name)


@contextmanager
def _exclusive(lock_path: str):
    try:
        import fcntl
    except ImportError:  # no flock: concurrent builders each write a whole file and rename it
        yield
        return
    with open(lock_path, "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
