"""Ranking arithmetic (§5.3, §18 variants), clause coverage, folding, MMR; packing and citations."""

from __future__ import annotations

import pytest

from memctl.recall import rank
from memctl.recall.pack import CITATION_OVERHEAD, Citations, card_tokens, pack


def test_variant_drops_missing_stages_and_renormalises():
    lambdas = {"bm25": 0.2, "vec": 0.4, "ppr": 0.3, "weight": 0.1}
    name, weights = rank.variant(lambdas, {"bm25", "ppr", "weight"})
    assert name == "A→C"
    assert weights == pytest.approx({"bm25": 1 / 3, "ppr": 0.5, "weight": 1 / 6})
    name, weights = rank.variant(lambdas, {"bm25", "weight"})
    assert name == "A" and weights == pytest.approx({"bm25": 2 / 3, "weight": 1 / 3})
    name, _ = rank.variant(lambdas, {"bm25", "ppr", "weight"}, keyword_source="G")
    assert name == "G→C"
    assert rank.variant({"bm25": 0.0}, {"bm25", "weight"})[1] == {"bm25": 1.0}


def test_blend_normalises_each_stage_by_its_maximum():
    first = rank.Candidate("a", "Episode", keyword=10.0, term_part=10.0, ppr=0.1)
    second = rank.Candidate("b", "Episode", keyword=5.0, term_part=5.0, ppr=0.4)
    rank.blend([first, second], {"bm25": 0.5, "ppr": 0.5}, [], 0.0)
    assert first.final == pytest.approx(0.5 * 1.0 + 0.5 * 0.25)
    assert second.final == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    assert second.scores["ppr"] == 1.0 and first.scores["bm25"] == 1.0
    assert first.term_part == pytest.approx(0.5)


def test_time_boost_multiplies_candidates_inside_a_window():
    inside = rank.Candidate("a", "Episode", keyword=1.0, timestamp=100.0)
    outside = rank.Candidate("b", "Episode", keyword=1.0, timestamp=500.0)
    rank.blend([inside, outside], {"bm25": 1.0}, [(0.0, 200.0)], 0.5)
    assert inside.final == pytest.approx(1.5) and outside.final == pytest.approx(1.0)


def _ranked(*scores):
    candidates = []
    for index, value in enumerate(scores):
        candidate = rank.Candidate(f"c{index}", "Episode", keyword=value, term_part=value)
        candidates.append(candidate)
    rank.blend(candidates, {"bm25": 1.0}, [], 0.0)
    return rank.order(candidates)


def test_clause_coverage_picks_a_turn_for_each_clause():
    ranked = _ranked(1.0, 0.9, 0.8, 0.5)
    # c0 and c1 answer clause 0 only; c3 answers clause 1 only.
    clause_scores = [{"c0": 5.0, "c1": 4.5, "c2": 4.0}, {"c3": 2.5}]
    chosen = rank.clause_select(ranked, clause_scores, 0.3, 50)
    assert [candidate.key for candidate in chosen][:2] == ["c0", "c3"]
    assert [candidate.key for candidate in rank.clause_select(ranked, clause_scores[:1], 0.3, 50)] == \
        ["c0", "c1", "c2", "c3"]


def test_fold_supports_merges_facts_into_their_episode():
    ranked = _ranked(1.0, 0.8, 0.6)
    fact = ranked[0]
    fact.type, fact.source_episode = "Fact", "c2"
    folded = rank.fold_supports(ranked)
    assert [candidate.key for candidate in folded] == ["c2", "c1"]
    assert folded[0].supports == ["c0"] and folded[0].final == pytest.approx(1.0)


def test_mmr_demotes_near_duplicates():
    ranked = _ranked(1.0, 0.95, 0.7)
    same = {("c0", "c1"), ("c1", "c0")}
    chosen = rank.mmr(ranked, lambda one, two: 1.0 if (one.key, two.key) in same else 0.0, 0.7, 10)
    assert [candidate.key for candidate in chosen] == ["c0", "c2", "c1"]


def _card(score, tokens):
    return {"score": score, "tokens": tokens}


def test_pack_keeps_everything_that_fits():
    cards = [_card(1.0, 100), _card(0.5, 100)]
    kept, facts = pack(cards, 1000)
    assert kept == cards and facts["dropped"] == 0
    assert pack(cards, None)[0] == cards


def test_pack_is_a_greedy_knapsack_by_score_per_token():
    cards = [_card(1.0, 600), _card(0.6, 200), _card(0.5, 200), _card(0.1, 300)]
    kept, facts = pack(cards, 700)
    assert kept == [cards[1], cards[2], cards[3]]
    assert facts["tokens"] == 700 and facts["dropped"] == 1


def test_pack_prefers_one_decisive_card_to_many_weak_ones():
    cards = [_card(1.0, 900), _card(0.1, 50), _card(0.1, 50)]
    kept, _ = pack(cards, 950)
    assert kept == [cards[0], cards[1]]
    kept, _ = pack([_card(1.0, 900), _card(0.2, 200)], 950)
    assert kept == [_card(1.0, 900)]


def test_pack_nothing_fits():
    kept, facts = pack([_card(1.0, 900)], 10)
    assert kept == [] and facts["dropped"] == 1


def test_card_tokens_count_cjk_characters_and_words():
    card = {"title": "蓝牙", "text": "driver update", "citations": [{"snippet": "打不开 now"}]}
    assert card_tokens(card) == 2 + 3 + CITATION_OVERHEAD + 3 + 2


class _FakeRaw:
    def __init__(self, data=None, error=None):
        self.data, self.error, self.reads = data, error, 0

    def read(self, raw_id):
        self.reads += 1
        if self.error:
            raise self.error
        return self.data


def test_citations_slice_the_verified_chunk_once():
    raw = _FakeRaw("Ann: 蓝牙 fixed\n".encode("utf-8"))
    citations = Citations(raw)
    ref = {"raw_id": "raw_x", "offset": 5, "length": len("蓝牙".encode()), "source_id": "D1:1", "ts": None}
    assert citations.cite(ref)["snippet"] == "蓝牙"
    assert citations.cite({**ref, "offset": 0, "length": 3})["snippet"] == "Ann"
    assert raw.reads == 1
    assert "outside" in citations.cite({**ref, "length": 999})["error"]


def test_a_corrupt_chunk_gives_an_error_not_a_wrong_snippet():
    from engine.errors import CorruptionError

    citations = Citations(_FakeRaw(error=CorruptionError("blob", None, "sha256 mismatch")))
    cited = citations.cite({"raw_id": "raw_x", "offset": 0, "length": 3})
    assert cited["snippet"] is None and "sha256 mismatch" in cited["error"]
