"""Change statements beyond one verb per slot (issue 19, knowledge-update misses): indirect phrasings, facts
anchored on a slot's listed values, rhetorical questions that tell, and the Chinese workplace frame."""

from __future__ import annotations

import pytest

from r2g_testkit import statement_facts as _facts


@pytest.mark.parametrize("text, expected", [
    ("Yesterday we signed a lease for an apartment in Tucson.", ("Jon", "residence", "Tucson", "change")),
    ("The movers unloaded our boxes in Reno on Friday.", ("Jon", "residence", "Reno", "change")),
    ("I've been in Oslo since university.", ("Jon", "residence", "Oslo", "set")),
    ("I accepted the offer from Northwind.", ("Jon", "employer", "Northwind", "change")),
    ("My job at Contoso is intense.", ("Jon", "employer", "Contoso", "set")),
    ("I chose to try pescatarian meals this spring.", ("Jon", "diet", "pescatarian", "change")),
    ("I've been dairy-free for ages.", ("Jon", "diet", "dairy-free", "set")),
    ("We had our first date with Robin on Sunday.", ("Jon", "partner", "Robin", "change")),
    ("I'm a graduate student at Ridgeview College.", ("Jon", "school", "Ridgeview College", "set")),
    ("Our department is now run by Maria Lopez.", ("Jon", "manager", "Maria Lopez", "change")),
    ("I retrained as an electrician.", ("Jon", "job_title", "electrician", "change")),
    ("I picked up my new Subaru Outback from the garage.", ("Jon", "vehicle", "Subaru Outback", "change")),
])
def test_english_phrasings(text, expected):
    assert expected in _facts(text)


@pytest.mark.parametrize("text, expected", [
    ("我上个月初搬到厦门了。", ("Jon", "residence", "厦门", "change")),  # 上个月初 is a time: the holder reads
    ("我们在青岛住了十年了。", ("Jon", "residence", "青岛", "set")),
    ("我已经不在青岛了。", ("Jon", "residence", "青岛", "end")),
    ("我昨天签了远帆科技的offer。", ("Jon", "employer", "远帆科技", "change")),
    ("我前几天开始轻断食了！", ("Jon", "diet", "轻断食", "change")),
    ("我被调到李国强手下了。", ("Jon", "manager", "李国强", "change")),
])
def test_chinese_phrasings(text, expected):
    assert expected in _facts(text)


@pytest.mark.parametrize("text, expected", [
    ("Guess who doesn't live in Austin anymore?", ("Jon", "residence", "Austin", "end")),
    ("猜猜谁已经不在成都住了？", ("Jon", "residence", "成都", "end")),
])
def test_a_rhetorical_question_tells(text, expected):
    assert expected in _facts(text)


def test_a_real_question_states_nothing():
    assert _facts("Do you still live in Austin?") == []


@pytest.mark.parametrize("text, expected", [
    ("Flashcards on the train keep my Korean vocabulary growing.", ("Jon", "language_studied", "Korean", "set")),
    ("Save 555-0177 as my number.", ("Jon", "phone", "555-0177", "set")),
    ("我每天在App上打卡练日语。", ("Jon", "language_studied", "日语", "set")),
    ("新号码13912345678，记一下。", ("Jon", "phone", "13912345678", "set")),
])
def test_a_listed_value_next_to_a_cue_is_stated(text, expected):
    assert expected in _facts(text)


@pytest.mark.parametrize("text", [
    "My old classmate Luis drives a Honda Civic now.",  # Luis's car, not the speaker's
    "My sister's Spanish class moved to Tuesdays.",
    "I might take Spanish classes someday.",  # a plan
    "The office offered me a number like 555-0103.",
    "我姐每天在App上练日语。",
])
def test_no_anchored_fact_of_someone_else_or_a_plan(text):
    assert not [fact for fact in _facts(text) if fact[0] == "Jon" and fact[1] in ("vehicle", "language_studied",
                                                                                   "phone")]


@pytest.mark.parametrize("text, slot", [
    ("我在星辰软件工作。", "employer"),  # a name the analyser does not know: an employer
    ("我在杭州工作。", "work_location"),  # a place
])
def test_chinese_workplace_frame(text, slot):
    assert [fact[1] for fact in _facts(text)] == [slot]
