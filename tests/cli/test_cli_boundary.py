"""The CLI reaches the engine only through memctl.Memory: a module under memctl/cli/ imports nothing from
`engine` but its error types (engine.errors), at module level or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "memctl" / "cli"
ALLOWED = {"engine.errors"}


def engine_imports(source: str) -> list[tuple[int, str]]:
    """(line, dotted name) of every `engine` module or name the source imports, anywhere in it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if _is_engine(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _is_engine(node.module):
            if node.module == "engine":  # `from engine import raw`: the module raw
                found += [(node.lineno, f"engine.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return sorted(found)


def _is_engine(name: str | None) -> bool:
    return name is not None and (name == "engine" or name.startswith("engine."))


def crossings(directory: Path) -> list[str]:
    return [f"{path.name}:{line}: {name}" for path in sorted(directory.glob("*.py"))
            for line, name in engine_imports(path.read_text(encoding="utf-8")) if name not in ALLOWED]


def test_the_cli_imports_from_engine_only_its_errors():
    assert list(CLI.glob("*.py")), CLI
    assert crossings(CLI) == []


def test_the_check_sees_every_form_of_import():
    source = ("import engine.store\nfrom engine import raw, errors\nfrom engine.graph.api import GraphStore\n"
              "def command():\n    from engine.text.index import TextIndex\n    import engine\n"
              "from engine.errors import InputError\nimport engine.errors\nfrom . import engine_like\n")
    assert engine_imports(source) == [(1, "engine.store"), (2, "engine.errors"), (2, "engine.raw"),
                                      (3, "engine.graph.api"), (5, "engine.text.index"), (6, "engine"),
                                      (7, "engine.errors"), (8, "engine.errors")]
