"""`memctl graph`: the memory graph directly — add nodes and edges, neighbours, k-hop, personalized PageRank,
degree statistics, JSONL import and export (memctl/graph.py through Memory.graph).

Verbs are subcommands (`graph node add`, `graph neighbors ID`…). The flag forms of seed 001 §25.5 (`graph
--add-node … --add-edge … --neighbors ID`, and --khop, --ppr, --stats) stay as aliases: the group's callback
takes them and prints what the subcommands print. Only typer is imported at module level: `memctl graph khop`
is a cold process with a 0.4 s budget.
"""

import typer

from memctl.cli.common import MemctlGroup, open_memory, print_json
from memctl.cli.verb_group import VerbGroup

ALIASES = "Aliases (seed 001 §25.5)"
EDIT = "Edit"
QUERY = "Query"



class GraphGroup(VerbGroup):
    command_order = ("node", "edge", "import", "show", "neighbors", "khop", "ppr", "stats", "export")


graph_app = typer.Typer(cls=GraphGroup, no_args_is_help=True, invoke_without_command=True)
node_app = typer.Typer(cls=MemctlGroup, no_args_is_help=True,
                       help="Nodes: add.\n\nExample: memctl graph node add Concept:蓝牙 Episode:e1")
edge_app = typer.Typer(cls=MemctlGroup, no_args_is_help=True,
                       help="Edges: add.\n\nExample: memctl graph edge add Episode:e1 ABOUT Concept:蓝牙")
graph_app.add_typer(node_app, name="node", rich_help_panel=EDIT)
graph_app.add_typer(edge_app, name="edge", rich_help_panel=EDIT)


def _json_option(hidden: bool = False):
    return typer.Option(False, "--json", help="Print one JSON object.", hidden=hidden)


def _types_option(hidden: bool = False):
    return typer.Option(None, "--types", metavar="T,…", help="Only these edge types (comma-separated).",
                        hidden=hidden)


def _direction_option(default: str = "out", hidden: bool = False):
    return typer.Option(default, "--direction", metavar="D", help="out, in or both.", hidden=hidden)


def _limit_option(hidden: bool = False):
    return typer.Option(20, "--limit", min=1, metavar="N", help="Rows to print.", hidden=hidden)


def _hops_option(hidden: bool = False):
    return typer.Option(None, "--k", min=0, max=16, metavar="K", help="Hops (default: recall.k_hop).",
                        hidden=hidden)


def _weight_option(hidden: bool = False):
    return typer.Option(1.0, "--weight", metavar="W", help="Weight of the edge (≥ 0).", hidden=hidden)


# --- subcommands ------------------------------------------------------------------------------------------------


@node_app.command("add")
def node_add(
    context: typer.Context,
    keys: list[str] = typer.Argument(..., metavar="TYPE:NAME...", help='Node keys, e.g. "Concept:Win11蓝牙故障".'),
    as_json: bool = _json_option(),
) -> None:
    """Add nodes keyed TYPE:NAME, as one atomic batch (a key added before is kept).

    Example: memctl graph node add "Concept:Win11蓝牙故障" Episode:e1
    """
    _show(_add(context, keys, [], 1.0), as_json)


@edge_app.command("add")
def edge_add(
    context: typer.Context,
    source: str = typer.Argument(..., metavar="SRC", help="Key of the node the edge leaves."),
    edge_type: str = typer.Argument(..., metavar="TYPE", help="Edge type, e.g. ABOUT."),
    target: str = typer.Argument(..., metavar="DST", help="Key of the node the edge enters."),
    weight: float = _weight_option(),
    as_json: bool = _json_option(),
) -> None:
    """Add an edge between two existing nodes (more edges at once: `graph import`).

    Example: memctl graph edge add Episode:e1 ABOUT "Concept:Win11蓝牙故障" --weight 0.7
    """
    _show(_add(context, [], [(source, edge_type, target)], weight), as_json)


@graph_app.command("show", rich_help_panel=QUERY)
def show_command(
    context: typer.Context,
    key: str = typer.Argument(..., metavar="ID", help="Node key."),
    now: str = typer.Option(None, "--now", metavar="T", help="Reference time of recency (ISO; default: now)."),
    as_json: bool = _json_option(),
) -> None:
    """Show a node: type, properties, and weight(node) with each term of seed 001 §6.1 (importance, frequency,
    recency, emotion, feedback, stale) and its coefficient.

    Example: memctl graph show ent_c9893d815756c99e17bcfbb6 --now 2024-05-01
    """
    import json

    from memctl.isotime import parse_time

    moment = None if now is None else parse_time(now, "--now", end_of_day=False)
    with open_memory(context, writable=False, holder="memctl graph show") as memory:
        shown = memory.graph.show(key, moment)
    if as_json:
        print_json(shown)
        return
    typer.echo(f"{shown['type']} {shown['key']} (id {shown['id']})")
    for name, value in shown["props"].items():
        typer.echo(f"  {name}: {json.dumps(value, ensure_ascii=False)}")
    weight = shown["weight"]
    typer.echo(f"weight {weight['value']:.4f} = " + " ".join(
        f"{'+' if coefficient >= 0 else '-'} {abs(coefficient):g}·{name} {weight['terms'][name]:.3f}"
        for name, coefficient in weight["coefficients"].items()))


