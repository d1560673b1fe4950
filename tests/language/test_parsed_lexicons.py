"""Parsed lexicon files kept across processes (memctl.language.parsed_lexicons)."""

from __future__ import annotations

import os

from memctl.language import lexicon
from memctl.language.parsed_lexicons import cached


def _counting_parser(calls: list):
    def parse(path: str):
        calls.append(path)
        with open(path, encoding="utf-8") as handle:
            return {"lines": handle.read().splitlines(), "sizes": [1, 2.5, None, True]}
    return parse


def _kept(root) -> list:
    directory = root / "memctl" / "lexicons"
    return sorted(directory.iterdir()) if directory.is_dir() else []


def test_a_parsed_file_is_read_back_without_parsing(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "words.yaml"
    source.write_text("a\nb\n", encoding="utf-8")
    calls: list = []
    first = cached(str(source), _counting_parser(calls))
    second = cached(str(source), _counting_parser(calls))
    assert first == second == {"lines": ["a", "b"], "sizes": [1, 2.5, None, True]}
    assert len(calls) == 1 and len(_kept(tmp_path / "cache")) == 1


def test_an_edited_file_is_parsed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "words.yaml"
    source.write_text("a\n", encoding="utf-8")
    calls: list = []
    cached(str(source), _counting_parser(calls))
    source.write_text("a\nchanged\n", encoding="utf-8")
    assert cached(str(source), _counting_parser(calls))["lines"] == ["a", "changed"] and len(calls) == 2


def test_a_damaged_cache_file_is_parsed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "words.yaml"
    source.write_text("a\nb\n", encoding="utf-8")
    calls: list = []
    cached(str(source), _counting_parser(calls))
    [kept] = _kept(tmp_path / "cache")
    data = bytearray(kept.read_bytes())
    data[-3] ^= 0x20  # one flipped bit in the marshal bytes: the checksum catches it
    kept.write_bytes(bytes(data))
    assert cached(str(source), _counting_parser(calls))["lines"] == ["a", "b"] and len(calls) == 2
    kept.write_bytes(b"")
    assert cached(str(source), _counting_parser(calls))["lines"] == ["a", "b"] and len(calls) == 3


def test_an_unwritable_cache_only_costs_the_parse(tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    source = tmp_path / "words.yaml"
    source.write_text("a\n", encoding="utf-8")
    calls: list = []
    assert cached(str(source), _counting_parser(calls)) == cached(str(source), _counting_parser(calls))
    assert len(calls) == 2


def test_the_shipped_lexicons_read_back_as_parsed(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    names = sorted(path.name for path in lexicon.DATA_DIRECTORY.glob("*.yaml"))
    parsed = {name: lexicon._parse_yaml(str(lexicon.DATA_DIRECTORY / name)) for name in names}
    assert {name: lexicon.load_yaml(name) for name in names} == parsed  # parsed, then kept
    assert {name: lexicon.load_yaml(name) for name in names} == parsed  # read back
    assert len(_kept(tmp_path / "cache")) == len(names)
    assert not [path for path in os.listdir(tmp_path / "cache" / "memctl" / "lexicons") if path.endswith(".tmp")]
