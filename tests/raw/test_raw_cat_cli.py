"""`memctl raw cat` takes a chunk the ways memctl prints one: its raw_id, the span form recall's citations show
(raw_…@OFFSET+LENGTH), and the full sha256 `raw ls` lists; a span outside the chunk names the chunk's length."""

from __future__ import annotations

import json
import re

import pytest

TEXT = "Alice: my locker code is 4711\nBob: noted, 4711 it is\n"


@pytest.fixture
def chunk(cli):
    assert cli("ingest", "--text", TEXT, "--quiet").exit_code == 0
    [listed] = json.loads(cli("raw", "ls", "--json").stdout)
    return listed


def test_the_span_form_recall_prints(cli, chunk):
    printed = cli("recall", "locker code", "--allow-raw").stdout
    spans = re.findall(r"raw_[0-9a-f]{16}@\d+\+\d+", printed)
    assert spans and spans[0].startswith(chunk["raw_id"] + "@")
    offset, length = map(int, re.fullmatch(r".*@(\d+)\+(\d+)", spans[0]).groups())
    result = cli("raw", "cat", spans[0])
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == TEXT.encode()[offset: offset + length]


@pytest.mark.parametrize("form", ["{sha256}", "raw_{sha256}", "{upper}"])
def test_the_full_sha256(cli, chunk, form):
    reference = form.format(sha256=chunk["sha256"], upper=chunk["sha256"].upper())
    assert cli("raw", "cat", reference).stdout_bytes == TEXT.encode()
    assert cli("raw", "cat", reference, "--offset", "7", "--length", "2").stdout_bytes == b"my"


def test_a_sha256_of_another_chunk_with_the_same_prefix_is_refused(cli, chunk):
    other = chunk["sha256"][:-1] + ("0" if chunk["sha256"][-1] != "0" else "1")
    result = cli("raw", "cat", other)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"error: no raw chunk has sha256 {other}\n"


def test_a_span_form_takes_no_offset_or_length(cli, chunk):
    result = cli("raw", "cat", f"{chunk['raw_id']}@0+5", "--length", "3")
    assert result.exit_code == 2 and "names its span already" in result.stderr


@pytest.mark.parametrize("reference", ["raw_0123", "raw_0123456789abcdeg", "raw_0123456789abcdef@5", "notes.txt"])
def test_anything_else_is_refused_naming_the_forms(cli, chunk, reference):
    result = cli("raw", "cat", reference)
    assert result.exit_code == 2
    assert f"{reference!r} is not a raw chunk reference: give raw_<16 hex digits>" in result.stderr


@pytest.mark.parametrize("arguments, message", [
    (["--offset", "999999"], "offset 999999 is outside {raw_id} ({size} bytes)"),
    (["--offset", "10", "--length", "999"], "span offset 10, length 999 is outside {raw_id} ({size} bytes)"),
])
def test_a_span_outside_the_chunk_names_its_length(cli, chunk, arguments, message):
    result = cli("raw", "cat", chunk["raw_id"], *arguments)
    assert result.exit_code == 2
    assert result.stderr == "error: " + message.format(raw_id=chunk["raw_id"], size=len(TEXT.encode())) + "\n"
