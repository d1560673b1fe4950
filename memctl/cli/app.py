"""The `memctl` command: global options and command registration.

Command modules import only typer at module level; everything heavy (numpy, the engine's kinds, jieba,
numba) is imported inside the command that needs it, because every invocation is a fresh process.
"""

from __future__ import annotations

import typer

from memctl import __version__
from memctl.cli import config_cmd, graph_cmd, ingest_cmd, r2g_cmd, raw_cmd, recall_cmd, search_cmd, store_cmd
from memctl.cli.common import GlobalOptions, MemctlGroup, run
from memctl.paths import check_tenant

app = typer.Typer(
    cls=MemctlGroup,
    name="memctl",
    help="Long-term memory for LLM agents: ingest raw conversations, build a memory graph, recall with "
    "citations inside a token budget. Exit codes: 0 ok, 1 problems found, 2 bad input or usage, "
    "3 corruption, 75 store busy.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
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
                               help="How long a writer waits for another writer's lock before exit 75."),
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    check_tenant(tenant)
    context.obj = GlobalOptions(home=home, tenant=tenant, config=config, wait=wait)


app.command("check")(store_cmd.check)
app.command("stats")(store_cmd.stats)
app.command("compact")(store_cmd.compact)
app.command("ingest")(ingest_cmd.ingest)
app.command("index")(search_cmd.index)
app.command("search")(search_cmd.search)
app.command("r2g")(r2g_cmd.r2g)
app.command("recall")(recall_cmd.recall)

raw_app = typer.Typer(cls=MemctlGroup, help="Raw chunks: the immutable evidence every memory cites.",
                      no_args_is_help=True)
raw_app.command("cat")(raw_cmd.cat)
raw_app.command("ls")(raw_cmd.ls)
raw_app.command("gc")(raw_cmd.gc)
app.add_typer(raw_app, name="raw")
app.add_typer(graph_cmd.graph_app, name="graph")
app.add_typer(config_cmd.config_app, name="config")


def main() -> None:
    run(app)
