"""`memctl r2g`: build the memory graph from the stored raw chunks, or import an external agent's nodes and edges."""

import sys
from contextlib import contextmanager

import typer

from memctl.cli.common import open_memory, print_json
from memctl.cli.input_options import job_count, jobs_option


def r2g(
    context: typer.Context,
    file: str = typer.Argument(None, metavar="[FILE]", help="With --from jsonl: the JSONL file, or - for stdin."),
    source: str = typer.Option("raw", "--from", metavar="SOURCE",
                               help="raw: the stored raw chunks not converted yet; jsonl: nodes and edges from an "
                                    "external summariser/linker (create_memory/link_memories or {node}/{edge} lines)."),
    target: str = typer.Option("graph", "--to", metavar="TARGET", help="graph: the memory graph and its NodeIndex."),
    rebuild: bool = typer.Option(False, "--rebuild",
                                 help="Remove what earlier runs built and convert every raw chunk again "
                                      "(same ids; recorded JSONL imports are replayed)."),
    jobs: int = jobs_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing on success."),
) -> None:
    """Raw conversations → memory graph (seed 001 R2G): an Episode per turn, Entities, event-centred Facts with
    role edges, Preferences, Concepts, TEMPORAL_NEXT/MENTIONS/ABOUT/SAME_AS/SIMILAR_TO edges, and the NodeIndex.

    Incremental: only chunks not converted before are read, so running it twice changes nothing. A JSONL file
    is validated completely before anything is written (a bad line: exit 2 naming it, nothing stored).

    Example: memctl r2g --jobs 2   (then: memctl r2g --from jsonl memories.jsonl)
    """
    if target != "graph":
        from engine.errors import InputError

        raise InputError(f"--to must be graph, not {target!r}")
    if rebuild and source != "raw":
        from engine.errors import InputError

        raise InputError("--rebuild goes with --from raw")
    if jobs != 1 and source != "raw":
        from engine.errors import InputError

        raise InputError("--jobs goes with --from raw (a JSONL import has no turns to analyse)")
    with open_memory(context, writable=True, holder="memctl r2g") as memory:
        with _progress_bar(enabled=source == "raw" and not (quiet or as_json) and sys.stdout.isatty()) as progress:
            summary = memory.r2g(source, file, rebuild, progress, jobs=job_count(jobs))
    if as_json:
        print_json(summary)
    elif not quiet:
        typer.echo(describe(summary))


def describe(summary: dict) -> str:
    if "sha256" in summary:
        if summary["already_imported"]:
            return f"{summary['source']}: already imported, nothing changed"
        return f"{summary['source']}: imported {summary['nodes']:,} node(s) and {summary['edges']:,} edge(s)"
    lines = []
    if summary["rebuild"]:
        lines.append(f"rebuilt from raw; {summary['nodes_removed']:,} node(s) no longer made were removed")
    if not summary["chunks_new"]:
        lines.append(f"0 new chunks ({summary['chunks_total']:,} converted before)")
    else:
        nodes = ", ".join(f"{count:,} {name}" for name, count in summary["nodes_created"].items())
        edges = sum(summary["edges_written"].values())
        lines.append(f"{summary['chunks_new']:,} new chunk(s), {summary['turns']:,} turns in "
                     f"{summary['conversations']:,} conversation(s) → new nodes: {nodes or 'none'}; "
                     f"{edges:,} edges written; {summary['documents']:,} documents indexed; "
                     f"{summary['batches']:,} batch(es) in {summary['seconds']:.1f} s")
    if summary.get("imports_replayed"):
        lines.append(f"replayed {summary['imports_replayed']:,} JSONL import(s)")
    return "\n".join(lines)


@contextmanager
def _progress_bar(enabled: bool):
    """Yields a progress(done, total) callback drawing a transient rich bar over chunks, or None."""
    if not enabled:
        yield None
        return
    from rich.progress import Progress

    bar = Progress(transient=True)
    task = None

    def update(done: int, total: int) -> None:
        nonlocal task
        if task is None:
            bar.start()
            task = bar.add_task("converting chunks", total=total)
        bar.update(task, completed=done)

    try:
        yield update
    finally:
        bar.stop()
