"""`memctl feedback ID --pin|--unpin|--up|--down`: a user's pins and votes on a memory (Memory.feedback)."""

import typer

from memctl.cli.common import EXIT_PROBLEMS, fail, open_memory, print_json


def feedback(
    context: typer.Context,
    key: str = typer.Argument(..., metavar="ID", help="The memory: a node id as `memctl recall` prints it."),
    pin: bool = typer.Option(False, "--pin", help="Pin it: full feedback in its weight, never decayed or pruned."),
    unpin: bool = typer.Option(False, "--unpin", help="Remove the pin."),
    up: bool = typer.Option(False, "--up", help="Upvote (seed 002's BOOST: +feedback.boost, one per "
                                                "feedback.cooldown_hours, at most feedback.daily_cap a day)."),
    down: bool = typer.Option(False, "--down", help="Downvote: -feedback.boost."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as one JSON object."),
) -> None:
    """Pin, unpin, upvote or downvote a memory: the user-feedback term of its weight (seed 001 §6.1). A change
    is logged as a WeightUpdated event. An --up that the cooldown or the daily cap refuses changes nothing and
    exits 1, saying when the next one counts.

    Example: memctl feedback fact_a0a42c434599a8fd95e225d6 --up
    """
    chosen = [name for name, given in (("pin", pin), ("unpin", unpin), ("up", up), ("down", down)) if given]
    if len(chosen) != 1:
        fail("give exactly one of --pin, --unpin, --up, --down")
    with open_memory(context, writable=False, holder="memctl feedback") as memory:
        memory.store  # noqa: B018 - a memory of a store never created is bad input: none is created for it
    with open_memory(context, writable=True, holder="memctl feedback") as memory:
        result = memory.feedback(key, chosen[0])
    if as_json:
        print_json(result)
    elif result["refused"] is None:
        typer.echo(f"{result['id']}: {_state(result)}; weight {result['weight']['value']:.4f} "
                   f"({_terms(result['weight']['terms'])})")
    if result["refused"] is not None:
        refused = result["refused"]
        fail(f"--up on {result['id']} not counted: {refused['reason']}; the next one counts from "
             f"{refused['allowed_at']}", EXIT_PROBLEMS)


def _state(result: dict) -> str:
    change = f" ({result['change']:+g})" if result["change"] else ""
    return f"{'pinned' if result['pinned'] else 'not pinned'}, feedback {result['feedback']:g}{change}"


def _terms(terms: dict) -> str:
    return ", ".join(f"{name} {value:.3f}" for name, value in terms.items())
