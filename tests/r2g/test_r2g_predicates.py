"""Predicate normalisation: the shipped predicate lexicon is bilingual and large enough, and verbs it lacks keep
their own words."""

from memctl.language.lexicon import load_yaml
from memctl.r2g.predicates import english_lemmatizer, fallback_predicate, lexicon


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