@graph_app.command("neighbors", rich_help_panel=QUERY)
def neighbors_command(
    context: typer.Context,
    key: str = typer.Argument(..., metavar="ID", help="Node key."),
    types: str = _types_option(),
    direction: str = _direction_option(),
    limit: int = _limit_option(),
    as_json: bool = _json_option(),
) -> None:
    """List the edges of a node, strongest first (graph.degree_cap applies).

    Example: memctl graph neighbors "Concept:Win11蓝牙故障" --direction both --types ABOUT
    """
    _show(_query(context, neighbors=key, types=types, direction=direction, limit=limit), as_json)


@graph_app.command("khop", rich_help_panel=QUERY)
def khop_command(
    context: typer.Context,
    keys: list[str] = typer.Argument(..., metavar="ID...", help="Seed node keys."),
    k: int = _hops_option(),
    types: str = _types_option(),
    direction: str = _direction_option(),
    limit: int = _limit_option(),
    as_json: bool = _json_option(),
) -> None:
    """Expand k hops from the seed nodes: each node reached with its hop and the node it came from.

    Example: memctl graph khop Episode:e1 --k 2 --direction both
    """
    _show(_query(context, khop=keys, k=k, types=types, direction=direction, limit=limit), as_json)


@graph_app.command("ppr", rich_help_panel=QUERY)
def ppr_command(
    context: typer.Context,
    keys: list[str] = typer.Argument(..., metavar="ID...", help="Seed node keys."),
    k: int = _hops_option(),
    whole_graph: bool = typer.Option(False, "--whole-graph", help="Rank over the whole graph, not the k-hop "
                                                                  "subgraph."),
    types: str = _types_option(),
    direction: str = _direction_option(),
    limit: int = _limit_option(),
    as_json: bool = _json_option(),
) -> None:
    """Personalized PageRank seeded at the nodes over their k-hop subgraph, weighted by graph.edge_weights.

    Example: memctl graph ppr Episode:e1 --k 2 --limit 10
    """
    _show(_query(context, ppr=keys, k=k, whole_graph=whole_graph, types=types, direction=direction, limit=limit),
          as_json)


@graph_app.command("stats", rich_help_panel=QUERY)
def stats_command(
    context: typer.Context,
    direction: str = _direction_option(),
    as_json: bool = _json_option(),
) -> None:
    """Degree statistics per edge type: edges, nodes, mean and max degree and the node of the max.

    Example: memctl graph stats --json
    """
    _show(_query(context, stats=True, direction=direction), as_json)


# --- the seed's flag forms ----------------------------------------------------------------------------------


@graph_app.callback()
def graph(
    context: typer.Context,
    add_node: list[str] = typer.Option(None, "--add-node", metavar="TYPE:NAME", rich_help_panel=ALIASES,
                                       help="= `graph node add TYPE:NAME`. Repeatable."),
    add_edge: tuple[str, str, str] = typer.Option(None, "--add-edge", metavar="SRC TYPE DST",
                                                  rich_help_panel=ALIASES,
                                                  help="= `graph edge add SRC TYPE DST` (after --add-node)."),
    neighbors: str = typer.Option(None, "--neighbors", metavar="ID", rich_help_panel=ALIASES,
                                  help="= `graph neighbors ID`."),
    khop: list[str] = typer.Option(None, "--khop", metavar="ID", hidden=True),
    ppr: list[str] = typer.Option(None, "--ppr", metavar="ID", hidden=True),
    stats: bool = typer.Option(False, "--stats", hidden=True),
    weight: float = _weight_option(hidden=True),
    k: int = _hops_option(hidden=True),
    whole_graph: bool = typer.Option(False, "--whole-graph", hidden=True),
    types: str = _types_option(hidden=True),
    direction: str = _direction_option(hidden=True),
    limit: int = _limit_option(hidden=True),
    as_json: bool = _json_option(hidden=True),
) -> None:
    """The memory graph, directly: typed nodes and edges, k-hop expansion, personalized PageRank, import and
    export.

    The older flag forms work too (README lists them): the writes first, in one batch, then each query, in one
    output.

    Example: memctl graph neighbors "Concept:Win11蓝牙故障" --direction both
    """
    if context.invoked_subcommand is not None:
        return
    edges = [add_edge] if add_edge else []
    if not any([add_node, edges, neighbors, khop, ppr, stats]):
        typer.echo(context.get_help())
        raise typer.Exit(0)
    result = _add(context, add_node or [], edges, weight) if add_node or edges else {}
    result.update(_query(context, neighbors=neighbors, khop=khop, ppr=ppr, stats=stats, k=k,
                         whole_graph=whole_graph, types=types, direction=direction, limit=limit))
    _show(result, as_json)


