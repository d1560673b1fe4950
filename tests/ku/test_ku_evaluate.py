"""tools/ku/evaluate.py: hit@1 and Recall@5 per kind, language and split on hand-made rankings, and one small run
end to end."""

from __future__ import annotations

import pytest

from tools.ku.evaluate import main, measure, report, tally


def sample(identifier: str, language: str, split: str, kinds_and_evidence: list) -> dict:
    return {"sample_id": identifier, "lang": language, "split": split,
            "qa": [{"question": "?", "kind": kind, "evidence": evidence} for kind, evidence in kinds_and_evidence]}


def test_hit_at_1_needs_an_evidence_turn_in_the_first_result_and_recall_counts_evidence_in_the_top_5():
    ranked = [["D1:1"], ["D2:3", "D2:4"], ["D3:1"], ["D4:1"], ["D5:1"], ["D6:1"]]
    assert measure(ranked, ["D2:4"]) == {"hit@1": 0.0, "R@5": 1.0}
    assert measure(ranked, ["D1:1", "D6:1"]) == {"hit@1": 1.0, "R@5": 0.5}
    assert measure([], ["D1:1"]) == {"hit@1": 0.0, "R@5": 0.0}


def test_tally_averages_per_language_split_and_kind_with_all_rows():
    samples = [sample("ku-en-001", "en", "dev", [("current", ["D1:1"]), ("when", ["D2:1"])]),
               sample("ku-zh-003", "zh", "heldout", [("current", ["D1:2"])])]
    answers = {"ku-en-001#0": [["D1:1"]], "ku-en-001#1": [["D9:9"], ["D2:1"]], "ku-zh-003#0": [["D1:1"]]}
    found = tally(samples, answers)
    assert found[("en", "dev", "current")] == {"hit@1": 1.0, "R@5": 1.0, "n": 1}
    assert found[("en", "dev", "when")] == {"hit@1": 0.0, "R@5": 1.0, "n": 1}
    assert found[("all", "all", "current")]["hit@1"] == pytest.approx(0.5)
    assert found[("all", "all", "all")] == {"hit@1": pytest.approx(1 / 3), "R@5": pytest.approx(2 / 3), "n": 3}
    assert ("zh", "dev", "all") not in found
    table = report({"m": found})
    assert "| en       | dev     | m      | 1.000" in table
    assert "| zh       | heldout | m      | 0.000" in table


def test_a_small_generated_run_prints_both_methods_and_says_how_past_questions_were_asked(capsys):
    assert main(["--conversations", "1", "--as-of"]) == 0
    out = capsys.readouterr().out
    assert "BM25 (engine tokenizer)" in out and "memctl recall (in-process)" in out
    assert "2 conversations, 6 timelines" in out
    assert ("recalled with as_of" in out) != ("recalled without as_of (recall's Request takes no as_of)" in out)


def test_a_missed_first_result_is_told_by_the_role_of_the_turn_it_cites():
    from tools.ku.evaluate import first_result

    one = {"roles": {"D1:1": ["state", "Tom", "residence"], "D2:1": ["restate", "Tom", "residence"],
                     "D3:1": ["other", "Tom", "residence"], "D4:1": ["state", "Ann", "pet"],
                     "D5:1": ["state", "Tom", "residence"]}}
    qa = {"person": "Tom", "slot": "residence", "evidence": ["D5:1"]}
    assert first_result(one, qa, [["D5:1"], ["D1:1"]]) == "evidence"
    assert first_result(one, qa, [["D1:1"]]) == "another value's statement"
    assert first_result(one, qa, [["D3:1", "D2:1"]]) == "value restated or asked"
    assert first_result(one, qa, [["D4:1"]]) == "another timeline"
    assert first_result(one, qa, [["D9:9"]]) == first_result(one, qa, []) == "anything else"


def test_splits_keep_the_conversations_of_the_splits_named_and_an_unknown_split_is_refused(capsys):
    assert main(["--conversations", "2", "--splits", "dev2"]) == 0
    out = capsys.readouterr().out
    assert "2 conversations" in out and "| dev2 " in out and "| dev " not in out and "| heldout " not in out
    with pytest.raises(SystemExit) as refused:
        main(["--splits", "dev,tune"])
    assert refused.value.code == 2 and "--splits: unknown tune" in capsys.readouterr().err
