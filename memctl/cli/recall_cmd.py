"""`memctl recall`: memories for a query, with citations, inside a token budget (seed 001 §4.y W3–W6, §5).

The cold path imports numpy, the engine's text and graph readers and memctl/recall, never jieba's dictionary
(Chinese queries are segmented against the index's own terms) or numba.
"""

from __future__ import annotations

import typer

from memctl.cli.common import console, open_memory, print_json, skip_teardown

BATCH_OPTIONS = {"top", "budget", "k_hop", "types", "since", "until", "graph_only", "allow_raw", "cite", "mvp", "now"}
SNIPPET_SHOWN = 240


def recall(
    context: typer.Context,
    q: str = typer.Option(None, "--q", metavar="TEXT", help="The query, any language."),
    top: int = typer.Option(10, "--top", min=1, max=10_000, metavar="N", help="At most N results."),
    budget: int = typer.Option(None, "--budget", min=0, metavar="TOKENS",
                               help="Token budget of the packed results (default recall.budget_tokens; 0: none)."),
    k_hop: int = typer.Option(None, "--k-hop", min=0, max=5, metavar="K",
                              help="Graph expansion depth (default recall.k_hop, or recall.mvp_k_hop with --mvp)."),
    types: list[str] = typer.Option(None, "--types", metavar="T,…",
                                    help="Result node types, comma-separated or repeated (default "
                                         "recall.result_types; RawPassage for raw-only hits)."),
    since: str = typer.Option(None, "--since", metavar="D", help="Only memories from this time on (ISO date)."),
    until: str = typer.Option(None, "--until", metavar="D", help="Only memories up to this time (ISO date)."),
    graph_only: bool = typer.Option(False, "--graph-only",
                                    help="Do not use the NodeIndex: boolean filter over the graph (W4 fallback)."),
    allow_raw: bool = typer.Option(False, "--allow-raw", help="Also search the raw text (W5 fallback)."),
    cite: bool = typer.Option(False, "--cite", help="Look for the source text too: runs the raw fallback."),
    mvp: bool = typer.Option(False, "--mvp", help="MVP workflow: k = 1, recall.mvp_lambda, mvp edge types."),
    explain: str = typer.Option(None, "--explain", metavar="NODE_ID",
                                help="Explain one node: weight, neighbours, citations, and its rank for --q."),
    queries: str = typer.Option(None, "--queries", metavar="FILE.jsonl",
                                help='Batch: one {"id": …, "q": …, options…} per line (- for stdin); the store is '
                                     "opened once; with --json one {\"id\", \"results\"} line per query, in order."),
    extract_keywords: bool = typer.Option(False, "--extract-keywords",
                                          help="Only show the query's keywords, entities, times and patterns (W3)."),
    now: str = typer.Option(None, "--now", metavar="D",
                            help="Reference time for recency and relative dates (default: now)."),
    trace: bool = typer.Option(False, "--trace", help="Show each stage: timings, candidates, top scores, fallbacks."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (see README for the schema)."),
) -> None:
    """Recall memories: NodeIndex BM25 → raw fallback → graph expansion (reply hop, k-hop + PPR) → ranking →
    budget packing, each result with its evidence path and citations verified against the raw blob's sha256."""
    from engine.errors import InputError

    if queries is not None and (q is not None or explain is not None or extract_keywords):
        raise InputError("--queries runs its own queries: leave out --q, --explain and --extract-keywords")
    if queries is None and explain is None and not q:
        raise InputError("give --q TEXT, --queries FILE.jsonl or --explain NODE_ID")
    base = _request_fields(top=top, budget=budget, k_hop=k_hop, types=types, since=since, until=until,
                           graph_only=graph_only, allow_raw=allow_raw, cite=cite, mvp=mvp, now=now, where=None)
    batch = _read_batch(queries, base) if queries is not None else None
    with open_memory(context, writable=False, holder="memctl recall") as memory:
        recaller = memory.recaller()
        from memctl.recall.pipeline import Request

        if batch is not None:
            _run_batch(recaller, batch, as_json, trace)
        elif explain is not None:
            request = Request(q=q, **base) if q else None
            _show_explain(recaller.explain(explain, request), as_json)
        elif extract_keywords:
            _show_keywords(recaller.extract(Request(q=q, **base)), as_json)
        else:
            answer = recaller.recall(Request(q=q, **base, explain=trace))
            _show_answer(answer, as_json, trace)
    skip_teardown()


# --- options ------------------------------------------------------------------------------------------------


def _request_fields(*, top, budget, k_hop, types, since, until, graph_only, allow_raw, cite, mvp, now, where) -> dict:
    from engine.errors import InputError
    from memctl.isotime import parse_time

    window = (parse_time(since, _label("--since", where), end_of_day=False) if since else None,
              parse_time(until, _label("--until", where), end_of_day=True) if until else None)
    if window[0] is not None and window[1] is not None and window[0] > window[1]:
        raise InputError(f"--since {since} is after --until {until}", where)
    return {"top": top, "budget": budget, "k_hop": k_hop, "types": _types(types, where), "since": window[0],
            "until": window[1], "graph_only": bool(graph_only), "allow_raw": bool(allow_raw), "cite": bool(cite),
            "mvp": bool(mvp), "now": parse_time(now, _label("--now", where), end_of_day=False) if now else None}


def _label(option: str, where) -> str:
    return f"{where}: {option}" if where else option


def _types(values, where) -> tuple | None:
    from engine.errors import InputError

    if not values:
        return None
    if isinstance(values, str):
        values = [values]
    names = [name.strip() for value in values for name in str(value).split(",") if name.strip()]
    bad = [name for name in names if not name.replace("_", "").isalnum()]
    if bad:
        raise InputError(f"--types wants node type names, not {bad[0]!r}", where)
    return tuple(dict.fromkeys(names)) or None


def _read_batch(path: str, base: dict) -> list:
    """[(id, Request fields)] of every line, all checked before any query runs."""
    import json
    import sys

    from engine.errors import InputError

    if path == "-":
        text = sys.stdin.read()
        name = "<stdin>"
    else:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except FileNotFoundError:
            raise InputError("no such file", path) from None
        except UnicodeDecodeError as error:
            raise InputError(f"not UTF-8 (byte offset {error.start})", path) from None
        name = path
    batch = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            item = json.loads(line)
        except ValueError as error:
            raise InputError(f"not JSON ({error.msg})", where) from None
        if not isinstance(item, dict) or not isinstance(item.get("q"), str) or not item["q"].strip():
            raise InputError('each line must be an object with a non-empty "q"', where)
        unknown = sorted(set(item) - BATCH_OPTIONS - {"id", "q"})
        if unknown:
            raise InputError(f"unknown option {unknown[0]!r} (known: {', '.join(sorted(BATCH_OPTIONS))})", where)
        fields = dict(base)
        given = {name: item[name] for name in BATCH_OPTIONS if name in item}
        if given:
            fields = _merge_line(base, given, where)
        batch.append((item.get("id", number), item["q"], fields))
    return batch


def _merge_line(base: dict, given: dict, where: str) -> dict:
    from engine.errors import InputError

    for name in ("top", "budget", "k_hop"):
        value = given.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise InputError(f"{name} must be a non-negative whole number", where)
    for name in ("graph_only", "allow_raw", "cite", "mvp"):
        if name in given and not isinstance(given[name], bool):
            raise InputError(f"{name} must be true or false", where)
    for name in ("since", "until", "now"):
        if given.get(name) is not None and not isinstance(given[name], str):
            raise InputError(f"{name} must be an ISO date or date-time text", where)
    if given.get("top") == 0:
        raise InputError("top must be at least 1", where)
    merged = {**base, **{name: value for name, value in given.items() if name in ("top", "budget", "k_hop")
                         and value is not None}}
    for name in ("graph_only", "allow_raw", "cite", "mvp"):
        if name in given:
            merged[name] = given[name]
    if "types" in given:
        merged["types"] = _types(given["types"], where)
    timed = _request_fields(top=1, budget=None, k_hop=None, types=None, since=given.get("since"),
                            until=given.get("until"), graph_only=False, allow_raw=False, cite=False, mvp=False,
                            now=given.get("now"), where=where)
    for name in ("since", "until", "now"):
        if given.get(name) is not None:
            merged[name] = timed[name]
    return merged


# --- output -------------------------------------------------------------------------------------------------


def _run_batch(recaller, batch: list, as_json: bool, trace: bool) -> None:
    from memctl.recall.pipeline import Request

    for identifier, text, fields in batch:
        answer = recaller.recall(Request(q=text, **fields, explain=trace))
        if as_json:
            line = {"id": identifier, "results": answer["results"]}
            if trace:
                line["trace"] = answer["trace"]
            print_json(line)
        else:
            typer.echo(f"== {identifier}: {text}")
            _show_answer(answer, False, trace)


def _show_answer(answer: dict, as_json: bool, trace: bool) -> None:
    if as_json:
        print_json({"query": answer["query"], "results": answer["results"], "trace": answer["trace"]})
        return
    out = console()
    from rich.markup import escape

    results = answer["results"]
    if not results:
        out.print(f"no memories match {escape(answer['query'])!s}", highlight=False)
    for rank, card in enumerate(results, start=1):
        out.print(f"[bold]{rank:>2}. {card['score']:.3f}[/bold] [cyan]{escape(card['type'] or '')}[/cyan] "
                  f"{escape(card['title'] or '')}  [dim]{card['id']} · {card['tokens']} tokens[/dim]", highlight=False)
        if card["text"] and card["text"] != card["title"]:
            out.print(f"    {escape(_clip(card['text']))}", highlight=False)
        path = _path_text(card["path"])
        if path:
            out.print(f"    [dim]path: {escape(path)}[/dim]", highlight=False)
        for citation in card["citations"]:
            where = f"{citation['raw_id']}@{citation['offset']}+{citation['length']}"
            source = " ".join(part for part in (citation.get("source_id"), citation.get("ts")) if part)
            body = citation["snippet"] if citation["snippet"] is not None else f"(unreadable: {citation.get('error')})"
            out.print(f"    [green]» {escape(source)}[/green] [dim]{where}[/dim] {escape(_clip(body))}",
                      highlight=False)
    if trace:
        from memctl.recall.trace import render

        out.print(render(answer["trace"], answer["query"]))


def _path_text(path: list) -> str:
    if len(path) < 2:
        matched = path[0].get("matched") if path else None
        return f"matched {', '.join(matched)}" if matched else ""
    parent, edge, node = path[0], path[1], path[2]
    return f"{parent.get('type')} {parent['id']} —{edge['edge']} ({edge['kind']})→ {node['id']}"


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_SHOWN else flat[: SNIPPET_SHOWN - 1] + "…"


def _show_keywords(extracted: dict, as_json: bool) -> None:
    if as_json:
        print_json(extracted)
        return
    typer.echo(f"keywords: {' '.join(extracted['keywords'])}")
    if extracted["entities"]:
        typer.echo("entities: " + ", ".join(f"{entity['name']} ({entity['type']})" for entity in extracted["entities"]))
    for kind, tokens in extracted["patterns"].items():
        typer.echo(f"pattern {kind}: {' '.join(tokens)}")
    for time in extracted["times"]:
        typer.echo(f"time: {time['expression']} → {time['value'] or '?'} ({time['granularity']})")
    if extracted["clauses"]:
        typer.echo(f"clauses: {' | '.join(extracted['clauses'])}")


def _show_explain(explained: dict, as_json: bool) -> None:
    if as_json:
        print_json(explained)
        return
    from rich.markup import escape

    out = console()
    out.print(f"[bold]{escape(explained['id'])}[/bold] [cyan]{escape(explained['type'] or '')}[/cyan] "
              f"{escape(explained['title'] or '')}", highlight=False)
    if explained.get("text"):
        out.print(f"  {escape(_clip(explained['text']))}", highlight=False)
    out.print(f"  weight {explained['weight']:.4f} (recency {explained['recency']:.4f})", highlight=False)
    if "query" in explained:
        rank = explained["rank"]
        if rank is None:
            out.print(f"  not among the results for {escape(explained['query'])!s}", highlight=False)
        else:
            result = explained["result"]
            scores = ", ".join(f"{name} {value:.3f}" for name, value in result["scores"].items())
            out.print(f"  rank {rank} for {escape(explained['query'])!s}: score {result['score']:.4f} ({scores})",
                      highlight=False)
    for neighbour in explained["neighbors"]:
        arrow = "→" if neighbour["direction"] == "out" else "←"
        out.print(f"  {arrow} {neighbour['edge']} ({neighbour['weight']:.2f}) [cyan]{escape(neighbour['type'] or '')}"
                  f"[/cyan] {escape(_clip(neighbour['title'] or ''))} [dim]{neighbour['id']}[/dim]", highlight=False)
    for citation in explained["citations"]:
        body = citation["snippet"] if citation["snippet"] is not None else f"(unreadable: {citation.get('error')})"
        out.print(f"  [green]» {escape(citation.get('source_id') or '')}[/green] {escape(_clip(body))}",
                  highlight=False)
