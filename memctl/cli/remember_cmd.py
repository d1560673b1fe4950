"""`memctl remember` (alias `memctl add`): ingest and convert one exchange in one commit, printing what it created."""

import typer

from memctl.cli.common import open_memory, print_json
from memctl.cli.input_options import errors_option, format_option, raw_option, text_option


def remember(
    context: typer.Context,
    raw: list[str] = raw_option(),
    text: list[str] = text_option(),
    format: str = format_option(),
    errors: str = errors_option(),
    as_json: bool = typer.Option(False, "--json", help="Print what was created as one JSON object."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing on success."),
) -> None:
    """Remember an exchange: `ingest` and `r2g` of the input in one process and one commit, the write an agent
    makes after every exchange. Prints the ids created, one per line: `chunk RAW_ID`, then `TYPE KEY` per node.

    Input and checks are ingest's: bad input (exit 2) changes nothing. The store ends as `ingest` then `r2g`
    leave it, and the next `recall` finds the exchange.

    Example: memctl remember --text $'user: I moved to Lisbon in May\\nassistant: Noted, Lisbon since May.'
    """
    with open_memory(context, writable=True, holder="memctl remember") as memory:
        created = memory.remember(raw or [], text or [], format, errors)
    if as_json:
        print_json(created)
    elif not quiet:
        lines = [f"chunk {raw_id}" for raw_id in created["chunks"]]
        lines += [f"{node['type']} {node['key']}" for node in created["nodes"]]
        typer.echo("\n".join(lines) if lines else "nothing new: this input was remembered before")
