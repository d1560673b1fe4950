"""What a cold `memctl` process loads: the modules of a command run in a fresh interpreter, as the CLI runs it.

Every command is a fresh process, so a module on its path costs every invocation (tools/bench/coldstart_bench.py
measures it). A command loads its own module and what it runs, never the other commands' modules, and none of
COLD_NEVER.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

COMMAND_MODULES = ("memctl.cli.config_cmd", "memctl.cli.graph_cmd", "memctl.cli.index_cmd", "memctl.cli.ingest_cmd",
                   "memctl.cli.r2g_cmd", "memctl.cli.raw_cmd", "memctl.cli.recall_cmd", "memctl.cli.search_cmd",
                   "memctl.cli.store_cmd", "memctl.cli.events_cmd", "memctl.cli.feedback_cmd")
WRITING_MODULES = ("engine.raw.writer", "engine.graph.batch", "engine.text.pieces")
# numba and jieba (seconds to load), the writers, the stages a reader does not run, rich (every probe prints
# JSON) and numpy.ma (np.unique and np.isin import it: engine.arrays does without).
COLD_NEVER = ("numba", "jieba", *WRITING_MODULES, "memctl.ingest", "memctl.r2g", "rich", "numpy.ma")
_MARKER = "--- modules ---"


def cold_modules(home: Path, *arguments: str) -> set:
    """The modules loaded by `memctl --home HOME ARGUMENTS…` in a fresh interpreter, once the command is done."""
    probe = ("import sys\nfrom memctl.cli.app import app\n"
             f"app(['--home', {str(home)!r}, *{list(arguments)!r}], standalone_mode=False)\n"
             f"print({_MARKER!r})\nprint('\\n'.join(sorted(sys.modules)))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return set(result.stdout.split(_MARKER + "\n", 1)[1].split())


def loaded(modules: set, packages) -> list:
    """The modules of `modules` that are one of `packages` or inside one."""
    return sorted(name for name in modules if any(name == package or name.startswith(package + ".")
                                                   for package in packages))


def unexpected(modules: set, own_command: str, also_never=()) -> list:
    """What a cold command whose CLI module is `own_command` loaded and should not have."""
    assert own_command in modules, f"{own_command} did not run"
    others = [name for name in COMMAND_MODULES if name != own_command]
    return loaded(modules, [*COLD_NEVER, *others, *also_never])
