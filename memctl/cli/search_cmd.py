"""`memctl index` and `memctl search`: plain documents in the keyword index (BM25+ over engine/text).

`search` is the cold path the recall budget is measured on: it imports numpy and the few engine/text modules
a query touches, never jieba or numba, and prints with rich only when a table is asked for.
"""

from __future__ import annotations

import typer

from memctl.cli.common import console, open_memory, print_json

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
    """Add plain documents to the keyword index (re-adding a file name replaces it), or --delete them.

    Every file is read and checked before anything is stored, and the whole command is one atomic batch:
    a binary or non-UTF-8 file (exit 2, naming the byte offset) or an unknown --delete key stores nothing.
    A document's time (for --since/--until) is the file's modification time, or now for stdin.
    """
    if add == bool(delete) or (add and not files) or (files and not add):
        _usage("give --add FILES… or --delete KEY")
    with open_memory(context, writable=True, holder="memctl index") as memory:
        from engine.text.index import TextIndex

        tokenizer, parameters = text_settings(memory.config)
        text_index = TextIndex(memory.store, tokenizer, parameters)
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
        searcher = memory.store.kind("text").searcher(tokenizer, parameters)
        hits = searcher.search(query, top, types=type_ or None, since=window[0], until=window[1], tags=tag or None)
    rows = [{"rank": rank, "key": hit.key, "score": hit.score, "terms": hit.terms, "type": hit.type,
             "time": _iso(hit.timestamp)} for rank, hit in enumerate(hits, start=1)]
    if as_json:
        print_json({"query": query, "hits": rows})
    else:
        _print_hits(query, rows)


def parse_time(text: str, option: str, end_of_day: bool) -> float:
    """Seconds since the epoch of an ISO date or date-time; a bare date at --until means its last instant."""
    from datetime import date, datetime, timedelta

    from engine.errors import InputError

    cleaned = text.strip()
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        raise InputError(f"{text!r} is not an ISO date or date-time (examples: 2024-05-01, 2024-05-01T09:30, "
                         "2024-05-01T09:30:00+08:00)", where=option) from None
    try:
        date.fromisoformat(cleaned)
    except ValueError:
        return moment.timestamp()
    if end_of_day:
        return (moment + timedelta(days=1)).timestamp() - 1e-6
    return moment.timestamp()


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    from datetime import datetime

    return datetime.fromtimestamp(timestamp).astimezone().isoformat(timespec="seconds")


def _print_hits(query: str, rows: list) -> None:
    if not rows:
        typer.echo(f"no documents match {query!r}")
        return
    from rich.table import Table

    table = Table(show_header=True, header_style="bold")
    for name, justify in (("#", "right"), ("score", "right"), ("key", "left"), ("matched", "left"),
                          ("type", "left"), ("time", "left")):
        table.add_column(name, justify=justify, overflow="fold")
    for row in rows:
        table.add_row(str(row["rank"]), f"{row['score']:.4f}", row["key"], " ".join(row["terms"]),
                      row["type"] or "", (row["time"] or "")[:16].replace("T", " "))
    console().print(table, highlight=False)


def text_settings(config):
    """The tokenizer and BM25 parameters of the `index` section of the configuration."""
    from engine.text.bm25 import BM25Parameters
    from engine.text.tokenizer import Tokenizer

    section = config.section("index")
    try:
        parameters = BM25Parameters(k1=section["k1"], b=section["b"], delta=section["delta"],
                                    field_weights=dict(section["field_weights"]))
    except ValueError as error:
        from engine.errors import InputError

        raise InputError(f"{error} (settings index.k1, index.b, index.delta, index.field_weights)") from None
    tokenizer = Tokenizer(stopwords_en=_word_list(section["stopwords_en"], "index.stopwords_en"),
                          stopwords_zh=_word_list(section["stopwords_zh"], "index.stopwords_zh"),
                          user_dictionary=section["user_dictionary"])
    return tokenizer, parameters


def _word_list(path: str | None, setting: str):
    """One word per line ('#' starts a comment line), or None to keep the packaged list."""
    if path is None:
        return None
    from engine.errors import InputError

    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError as error:
        raise InputError(f"cannot read the word list of {setting}: {error.strerror}", where=path) from None
    except UnicodeDecodeError as error:
        raise InputError(f"word list of {setting} is not UTF-8 (byte offset {error.start})", where=path) from None
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
