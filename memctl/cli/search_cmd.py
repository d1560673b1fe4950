"""`memctl index` and `memctl search`: plain documents in the document index (BM25+ over engine/text), the
store's `text:documents` index, apart from the memory graph's node index that recall reads (memctl.indexes).

`search` is the cold path the recall budget is measured on: it imports numpy and the few engine/text modules
a query touches, never jieba, numba or rich. No `from __future__ import annotations`: typer would evaluate
every annotation string of the module at start-up.
"""

import typer

from memctl.cli.common import open_memory, print_json
from memctl.indexes import DOCUMENTS
from memctl.isotime import parse_time
from memctl.settings.text_index import text_settings

STDIN_KEY = "stdin"


def index(
    context: typer.Context,
    files: list[str] = typer.Argument(None, metavar="[FILES]...",
                                      help="With --add: files, directories (read recursively) or - for stdin."),
    add: bool = typer.Option(False, "--add", help="Index FILES: key = the file name, title = its first line."),
    delete: list[str] = typer.Option(None, "--delete", metavar="KEY", help="Remove a document. Repeatable."),
    type_: str = typer.Option(None, "--type", metavar="T", help="Document type, for `search --type`."),
    tag: list[str] = typer.Option(None, "--tag", metavar="X", help="Tag every added document. Repeatable."),
    errors: str = typer.Option("strict", "--errors", metavar="MODE",
                               help="strict: refuse invalid UTF-8; replace: accept it with U+FFFD."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
) -> None:
    """Add plain documents to the document index (re-adding a file name replaces it), or --delete them.

    Every file is read and checked before anything is stored, and the whole command is one atomic batch:
    a binary or non-UTF-8 file (exit 2, naming the byte offset) or an unknown --delete key stores nothing.
    A document's time (for --since/--until) is the file's modification time, or now for stdin.
    """
    if add == bool(delete) or (add and not files) or (files and not add):
        _usage("give --add FILES… or --delete KEY")
    with open_memory(context, writable=True, holder="memctl index") as memory:
        from engine.text.index import TextIndex

        tokenizer, parameters = text_settings(memory.config)
        text_index = TextIndex(memory.store, tokenizer, parameters, owner=DOCUMENTS)
        if add:
            documents = read_documents(files, type_, tag or [], errors, memory.config.get("ingest.max_file_bytes"))
            replaced = sum(text_index.get(document["key"]) is not None for document in documents)
            text_index.add_many(documents)
            summary = {"indexed": len(documents), "replaced": replaced,
                       "keys": [document["key"] for document in documents]}
        else:
            summary = {"deleted": _delete_all(memory.store, text_index, delete)}
    if as_json:
        print_json(summary)
    elif add:
        typer.echo(f"indexed {summary['indexed']:,} document(s), {summary['replaced']:,} replaced")
    else:
        typer.echo(f"deleted {len(summary['deleted']):,} document(s)")


def _delete_all(store, text_index, keys: list) -> list:
    from engine.errors import InputError

    unique = list(dict.fromkeys(keys))
    missing = [key for key in unique if text_index.get(key) is None]
    if missing:
        raise InputError("no indexed document has this key; nothing was deleted", where=missing[0])
    with store.batch() as batch:
        for key in unique:
            text_index.delete(key, batch=batch)
    return unique


def _usage(message: str) -> None:
    from engine.errors import InputError

    raise InputError(message)


def read_documents(paths: list, type_: str | None, tags: list, errors: str, size_limit: int) -> list:
    """Documents for TextIndex.add_many from `paths` (files, directories, `-`); InputError on any bad one."""
    import os
    import sys
    import time

    from memctl.ingest import sources

    documents = []
    for path in paths:
        if path == sources.STDIN_ARGUMENT:
            source = sources.read_stream(sys.stdin.buffer, STDIN_KEY, size_limit)
            documents.append(_document(STDIN_KEY, source.data, time.time(), type_, tags, errors, size_limit))
            continue
        for name in sources.expand(path):
            source = sources.read_file(name, size_limit)
            documents.append(_document(name, source.data, os.path.getmtime(name), type_, tags, errors, size_limit))
    return documents


def _document(key: str, data: bytes, timestamp: float, type_, tags: list, errors: str, size_limit: int) -> dict:
    from engine.errors import InputError
    from memctl.ingest.decode import decode

    if not data.strip():
        raise InputError("empty document: nothing to index", where=key)
    text = decode(data, key, errors, size_limit)
    title = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return {"key": key, "fields": {"title": title, "text": text}, "type": type_, "timestamp": timestamp,
            "tags": tags}


def search(
    context: typer.Context,
    query: str = typer.Argument(..., metavar="QUERY",
                                help='Words to look for, any language; "quoted phrases" must match exactly.'),
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
    """
    window = (parse_time(since, "--since", end_of_day=False) if since else None,
              parse_time(until, "--until", end_of_day=True) if until else None)
    if window[0] is not None and window[1] is not None and window[0] > window[1]:
        _usage(f"--since {since} is after --until {until}")
    with open_memory(context, writable=False, holder="memctl search") as memory:
        tokenizer, parameters = text_settings(memory.config)
        searcher = memory.store.kind(DOCUMENTS).searcher(tokenizer, parameters)
        hits = searcher.search(query, top, types=type_ or None, since=window[0], until=window[1], tags=tag or None)
    rows = [{"rank": rank, "key": hit.key, "score": hit.score, "terms": hit.terms, "type": hit.type,
             "time": _iso(hit.timestamp)} for rank, hit in enumerate(hits, start=1)]
    if as_json:
        print_json({"query": query, "hits": rows})
    else:
        _print_hits(query, rows)


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
