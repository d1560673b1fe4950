"""The seams between the packages, held by reading the code: every import of every module, those inside
functions and `if TYPE_CHECKING:` blocks included.

- engine never imports memctl, nor the fault-injection harness (tools.testing): it is the layer below both.
- memctl reads engine data only through the typed methods of GraphStore, RawStore and TextIndex. It may import
  the engine names ALLOWED lists (store and API classes, their typed rows, error types, the tokenizer…) and
  nothing else: a table or counter name, a record codec, a segment or kind module is a new crossing, and fails
  here until someone adds it on purpose.
- no module under memctl names an engine table or counter in a string either (a read of the store by name).
- the packages pyproject installs leave the harness out.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib
import tomllib
from pathlib import Path

import pytest

import engine.format

ROOT = Path(__file__).resolve().parents[1]
EVERY_NAME = "*"

# module → the names memctl may import from it. A whole-module import (`import engine.x`,
# `from engine.graph import pagerank`) is never allowed: it would let anything of that module through.
ALLOWED = {
    "engine.errors": EVERY_NAME,
    "engine.store": {"Store"},
    # Process state, no data: `memctl remember` pauses the collector before it imports the store (numpy).
    "engine.collector": {"paused"},
    "engine.check": {"check_store"},
    "engine.migration": {"migrate_store"},
    "engine.repair": {"repair_store"},
    "engine.statistics": {"store_statistics"},
    "engine.raw": {"RawStore", "TurnColumns", "TurnChunk", "Chunk", "span_key", "parse_span_key"},
    "engine.graph.api": {"GraphStore"},
    "engine.graph.keys": {"edge_key"},
    "engine.graph.traverse": {"DegreeCap"},
    "engine.graph.pagerank": {"power_iteration", "type_weights", "Transition"},
    "engine.graph.transfer": {"import_jsonl", "export"},
    "engine.text.index": {"TextIndex"},
    "engine.text.tokenizer": {"Tokenizer", "normalize"},
    "engine.text.bm25": {"BM25Parameters"},
    # Chinese segmentation (jieba's, over the compiled dictionary): R2G's tagger, its block pattern, and the
    # dictionary's state and notes for `memctl stats` and the r2g summary.
    "engine.text.chinese": {"pos_tagger", "notes", "state"},
    "engine.text.chinese.segmenter": {"BLOCK"},
    # The per-user cache directory, where memctl also keeps its parsed lexicons (memctl/language/parsed_lexicons).
    "engine.text.chinese.cache": {"cache_directory"},
    # Limits and id syntax a user sees in options and listings; never a table, counter or byte layout.
    "engine.format": {"RAW_BLOB_MAX_BYTES", "RAW_ID_PREFIX", "RAW_ID_HEX_DIGITS"},
    # A named failpoint inside memctl's chain write (memctl/facts/maintain.py), which tools/crash sweeps.
    "engine.fs": {"failpoint"},
    # Process memory, no data: a large ingest gives its free heap back between its phases (memctl/ingest/pipeline.py).
    "engine.heap": {"release_free_memory"},
}


def modules(package: str, root: Path = ROOT) -> list[Path]:
    return sorted((root / package).rglob("*.py"))


def imports(path: Path, root: Path = ROOT) -> list[tuple[int, str, str | None]]:
    """(line, module, name) of every import in a file (name None for `import module`), wherever it stands;
    importlib.import_module("…") with a constant name counts as `import …`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found += [(node.lineno, _absolute(path, root, node), alias.name) for alias in node.names]
        elif isinstance(node, ast.Call) and _is_import_module(node.func) and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            found.append((node.lineno, node.args[0].value, None))
    return sorted(found, key=lambda item: item[0])


