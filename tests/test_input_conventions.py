"""Input conventions stay in their ingest adapters: only memctl/ingest/<adapter>.py knows an input format's field
names and id syntax; everything after ingest (R2G, the node index, recall) and the engine read the generic turn
fields (session, attachments, reply_to) that the adapters fill.

- no module outside the adapters names an input format's fields (LoCoMo's and MemDaily's keys), not even in a
  comment or docstring;
- no string in code outside the adapters is a source-id or session-key pattern (`D(\\d+):`, `session_(\\d+)`…):
  what a session is comes from the stored session, not from parsing ids;
- nothing in memctl outside memctl/ingest/ reads a turn's `extra` (the input's leftover keys) for meaning.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = {f"memctl/ingest/{name}.py" for name in ("locomo", "jsonl", "messages", "transcript", "plain")}
INPUT_FIELDS = re.compile(r"blip_caption|dia_id|img_url|re-download|sample_id|speaker_[ab]\b|session_N|"
                          r"session_\d+_date_time|memdaily_type")
ID_PATTERNS = re.compile(r"D\(\\d|D\\d|D:\?|session_(?:\(|\\d|\d|\{|$)")
EXTRA_KEY = "extra"


def checked_files(root: Path = ROOT) -> list[Path]:
    files = sorted((root / "memctl").rglob("*.py")) + sorted((root / "engine").rglob("*.py"))
    return [path for path in files if path.relative_to(root).as_posix() not in ADAPTERS]


def field_names(path: Path) -> list[str]:
    """Input field names anywhere in the file's text."""
    return [f"{path.name}:{number}: {match.group()}" for number, line in enumerate(path.read_text("utf-8").split("\n"), 1)
            for match in INPUT_FIELDS.finditer(line)]


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def id_patterns(path: Path) -> list[str]:
    """Strings of code (docstrings aside; f-string pieces included) that spell a source-id or session pattern."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    docstrings = _docstrings(tree)
    return [f"{path.name}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            and ID_PATTERNS.search(node.value)]


def extra_reads(path: Path) -> list[str]:
    """Reads of a turn's extra: x["extra"] and x.get("extra")."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args and isinstance(node.args[0], ast.Constant):
            key = node.args[0].value
        if key == EXTRA_KEY:
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_no_module_outside_the_adapters_names_an_input_field():
    assert [hit for path in checked_files() for hit in field_names(path)] == []


def test_no_code_outside_the_adapters_parses_ids_for_sessions():
    assert [hit for path in checked_files() for hit in id_patterns(path)] == []


def test_nothing_after_ingest_reads_a_turns_extra():
    after_ingest = [path for path in checked_files() if path.relative_to(ROOT).parts[:2] != ("memctl", "ingest")
                    and path.relative_to(ROOT).parts[0] == "memctl"]
    assert after_ingest and [hit for path in after_ingest for hit in extra_reads(path)] == []


def test_the_adapters_are_where_the_names_are():
    """The allow-list is not stale: the LoCoMo adapter does name what the others may not."""
    assert field_names(ROOT / "memctl/ingest/locomo.py") and id_patterns(ROOT / "memctl/ingest/locomo.py")


def test_the_checks_find_each_kind_of_leak(tmp_path):
    planted = tmp_path / "leak.py"
    planted.write_text('''"""A docstring may say D1:3 and session 3."""
import re

DIALOG = re.compile(r"D(\\d+):\\d+")
KEY = f"session_{3}"


def caption(turn):
    # LoCoMo's blip_caption
    return turn["extra"].get("caption") or turn.get("extra", {}).get("place")
''', encoding="utf-8")
    assert field_names(planted) == ["leak.py:9: blip_caption"]
    assert id_patterns(planted) == ["leak.py:4: 'D(\\\\d+):\\\\d+'", "leak.py:5: 'session_'"]
    assert extra_reads(planted) == ["leak.py:10", "leak.py:10"]
