"""Store maintenance commands: check (fsck), stats, compact, migrate, repair."""

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


def repair(context: typer.Context,
           dry_run: bool = typer.Option(False, "--dry-run", help="Report what would be lost; write nothing."),
           as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object.")) -> None:
    """Salvage a damaged store: keep every record, logged batch and raw chunk that still reads back, build the
    indexes again from the records, and publish the result atomically (a crash leaves the damaged store or the
    repaired one). Reports exactly what was lost.

    Writers refuse a store that `check` or a reader found damaged until this has run. A store `check` finds
    sound is left as it is (its damage marker, if any, is removed). With --dry-run: the same report, nothing
    written, exit 1 when there is damage to repair.

    Example: memctl repair --dry-run
    """
    from memctl.memory import Memory

    chosen = options(context)
    report = Memory.repair(chosen.home, chosen.tenant, dry_run=dry_run, wait=chosen.wait)
    if as_json:
        print_json(report)
    else:
        _print_repair(report)
    if dry_run and report["found"]:
        raise typer.Exit(EXIT_PROBLEMS)


def _print_repair(report: dict) -> None:
    path = report["path"]
    if not report["found"] and "lost" not in report:
        cleared = "; its damage marker was removed" if report["marker_cleared"] else ""
        typer.echo(f"{path}: nothing to repair{cleared}")
        return
    for problem in report["found"]:
        where = problem["file"] if problem["offset"] is None else f"{problem['file']} at offset {problem['offset']}"
        typer.echo(f"found {where}: {problem['message']}")
    lost = report["lost"]
    for segment in lost["records"]["segments"]:
        typer.echo(f"lost {segment['file']}: unreadable ({segment['reason']}); its records are gone")
    for table, described in lost["records"]["tables"].items():
        keys = ", ".join(described["keys"]) if "keys" in described else \
            f"{described['first_key']} … {described['last_key']}"
        named = f" (keys: {keys})" if described["known_keys"] else ""
        typer.echo(f"lost {described['rows']:,} record(s) of {table}{named}")
    batches = lost["wal_batches"]
    if batches["count"]:
        ranges = ", ".join(str(first) if first == last else f"{first}..{last}" for first, last in batches["sequences"])
        typer.echo(f"lost {batches['count']:,} logged batch(es): sequence {ranges}")
    for chunk in lost["raw_chunks"]:
        turns = "" if chunk["turns"] is None else f" ({chunk['turns']} turns)"
        typer.echo(f"lost raw chunk {chunk['raw_id']}{turns}: {chunk['reason']}")
    if report["migration_steps"]:
        steps = ", ".join(step["name"] for step in report["migration_steps"])
        typer.echo(f"migrated from format {report['format']} on the way: {steps}")
    kept = report["kept"]
    done, outcome = ("would keep", "nothing written (--dry-run)") if report["dry_run"] else \
        ("kept", "repaired, indexes rebuilt")
    typer.echo(f"{path}: {done} {kept['records']:,} record(s) of segments and {kept['wal_batches']:,} logged "
               f"batch(es); {outcome}")