def _absolute(path: Path, root: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module
    package = path.relative_to(root).parent.parts
    return ".".join([*package[: len(package) - node.level + 1], *([node.module] if node.module else [])])


def _is_import_module(function: ast.expr) -> bool:
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
    return name in ("import_module", "__import__")


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def memctl_crossings(path: Path, root: Path = ROOT) -> list[str]:
    """The engine imports of one file that ALLOWED does not list."""
    found = []
    for line, module, name in imports(path, root):
        if not _within(module, "engine"):
            continue
        allowed = ALLOWED.get(module, ())
        if name is None or (allowed != EVERY_NAME and name not in allowed):
            what = f"module {module}" if name is None else f"{name} from {module}"
            found.append(f"{path.relative_to(root)}:{line}: imports {what}")
    return found


def engine_crossings(path: Path, root: Path = ROOT) -> list[str]:
    return [f"{path.relative_to(root)}:{line}: imports {module}" for line, module, _ in imports(path, root)
            if _within(module, "memctl") or _within(module, "tools")]


def stored_names() -> dict:
    """{value: constant name} of engine.format's table and counter names."""
    return {getattr(engine.format, name): name for name in dir(engine.format)
            if name.endswith(("_TABLE", "_COUNTER"))}


def named_tables(path: Path, root: Path = ROOT) -> list[str]:
    """The strings of one file that are an engine table or counter name."""
    names = stored_names()
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [f"{path.relative_to(root)}:{node.lineno}: names {names[node.value]} ({node.value!r})"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names]


def test_memctl_reads_engine_data_only_through_typed_store_methods():
    crossings = [crossing for path in modules("memctl") for crossing in memctl_crossings(path)]
    assert not crossings, "memctl reaches past the engine's typed API (GraphStore, RawStore, TextIndex; see " \
                          "ALLOWED in this file):\n" + "\n".join(crossings)


def test_memctl_names_no_engine_table_or_counter():
    found = [hit for path in modules("memctl") for hit in named_tables(path)]
    assert not found, "memctl names engine tables or counters:\n" + "\n".join(found)


def test_engine_imports_neither_memctl_nor_the_harness():
    crossings = [crossing for path in modules("engine") for crossing in engine_crossings(path)]
    assert not crossings, "engine must not import memctl or tools:\n" + "\n".join(crossings)


@pytest.mark.parametrize("module", sorted(module for module, names in ALLOWED.items() if names != EVERY_NAME))
def test_every_allowed_name_exists(module):
    """A name left in ALLOWED after its API went away would let a new one of that name through unseen."""
    imported = importlib.import_module(module)
    assert [name for name in sorted(ALLOWED[module]) if not hasattr(imported, name)] == []


def test_installed_packages_leave_out_the_harness():
    configuration = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = configuration["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = [".".join(init.parent.relative_to(ROOT).parts) for init in ROOT.rglob("__init__.py")]
    installed = sorted(package for package in packages
                       if any(fnmatch.fnmatchcase(package, pattern) for pattern in patterns))
    assert "engine" in installed and "memctl" in installed
    assert [package for package in installed if package.split(".")[-1] == "testing"] == []
    assert not any(_within(package, "tools") for package in installed)


# --- the checker itself: a rule that never fires would pass whatever the code does ---------------------------


def _write(root: Path, relative: str, source: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    return path


def test_checker_finds_every_kind_of_forbidden_import(tmp_path):
    path = _write(tmp_path, "memctl/r2g/sample.py", """\
import importlib
from typing import TYPE_CHECKING

from engine.errors import InputError
from engine.graph.api import GraphStore

if TYPE_CHECKING:
    from engine.records import TOMBSTONE


def read(store):
    from engine.format import GRAPH_NODE_TABLE, RAW_BLOB_MAX_BYTES
    import engine.codec
    from engine.graph import pagerank
    from engine.raw import decode_turns
    return importlib.import_module("engine.raw.turn_columns")
""")
    assert memctl_crossings(path, tmp_path) == [
        "memctl/r2g/sample.py:8: imports TOMBSTONE from engine.records",
        "memctl/r2g/sample.py:12: imports GRAPH_NODE_TABLE from engine.format",
        "memctl/r2g/sample.py:13: imports module engine.codec",
        "memctl/r2g/sample.py:14: imports pagerank from engine.graph",
        "memctl/r2g/sample.py:15: imports decode_turns from engine.raw",
        "memctl/r2g/sample.py:16: imports module engine.raw.turn_columns",
    ]


def test_checker_finds_table_names_in_strings(tmp_path):
    path = _write(tmp_path, "memctl/recall/sample.py", """\
def read(store, key):
    return store.get("graph.node", key), store.counter("raw.seq"), "graph.edge_weights"
""")
    assert named_tables(path, tmp_path) == ["memctl/recall/sample.py:2: names GRAPH_NODE_TABLE ('graph.node')",
                                            "memctl/recall/sample.py:2: names RAW_SEQUENCE_COUNTER ('raw.seq')"]


def test_checker_finds_engine_importing_memctl_or_the_harness(tmp_path):
    path = _write(tmp_path, "engine/graph/sample.py", """\
from engine.errors import InputError


def hook():
    import memctl.recall
    from tools.testing import faultfs
    from . import kind
""")
    assert engine_crossings(path, tmp_path) == ["engine/graph/sample.py:5: imports memctl.recall",
                                                "engine/graph/sample.py:6: imports tools.testing"]
