"""What `memctl --help` and README say about the commands: grouped by what a user does, an example in every
command's help, the seed's aliases shown and the others hidden, and README's command table naming every
command and subcommand the app registers, each with every option its --help shows in its own row (so neither
can drift)."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
import typer.main

from memctl.cli.app import app

README = Path(__file__).resolve().parents[2] / "README.md"


def command_paths(group: click.Group, prefix: tuple = ()) -> list[tuple[tuple, click.Command]]:
    """(path, command) of every command and group under `group`, depth first."""
    found = []
    for name, command in group.commands.items():
        found.append((prefix + (name,), command))
        if isinstance(command, click.Group):
            found += command_paths(command, prefix + (name,))
    return found


ROOT = typer.main.get_command(app)
PATHS = command_paths(ROOT)


def test_the_tree_holds_the_verbs():
    names = {" ".join(path) for path, _ in PATHS}
    assert {"graph node add", "graph edge add", "graph neighbors", "graph khop", "graph ppr", "graph stats",
            "graph import", "graph export", "index add", "index delete", "recall explain", "recall batch",
            "recall keywords", "search", "raw gc"} <= names


@pytest.mark.parametrize("path", [path for path, _ in PATHS], ids=[" ".join(path) for path, _ in PATHS])
def test_every_command_explains_itself_with_an_example(cli, path):
    result = cli(*path, "--help")
    assert result.exit_code == 0, result.stderr
    assert "Example: memctl " in result.stdout


def panels(text: str) -> dict:
    """{panel title: [first word of each row]} of rich's help output."""
    found: dict = {}
    title = None
    for line in text.splitlines():
        opening = re.match(r"╭─ (.+?) ─", line)
        if opening:
            title = opening.group(1)
            found[title] = []
        elif line.startswith("│ ") and title is not None:
            word = line[2:].split(" ", 1)[0]
            if word:
                found[title].append(word)
    return found


def test_top_level_help_groups_commands_by_what_a_user_does(cli):
    shown = panels(cli("--help").stdout)
    commands = {title: rows for title, rows in shown.items() if title not in ("Options",)}
    assert list(commands) == ["Store: raw conversations and documents", "Remember: raw → memory graph",
                              "Recall and search", "Maintain", "Inspect"]
    assert list(commands.values()) == [["ingest", "index"], ["remember", "r2g", "feedback"], ["recall", "search"],
                                       ["check", "compact", "migrate", "repair"],
                                       ["stats", "graph", "fact", "audit", "raw", "events", "config"]]


@pytest.mark.parametrize("command, shown, hidden", [
    ("graph", ["--add-node", "--add-edge", "--neighbors"], ["--khop", "--ppr", "--stats", "--weight"]),
    ("index", ["--add"], ["--delete", "--type", "--tag"]),
    ("fact", ["--add", "--conflicts"], ["--since", "--source", "--evidence"]),
    ("recall", ["--q", "--extract-keywords"], ["--explain", "--queries"]),
])
def test_seed_aliases_are_shown_and_the_others_hidden(cli, command, shown, hidden):
    text = cli(command, "--help").stdout
    aliases = next(rows for title, rows in panels(text).items() if title.startswith("Aliases"))
    assert aliases == shown
    assert not [option for option in hidden if re.search(rf"{option}\b", text)]


def _commands_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Commands")
    return text[start: text.index("\n## ", start + 1)]


def test_readme_names_every_command_and_subcommand():
    section = _commands_section()
    missing = [" ".join(path) for path, _ in PATHS
               if ("memctl " + " ".join(path) if len(path) == 1 else " ".join(path)) not in section]
    assert missing == []


def _rows(path: tuple) -> str:
    """The README table rows naming the command (`memctl check`, `graph khop`…), as one text."""
    name = " ".join(path)
    command = dict(PATHS)[path]
    subcommands = "|".join(getattr(command, "commands", {})) or "(?!)"
    # `memctl recall QUERY …` is recall's row; `memctl recall batch …` is the row of its subcommand.
    named = re.compile(rf"(memctl |`){re.escape(name)}\b(?! (?:{subcommands})\b)")
    rows = [line for line in _commands_section().splitlines() if line.startswith("| ") and named.search(line)]
    text = " ".join(rows)
    if "recall's options" in text:  # the rows of `recall explain` and `recall batch` refer to recall's row
        text += " " + _rows(("recall",))
    return text


def _shown_options(command: click.Command) -> list:
    """The long options `--help` shows; --json is documented once for every command that prints results."""
    return [name for parameter in command.params if isinstance(parameter, click.Option) and not parameter.hidden
            for name in parameter.opts if name.startswith("--") and name not in ("--help", "--json")]


@pytest.mark.parametrize("path", [path for path, _ in PATHS], ids=[" ".join(path) for path, _ in PATHS])
def test_readme_names_every_option_of_every_command_in_its_row(path):
    options = _shown_options(dict(PATHS)[path])  # a group of subcommands alone (`graph node`) has none
    rows = _rows(path)
    assert rows or not options, f"README has no row for {' '.join(path)}"
    assert [option for option in options if not re.search(rf"{re.escape(option)}(?![\w-])", rows)] == []


def test_readme_names_every_global_option():
    section = _commands_section()
    assert [option for option in _shown_options(ROOT) if option not in section] == []
    assert "commands that print results have `--json`" in section


def test_the_option_test_sees_a_missing_option():
    assert _shown_options(dict(PATHS)[("recall",)])  # recall shows options
    assert not re.search(r"--no-such-option(?![\w-])", _rows(("recall",)))


def test_a_mistyped_command_is_suggested_once(cli):
    result = cli("recal", "Kyoto")
    assert result.exit_code == 2
    assert (result.stdout + result.stderr).count("Did you mean 'recall'?") == 1


def test_a_mistyped_subcommand_of_a_verb_group_is_suggested(cli):
    result = cli("graph", "neighbour", "Episode:e1")
    assert result.exit_code == 2
    assert "unexpected argument 'neighbour' (did you mean the subcommand 'neighbors'?)" in result.stderr
