"""Change statements whose value is a name found by its syntax (issue 19, kugeneral): a first-person clause with a
cue word of a slot's domain and a name after a preposition (English) or after 到/在/去/跟/归 (Chinese) states the
slot, whatever its verb; a change word or the clause's own dated time words make it a change, an end word an
end. The sentences are written for these tests, in no phrase list."""

from __future__ import annotations

import pytest

from r2g_testkit import statement_facts as _facts


@pytest.mark.parametrize("text, expected", [
    ("Two weeks ago I came on board at Pelican Labs.", ("Jon", "employer", "Pelican Labs", "change")),
    ("We've been Fresno residents since the spring.", ("Jon", "residence", "Fresno", "change")),  # before its cue
    ("I'm under Mark Evans at work now.", ("Jon", "manager", "Mark Evans", "change")),  # not an employer
    ("We gave up our flat in Fresno last week.", ("Jon", "residence", "Fresno", "end")),
    ("Home for me is Spokane, have been here a good while.", ("Jon", "residence", "Spokane", "set")),
    ("我上周从星辰软件跳到了远帆科技。", ("Jon", "employer", "远帆科技", "change")),
    ("从上个月起我就在青禾传媒干了。", ("Jon", "employer", "青禾传媒", "change")),
    ("半个月前换到洛阳生活了。", ("Jon", "residence", "洛阳", "change")),  # no subject: the speaker's change
    ("我现在跟小雨在一起了。", ("Jon", "partner", "小雨", "change")),
    ("I answer to Henrik Dahl at work.", ("Jon", "manager", "Henrik Dahl", "set")),  # the analyser says a place
    ("Traded in the Fiat Panda for a Skoda Octavia last week.", ("Jon", "vehicle", "Skoda Octavia", "change")),
    ("The Renault Clio is my daily driver.", ("Jon", "vehicle", "Renault Clio", "set")),  # not "Clio" alone
])
def test_a_name_beside_a_cue_of_its_domain_is_stated(text, expected):
    assert expected in _facts(text)


@pytest.mark.parametrize("text, slot", [
    ("Someone from Pelican Labs emailed me about a job.", "employer"),  # no preposition of the slot's
    ("We looked at a house in Fresno but it was too expensive.", "residence"),  # a plan word
    ("公司搬到了上海。", "residence"),  # the company's move
    ("我们领导今天在工作群里发火了。", "employer"),  # 在 before the cue's own word names no workplace
    ("我现在跟同事在一起了。", "partner"),  # a word for people is no one's name
])
def test_no_name_is_stated_without_the_speaker_or_with_a_plan(text, slot):
    assert not [fact for fact in _facts(text) if fact[0] == "Jon" and fact[1] == slot]


def test_a_value_another_clause_states_is_not_stated_twice():
    facts = _facts("公司把我调到了武汉分部，我现在住武汉。")
    assert [fact for fact in facts if fact[1] == "residence"] == [("Jon", "residence", "武汉", "change")]


def test_a_frames_free_slot_yields_to_a_statement_of_its_clause():
    facts = _facts("我现在是峰岭大学的学生了，上礼拜开的课。")
    assert ("Jon", "school", "峰岭大学", "change") in facts
    assert not [fact for fact in facts if fact[1] == "现在"]


@pytest.mark.parametrize("text, holder", [
    ("我二舅现在开长安CS75。", "Jon的二舅"),
    ("My stepdad moved to Lisbon last month.", "Jon's stepdad"),
])
def test_a_relative_named_by_a_kin_word_holds_the_fact(text, holder):
    assert {fact[0] for fact in _facts(text)} == {holder}
