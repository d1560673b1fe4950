"""Regular expressions compiled by an earlier process (issue 20). memctl runs as a fresh process per command, and
CPython compiles each expression in Python (re._parser, re._compiler): the ~250 that `memctl remember` meets cost
it ~50 ms of CPU, a fifth of the command. What compiling yields, the expression's program (a list of opcodes) and
its groups, is kept across processes; a process that finds an expression there builds its Pattern with
_sre.compile, as re._compiler.compile ends, in microseconds.

install() puts `compile` in place of re._compiler.compile for the process (the CLI's entry point calls it):
re's own cache in front of it, and what it returns, are unchanged: the same Pattern, built from the same program.
keep() writes what the process compiled and did not find (memctl.cli.common calls it before the process exits):
$XDG_CACHE_HOME/memctl/patterns-<key>.marshal, key naming the Python version and _sre's MAGIC (the program's
format), CRC32 | marshal {(expression, flags): (flags, code, groups, groupindex, indexgroup)}, at most
MAX_PATTERNS expressions (one built from data, a user's phrase, must not grow it without end). A file that fails
its checksum or does not load is compiled anew, as is an expression whose kept program _sre refuses.
"""

from __future__ import annotations

import _sre
import atexit
import os
import sys
import zlib
from re import _compiler, _parser

# imported before install(): the modules reading the kept file compile expressions of their own
from engine.text.chinese.cache import cache_directory
from memctl.language.parsed_lexicons import read_kept, write_kept

MAX_PATTERNS = 2000

_state: dict = {"original": None, "kept": None, "new": {}}


def install() -> None:
    """Compile this process's regular expressions from the kept programs (once; again is a no-op)."""
    if _state["original"] is None:
        _state["original"] = _compiler.compile
        _compiler.compile = compile
        atexit.register(keep)


def compile(pattern, flags=0):
    """re._compiler.compile: the Pattern of `pattern` (a str) from its kept program, else compiled and noted."""
    if not isinstance(pattern, str) or flags & _compiler.SRE_FLAG_DEBUG:
        return _state["original"](pattern, flags)
    key = (pattern, int(flags))
    program = _kept().get(key) or _state["new"].get(key)
    if program is not None:
        try:
            return _sre.compile(pattern, *program)
        except (TypeError, ValueError, RuntimeError):
            pass  # a damaged program: compiled below, as any other
    parsed = _parser.parse(pattern, flags)
    groupindex = dict(parsed.state.groupdict)
    indexgroup = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    program = (int(flags | parsed.state.flags), [int(opcode) for opcode in _compiler._code(parsed, flags)],
               parsed.state.groups - 1, groupindex, tuple(indexgroup))
    if len(_kept()) + len(_state["new"]) < MAX_PATTERNS:
        _state["new"][key] = program
    return _sre.compile(pattern, *program)


def keep() -> None:
    """Write the programs this process compiled (and did not find, or found damaged) to the kept file, with those
    it found there."""
    if _state["new"]:
        _state["kept"], _state["new"] = {**_kept(), **_state["new"]}, {}
        write_kept(_path(), _state["kept"])


def _kept() -> dict:
    if _state["kept"] is None:
        found = read_kept(_path())
        _state["kept"] = found[0] if found is not None and isinstance(found[0], dict) else {}
    return _state["kept"]


def _path() -> str:
    identity = f"{sys.version}\0{_sre.MAGIC}\0{_sre.CODESIZE}"
    return os.path.join(cache_directory(), f"patterns-{zlib.crc32(identity.encode()):08x}.marshal")
