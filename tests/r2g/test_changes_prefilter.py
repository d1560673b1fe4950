"""memctl/r2g/changes.py tries, in a clause, only the phrases whose leading words (Phrase.needs) the clause holds,
and compiles a phrase's expression at its first try: what it finds must be what trying every phrase finds, on
every sentence of the labelled change set (tools/ku/data/changes.yaml) and of the knowledge-update conversations
tools/ku/evaluate.py scores (tools/ku/generate.py, its default seed and size)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.errors import InputError
from memctl.language.lexicon import read_yaml, use_directory
from memctl.r2g import changes
from memctl.r2g.extract import extract
from tools.ku.generate import DEFAULT_CONVERSATIONS, DEFAULT_SEED, generate

CHANGE_SET = Path(__file__).resolve().parents[2] / "tools" / "ku" / "data" / "changes.yaml"


@pytest.fixture(scope="module")
def sentences() -> list[tuple]:
    """(text, speaker, date) of each labelled item and each distinct turn of the generated conversations."""
    found = {(item["text"], item["speaker"], str(item["date"])) for item in read_yaml(CHANGE_SET)["items"]}
    for sample in generate(seed=DEFAULT_SEED, conversations=DEFAULT_CONVERSATIONS):
        conversation = sample["conversation"]
        for key, turns in conversation.items():
            if re.fullmatch(r"session_\d+", key):
                found.update((turn["text"], turn["speaker"], conversation[f"{key}_date_time"]) for turn in turns)
    return sorted(found)


def _statements(sentences: list[tuple]) -> list[list[tuple]]:
    return [[(fact.subject, fact.slot, fact.value, fact.kind, fact.polarity, fact.value_start, fact.value_end)
             for fact in extract(text, speaker=speaker, ref_time=date).slots if fact.statement]
            for text, speaker, date in sentences]


def test_the_phrases_a_clause_is_tried_with_find_what_all_phrases_find(sentences, monkeypatch):
    prefiltered = _statements(sentences)
    monkeypatch.setattr(changes, "_candidates", lambda rules, lang, words: list(rules.phrases[lang]))
    every_phrase = _statements(sentences)
    differing = [(sentence, mine, all_found) for sentence, mine, all_found in zip(sentences, prefiltered, every_phrase)
                 if mine != all_found]
    assert differing == []
    assert len(sentences) > 2500 and sum(map(bool, every_phrase)) > 500  # the comparison read statements


@pytest.fixture
def compiled(monkeypatch) -> list:
    """The expressions memctl/r2g/changes.py compiles from now on."""
    found: list = []
    monkeypatch.setattr(changes, "_compiled", lambda source, flags: found.append(source) or re.compile(source, flags))
    return found


def test_a_phrase_is_compiled_when_a_clause_could_hold_it_not_when_the_rules_load(compiled):
    rules = changes.change_rules()
    compiled.clear()  # a first load checks that every phrase compiles (remembered, then, across processes)
    assert [(fact.slot, fact.value, fact.kind) for fact in extract(
        "We moved to Denver last weekend.", speaker="Jon", ref_time="2024-04-10").slots] == [
        ("residence", "Denver", "change")]
    every = {phrase.source for phrases in rules.phrases.values() for phrase in phrases}
    assert 0 < len(set(compiled) & every) < len(every) // 10


def test_that_the_phrases_compile_is_checked_once_and_a_phrase_that_does_not_is_refused_each_time(tmp_path, compiled):
    rules = "markers: {en: {}, zh: {}}\nstatements: {pet: {en: {add: [\"%s\"]}}}\n"

    def load(phrase: str):
        (tmp_path / "changes.yaml").write_text(rules % phrase, encoding="utf-8")
        use_directory(None)
        use_directory(str(tmp_path))
        return changes.change_rules()

    try:
        load("adopted (?:a|an) …")
        assert len(compiled) == 1
        load("adopted (?:a|an) …")  # another process: the check is remembered
        assert len(compiled) == 1
        for _ in range(2):
            with pytest.raises(InputError, match="a regular expression") as error:
                load("adopted (…")
            assert "statements.pet.en.add" in str(error.value.where)
    finally:
        use_directory(None)
