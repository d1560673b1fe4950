"""What `memctl --help` and README say about the commands: grouped by what a user does, an example in every
command's help, the seed's aliases shown and the others hidden, and README's command table naming every
command, subcommand and recall/search option the app registers (so neither can drift)."""

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
    assert list(commands.values()) == [["ingest", "index"], ["r2g"], ["recall", "search"],
                                       ["check", "compact", "migrate", "repair"],
                                       ["stats", "graph", "raw", "config"]]


@pytest.mark.parametrize("command, shown, hidden", [
    ("graph", ["--add-node", "--add-edge", "--neighbors"], ["--khop", "--ppr", "--stats", "--weight"]),
    ("index", ["--add"], ["--delete", "--type", "--tag"]),
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


def _options(path: tuple) -> set:
    command = dict(PATHS)[path]
    commands = [command] + [sub for sub_path, sub in PATHS if sub_path[: len(path)] == path]
    return {name for each in commands for parameter in each.params if isinstance(parameter, click.Option)
            for name in parameter.opts if name != "--help"}


@pytest.mark.parametrize("command", [("recall",), ("search",)])
def test_readme_names_every_option_of_recall_and_search(command):
    section = _commands_section()
    options = _options(command)
    assert {"--q", "--top", "--json"} <= options
    assert sorted(option for option in options if not re.search(rf"{re.escape(option)}\b", section)) == []
