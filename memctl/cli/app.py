"""The `memctl` command: global options and command registration.

Command modules import only typer at module level; everything heavy (numpy, the engine's kinds, jieba,
numba) is imported inside the command that needs it, because every invocation is a fresh process. They do not
use `from __future__ import annotations` either: typer builds every command at start-up and would evaluate
each annotation string (about 5 ms of every cold command for the whole tree).
"""

import typer

from memctl import __version__
from memctl.cli import config_cmd, graph_cmd, index_cmd, ingest_cmd, r2g_cmd, raw_cmd, recall_cmd, remember_cmd, \
    search_cmd, store_cmd
from memctl.cli.common import GlobalOptions, MemctlGroup, run
from memctl.paths import check_tenant

# `memctl --help` lists the commands by what a user does with them, in this order.
STORE = "Store: raw conversations and documents"
REMEMBER = "Remember: raw → memory graph"
RECALL = "Recall and search"
MAINTAIN = "Maintain"
INSPECT = "Inspect"


class MemctlApp(MemctlGroup):
    command_order = ("ingest", "index", "remember", "r2g", "recall", "search", "check", "compact", "migrate",
                     "repair", "stats", "graph", "raw", "config")


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


app.command("ingest", rich_help_panel=STORE)(ingest_cmd.ingest)
app.add_typer(index_cmd.index_app, name="index", rich_help_panel=STORE)
app.command("remember", rich_help_panel=REMEMBER)(remember_cmd.remember)
app.command("add", hidden=True)(remember_cmd.remember)  # mem0's verb
app.command("r2g", rich_help_panel=REMEMBER)(r2g_cmd.r2g)
app.add_typer(recall_cmd.recall_app, name="recall", rich_help_panel=RECALL)
app.command("search", rich_help_panel=RECALL)(search_cmd.search)
app.command("check", rich_help_panel=MAINTAIN)(store_cmd.check)
app.command("compact", rich_help_panel=MAINTAIN)(store_cmd.compact)
app.command("migrate", rich_help_panel=MAINTAIN)(store_cmd.migrate)
app.command("repair", rich_help_panel=MAINTAIN)(store_cmd.repair)
app.command("stats", rich_help_panel=INSPECT)(store_cmd.stats)
app.add_typer(graph_cmd.graph_app, name="graph", rich_help_panel=INSPECT)

raw_app = typer.Typer(cls=MemctlGroup, no_args_is_help=True,
                      help="Raw chunks: the immutable evidence every memory cites.\n\nExample: memctl raw ls")
raw_app.command("ls")(raw_cmd.ls)
raw_app.command("cat")(raw_cmd.cat)
raw_app.command("gc", rich_help_panel=MAINTAIN)(raw_cmd.gc)
app.add_typer(raw_app, name="raw", rich_help_panel=INSPECT)
app.add_typer(config_cmd.config_app, name="config", rich_help_panel=INSPECT)


def main() -> None:
    run(app)
