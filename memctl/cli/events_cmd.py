"""`memctl events`: the event log (seed 001 §9.3) in sequence order, and `--follow` to tail it (Memory.events,
Memory.follow_events)."""

import typer

from memctl.cli.common import open_memory, print_json


def events(
    context: typer.Context,
    since: str = typer.Option(None, "--since", metavar="SEQ|T",
                              help="Only events after sequence number SEQ (a script resumes with the last one it "
                                   "saw), or recorded at ISO date/time T or later."),
    types: list[str] = typer.Option(None, "--type", metavar="TYPE[,…]",
                                    help="Only these event types (NodeCreated, EdgeCreated, WeightUpdated, "
                                         "ConflictDetected, FactPromoted, FactDemoted…). Repeatable."),
    keys: bool = typer.Option(False, "--keys", help="Name the keys of the nodes and edges a NodeCreated or "
                                                    "EdgeCreated created (the log keeps their ids)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object per line: seq, type, at, payload."),
    follow: bool = typer.Option(False, "--follow", "-f",
                                help="Keep printing events as they are committed, until Ctrl-C (exit 0). A reader: "
                                     "it never blocks the writer."),
    interval: float = typer.Option(0.5, "--interval", min=0.05, max=3600.0, metavar="SECONDS",
                                   help="How often --follow looks for new events."),
) -> None:
    """Print the event log: what changed in the memory (nodes and edges created, weights updated, conflicts,
    facts promoted or demoted), one line per event in sequence order.

    Example: memctl events --type WeightUpdated --since 2026-11-01 --json --follow
    """
    after, moment = _since(since)
    chosen = [name.strip() for value in types or () for name in value.split(",") if name.strip()] or None
    show = print_json if as_json else _print_line
    with open_memory(context, writable=False, holder="memctl events") as memory:
        if not follow:
            for event in memory.events(after, moment, chosen, keys):
                show(event)
            return
        try:
            for event in memory.follow_events(after, moment, chosen, keys, interval):
                show(event)
                _flush()
        except KeyboardInterrupt:
            _flush()


def _since(text: str | None) -> tuple[int, float | None]:
    """(sequence to start after, time to start at) of --since."""
    if text is None:
        return 0, None
    if text.strip().isdigit():
        return int(text), None
    from memctl.isotime import parse_time

    return 0, parse_time(text, "--since", end_of_day=False)


def _print_line(event: dict) -> None:
    typer.echo(f"{event['seq']:>8}  {event['at']}  {event['type']:<16}  {_summary(event['payload'])}")


def _summary(payload: dict) -> str:
    if "first" in payload and "count" in payload:
        last = payload["first"] + payload["count"] - 1
        text = f"{payload['count']} (ids {payload['first']}–{last})"
        listed = [key for key in payload.get("keys") or () if key is not None]
        return f"{text}: {' '.join(listed)}" if listed else text
    import json

    return " ".join(f"{name}={json.dumps(value, ensure_ascii=False)}" for name, value in payload.items())


def _flush() -> None:
    import sys

    sys.stdout.flush()
