"""Store maintenance commands: check (fsck), stats, compact, migrate."""

import typer

from memctl.cli.common import EXIT_PROBLEMS, console, open_memory, options, print_json


def check(context: typer.Context,
          verbose: bool = typer.Option(False, "--verbose", "-v",
                                       help="List every file of a note shared by many (orphan blobs…)."),
          as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object (every note).")) -> None:
    """Verify every checksum, MANIFEST reference and id counter of the tenant's store.

    Exit 0 when clean, 1 when problems were found. Notes are leftovers of an interrupted command that the next
    writer or `memctl raw gc` removes (a partial WAL record, orphan blobs); they do not make the exit code 1.
    Takes no lock and reads no settings: safe while a writer runs, and on a damaged store.

    Example: memctl --tenant alice check --json
    """
    from memctl.memory import Memory

    chosen = options(context)
    report = Memory.check(chosen.home, chosen.tenant)
    if as_json:
        print_json(report)
    else:
        _print_report(report, verbose)
    if not report["clean"]:
        raise typer.Exit(EXIT_PROBLEMS)


NOTE_FILES_SHOWN = 5


def _print_report(report: dict, verbose: bool) -> None:
    from rich.markup import escape

    out = console()
    for problem in report["problems"]:
        where = problem["file"] if problem["offset"] is None else f"{problem['file']} at offset {problem['offset']}"
        out.print(f"[red]problem[/red] {escape(where)}: {escape(problem['message'])}", highlight=False)
    for message, files in _notes_by_message(report["notes"]).items():
        if len(files) == 1:
            out.print(f"[yellow]note[/yellow] {escape(files[0])}: {escape(message)}", highlight=False)
            continue
        out.print(f"[yellow]note[/yellow] {len(files):,} files {escape(message)}:", highlight=False)
        shown = files if verbose else files[:NOTE_FILES_SHOWN]
        for file in shown:
            out.print(f"  {escape(file)}", highlight=False)
        if len(shown) < len(files):
            out.print(f"  … and {len(files) - len(shown):,} more (`memctl check --verbose` lists every one)",
                      highlight=False)
    out.print(f"{escape(report['path'])}: {_verdict(report)}", highlight=False)


def _notes_by_message(notes: list) -> dict:
    """{message: [file]}, in the order the messages first appear: one line for each of a thousand orphans would
    bury everything else."""
    grouped: dict = {}
    for note in notes:
        grouped.setdefault(note["message"], []).append(note["file"])
    return grouped


def _verdict(report: dict) -> str:
    problems, notes = len(report["problems"]), len(report["notes"])
    if problems:
        verdict = _count(problems, "problem") + (f", {_count(notes, 'note')}" if notes else "")
    else:
        verdict = f"no problems, {_count(notes, 'note')}" if notes else "clean"
    checked = ", ".join(f"{name} {value}" for name, value in report["checked"].items())
    return f"{verdict} ({checked})" if checked else verdict


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" + ("" if number == 1 else "s")


def stats(context: typer.Context,
          as_json: bool = typer.Option(False, "--json", help="Print the statistics as one JSON object.")) -> None:
    """Print store sizes on disk, segments per kind and record counts.

    Example: memctl stats --json
    """
    with open_memory(context, writable=False, holder="memctl stats") as memory:
        result = memory.stats()
    if as_json:
        print_json(result)
        return
    _print_stats(result)


def _print_stats(result: dict) -> None:
    from rich.table import Table

    table = Table(title=f"memctl store {result['path']}", show_header=True)
    table.add_column("what")
    table.add_column("value", justify="right")
    for name, value in result["bytes"].items():
        table.add_row(f"bytes: {name}", f"{value:,}")
    for kind, figures in result["segments"].items():
        table.add_row(f"segments: {kind}", f"{figures['segments']} ({figures['bytes']:,} bytes)")
    table.add_row("raw blobs", f"{result['raw_blobs']:,}")
    for name, value in result["stored_rows"].items():
        table.add_row(f"rows: {name}", f"{value:,}")
    for name, value in result["counters"].items():
        table.add_row(f"counter: {name}", f"{value:,}")
    for section, figures in result.items():
        if isinstance(figures, dict) and section not in ("bytes", "segments", "stored_rows", "counters", "wal"):
            for name, value in figures.items():
                table.add_row(f"{section}: {name}", str(value))
    console().print(table)


def compact(context: typer.Context,
            as_json: bool = typer.Option(False, "--json", help="Print before/after sizes as JSON.")) -> None:
    """Flush unwritten records and merge all segments into one per kind, dropping deleted data.

    Example: memctl compact --json
    """
    with open_memory(context, writable=True, holder="memctl compact") as memory:
        sizes = memory.compact()
    if as_json:
        print_json(sizes)
    else:
        console().print(f"compacted: {sizes['segment_bytes_before']:,} → {sizes['segment_bytes_after']:,} segment bytes")



def migrate(context: typer.Context,
            dry_run: bool = typer.Option(False, "--dry-run", help="Report what would change; write nothing."),
            as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object.")) -> None:
    """Upgrade the tenant's store from an older format in place, atomically: a crash leaves the old store or the
    new one, and running it again finishes the job.

    Takes the writer lock, folds in the unflushed log, applies the steps of every newer format and writes every
    segment again (MANIFEST.spec, Migration). A store of this format is left as it is (exit 0); one of a format
    too old to migrate is refused with the advice to re-create it (exit 3).

    Example: memctl migrate --dry-run
    """
    from memctl.memory import Memory

    chosen = options(context)
    report = Memory.migrate(chosen.home, chosen.tenant, dry_run=dry_run, wait=chosen.wait)
    if as_json:
        print_json(report)
        return
    if not report["steps"] and report["from_version"] == report["to_version"]:
        typer.echo(f"{report['path']}: already format {report['to_version']}, nothing to migrate")
        return
    done = "would migrate" if report["dry_run"] else "migrated"
    typer.echo(f"{report['path']}: {done} from format {report['from_version']} to {report['to_version']}")
    for step in report["steps"]:
        counts = ", ".join(f"{name} {value:,}" for name, value in step["counts"].items())
        typer.echo(f"  {step['name']}: {counts}")
    typer.echo(f"  unflushed batches folded in: {report['wal_batches']:,}")
