"""`memctl graph`: add nodes and edges, query neighbours, k-hop and personalized PageRank, bulk import and
export. Draft by the graph helper (issue 5); register in app.py with

    app.add_typer(graph_cmd.graph_app, name="graph")

Only typer is imported at module level: `memctl graph --khop` is a cold process with a 0.4 s budget, so the
engine (numpy) is imported inside the command, and scipy/numba never are.
"""

from __future__ import annotations

import typer

from memctl.cli.common import MemctlGroup, open_memory, print_json

graph_app = typer.Typer(cls=MemctlGroup, no_args_is_help=True,
                        help="The memory graph: typed nodes and edges, k-hop expansion, personalized PageRank.")


@graph_app.callback(invoke_without_command=True)
def graph(
    context: typer.Context,
    add_node: list[str] = typer.Option(None, "--add-node", metavar="TYPE:NAME",
                                       help='Add a node whose key is TYPE:NAME, e.g. "Concept:Win11蓝牙故障". '
                                            "Repeatable."),
    add_edge: tuple[str, str, str] = typer.Option(None, "--add-edge", metavar="SRC TYPE DST",
                                                  help="Add an edge between two node keys (after --add-node; "
                                                       "more edges: `graph import`)."),
    weight: float = typer.Option(1.0, "--weight", metavar="W", help="Weight of every --add-edge (≥ 0)."),
    neighbors: str = typer.Option(None, "--neighbors", metavar="ID", help="List the edges of node ID."),
    khop: list[str] = typer.Option(None, "--khop", metavar="ID", help="Expand k hops from ID. Repeatable."),
    k: int = typer.Option(None, "--k", min=0, max=16, help="Hops for --khop and --ppr (default: recall.k_hop)."),
    ppr: list[str] = typer.Option(None, "--ppr", metavar="ID",
                                  help="Personalized PageRank seeded at ID over its k-hop subgraph. Repeatable."),
    whole_graph: bool = typer.Option(False, "--whole-graph", help="Run --ppr over the whole graph instead."),
    types: str = typer.Option(None, "--types", metavar="T,…", help="Only these edge types (comma-separated)."),
    direction: str = typer.Option("out", "--direction", metavar="D", help="out, in or both."),
    limit: int = typer.Option(20, "--limit", min=1, metavar="N", help="Rows to print per query."),
    stats: bool = typer.Option(False, "--stats", help="Degree statistics per edge type."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Add nodes and edges (one atomic batch), then answer the queries given, in the order shown here."""
    if context.invoked_subcommand is not None:
        return
    edges = [add_edge] if add_edge else []
    if not any([add_node, edges, neighbors, khop, ppr, stats]):
        typer.echo(context.get_help())
        raise typer.Exit(0)
    writes = bool(add_node or edges)
    with open_memory(context, writable=writes, holder="memctl graph") as memory:
        from engine.graph.api import GraphStore
        from engine.graph.traverse import DegreeCap

        store = GraphStore(memory.store)
        result: dict = {}
        if writes:
            result.update(_add(store, add_node or [], edges, weight))
        edge_types = [name.strip() for name in types.split(",") if name.strip()] if types else None
        hops = memory.config.get("recall.k_hop") if k is None else k
        cap_limits = memory.config.get("graph.degree_cap") or {}
        cap = DegreeCap(cap_limits, now=store.clock()) if cap_limits else None
        if neighbors:
            result["neighbors"] = store.neighbors(neighbors, direction, edge_types, limit, cap).rows()
        if khop:
            result["khop"] = store.khop(khop, hops, edge_types, direction, cap=cap).rows(limit)
        if ppr:
            weights = memory.config.get("graph.edge_weights")
            ranked = store.personalized_pagerank(ppr, None if whole_graph else hops, edge_types, direction,
                                                 weights, top=limit)
            result["ppr"] = [{"key": key, "score": score} for key, score in ranked]
        if stats:
            result["stats"] = store.degree_statistics(direction)
    if as_json:
        print_json(result)
    else:
        _print_text(result)


def _add(store, nodes: list, edges: list, weight: float) -> dict:
    from engine.errors import InputError

    with store.batch() as writer:
        added_nodes = []
        for text in nodes:
            node_type, separator, name = text.partition(":")
            if not separator or not name:
                raise InputError('--add-node wants TYPE:NAME, e.g. "Concept:Win11蓝牙故障"', where=text)
            writer.add_node(text, node_type)
            added_nodes.append(text)
        added_edges = [writer.add_edge(source, edge_type, target, weight=weight)
                       for source, edge_type, target in edges]
    return {"added_nodes": added_nodes, "added_edges": added_edges}


def _print_text(result: dict) -> None:
    for key in result.get("added_nodes", []):
        typer.echo(f"added node {key}")
    for key in result.get("added_edges", []):
        typer.echo(f"added edge {key}")
    for row in result.get("neighbors", []):
        typer.echo(f"{row['type']:<14} {row['weight']:>8.3f}  {row['key']}")
    for row in result.get("khop", []):
        via = f"  via {row['via']}" if row["via"] else ""
        typer.echo(f"hop {row['hop']}  {row['key']}{via}")
    for row in result.get("ppr", []):
        typer.echo(f"{row['score']:.6f}  {row['key']}")
    for name, entry in result.get("stats", {}).items():
        typer.echo(f"{name:<14} edges {entry['edges']:>10,}  nodes {entry['nodes']:>9,}  "
                   f"mean {entry['mean_degree']:>8.2f}  max {entry['max_degree']:>8,} ({entry['max_node']})")


@graph_app.command("import")
def import_command(
    context: typer.Context,
    file: str = typer.Argument(..., metavar="FILE.jsonl", help="One node or edge object per line; - for stdin."),
    batch_lines: int = typer.Option(20_000, "--batch-lines", min=1, metavar="N",
                                    help="Lines per atomic batch (one commit)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
) -> None:
    """Import nodes and edges from JSONL, streaming. Nodes must come before the edges that use them.

    A bad line stops the import naming the file and line; earlier batches stay imported, and since nodes and
    edges are keyed, running the corrected file again converges."""
    import os
    import sys

    with open_memory(context, writable=True, holder="memctl graph import") as memory:
        from engine.graph.api import GraphStore
        from engine.graph.transfer import import_jsonl

        store = GraphStore(memory.store)
        if file == "-":
            report = import_jsonl(store, sys.stdin.buffer, batch_lines)
        else:
            report = _import_with_progress(store, file, batch_lines, os.path.getsize(file), quiet=as_json)
    summary = {"nodes": report.nodes, "edges": report.edges, "lines": report.lines, "batches": report.batches}
    if as_json:
        print_json(summary)
    else:
        typer.echo(f"imported {report.nodes:,} node(s) and {report.edges:,} edge(s) from {report.lines:,} line(s)")


def _import_with_progress(store, file: str, batch_lines: int, size: int, quiet: bool):
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    from engine.graph.transfer import import_jsonl

    with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                  TimeRemainingColumn(), transient=True, disable=quiet) as progress:
        task = progress.add_task("importing", total=size)
        return import_jsonl(store, file, batch_lines,
                            progress=lambda report: progress.update(task, completed=report.bytes))


@graph_app.command("export")
def export_command(
    context: typer.Context,
    out: str = typer.Option("-", "--out", metavar="FILE", help="Write here instead of stdout."),
    format_: str = typer.Option(None, "--format", metavar="F",
                                help="jsonl, graphml or dot (default: from --out's extension, else jsonl)."),
    around: list[str] = typer.Option(None, "--around", metavar="ID",
                                     help="Only the k-hop subgraph around ID (repeatable); default: everything."),
    k: int = typer.Option(1, "--k", min=0, max=16, help="Hops around --around."),
    types: str = typer.Option(None, "--types", metavar="T,…", help="Only these edge types."),
    direction: str = typer.Option("both", "--direction", metavar="D", help="out, in or both (for --around)."),
) -> None:
    """Export the graph, or a subgraph around some nodes, as JSONL (re-importable), GraphML or Graphviz DOT."""
    import sys

    chosen = format_ or {"graphml": "graphml", "dot": "dot", "gv": "dot"}.get(out.rsplit(".", 1)[-1], "jsonl")
    edge_types = [name.strip() for name in types.split(",") if name.strip()] if types else None
    with open_memory(context, writable=False, holder="memctl graph export") as memory:
        from engine.graph.api import GraphStore
        from engine.graph.transfer import export

        store = GraphStore(memory.store)
        if out == "-":
            export(store, sys.stdout, chosen, around or None, k, edge_types, direction)
        else:
            with open(out, "w", encoding="utf-8") as stream:
                counts = export(store, stream, chosen, around or None, k, edge_types, direction)
            sys.stderr.write(f"exported {counts['nodes']:,} node(s) and {counts['edges']:,} edge(s) to {out}\n")
