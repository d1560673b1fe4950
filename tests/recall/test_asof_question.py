"""Slot questions (memctl.recall.slot_question): the slot, the temporal kind and the time a question asks about,
in English and Chinese; anything that is no slot question is left alone."""

from __future__ import annotations

import pytest

from engine.errors import InputError
from memctl.isotime import parse_time
from memctl.language.lexicon import use_directory
from memctl.recall.query import build
from memctl.recall.slot_question import parse

NOW = parse_time("2024-01-15T12:00:00", "--now", end_of_day=False)


def _parse(text: str, as_of: float | None = None):
    query = build(text, NOW)
    return parse(text, query.language, query.times, NOW, as_of)


@pytest.mark.parametrize("text, slot, kind, expression", [
    ("Which city does Maria live in now?", "residence", "current", None),
    ("Where is Maria living these days?", "residence", "current", None),
    ("Who does Maria work for?", "employer", "current", None),
    ("Which firm employs Ben at the moment?", "employer", "current", None),
    ("What car does Tom drive?", "vehicle", "current", None),
    ("What does Priya do for a living?", "job_title", "current", None),
    ("What does Priya do for fun these days?", "hobby", "current", None),
    ("What does Priya like now?", "likes", "current", None),
    ("Where is Priya studying?", "school", "current", None),
    ("What languages is Priya studying?", "language_studied", "current", None),
    ("Which company was Maria working for around March 2022?", "employer", "past", "March 2022"),
    ("Where did Maria live in 2021?", "residence", "past", "2021"),
    ("What car did Tom drive two years ago?", "vehicle", "past", "two years ago"),
    ("Where did Maria live before Denver?", "residence", "previous", None),
    ("Who did Maria use to work for?", "employer", "previous", None),
    ("When did Maria move to Denver?", "residence", "when", None),
    ("Since when has Tom been working at Globex?", "employer", "when", None),
    ("Do you remember when Tom moved to Denver?", "residence", "when", None),
    ("So, when did Tom move to Denver?", "residence", "when", None),
    ("王芳现在住在哪", "residence", "current", None),
    ("王芳目前住在哪个城市？", "residence", "current", None),
    ("王芳在哪家公司工作", "employer", "current", None),
    ("王芳养了什么宠物", "pet", "current", None),
    ("李雷开什么车？", "vehicle", "current", None),
    ("李雷最近怎么吃饭？", "diet", "current", None),
    ("李雷目前迷什么？", "likes", "current", None),
    ("王芳2022年3月住在哪", "residence", "past", "2022年3月"),
    ("王芳去年在哪家公司上班？", "employer", "past", "去年"),
    ("王芳以前住在哪里？", "residence", "previous", None),
    ("王芳什么时候搬到杭州的", "residence", "when", None),
])
def test_slot_kind_and_time(text, slot, kind, expression):
    question = _parse(text)
    assert question is not None
    assert question.slots[0] == slot and question.kind == kind and question.time_expression == expression
    if kind == "past":
        start, end = question.window
        assert start < end < NOW


def test_a_past_window_is_the_interval_the_question_names():
    question = _parse("Which company was Maria working for around March 2022?")
    assert question.window == (parse_time("2022-03-01", "t", False), parse_time("2022-03-31", "t", True))


def test_the_interrogative_orders_the_slots():
    assert _parse("Where does Maria work?").slots[:2] == ("work_location", "employer")
    assert _parse("Who does Maria work for?").slots[:2] == ("employer", "work_location")
    assert _parse("王芳在哪里上班？").slots[:2] == ("work_location", "employer")


def test_when_asks_about_an_end_or_a_start():
    assert _parse("When did Maria quit her job at Acme?").ending
    assert _parse("王芳什么时候辞职的？").ending
    assert not _parse("When did Maria move to Denver?").ending


def test_a_when_question_keeps_the_words_of_its_value():
    assert _parse("When did Victor adopt the rescue greyhound?").kind == "when"
    assert _parse("When did Victor give up birdwatching?").ending


def test_a_when_question_naming_no_slot_is_kept_for_its_value():
    question = _parse("When did Maria leave Acme Robotics?")
    assert question.kind == "when" and question.slots == () and question.ending


@pytest.mark.parametrize("text", [
    "I live in Boston now.",  # a statement, not a question
    "我现在住在杭州。",
    "What did Caroline research?",  # no slot
    "How is the weather in Denver?",
    "What books has Melanie read?",
    "王芳周末看了哪部电影",
    # A slot's word, but the question asks something else: an opinion, a reason, a manner, an event.
    "What does Melanie think about Caroline's decision to adopt?",
    "What challenge did John encounter during pre-season training?",
    "Why does Nate like turtles as pets?",
    "How often does John work out with his family?",
    "为什么王芳搬到杭州了？",
    "What does Maria say she feels when doing upside-down yoga poses?",  # "when" as a conjunction
])
def test_no_slot_question(text):
    assert _parse(text) is None


def test_as_of_answers_a_question_without_time_at_that_time():
    as_of = parse_time("2022-06-01", "--as-of", end_of_day=True)
    question = _parse("Where does Maria live?", as_of)
    assert question.kind == "past" and question.window == (as_of, as_of) and question.time_expression == "--as-of"
    # The question's own time is more specific than --as-of.
    assert _parse("Where did Maria live in 2021?", as_of).time_expression == "2021"


def test_a_time_that_is_not_past_is_no_past_question():
    assert _parse("Where will Maria live next year?").kind == "current"
    assert _parse("Where does Maria live this year?").kind == "current"


def test_question_forms_extend_from_the_lexicon_directory(tmp_path):
    (tmp_path / "slot_questions.yaml").write_text("slots:\n  vehicle: {en: [scooter]}\n", encoding="utf-8")
    assert _parse("Which scooter does Tom have?") is None
    use_directory(str(tmp_path))
    try:
        assert _parse("Which scooter does Tom have?").slots[0] == "vehicle"
        (tmp_path / "slot_questions.yaml").write_text("slots:\n  spaceship: {en: [rocket]}\n", encoding="utf-8")
        use_directory(None)
        use_directory(str(tmp_path))
        with pytest.raises(InputError) as error:
            _parse("Which rocket does Tom fly?")
        assert "spaceship" in str(error.value) and "slot_questions.yaml" in str(error.value.where)
    finally:
        use_directory(None)
