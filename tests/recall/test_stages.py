"""Each stage and each fallback trigger on small stores built through ingest + r2g (tests/recall/recall_testkit)."""

from __future__ import annotations

import pytest

from recall_testkit import config_file, dialogue_store, fallbacks, first_sources, recall


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return dialogue_store(tmp_path_factory.mktemp("dialogue"))


def _stage(answer: dict, prefix: str) -> dict:
    return next(stage for stage in answer["trace"]["stages"] if stage["name"].startswith(prefix))


def test_stage_a_ranks_the_matching_turn_first(home):
    answer = recall(home, "honey lavender")
    assert first_sources(answer)[0] == "t4"
    stage = _stage(answer, "A: NodeIndex")
    assert stage["notes"]["terms"] == ["honey", "lavend"]
    assert answer["trace"]["variant"] == "A→C"


def test_speaker_prior_prefers_the_named_speakers_turn(home):
    # "city" and "move" are in Bob's question; the prior and the reply hop put Ann's answer first.
    answer = recall(home, "Which city did Ann move to?")
    assert first_sources(answer)[:2] == ["t2", "t1"]
    assert _stage(answer, "A: NodeIndex")["notes"]["named_speakers"] == ["Ann"]


def test_reply_hop_skips_same_speaker_and_other_session_neighbours(home):
    # t3 → t4 is Bob after Bob: not a reply edge (t2, Ann's turn before, is one; its context field holds t3).
    answer = recall(home, "sister garden", k_hop=0)
    assert first_sources(answer)[0] == "t3"
    assert "t4" not in first_sources(answer)


def test_k_hop_ppr_brings_graph_neighbours_below_keyword_matches(home):
    answer = recall(home, "sister garden", top=10)
    cited = first_sources(answer)
    assert cited[0] == "t3" and len(cited) > 1
    stage = _stage(answer, "C: 2-hop + PPR")
    assert stage["notes"]["subgraph"] > 1 and stage["notes"]["added"] >= 1
    hops = [result for result in answer["results"] if len(result["path"]) == 3 and result["path"][1]["kind"] == "hop"]
    assert hops and all(result["scores"]["bm25"] == 0 and result["scores"]["ppr"] > 0 for result in hops)
    assert answer["results"][0]["score"] > max(result["score"] for result in answer["results"][1:])


def test_k_zero_stops_after_the_reply_hop(home):
    answer = recall(home, "sister garden", k_hop=0)
    assert "no_ppr" in fallbacks(answer)
    assert not any(stage["name"].startswith("C: 0-hop") for stage in answer["trace"]["stages"])


def test_mvp_uses_one_hop(home):
    answer = recall(home, "sister garden", mvp=True)
    assert any(stage["name"] == "C: 1-hop + PPR" for stage in answer["trace"]["stages"])


def test_raw_fallback_on_pattern_tokens_returns_the_snippet(home):
    answer = recall(home, "0x8007045D")
    assert "raw:pattern_tokens" in fallbacks(answer)
    top = answer["results"][0]
    assert "0x8007045D" in top["citations"][0]["snippet"]
    assert _stage(answer, "W5: raw passages")["candidates"] >= 1


def test_raw_fallback_on_few_hits_and_on_request(home):
    assert "raw:low_coverage" in fallbacks(recall(home, "lavender"))
    answer = recall(home, "lavender", allow_raw=True)
    assert "raw:requested" in fallbacks(answer)


def test_raw_fallback_on_low_concentration(tmp_path, home):
    quiet = config_file(tmp_path, "recall:\n  raw:\n    low_coverage_topn: 0\n")
    # The best hit holds "honey" but not "zebra", which no memory holds: less than 0.6 of the idf weight.
    answer = recall(home, "honey zebra", config_file=quiet)
    assert "raw:low_concentration" in fallbacks(answer)
    assert "raw:low_concentration" not in fallbacks(recall(home, "honey lavender", config_file=quiet))


def test_raw_disabled_keeps_automatic_triggers_off(tmp_path, home):
    off = config_file(tmp_path, "recall:\n  raw:\n    enabled: false\n")
    assert not [name for name in fallbacks(recall(home, "0x8007045D", config_file=off)) if name.startswith("raw")]
    assert "raw:requested" in fallbacks(recall(home, "0x8007045D", config_file=off, allow_raw=True))


def test_graph_only_filters_node_keywords(home):
    answer = recall(home, "cat shelter", graph_only=True)
    assert "graph_filter" in fallbacks(answer)
    assert first_sources(answer)[0] == "t7"
    assert answer["trace"]["variant"] == "G→C"


def test_no_node_index_falls_back_to_the_graph(tmp_path, home):
    without = config_file(tmp_path, "recall:\n  use_node_index: false\n")
    answer = recall(home, "cat shelter", config_file=without)
    assert "graph_filter" in fallbacks(answer)
    assert first_sources(answer)[0] == "t7"


def test_without_a_graph_raw_passages_answer(tmp_path):
    home = dialogue_store(tmp_path, convert=False)
    answer = recall(home, "Which city did Ann move to?")
    assert "no_graph" in fallbacks(answer)
    assert answer["trace"]["variant"] == "R"
    assert {result["type"] for result in answer["results"]} == {"RawPassage"}
    assert "t1" in first_sources(answer)[:2]
    assert all(result["citations"][0]["snippet"] for result in answer["results"])


def test_since_until_filter_by_time(home):
    from datetime import datetime, timezone

    june = datetime(2024, 6, 1, tzinfo=timezone.utc).timestamp()
    answer = recall(home, "Ann", since=june, top=10)
    assert set(first_sources(answer)) <= {"t5", "t6", "t7"}
    answer = recall(home, "Ann", until=june, top=10)
    assert set(first_sources(answer)) <= {"t1", "t2", "t3", "t4"}


def test_types_filter(home):
    answer = recall(home, "adopted a cat", types=("Fact",))
    assert answer["results"] and {result["type"] for result in answer["results"]} == {"Fact"}


def test_empty_query_is_an_input_error(home):
    from engine.errors import InputError

    with pytest.raises(InputError):
        recall(home, "   ")