# --- shared by the subcommands and the flag forms -----------------------------------------------------------


def _add(context: typer.Context, nodes: list, edges: list, weight: float) -> dict:
    with open_memory(context, writable=True, holder="memctl graph") as memory:
        return memory.graph.add(nodes, edges, weight)


def _query(context: typer.Context, neighbors=None, khop=None, ppr=None, stats=False, k=None, whole_graph=False,
           types=None, direction="out", limit=20) -> dict:
    """The queries asked, in this order: {"neighbors", "khop", "ppr", "stats"} (only those asked)."""
    if not (neighbors or khop or ppr or stats):
        return {}
    edge_types = _type_list(types)
    result: dict = {}
    with open_memory(context, writable=False, holder="memctl graph") as memory:
        graph = memory.graph
        if neighbors:
            result["neighbors"] = graph.neighbors(neighbors, direction, edge_types, limit)
        if khop:
            result["khop"] = graph.khop(khop, k, edge_types, direction, limit)
        if ppr:
            result["ppr"] = graph.ppr(ppr, k, whole_graph, edge_types, direction, limit)
        if stats:
            result["stats"] = graph.degree_statistics(direction)
    return result


def _type_list(types: str | None) -> list | None:
    return [name.strip() for name in types.split(",") if name.strip()] if types else None


def _show(result: dict, as_json: bool) -> None:
    if as_json:
        print_json(result)
        return
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


# --- bulk transfer ----------------------------------------------------------------------------------------------


@graph_app.command("import", rich_help_panel=EDIT)
def import_command(
    context: typer.Context,
    file: str = typer.Argument(..., metavar="FILE.jsonl", help="One node or edge object per line; - for stdin."),
    batch_lines: int = typer.Option(20_000, "--batch-lines", min=1, metavar="N",
                                    help="Lines per atomic batch (one commit)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
) -> None:
    """Import nodes and edges from JSONL, streaming. Nodes must come before the edges that use them.

    A bad line stops the import naming the file and line; earlier batches stay imported, and since nodes and
    edges are keyed, running the corrected file again converges.

    Example: memctl graph import graph.jsonl
    """
    with open_memory(context, writable=True, holder="memctl graph import") as memory:
        if file == "-":
            summary = memory.graph.import_jsonl(file, batch_lines)
        else:
            summary = _import_with_progress(memory.graph, file, batch_lines, quiet=as_json)
    if as_json:
        print_json(summary)
    else:
        typer.echo(f"imported {summary['nodes']:,} node(s) and {summary['edges']:,} edge(s) from "
                   f"{summary['lines']:,} line(s)")


def _import_with_progress(graph, file: str, batch_lines: int, quiet: bool) -> dict:
    import os

    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    size = os.path.getsize(file)
    with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                  TimeRemainingColumn(), transient=True, disable=quiet) as progress:
        task = progress.add_task("importing", total=size)
        return graph.import_jsonl(file, batch_lines, progress=lambda done: progress.update(task, completed=done))


@graph_app.command("export", rich_help_panel=QUERY)
def export_command(
    context: typer.Context,
    out: str = typer.Option("-", "--out", metavar="FILE", help="Write here instead of stdout."),
    format_: str = typer.Option(None, "--format", metavar="F",
                                help="jsonl, graphml or dot (default: from --out's extension, else jsonl)."),
    around: list[str] = typer.Option(None, "--around", metavar="ID",
                                     help="Only the k-hop subgraph around ID (repeatable); default: everything."),
    k: int = typer.Option(1, "--k", min=0, max=16, help="Hops around --around."),
    types: str = _types_option(),
    direction: str = _direction_option("both"),
) -> None:
    """Export the graph, or a subgraph around some nodes, as JSONL (re-importable), GraphML or Graphviz DOT.

    Example: memctl graph export --around Episode:e1 --k 2 --out around.dot
    """
    import sys

    chosen = format_ or {"graphml": "graphml", "dot": "dot", "gv": "dot"}.get(out.rsplit(".", 1)[-1], "jsonl")
    with open_memory(context, writable=False, holder="memctl graph export") as memory:
        if out == "-":
            memory.graph.export(sys.stdout, chosen, around, k, _type_list(types), direction)
        else:
            with open(out, "w", encoding="utf-8") as stream:
                counts = memory.graph.export(stream, chosen, around, k, _type_list(types), direction)
            sys.stderr.write(f"exported {counts['nodes']:,} node(s) and {counts['edges']:,} edge(s) to {out}\n")
