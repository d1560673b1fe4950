"""What `memctl recall` prints on a terminal (rich markup) or as JSON: answers with their cards and citations,
the keywords of a query, the explanation of one node."""

from __future__ import annotations

import typer

from memctl.cli.common import console, print_json

SNIPPET_SHOWN = 240


def show_answer(answer: dict, as_json: bool, trace: bool) -> None:
    if as_json:
        print_json({"query": answer["query"], "results": answer["results"], "packing": answer["packing"],
                    "trace": answer["trace"]})
        return
    out = console()
    from rich.markup import escape

    results = answer["results"]
    packing = answer["packing"]
    if not results and packing["dropped"]:
        out.print(f"{_memories_match(packing['matched'])} {escape(answer['query'])!s}, but none fits the budget of "
                  f"{_tokens(packing['budget'])} (the smallest needs {packing['smallest_dropped']:,}): raise --budget, "
                  "or give --budget 0 for no budget", highlight=False)
    elif not results:
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
    if results and packing["dropped"]:
        out.print(f"[dim]{packing['dropped']:,} more matched but did not fit the budget of "
                  f"{_tokens(packing['budget'])}[/dim]", highlight=False)
    if trace:
        from memctl.recall.trace import render

        out.print(render(answer["trace"], answer["query"]))


def _tokens(count: int) -> str:
    return f"{count:,} token" if count == 1 else f"{count:,} tokens"


def _memories_match(count: int) -> str:
    return f"{count:,} memory matches" if count == 1 else f"{count:,} memories match"


def _path_text(path: list) -> str:
    if len(path) < 2:
        seed = path[0] if path else {}
        if seed.get("fields"):
            return "matched " + "; ".join(f"{field}: {', '.join(words)}" for field, words in seed["fields"].items())
        return f"matched {', '.join(seed['words'])}" if seed.get("words") else ""
    parent, edge, node = path[0], path[1], path[2]
    return f"{parent.get('type')} {parent['id']} —{edge['edge']} ({edge['kind']})→ {node['id']}"


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_SHOWN else flat[: SNIPPET_SHOWN - 1] + "…"


def show_keywords(extracted: dict, as_json: bool) -> None:
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


def show_explain(explained: dict, as_json: bool) -> None:
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
