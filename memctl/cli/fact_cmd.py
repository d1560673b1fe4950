"""`memctl fact`: the versions of slot facts — assert one, list what holds (now or at a time), show a version,
a chain's history, the review queue of contested claims and their resolution (Memory.facts).

The seed's flag forms (seed 001 §25.5) stay as aliases: `memctl fact --add SUBJECT SLOT VALUE` is `fact add`,
with `--conflicts ID` to assert a claim that contradicts version ID.
"""

import typer

from memctl.cli.common import open_memory, print_json
from memctl.cli.verb_group import VerbGroup

ALIASES = "Aliases (seed 001 §25.5)"


class FactGroup(VerbGroup):
    command_order = ("add", "list", "show", "history", "review", "resolve")


fact_app = typer.Typer(cls=FactGroup, no_args_is_help=True, invoke_without_command=True)


def _json_option(hidden: bool = False):
    return typer.Option(False, "--json", help="Print one JSON object.", hidden=hidden)


def _since_option(hidden: bool = False):
    return typer.Option(None, "--since", metavar="T", help="When the value starts to hold (ISO date or date-time; "
                                                           "default: now).", hidden=hidden)


def _source_option(hidden: bool = False):
    return typer.Option("user", "--source", metavar="S", help="Who asserts it: user, agent, r2g or external "
                                                              "(facts.source_trust).", hidden=hidden)


def _evidence_option(hidden: bool = False):
    return typer.Option(None, "--evidence", metavar="RAW_REF", help="The raw chunk (raw_…, or raw_…@OFFSET+LENGTH "
                                                                    "as recall prints it) that states it.",
                        hidden=hidden)


@fact_app.command("add")
def add(
    context: typer.Context,
    subject: str = typer.Argument(..., metavar="SUBJECT", help='A name (I/我: the user) or TYPE:NAME.'),
    slot: str = typer.Argument(..., metavar="SLOT", help="A slot of the slot lexicon (residence, employer…)."),
    value: str = typer.Argument(..., metavar="VALUE"),
    since: str = _since_option(),
    source: str = _source_option(),
    evidence: str = _evidence_option(),
    conflicts: str = typer.Option(None, "--conflicts", metavar="ID", help="Assert it as a claim contradicting "
                                                                          "version ID: prio decides."),
    as_json: bool = _json_option(),
) -> None:
    """Assert that SUBJECT's SLOT is VALUE: a new version that supersedes the value in force (a single-valued
    slot) or joins the others (a multi-valued one), through the same chain code as r2g.

    Example: memctl fact add I residence Denver --since 2024-06-01
    """
    _added(context, subject, slot, value, since, source, evidence, conflicts, as_json)


@fact_app.command("list")
def list_command(
    context: typer.Context,
    subject: str = typer.Option(None, "--subject", metavar="S", help="Only this subject's facts."),
    slot: str = typer.Option(None, "--slot", metavar="K", help="Only this slot."),
    all_versions: bool = typer.Option(False, "--all-versions", help="Every version, not only those in force."),
    as_of: str = typer.Option(None, "--as-of", metavar="T", help="The versions that held at T (ISO)."),
    as_json: bool = _json_option(),
) -> None:
    """List the versions in force (or every version, or those that held at a time).

    Example: memctl fact list --subject I --as-of 2024-03-01
    """
    _output(_read(context, "fact list", lambda facts: facts.list(subject, slot, all_versions, as_of)), as_json,
            _print_rows)


@fact_app.command("show")
def show(context: typer.Context, key: str = typer.Argument(..., metavar="ID"), as_json: bool = _json_option()) -> None:
    """Show one version: value, state, validity, chain, evidence, contradictions.

    Example: memctl fact show fact_0123456789abcdef01234567
    """
    _output(_read(context, "fact show", lambda facts: facts.show(key)), as_json, _print_fact)


@fact_app.command("history")
def history(
    context: typer.Context,
    subject: str = typer.Argument(..., metavar="SUBJECT"),
    slot: str = typer.Argument(..., metavar="SLOT"),
    as_json: bool = _json_option(),
) -> None:
    """The chain of SUBJECT's SLOT in order: every version and when it held.

    Example: memctl fact history I residence
    """
    _output(_read(context, "fact history", lambda facts: facts.history(subject, slot)), as_json,
            lambda chain: _print_rows(chain["versions"]))


