"""The shipped lexicons load, are large enough, and contain no YAML surprises (on/off/no read as booleans)."""

import pytest

from memctl.r2g.lexicon import DATA_DIRECTORY, load_yaml
from memctl.r2g.predicates import english_lemmatizer, fallback_predicate, lexicon


def _scalars(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    else:
        yield value


@pytest.mark.parametrize("path", sorted(DATA_DIRECTORY.glob("*.yaml")), ids=lambda path: path.name)
def test_no_booleans_or_nulls_in_word_lists(path):
    data = load_yaml(path.name)
    allowed_none = path.name == "en_words.yaml"  # catenatives: null means "not a modality"
    for scalar in _scalars(data):
        assert not isinstance(scalar, bool), f"{path.name}: a word was read as {scalar!r}; quote it"
        assert scalar is not None or allowed_none


def test_predicate_lexicon_is_bilingual_and_large():
    entries = load_yaml("predicates.yaml")
    bilingual = [name for name, spec in entries.items() if spec.get("zh") and spec.get("en")]
    assert len(bilingual) >= 80
    table = lexicon()
    assert table.zh_words["喜欢"].predicate == "like"
    assert table.zh_words["打不开"].predicate == "fail_to_open"
    assert table.chinese_at("踢了足球", 0).entry.predicate == "play_soccer"
    assert table.chinese_at("打了电话", 0).entry.predicate == "call"
    lemma = english_lemmatizer()
    lemmas = [lemma(word) for word in "moved to".split()]
    assert table.english_at(lemmas, 0, frozenset())[0].predicate == "move_to"


def test_unknown_verbs_keep_verb_and_object():
    assert fallback_predicate("knock", "coffee") == "knock_coffee"
    assert fallback_predicate("开", "咖啡店") == "开_咖啡店"
    assert fallback_predicate("pass away", None) == "pass_away"


def test_lemmatizer():
    lemma = english_lemmatizer()
    assert [lemma(word) for word in ["played", "moving", "went", "studies", "stopped", "was", "kittens"]] == [
        "play", "move", "go", "study", "stop", "be", "kitten"]
