"""Output that goes to a pipe or a file is not cut into lines at 80 columns (rich's width when it finds no
terminal): a sentence, a file name or a table row stays on one line for grep and for programs."""

from __future__ import annotations

import os
import subprocess
import sys

from memctl.paths import tenant_dir

LONG_TURN = "Alice: " + " ".join(f"word{number}" for number in range(30))  # about 210 characters


def memctl(home, *arguments) -> str:
    environment = {name: value for name, value in os.environ.items() if name not in ("COLUMNS", "LINES")}
    completed = subprocess.run([sys.executable, "-m", "memctl", "--home", str(home), *arguments],
                               capture_output=True, text=True, timeout=120, env=environment)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def test_piped_lines_are_not_wrapped(tmp_path):
    home = tmp_path / "home"
    memctl(home, "ingest", "--text", LONG_TURN, "--quiet")
    orphan = os.path.join("raw", "2020", "01", "01", "ab", "raw_" + "ab" * 32 + ".blob.zst")
    os.makedirs(os.path.join(tenant_dir(str(home), "default"), os.path.dirname(orphan)))
    open(os.path.join(tenant_dir(str(home), "default"), orphan), "wb").close()

    checked = memctl(home, "check").splitlines()
    assert len(checked) == 2  # the orphan's note, the verdict: each longer than 80 columns, each on its line
    assert checked[0].startswith(f"note {orphan}: ") and "`memctl raw gc` removes" in checked[0]
    assert checked[1].startswith(f"{tenant_dir(str(home), 'default')}: ") and checked[1].endswith(", raw_chunks 1)")

    cards = memctl(home, "recall", "word7 word30", "--allow-raw").splitlines()
    shown = [line for line in cards if "word0 word1" in line]
    assert shown and all("word28 word29" in line for line in shown)  # the turn's text on one line each

    rows = [line for line in memctl(home, "raw", "ls").splitlines() if "raw_" in line]
    assert len(rows) == 1 and "text" in rows[0]  # id, sizes, refs, conversation … lang: one row, one line
