"""What every command shares: global options, opening the tenant's memory, output, and error mapping.

Exit codes (README): 0 ok · 1 a check found problems · 2 usage error or bad input (nothing changed) ·
3 corruption detected · 75 store busy.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass

import click
import typer
from typer.core import TyperGroup

from engine.errors import EngineError, InputError

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_CORRUPTION = 3
EXIT_BUSY = 75

# The panels of `memctl --help`, by what a user does.
STORE = "Store: raw conversations and documents"
REMEMBER = "Remember: raw → memory graph"
RECALL = "Recall and search"
MAINTAIN = "Maintain"
INSPECT = "Inspect"


@dataclass
class GlobalOptions:
    home: str | None = None
    tenant: str = "default"
    config: str | None = None
    wait: float = 0.0


def options(context: typer.Context) -> GlobalOptions:
    root = context.find_root()
    if not isinstance(root.obj, GlobalOptions):
        root.obj = GlobalOptions()
    return root.obj


_teardown = {"skip": False}


@contextmanager
def open_memory(context: typer.Context, writable: bool, holder: str):
    """The tenant's Memory with the global options; its store opens at first use, so a command that checks
    its input first neither creates a store nor takes the lock when the input is bad. Once the store is closed
    (flushed, lock released), the process may end without the interpreter's teardown: freeing every module,
    cached record and dictionary one object at a time cost a cold `memctl stats` or `search` about 30 ms of CPU,
    and 0.35 s after R2G converted LoCoMo dev (jieba's dictionaries)."""
    from memctl.memory import Memory

    chosen = options(context)
    with Memory.open(home=chosen.home, tenant=chosen.tenant, config_file=chosen.config, writable=writable,
                     wait=chosen.wait, holder=holder, lazy=True) as memory:
        yield memory
    _teardown["skip"] = True


def run(app) -> None:
    """Run the `memctl` process; one that closed its store (open_memory) ends right after its output."""
    _teardown["skip"] = False
    try:
        app()
    except SystemExit as done:
        if _teardown["skip"]:
            _exit_now(done.code)
        raise


def _exit_now(code) -> None:
    from memctl.language import compiled_patterns

    compiled_patterns.keep()  # os._exit runs no atexit function
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):
        code = code or EXIT_PROBLEMS
    os._exit(code if isinstance(code, int) else (0 if code is None else EXIT_PROBLEMS))


def print_json(value) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, default=str) + "\n")


# Output read by a program or piped through grep is never cut into lines at the terminal width rich assumes (80).
UNWRAPPED_WIDTH = 1 << 20


def console():
    """A rich console for stdout: wrapped to the terminal's width on a terminal, not wrapped when piped."""
    from rich.console import Console

    if sys.stdout is not None and sys.stdout.isatty():
        return Console()
    return Console(width=UNWRAPPED_WIDTH, soft_wrap=True)


def one_query(positional: str | None, option: str | None) -> str:
    """The query given as QUERY or as --q, not both."""
    if positional is not None and option is not None:
        raise InputError("give the query once: as QUERY or as --q, not both")
    text = positional if positional is not None else option
    if text is None:
        raise InputError('give a query: QUERY (or --q TEXT), e.g. "蓝牙 打不开"')
    return text


def fail(message: str, code: int = EXIT_USAGE) -> None:
    """Print `error: message` on stderr and exit with `code`."""
    sys.stderr.write(f"error: {message}\n")
    raise typer.Exit(code)


class MemctlGroup(TyperGroup):
    """Turns the engine's deliberate errors into a one-line message and their exit code, for the CLI and
    for CliRunner alike; a user's mistake never shows a traceback."""

    # Names shown first in --help, in this order (typer lists a group's commands before its subgroups).
    command_order: tuple = ()

    def __init__(self, *arguments, **keywords):
        super().__init__(*arguments, **keywords)
        # click >= 8.2 names a mistyped command's close matches itself (NoSuchCommand); typer's own suggestion
        # would say "Did you mean 'recall'?" a second time.
        self.suggest_commands = not hasattr(click.exceptions, "NoSuchCommand")

    def list_commands(self, context) -> list[str]:
        names = super().list_commands(context)
        order = self.command_order
        return sorted(names, key=lambda name: order.index(name) if name in order else len(order))

    def invoke(self, context):
        try:
            return super().invoke(context)
        except EngineError as error:
            fail(str(error), error.exit_code)
        except BrokenPipeError:
            _quiet_closed_stdout()
        except OSError as error:
            fail(describe_os_error(error), EXIT_PROBLEMS)


def describe_os_error(error: OSError) -> str:
    """What failed, on which file, and why. A failed store write (engine.fs names its file and operation) leaves
    the store as the last acknowledged batch made it, plus what `memctl check` reports as notes."""
    reason = error.strerror or str(error)
    operation = getattr(error, "operation", None)
    if operation and error.filename:
        return (f"cannot {operation} {error.filename}: {reason}; the batches acknowledged before are kept "
                "(`memctl check` reports what this one left behind)")
    return f"{error.filename}: {reason}" if error.filename else reason


def _quiet_closed_stdout() -> None:
    """The reader of our output went away (`memctl graph export | head`): end quietly, as Python's docs advise
    for SIGPIPE, with stdout pointed at /dev/null so the interpreter's final flush does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    raise typer.Exit(EXIT_PROBLEMS)
