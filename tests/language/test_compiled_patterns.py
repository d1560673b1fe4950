"""memctl/language/compiled_patterns.py: a process builds the regular expressions an earlier one compiled from their
kept programs, and gets the same Pattern (CPython compares two patterns by their program), the same groups and
the same matches; a damaged file is compiled anew; `memctl` keeps what a command compiled, once."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXPRESSIONS = [
    (r"(?P<year>\d{4})-(?P<month>\d\d)", 0),
    (r"\b(?:moved|relocated) to\s*(?P<z>.+?)(?=[.,]|$)", 2),  # re.IGNORECASE
    (r"(?<![\w-])(?:gluten\-free|vegan)(?![\w-])", 2),
    (r"[\u4e00-\u9fff]{2,4}(?:市|省)", 0),
    (r"(?x) a \s+ b  # verbose", 0),
    (r"^(?:我|我们)(?:搬到了|住在)(?P<z>[^，。]+)", 8),  # re.MULTILINE
]
TEXT = "We Moved to Denver, 2024-04 and 2023-11. I'm vegan, not gluten-free. a  b\n我们搬到了杭州市，我住在成都。"
PROGRAM = f"""
import json, re, sys
from memctl.language import compiled_patterns

compiled_patterns.install()
found = []
for source, flags in {EXPRESSIONS!r}:
    pattern = re.compile(source, flags)
    assert pattern == compiled_patterns._state["original"](source, flags)  # the same program
    found.append([pattern.pattern, int(pattern.flags), pattern.groups, dict(pattern.groupindex),
                  [match.groupdict() or match.group() for match in pattern.finditer({TEXT!r})]])
print(json.dumps({{"found": found, "compiled": sorted(key[0] for key in compiled_patterns._state["new"])}}))
"""


def _run(cache: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_process_builds_what_an_earlier_one_compiled_from_the_kept_programs(tmp_path):
    first = _run(tmp_path)
    assert {source for source, _ in EXPRESSIONS} <= set(first["compiled"])
    assert glob.glob(str(tmp_path / "memctl" / "patterns-*.marshal"))
    second = _run(tmp_path)
    assert not set(second["compiled"]) & {source for source, _ in EXPRESSIONS}  # all found in the file
    assert second["found"] == first["found"]
    assert first["found"][0][4] == [{"year": "2024", "month": "04"}, {"year": "2023", "month": "11"}]
    assert first["found"][1][4] == [{"z": "Denver"}]


def test_a_damaged_file_is_compiled_anew_with_the_same_results(tmp_path):
    first = _run(tmp_path)
    [kept] = glob.glob(str(tmp_path / "memctl" / "patterns-*.marshal"))
    data = bytearray(Path(kept).read_bytes())
    data[len(data) // 2] ^= 0xFF
    Path(kept).write_bytes(bytes(data))
    again = _run(tmp_path)
    assert {source for source, _ in EXPRESSIONS} <= set(again["compiled"])
    assert again["found"] == first["found"]


def test_memctl_keeps_what_a_command_compiled_and_a_command_doing_the_same_compiles_nothing(tmp_path):
    memctl = [sys.executable, "-c", "from memctl.cli.app import main; main()", "--home", str(tmp_path / "home")]
    environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    written = []
    # a new exchange each time, read the same way; the first command creates the store, the second reads it
    for reply in ("Congratulations!", "Congrats!", "Wow!"):
        text = f"user: We moved to Denver last weekend.\nassistant: {reply}"
        done = subprocess.run(memctl + ["remember", "--quiet", "--text", text], capture_output=True, text=True,
                              env=environment, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        [kept] = glob.glob(str(tmp_path / "cache" / "memctl" / "patterns-*.marshal"))
        written.append((Path(kept).read_bytes(), os.stat(kept).st_mtime_ns))
    assert written[2] == written[1]  # the third command found every expression: the file is not written again
    assert written[0][0] != written[1][0]  # the second one kept what it compiled that the first did not
