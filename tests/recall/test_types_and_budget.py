"""`recall --types` takes node type names only, and a budget too small for any matching memory says so."""

from __future__ import annotations

import json

import pytest

from recall_testkit import recall_command, samples_home  # noqa: F401 - fixtures

KNOWN = "Episode, Fact, Preference, Concept, Entity, Task, Meta, RawPassage"
QUERY = "Kyoto peanut allergy"


@pytest.mark.parametrize("types", [["--types", "Bogus"], ["--types", "Episode,episode"], ["--types", "Fact", "--types", "x"]])
def test_an_unknown_type_is_exit_2_listing_the_known_ones(recall, types):
    result = recall(QUERY, *types)
    assert (result.exit_code, result.stdout) == (2, "")
    assert f"is not a node type (known: {KNOWN})" in result.stderr


def test_an_unknown_type_in_a_batch_line_names_the_line(recall):
    result = recall("batch", "-", input='{"q": "Kyoto"}\n{"q": "Kyoto", "types": "Facts"}\n')
    assert result.exit_code == 2
    assert result.stderr == f"error: <stdin>:2: --types: 'Facts' is not a node type (known: {KNOWN})\n"


def test_known_types_are_accepted(recall):
    answer = json.loads(recall(QUERY, "--types", "Episode,Fact", "--json").stdout)
    assert answer["results"] and {card["type"] for card in answer["results"]} <= {"Episode", "Fact"}


def test_a_budget_too_small_for_any_card_says_so(recall):
    answer = json.loads(recall(QUERY, "--budget", "1", "--json").stdout)
    packing = answer["packing"]
    assert answer["results"] == []
    assert packing["budget"] == 1 and packing["tokens"] == 0
    assert packing["matched"] == packing["dropped"] > 0 and packing["smallest_dropped"] > 1
    printed = recall(QUERY, "--budget", "1")
    assert printed.exit_code == 0
    assert printed.stdout == (f"{packing['matched']} memories match {QUERY}, but none fits the budget of 1 token "
                              f"(the smallest needs {packing['smallest_dropped']}): raise --budget, or give --budget 0 "
                              "for no budget\n")


def test_a_partly_packed_answer_counts_what_did_not_fit(recall):
    whole = json.loads(recall(QUERY, "--budget", "0", "--json").stdout)
    assert whole["packing"] == {"budget": None, "tokens": sum(card["tokens"] for card in whole["results"]),
                                "matched": len(whole["results"]), "dropped": 0, "smallest_dropped": None}
    budget = max(card["tokens"] for card in whole["results"])
    packed = json.loads(recall(QUERY, "--budget", str(budget), "--json").stdout)
    assert 0 < len(packed["results"]) < len(whole["results"])
    assert packed["packing"]["dropped"] == len(whole["results"]) - len(packed["results"])
    printed = recall(QUERY, "--budget", str(budget)).stdout
    assert printed.endswith(f"{packed['packing']['dropped']} more matched but did not fit the budget of {budget} "
                            "tokens\n")


def test_no_match_at_all_still_says_no_memories_match(recall):
    assert recall("zzzqqq xylophone").stdout == "no memories match zzzqqq xylophone\n"
