"""jieba's installed files, found and read without importing jieba.

Importing jieba costs 0.15-0.25 s (it imports pkg_resources) and its first cut 0.6-1.0 s (the dictionary):
the compiled dictionary is built from the same files by reading them directly. Here: where the package is, its
version, a file's fingerprint (size, mtime, SHA-256), the main dictionary's lines, a user dictionary's lines
(jieba's `load_userdict` rules) and the HMM model tables of jieba.finalseg and jieba.posseg (their `.py`
modules, the ones jieba itself imports, run from their cached bytecode).
"""

from __future__ import annotations

import os
import re
import sys

from engine.errors import InputError

_VERSION = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.MULTILINE)
# jieba's re_userdict: a word (it may hold spaces), then an optional frequency and an optional word class.
_USER_LINE = re.compile("^(.+?)( [0-9]+)?( [a-z]+)?$", re.U)


class JiebaMissing(Exception):
    """jieba is not installed, or its files cannot be read: there is nothing to compile."""


class Package:
    def __init__(self, directory: str, version: str):
        self.directory = directory
        self.version = version

    @property
    def dictionary(self) -> str:
        return os.path.join(self.directory, "dict.txt")

    def model_table(self, model: str, table: str):
        """`P` of jieba/<model>/<table>.py ("finalseg"/"posseg"; "prob_start", "prob_trans", "prob_emit",
        "char_state_tab"), executed as jieba's import would, without importing the jieba package."""
        import importlib.util

        path = os.path.join(self.directory, model, f"{table}.py")
        spec = importlib.util.spec_from_file_location(f"_memctl_jieba_{model}_{table}", path)
        if spec is None:
            raise JiebaMissing(f"jieba's model table {path} is missing")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            return module.P
        except Exception as error:  # jieba's own code: whatever stops it, the table cannot be had
            raise JiebaMissing(f"cannot read jieba's model table {path}: {error!r}") from None


def locate() -> Package:
    """The installed jieba package (JiebaMissing when there is none): the one imported already, else the one
    an import would find on sys.path."""
    from importlib.machinery import PathFinder

    imported = sys.modules.get("jieba")
    spec = getattr(imported, "__spec__", None) or PathFinder.find_spec("jieba")
    if spec is None or not spec.submodule_search_locations:
        raise JiebaMissing("jieba is not installed")
    return package_at(os.path.abspath(list(spec.submodule_search_locations)[0]))


def package_at(directory: str) -> Package:
    """The jieba package in `directory`, with the version its __init__.py declares."""
    try:
        with open(os.path.join(directory, "__init__.py"), encoding="utf-8") as handle:
            found = _VERSION.search(handle.read())
    except (OSError, UnicodeDecodeError) as error:
        raise JiebaMissing(f"cannot read jieba's version in {directory}: {error}") from None
    if found is None:
        raise JiebaMissing(f"jieba's __init__.py in {directory} names no __version__")
    return Package(directory, found.group(1))


def fingerprint(path: str) -> dict:
    """What tells a changed file: size, modification time (ns) and SHA-256 of the contents."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        status = os.fstat(handle.fileno())
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"path": path, "size": status.st_size, "mtime_ns": status.st_mtime_ns, "sha256": digest.hexdigest()}


def unchanged(recorded: dict) -> bool:
    """Whether the file a fingerprint was taken of still holds the same bytes: same size, and the same
    modification time or (a copy, a reinstall) the same SHA-256."""
    try:
        status = os.stat(recorded["path"])
    except OSError:
        return False
    if status.st_size != recorded["size"]:
        return False
    if status.st_mtime_ns == recorded["mtime_ns"]:
        return True
    try:
        return fingerprint(recorded["path"])["sha256"] == recorded["sha256"]
    except OSError:
        return False


def dictionary_lines(path: str):
    """(word, frequency, word class) of each line of jieba's main dictionary, in file order.

    jieba reads the file twice: `Tokenizer.gen_pfdict` takes the first two fields of every line (word,
    frequency), `POSTokenizer.load_word_tag` the first and third of every non-empty line; the shipped file has
    three fields on every line. A line of another shape makes the compiled dictionary unbuildable (ValueError)."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            line = raw.strip().decode("utf-8")
            fields = line.split(" ")
            if len(fields) != 3 or not fields[1].isdigit():
                raise ValueError(f"{path}, line {number}: expected 'word frequency class', found {line!r}")
            yield fields[0], int(fields[1]), fields[2]


def user_dictionary_lines(path: str):
    """(word, frequency or None, word class or None) of each non-empty line of a jieba user dictionary, by
    jieba's `load_userdict` rules: UTF-8 (a BOM allowed), `word [frequency] [class]`, the word may hold spaces."""
    try:
        with open(path, "rb") as handle:
            raw_lines = handle.read().split(b"\n")
    except OSError as error:
        raise InputError(f"cannot read the user dictionary (setting index.user_dictionary): {error.strerror}",
                         where=path) from None
    for number, raw in enumerate(raw_lines, 1):
        try:
            line = raw.strip().decode("utf-8").lstrip("\ufeff")
        except UnicodeDecodeError as error:
            raise InputError(f"user dictionary is not UTF-8 (byte {error.start} of the line)",
                             where=f"{path}, line {number}") from None
        if not line:
            continue
        word, frequency, word_class = _USER_LINE.match(line).groups()
        yield word, None if frequency is None else int(frequency), None if word_class is None else word_class.strip()
