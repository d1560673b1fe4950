"""A reader that stops reading early (`memctl graph export | head -1`) ends memctl quietly: no error message,
no traceback, exit 1 as Python's docs advise for SIGPIPE."""

from __future__ import annotations

import json
import subprocess
import sys


def _memctl(home, *arguments, **options):
    return subprocess.run([sys.executable, "-m", "memctl", "--home", str(home), *arguments],
                          capture_output=True, text=True, timeout=120, **options)


def test_export_into_a_closed_pipe_is_quiet(tmp_path):
    lines = [json.dumps({"kind": "node", "id": f"Concept:topic {number}", "type": "Concept",
                         "props": {"text": "x" * 200}}) for number in range(2000)]
    source = tmp_path / "graph.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _memctl(tmp_path / "home", "graph", "import", str(source), "--json").returncode == 0

    export = subprocess.Popen([sys.executable, "-m", "memctl", "--home", str(tmp_path / "home"), "graph", "export"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert export.stdout.readline().startswith(b'{"kind": "node"')
    export.stdout.close()  # about 500 KB are still to come: the next writes meet a closed pipe
    returncode = export.wait(timeout=120)
    stderr = export.stderr.read().decode()
    assert returncode == 1
    assert stderr == ""
