"""Layering of memctl's packages: recall reads the graph R2G built, but never R2G's code (nor ingest's).

What both need (time expressions, lexicons, what a NodeIndex document holds) lives below both, in
memctl.language and memctl.node_documents. Imports are read from the source (every `import`, including those
inside functions, and `importlib.import_module` / `__import__` with a literal name), so a lazy import crosses
the boundary as surely as a top-level one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path = ROOT) -> list[tuple[int, str, str | None]]:
    """(line, module, name or None) for every import in the file; relative imports resolved."""
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: list = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            # `from memctl import r2g` imports the module memctl.r2g.
            found.extend((node.lineno, module, alias.name) for alias in node.names)
        elif isinstance(node, ast.Call) and _calls_import(node.func) and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            found.append((node.lineno, node.args[0].value, None))
    return found


def _calls_import(function) -> bool:
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
    return name in ("import_module", "__import__")


def reaches(module: str, name: str | None, package: str) -> bool:
    """Whether importing `name` from `module` loads `package` or something inside it."""
    targets = [module] + ([f"{module}.{name}"] if name else [])
    return any(target == package or target.startswith(package + ".") for target in targets)


def crossings(directory: str, package: str) -> list[tuple[str, int, str, str | None]]:
    found = []
    for path in sorted((ROOT / directory).rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        for line, module, name in imports(path):
            if reaches(module, name, package):
                found.append((relative, line, module, name))
    return found


@pytest.mark.parametrize("package", ["memctl.r2g", "memctl.ingest"])
def test_recall_imports_nothing_from_r2g_or_ingest(package):
    forbidden = crossings("memctl/recall", package)
    assert not forbidden, f"memctl/recall imports {package} (move what both need below both): " + ", ".join(
        f"{path}:{line} {module}{'.' + name if name else ''}" for path, line, module, name in forbidden)


@pytest.mark.parametrize("directory", ["memctl/language", "memctl/node_documents.py"])
def test_shared_modules_import_neither_r2g_nor_recall(directory):
    paths = [ROOT / directory] if directory.endswith(".py") else sorted((ROOT / directory).rglob("*.py"))
    for path in paths:
        for line, module, name in imports(path):
            for package in ("memctl.r2g", "memctl.recall"):
                assert not reaches(module, name, package), f"{path.relative_to(ROOT)}:{line} imports {package}"


@pytest.mark.parametrize("source, expected", [
    ("from memctl.r2g.timenorm import find_times", [(1, "memctl.r2g.timenorm", "find_times")]),
    ("from ..r2g import lexicon", [(1, "memctl.r2g", "lexicon")]),
    ("from . import query", [(1, "memctl.recall", "query")]),
    ("def f():\n    import memctl.r2g.linking", [(2, "memctl.r2g.linking", None)]),
    ("import importlib\nimportlib.import_module('memctl.r2g.nodeindex')",
     [(1, "importlib", None), (2, "memctl.r2g.nodeindex", None)]),
])
def test_imports_are_read_wherever_they_are(tmp_path, source, expected):
    package = tmp_path / "memctl" / "recall"
    package.mkdir(parents=True)
    (package / "probe.py").write_text(source, encoding="utf-8")
    assert imports(package / "probe.py", tmp_path) == expected


def test_from_package_import_module_reaches_the_module():
    assert reaches("memctl", "r2g", "memctl.r2g")
    assert reaches("memctl.r2g", "lexicon", "memctl.r2g")
    assert not reaches("memctl", "recall", "memctl.r2g")
    assert not reaches("memctl.r2gx", None, "memctl.r2g")
