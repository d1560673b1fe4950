"""`memctl ingest`: store raw conversations as content-addressed chunks, one atomic batch per command."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

import typer

from memctl.cli.common import open_memory, options, print_json

# Below this much input the bar would only flicker.
PROGRESS_MIN_BYTES = 1 << 20
STAGE_LABELS = {"parse": "reading", "store": "storing"}


def ingest(
    context: typer.Context,
    raw: list[str] = typer.Option(None, "--raw", metavar="PATH",
                                  help="A file, a directory (read recursively), a glob, or - for stdin. "
                                       "Repeatable."),
    text: list[str] = typer.Option(None, "--text", metavar="TEXT", help="Text to ingest as given. Repeatable."),
    format: str = typer.Option("auto", "--format", metavar="FORMAT",
                               help="auto, text, transcript, jsonl, messages or locomo (also reads MemDaily)."),
    errors: str = typer.Option("strict", "--errors", metavar="MODE",
                               help="strict: refuse invalid UTF-8; replace: accept it with U+FFFD."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing on success."),
) -> None:
    """Ingest raw conversations: plain text, `Speaker: text` transcripts, JSONL turns, chat message lists,
    LoCoMo/MemDaily files.

    Every input is read and checked before anything is stored; one command is one atomic batch, so a bad
    file (exit 2) stores nothing. Ingesting the same input again stores nothing new.
    """
    from memctl import config as config_module
    from memctl.ingest.pipeline import prepare, write
    from memctl.ingest.sources import collect
    from memctl.paths import CONFIG_FILE, tenant_dir

    chosen = options(context)
    config = config_module.load(os.path.join(tenant_dir(chosen.home, chosen.tenant), CONFIG_FILE), chosen.config)
    size_limit = config.get("ingest.max_file_bytes")
    sources = collect(raw or [], text or [], size_limit=size_limit)
    show_progress = not (quiet or as_json) and sys.stdout.isatty() and \
        sum(len(source.data) for source in sources) >= PROGRESS_MIN_BYTES
    with _progress_bar(show_progress) as progress:
        prepared = prepare(sources, format, errors, size_limit, config.get("ingest.chunk_min_tokens"),
                           config.get("ingest.chunk_max_tokens"), progress)
        with open_memory(context, writable=True, holder="memctl ingest") as memory:
            summary = write(memory.store, prepared, memory.config.get("ingest.max_blob_bytes"), progress)
    if as_json:
        print_json(summary)
    elif not quiet:
        typer.echo(describe(summary))


def describe(summary: dict) -> str:
    return (f"{summary['chunks_new']:,} new, {summary['chunks_duplicate']:,} already stored: "
            f"{summary['turns']:,} turns in {summary['conversations']:,} conversation(s); "
            f"{summary['bytes_in']:,} bytes in, {summary['bytes_stored']:,} bytes stored")


@contextmanager
def _progress_bar(enabled: bool):
    """Yields a progress(stage, done, total) callback drawing a rich bar, or None when disabled."""
    if not enabled:
        yield None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        tasks: dict = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(STAGE_LABELS[stage], total=total)
            bar.update(tasks[stage], completed=done)

        yield update
