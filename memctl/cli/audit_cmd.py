"""`memctl audit --fact ID [--history]`: the audit view of a fact (Memory.facts.audit)."""

import typer

from memctl.cli.common import open_memory, print_json


def audit(
    context: typer.Context,
    fact: str = typer.Option(..., "--fact", metavar="ID", help="The fact version to audit."),
    history: bool = typer.Option(False, "--history", help="Its whole chain, not the version alone."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Audit a fact: its chain, each version's evidence with verified citations, the prio terms it is weighed
    with, open reviews, and who or what changed which version's state, and when.

    Example: memctl audit --fact fact_0123456789abcdef01234567 --history
    """
    with open_memory(context, writable=False, holder="memctl audit") as memory:
        report = memory.facts.audit(fact, history)
    if as_json:
        print_json(report)
        return
    for row in report["versions"]:
        mark = "*" if row["fact"] in report["in_force"] else " "
        typer.echo(f"{mark} {row['fact']}  {row['subject']} {row['slot']}: {row['value']}  [{row['state']}] "
                   f"{row['valid_since']} → {row['valid_until'] or 'now'}  source {row['source']}  "
                   f"prio {row['prio']['prio']}")
        for citation in row["evidence"]:
            shown = citation["snippet"] if citation["snippet"] is not None else f"UNVERIFIED: {citation['error']}"
            typer.echo(f"    {citation['raw_id']}@{citation['offset']}+{citation['length']}  {shown}")
    for review in report["reviews"]:
        typer.echo(f"review {review['id']}: {review['dimension']}, margin {review['margin']}")
    for change in report["changes"]:
        typer.echo(f"{change['at']}  {change['by']}: {change['fact']} {change['from']} → {change['to']}")
