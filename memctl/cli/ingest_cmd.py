"""`memctl ingest`: store raw conversations as content-addressed chunks, one atomic batch per command."""

import sys
from contextlib import contextmanager

import typer

from memctl.cli.common import open_memory, print_json
from memctl.cli.input_options import errors_option, format_option, raw_option, text_option

# Below this much input the bar would only flicker.
PROGRESS_MIN_BYTES = 1 << 20
STAGE_LABELS = {"parse": "reading", "store": "storing"}


def ingest(
    context: typer.Context,
    raw: list[str] = raw_option(),
    text: list[str] = text_option(),
    format: str = format_option(),
    errors: str = errors_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing on success."),
) -> None:
    """Ingest raw conversations: plain text, `Speaker: text` transcripts, JSONL turns, chat message lists,
    LoCoMo/MemDaily files.

    Every input is read and checked before anything is stored; one command is one atomic batch, so a bad
    file (exit 2) stores nothing and creates no store. Ingesting the same input again stores nothing new.

    Example: memctl ingest --raw ./samples/ --raw - --text "以后优先中文回答"
    """
    with open_memory(context, writable=True, holder="memctl ingest") as memory:
        with _progress_bar(enabled=not (quiet or as_json) and sys.stdout.isatty()) as progress:
            summary = memory.ingest(raw or [], text or [], format, errors, progress)
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
    """Yields a progress(stage, done, total) callback drawing a rich bar once the input turns out to hold at
    least PROGRESS_MIN_BYTES, or None when disabled."""
    if not enabled:
        yield None
        return
    from rich.progress import Progress

    bar = Progress(transient=True)
    tasks: dict = {}

    def update(stage: str, done: int, total: int) -> None:
        if not tasks and (stage != "parse" or total < PROGRESS_MIN_BYTES):
            return
        if not tasks:
            bar.start()
        if stage not in tasks:
            tasks[stage] = bar.add_task(STAGE_LABELS[stage], total=total)
        bar.update(tasks[stage], completed=done)

    try:
        yield update
    finally:
        bar.stop()
