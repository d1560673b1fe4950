"""`memctl index add|delete`: plain documents into and out of their keyword index (Memory.documents).

`memctl index --add FILES…` (seed 001 §25.5) and `--delete KEY` stay as aliases of the subcommands.
"""

import typer

from memctl.cli.common import open_memory, print_json
from memctl.cli.verb_group import VerbGroup

ALIASES = "Aliases (seed 001 §25.5)"

index_app = typer.Typer(cls=VerbGroup, invoke_without_command=True)


def _type_option(hidden: bool = False):
    return typer.Option(None, "--type", metavar="T", help="Document type, for `search --type`.", hidden=hidden)


def _tag_option(hidden: bool = False):
    return typer.Option(None, "--tag", metavar="X", help="Tag every added document. Repeatable.", hidden=hidden)


def _errors_option(hidden: bool = False):
    return typer.Option("strict", "--errors", metavar="MODE",
                        help="strict: refuse invalid UTF-8; replace: accept it with U+FFFD.", hidden=hidden)


def _json_option(hidden: bool = False):
    return typer.Option(False, "--json", help="Print the summary as one JSON object.", hidden=hidden)


@index_app.command("add")
def add(
    context: typer.Context,
    files: list[str] = typer.Argument(..., metavar="FILES...",
                                      help="Files, directories (read recursively) or - for stdin."),
    type_: str = _type_option(),
    tag: list[str] = _tag_option(),
    errors: str = _errors_option(),
    as_json: bool = _json_option(),
) -> None:
    """Index documents: key = the file name, title = its first line; re-adding a file name replaces it.

    Every file is read and checked before anything is stored, and the whole command is one atomic batch: a
    binary or non-UTF-8 file (exit 2, naming the byte offset) stores nothing. A document's time (for search
    --since/--until) is the file's modification time, or now for stdin.

    Example: memctl index add ./samples/*.txt --tag samples
    """
    _add(context, files, type_, tag, errors, as_json)


@index_app.command("delete")
def delete(
    context: typer.Context,
    keys: list[str] = typer.Argument(..., metavar="KEY...", help="Keys (file names) of indexed documents."),
    as_json: bool = _json_option(),
) -> None:
    """Remove documents, as one atomic batch: an unknown key removes nothing (exit 2).

    Example: memctl index delete ./samples/journal.txt
    """
    _delete(context, keys, as_json)


@index_app.callback()
def index(
    context: typer.Context,
    files: list[str] = typer.Argument(None, metavar="[FILES]...", hidden=True),
    add_files: bool = typer.Option(False, "--add", rich_help_panel=ALIASES, help="= `index add FILES…`."),
    delete_keys: list[str] = typer.Option(None, "--delete", metavar="KEY", hidden=True),
    type_: str = _type_option(hidden=True),
    tag: list[str] = _tag_option(hidden=True),
    errors: str = _errors_option(hidden=True),
    as_json: bool = _json_option(hidden=True),
) -> None:
    """Plain documents in their keyword index, for `memctl search`: add, replace, delete.

    Example: memctl index add notes/ && memctl search "蓝牙"
    """
    if context.invoked_subcommand is not None:
        return
    if add_files == bool(delete_keys) or (add_files and not files) or (files and not add_files):
        from engine.errors import InputError

        raise InputError("give `index add FILES…` or `index delete KEY…` (or the older --add FILES… / --delete KEY)")
    if add_files:
        _add(context, files, type_, tag, errors, as_json)
    else:
        _delete(context, delete_keys, as_json)


def _add(context: typer.Context, files: list, type_, tags, errors: str, as_json: bool) -> None:
    with open_memory(context, writable=True, holder="memctl index") as memory:
        summary = memory.documents.add_files(files, type_, tags or [], errors)
    if as_json:
        print_json(summary)
    else:
        typer.echo(f"indexed {summary['indexed']:,} document(s), {summary['replaced']:,} replaced")


def _delete(context: typer.Context, keys: list, as_json: bool) -> None:
    with open_memory(context, writable=True, holder="memctl index") as memory:
        deleted = memory.documents.delete(keys)
    if as_json:
        print_json({"deleted": deleted})
    else:
        typer.echo(f"deleted {len(deleted):,} document(s)")
