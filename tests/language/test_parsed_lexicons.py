"""Parsed lexicon files kept across processes (memctl.language.parsed_lexicons)."""

from __future__ import annotations

import os

import pytest

from memctl.language import lexicon
from memctl.language.parsed_lexicons import cached


@pytest.fixture
def source(tmp_path, monkeypatch):
    """A lexicon file, with the user's cache under tmp_path/cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "words.yaml"
    path.write_text("a\nb\n", encoding="utf-8")
    return path


class Parser:
    """Reads a file's lines as a parsed lexicon would be (plain types of every kind), counting its calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, path: str):
        self.calls += 1
        with open(path, encoding="utf-8") as handle:
            return {"lines": handle.read().splitlines(), "sizes": [1, 2.5, None, True]}


def _kept(tmp_path) -> list:
    directory = tmp_path / "cache" / "memctl" / "lexicons"
    return sorted(directory.iterdir()) if directory.is_dir() else []


def test_a_parsed_file_is_read_back_without_parsing(source, tmp_path):
    parse = Parser()
    assert cached(str(source), parse) == cached(str(source), parse) == {"lines": ["a", "b"],
                                                                        "sizes": [1, 2.5, None, True]}
    assert parse.calls == 1 and len(_kept(tmp_path)) == 1


def test_an_edited_file_is_parsed_again(source):
    parse = Parser()
    cached(str(source), parse)
    source.write_text("a\nchanged\n", encoding="utf-8")
    assert cached(str(source), parse)["lines"] == ["a", "changed"] and parse.calls == 2


def test_a_damaged_cache_file_is_parsed_again(source, tmp_path):
    parse = Parser()
    cached(str(source), parse)
    [kept] = _kept(tmp_path)
    data = bytearray(kept.read_bytes())
    data[-3] ^= 0x20  # one flipped bit in the marshal bytes: the checksum catches it
    kept.write_bytes(bytes(data))
    assert cached(str(source), parse)["lines"] == ["a", "b"] and parse.calls == 2
    kept.write_bytes(b"")
    assert cached(str(source), parse)["lines"] == ["a", "b"] and parse.calls == 3


def test_an_unwritable_cache_only_costs_the_parse(source, tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    parse = Parser()
    assert cached(str(source), parse) == cached(str(source), parse) and parse.calls == 2


def test_the_shipped_lexicons_read_back_as_parsed(source, tmp_path):
    names = sorted(path.name for path in lexicon.DATA_DIRECTORY.glob("*.yaml"))
    parsed = {name: lexicon._parse_yaml(str(lexicon.DATA_DIRECTORY / name)) for name in names}
    assert {name: lexicon.load_yaml(name) for name in names} == parsed  # parsed, then kept
    assert {name: lexicon.load_yaml(name) for name in names} == parsed  # read back
    assert len(_kept(tmp_path)) == len(names)
    assert not [path for path in os.listdir(tmp_path / "cache" / "memctl" / "lexicons") if path.endswith(".tmp")]
