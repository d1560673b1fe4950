"""The word n-grams recall probes stored Entities with (memctl/recall/entities.py)."""

from memctl.recall.entities import ngrams


def test_a_possessive_names_its_owner():
    # "What is Julia's relationship status now?" asks about Julia: her Entity key is probed
    grams = ngrams("What is Julia's relationship status now?")
    assert "Julia" in grams
    assert "Julia's" not in grams


def test_words_keep_their_inner_apostrophes():
    assert "O'Brien" in ngrams("Where does O'Brien live?")
