"""The `memctl` command: global options and command registration.

Every invocation is a fresh process that runs one command, so a command's module is imported and its click
command built (typer turning each signature into click parameters) only when that command is looked up: by
its invocation or by `--help` (a typo's suggestions need the names only). Command modules import only typer at
module level; everything heavy (numpy, the engine's kinds, jieba, numba) is imported inside the command that
needs it.
They do not use `from __future__ import annotations` either: typer would evaluate each annotation string when
it builds the command.
"""

import importlib
from collections.abc import MutableMapping

import typer
import typer.main
import typer.models

from memctl import __version__
from memctl.cli.common import INSPECT, MAINTAIN, RECALL, REMEMBER, STORE, GlobalOptions, MemctlGroup, run
from memctl.paths import check_tenant

# `memctl --help` lists the commands by what a user does with them, in this order.
# name: (help panel, None for a hidden alias; "module:attribute" under memctl.cli: a command function or a
# typer.Typer of subcommands).
COMMANDS = {
    "ingest": (STORE, "ingest_cmd:ingest"),
    "index": (STORE, "index_cmd:index_app"),
    "remember": (REMEMBER, "remember_cmd:remember"),
    "add": (None, "remember_cmd:remember"),  # mem0's verb for remember, hidden from --help
    "r2g": (REMEMBER, "r2g_cmd:r2g"),
    "recall": (RECALL, "recall_cmd:recall_app"),
    "search": (RECALL, "search_cmd:search"),
    "feedback": (REMEMBER, "feedback_cmd:feedback"),
    "check": (MAINTAIN, "store_cmd:check"),
    "compact": (MAINTAIN, "store_cmd:compact"),
    "migrate": (MAINTAIN, "store_cmd:migrate"),
    "repair": (MAINTAIN, "store_cmd:repair"),
    "stats": (INSPECT, "store_cmd:stats"),
    "graph": (INSPECT, "graph_cmd:graph_app"),
    "fact": (INSPECT, "fact_cmd:fact_app"),
    "audit": (INSPECT, "audit_cmd:audit"),
    "raw": (INSPECT, "raw_cmd:raw_app"),
    "events": (INSPECT, "events_cmd:events"),
    "config": (INSPECT, "config_cmd:config_app"),
}


class LazyCommands(MutableMapping):
    """The root group's commands: every name is known at once, a command is built at its first lookup."""

    def __init__(self, build):
        self._build = build
        self._built: dict = {}

    def __getitem__(self, name: str):
        if name not in self._built:
            if name not in COMMANDS:
                raise KeyError(name)
            self._built[name] = self._build(name)
        return self._built[name]

    def __setitem__(self, name: str, command) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]

    def __iter__(self):
        return iter(dict.fromkeys([*COMMANDS, *self._built]))

    def __len__(self) -> int:
        return len(set(COMMANDS) | set(self._built))


class MemctlApp(MemctlGroup):
    command_order = tuple(COMMANDS)

    def __init__(self, *arguments, **keywords):
        super().__init__(*arguments, **keywords)
        self.commands = LazyCommands(_build_command)


app = typer.Typer(
    cls=MemctlApp,
    name="memctl",
    help="Long-term memory for LLM agents: ingest raw conversations, build a memory graph, recall with "
    "citations inside a token budget. Exit codes: 0 ok, 1 problems found, 2 bad input or usage, "
    "3 corruption, 75 store busy.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",  # a help paragraph is rewrapped to the terminal; `code` stands out
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"memctl {__version__}")
        raise typer.Exit()


@app.callback()
def global_options(
    context: typer.Context,
    home: str = typer.Option(None, "--home", metavar="DIR",
                             help="Data directory (default: $MEMCTL_HOME, else $XDG_DATA_HOME/memctl, "
                                  "else ~/.local/share/memctl)."),
    tenant: str = typer.Option("default", "--tenant", metavar="NAME",
                               help="Tenant store to use: 1-64 letters, digits, '_' or '-'."),
    config: str = typer.Option(None, "--config", metavar="FILE",
                               help="YAML settings overriding the defaults and the tenant's memctl.yaml."),
    wait: float = typer.Option(0.0, "--wait", metavar="SECONDS",
                               help="How long a writer waits for another writer's lock before exit 75 (a "
                                    "command reading input checks all of it first, then waits)."),
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    check_tenant(tenant)
    context.obj = GlobalOptions(home=home, tenant=tenant, config=config, wait=wait)


def _build_command(name: str):
    """The click command of `name`, as `app.command(name, …)` or `app.add_typer(…, name=…)` would build it."""
    panel, target = COMMANDS[name]
    module, attribute = target.split(":")
    value = getattr(importlib.import_module(f"memctl.cli.{module}"), attribute)
    if isinstance(value, typer.Typer):
        return typer.main.get_group_from_info(
            typer.models.TyperInfo(value, name=name, rich_help_panel=panel),
            pretty_exceptions_short=app.pretty_exceptions_short, suggest_commands=app.suggest_commands,
            rich_markup_mode=app.rich_markup_mode)
    return typer.main.get_command_from_info(
        typer.models.CommandInfo(name=name, callback=value, rich_help_panel=panel, hidden=panel is None),
        pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=app.rich_markup_mode)


def main() -> None:
    from memctl.language import compiled_patterns

    compiled_patterns.install()
    run(app)