@fact_app.command("review")
def review(context: typer.Context, as_json: bool = _json_option()) -> None:
    """The review queue: pairs of contradicting claims too close to call (facts.review_margin).

    Example: memctl fact review --json
    """
    _output(_read(context, "fact review", lambda facts: facts.review()), as_json, _print_queue)


@fact_app.command("resolve")
def resolve(
    context: typer.Context,
    key: str = typer.Argument(..., metavar="ID", help="A version of a contested pair."),
    keep: bool = typer.Option(False, "--keep", help="It wins its conflicts."),
    reject: bool = typer.Option(False, "--reject", help="It never holds."),
    as_json: bool = _json_option(),
) -> None:
    """Decide a contested version: --keep or --reject. The chain is recomputed at once.

    Example: memctl fact resolve fact_0123456789abcdef01234567 --keep
    """
    from engine.errors import InputError

    if keep == reject:
        raise InputError("give exactly one of --keep and --reject")
    with open_memory(context, writable=True, holder="memctl fact resolve") as memory:
        shown = memory.facts.resolve(key, "keep" if keep else "reject")
    _output(shown, as_json, _print_fact)


@fact_app.callback()
def fact(
    context: typer.Context,
    words: list[str] = typer.Argument(None, metavar="SUBJECT SLOT VALUE", hidden=True),
    add_flag: bool = typer.Option(False, "--add", rich_help_panel=ALIASES,
                                  help="= `fact add SUBJECT SLOT VALUE` (with --conflicts ID: a contradicting "
                                       "claim)."),
    since: str = _since_option(hidden=True),
    source: str = _source_option(hidden=True),
    evidence: str = _evidence_option(hidden=True),
    conflicts: str = typer.Option(None, "--conflicts", metavar="ID", rich_help_panel=ALIASES,
                                  help="With --add: the claim contradicts version ID (prio decides)."),
    as_json: bool = _json_option(hidden=True),
) -> None:
    """Facts that change: version chains of slot facts (what holds now, what held when), conflicts and the
    review queue.

    Example: memctl fact history I residence
    """
    if context.invoked_subcommand is not None:
        return
    if not add_flag:
        typer.echo(context.get_help())
        raise typer.Exit(0)
    if len(words or []) != 3:
        from engine.errors import InputError

        raise InputError("--add takes SUBJECT SLOT VALUE, e.g. memctl fact --add I residence Denver")
    _added(context, *words, since, source, evidence, conflicts, as_json)


def _added(context, subject, slot, value, since, source, evidence, conflicts, as_json) -> None:
    with open_memory(context, writable=True, holder="memctl fact add") as memory:
        shown = memory.facts.add(subject, slot, value, since, source, evidence, conflicts)
    _output(shown, as_json, _print_fact)


def _read(context, command: str, read):
    """read(memory.facts) on a reader's Memory."""
    with open_memory(context, writable=False, holder=f"memctl {command}") as memory:
        return read(memory.facts)


def _output(result, as_json: bool, show) -> None:
    if as_json:
        print_json(result)
    else:
        show(result)


def _line(row: dict) -> str:
    until = row["valid_until"] or "now"
    return f"{row['fact']}  {row['subject']} {row['slot']}: {row['value']}  [{row['state']}] " \
           f"{row['valid_since']} → {until}"


def _print_rows(rows: list) -> None:
    for row in rows:
        typer.echo(_line(row))


def _print_queue(queue: list) -> None:
    for item in queue:
        typer.echo(f"{item['chain']}  {item['dimension']}  margin {item['margin']}")
        for row in item["versions"]:
            typer.echo(f"  {_line(row)}  prio {item['terms'].get(row['fact'], {}).get('prio')}")
    if not queue:
        typer.echo("the review queue is empty")


def _print_fact(shown: dict) -> None:
    typer.echo(_line(shown))
    for item in shown["contradicts"]:
        typer.echo(f"  contradicts {item['fact']} ({item['dimension']})")
