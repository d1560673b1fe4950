"""`memctl search`: rank the indexed plain documents for a query (Memory.documents.search).

`search` is a cold path the recall budget is measured on: it imports numpy and the few engine/text modules a
query touches, never jieba, numba or rich. No `from __future__ import annotations`: typer would evaluate every
annotation string of the module at start-up.
"""

import typer

from memctl.cli.common import one_query, open_memory, print_json
from memctl.isotime import parse_time


def search(
    context: typer.Context,
    query: str = typer.Argument(None, metavar="QUERY", show_default=False,
                                help='Words to look for, any language; "quoted phrases" must match exactly.'),
    q: str = typer.Option(None, "--q", metavar="TEXT", help="The query, as an option (as `recall --q`)."),
    top: int = typer.Option(10, "--top", min=1, max=10_000, metavar="N", help="How many hits to print."),
    type_: list[str] = typer.Option(None, "--type", metavar="T", help="Only documents of this type. Repeatable."),
    since: str = typer.Option(None, "--since", metavar="D",
                              help="Only documents from this time on: an ISO date or date-time "
                                   "(2024-05-01, 2024-05-01T09:30, 2024-05-01T09:30+08:00; no zone = local)."),
    until: str = typer.Option(None, "--until", metavar="D",
                              help="Only documents up to this time (a date includes the whole day)."),
    tag: list[str] = typer.Option(None, "--tag", metavar="X", help="Only documents with this tag. Repeatable."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object with a list of hits."),
) -> None:
    """Rank indexed documents by BM25+ for QUERY and print the best with their scores and matched terms.

    Chinese queries are segmented against the index's own terms, so a search never loads jieba.

    Example: memctl search "蓝牙 打不开" --top 5 --since 2024-05-01
    """
    from engine.errors import InputError

    text = one_query(query, q)
    window = (parse_time(since, "--since", end_of_day=False) if since else None,
              parse_time(until, "--until", end_of_day=True) if until else None)
    if window[0] is not None and window[1] is not None and window[0] > window[1]:
        raise InputError(f"--since {since} is after --until {until}")
    with open_memory(context, writable=False, holder="memctl search") as memory:
        hits = memory.documents.search(text, top, type_, window[0], window[1], tag)
    rows = [{"rank": hit["rank"], "key": hit["key"], "score": hit["score"], "terms": hit["terms"],
             "type": hit["type"], "time": _iso(hit["timestamp"])} for hit in hits]
    if as_json:
        print_json({"query": text, "hits": rows})
    else:
        _print_hits(text, rows)


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    from datetime import datetime

    return datetime.fromtimestamp(timestamp).astimezone().isoformat(timespec="seconds")


def _print_hits(query: str, rows: list) -> None:
    """An aligned plain-text table: rich's costs 50 ms of a cold `memctl search` (import and layout)."""
    if not rows:
        typer.echo(f"no documents match {query!r}")
        return
    header = ["#", "score", "key", "matched", "type", "time"]
    lines = [header] + [[str(row["rank"]), f"{row['score']:.4f}", row["key"], " ".join(row["terms"]),
                         row["type"] or "", (row["time"] or "")[:16].replace("T", " ")] for row in rows]
    widths = [max(_width(line[column]) for line in lines) for column in range(len(header))]
    right = (True, True, False, False, False, False)
    for line in lines:
        cells = [_pad(cell, width, flush_right) for cell, width, flush_right in zip(line, widths, right)]
        typer.echo("  ".join(cells).rstrip())


def _width(text: str) -> int:
    """Terminal columns of `text`: East Asian wide and full-width characters take two."""
    from unicodedata import east_asian_width

    return sum(2 if east_asian_width(character) in "WF" else 1 for character in text)


def _pad(text: str, width: int, flush_right: bool) -> str:
    padding = " " * (width - _width(text))
    return padding + text if flush_right else text + padding
