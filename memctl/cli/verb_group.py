"""VerbGroup: a command group whose first word picks a subcommand (`memctl recall explain ID`) and whose own
callback otherwise takes the whole command line: a positional query (`memctl recall "蓝牙"`) or the older
flag forms kept as aliases (`memctl graph --add-node …`, `memctl index --add FILES…`).

The rule a user sees: a subcommand's name comes first. A query that is exactly a subcommand's name is given
after `--` or with --q: `memctl recall -- explain`, `memctl recall --q explain`.
"""

from __future__ import annotations

from difflib import get_close_matches

import click

from memctl.cli.common import MemctlGroup


class VerbGroup(MemctlGroup):
    def parse_args(self, context: click.Context, args: list[str]) -> list[str]:
        if args and args[0] in self.commands:
            return _dispatch(self, context, args)
        if not args and self.no_args_is_help:
            return super().parse_args(context, args)
        # The group's own command line: options before and after its positional arguments, as a command's.
        context.allow_interspersed_args = True
        rest = click.Command.parse_args(self, context, args)
        if rest:
            _refuse_extra(self, context, rest[0])
        return []

    def collect_usage_pieces(self, context: click.Context) -> list[str]:
        hidden = {piece for parameter in self.params if isinstance(parameter, click.Argument)
                  and getattr(parameter, "hidden", False) for piece in parameter.get_usage_pieces(context)}
        return [piece for piece in super().collect_usage_pieces(context) if piece not in hidden]

    def get_params(self, context: click.Context) -> list:
        # A subcommand's usage line shows the path to it (`memctl recall explain`), not the group's own
        # positional arguments, which go with the group's own command line only.
        parameters = super().get_params(context)
        if context.command is self:
            return parameters
        return [parameter for parameter in parameters if not isinstance(parameter, click.Argument)]


def _dispatch(group: click.Group, context: click.Context, args: list[str]) -> list[str]:
    """Run subcommand args[0] with args[1:]; the group's own parameters keep their defaults (its positional
    argument must not swallow the subcommand's name)."""
    click.Command.parse_args(group, context, ["--"])  # nothing to parse ([] would mean "no arguments: help")
    # click 8.2 renamed Context.protected_args to _protected_args (the old name is a read-only alias).
    setattr(context, "_protected_args" if hasattr(context, "_protected_args") else "protected_args", args[:1])
    context.args = args[1:]
    return context.args


def _refuse_extra(group: click.Group, context: click.Context, word: str) -> None:
    query = context.params.get("query")
    if query in group.commands:
        word = query  # `memctl recall --json explain ID`: the subcommand came after an option
    if word in group.commands:
        raise click.UsageError(f"{word!r} is a subcommand: put it first, `{context.command_path} {word} …`, "
                               f"and its options after it", context)
    hint = f': quote a query of several words, `{context.command_path} "…"`' \
        if any(parameter.name == "query" for parameter in group.params) else ""
    close = get_close_matches(word, list(group.commands), n=1)
    if close:
        hint += f" (did you mean the subcommand {close[0]!r}?)"
    raise click.UsageError(f"unexpected argument {word!r}{hint}", context)
