"""Statements of a slot's value and of its changes (issue 19): memctl/r2g/changes.py with the phrases of
memctl/data/changes.yaml: kinds, holders, the statement's own time, what is no statement, and the nodes `memctl
r2g` makes of them."""

from __future__ import annotations

import pytest

from engine.errors import InputError
from memctl.language.lexicon import use_directory
from memctl.r2g.changes import change_rules
from memctl.r2g.extract import extract
from r2g_testkit import convert, ingest, nodes_of_type, write_jsonl

REF = "2024-04-10"  # a Wednesday, ISO week 2024-W15


def _facts(text: str, speaker: str = "Jon", ref_time: str = REF) -> list[tuple]:
    result = extract(text, speaker=speaker, ref_time=ref_time)
    return [(slot.subject, slot.slot, slot.value, slot.kind, slot.polarity) for slot in result.slots]


def _times(text: str, speaker: str = "Jon") -> list[tuple]:
    result = extract(text, speaker=speaker, ref_time=REF)
    return [(slot.slot, slot.kind, None if slot.time is None else result.times[slot.time].value)
            for slot in result.slots]


@pytest.mark.parametrize("text, expected", [
    # set: a value stated as holding
    ("I live in Boston.", [("Jon", "residence", "Boston", "set", "stated")]),
    ("I work for Initech.", [("Jon", "employer", "Initech", "set", "stated")]),
    ("I'm a nurse at the clinic.", [("Jon", "job_title", "nurse", "set", "stated")]),
    ("We're married.", [("Jon", "relationship_status", "married", "set", "stated")]),
    ("I play badminton on weekends.", [("Jon", "sport", "badminton", "set", "stated")]),
    # change: a new value replacing the one in force
    ("We moved to Denver.", [("Jon", "residence", "Denver", "change", "stated")]),
    ("We finally unpacked the last boxes in Denver.", [("Jon", "residence", "Denver", "change", "stated")]),
    ("I got a job at Globex!", [("Jon", "employer", "Globex", "change", "stated")]),
    ("I left Initech and joined Globex.", [("Jon", "employer", "Globex", "change", "stated")]),
    ("I got promoted to manager.", [("Jon", "job_title", "manager", "change", "stated")]),
    ("I went vegan.", [("Jon", "diet", "vegan", "change", "stated")]),
    ("I live in Austin now.", [("Jon", "residence", "Austin", "change", "stated")]),  # "now": a new state
    ("My new boss is Tom.", [("Jon", "manager", "Tom", "change", "stated")]),
    ("I have a new car.", [("Jon", "vehicle", "car", "change", "stated")]),  # a value said to be new
    ("I'm single again.", [("Jon", "relationship_status", "single", "change", "stated")]),
    ("I changed my number to 555-201-3344.", [("Jon", "phone", "555-201-3344", "change", "stated")]),
    # end: a single-valued value ends with no new one (no value named: "")
    ("I quit my job at Initech.", [("Jon", "employer", "Initech", "end", "ended")]),
    ("I got laid off.", [("Jon", "employer", "", "end", "ended")]),
    ("I don't work at Initech anymore.", [("Jon", "employer", "Initech", "end", "ended")]),
    ("We broke up.", [("Jon", "partner", "", "end", "ended")]),
    ("I sold my Honda.", [("Jon", "vehicle", "Honda", "end", "ended")]),
    ("I no longer work for Initech.", [("Jon", "employer", "Initech", "end", "ended")]),
    # add and stop: a multi-valued slot gains or loses a value
    ("We adopted a kitten.", [("Jon", "pet", "kitten", "add", "stated")]),
    ("I started learning Korean.", [("Jon", "language_studied", "Korean", "add", "stated")]),
    ("I took up pottery.", [("Jon", "hobby", "pottery", "add", "stated")]),
    ("I started knitting again.", [("Jon", "hobby", "knitting", "add", "stated")]),
    ("Globex hired me.", [("Jon", "employer", "Globex", "change", "stated")]),  # the value before the verb
    ("I gave up squash.", [("Jon", "sport", "squash", "stop", "ended")]),  # a sport, not also a hobby
    ("I'm not into chess anymore.", [("Jon", "hobby", "chess", "stop", "ended")]),
    ("Sadly our cat passed away.", [("Jon", "pet", "cat", "stop", "ended")]),  # the value before the verb
    ("I'm no longer learning Spanish.", [("Jon", "language_studied", "Spanish", "stop", "ended")]),
    ("We have a new puppy.", [("Jon", "pet", "puppy", "add", "stated")]),
    # negations: a denied state stays a set
    ("I don't have a car.", [("Jon", "vehicle", "car", "set", "negated")]),
    ("I'm not vegan.", [("Jon", "diet", "vegan", "set", "negated")]),
])
def test_english_statements_have_their_kind(text, expected):
    assert _facts(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("我住在杭州。", [("用户", "residence", "杭州", "set", "stated")]),
    ("我现在住在成都了。", [("用户", "residence", "成都", "change", "stated")]),  # 了: a new state
    ("我们搬到了南京。", [("用户", "residence", "南京", "change", "stated")]),
    ("入职了字节。", [("用户", "employer", "字节", "change", "stated")]),  # no holder written: the speaker
    ("我跳槽到了华为。", [("用户", "employer", "华为", "change", "stated")]),
    ("辞职了。", [("用户", "employer", "", "end", "ended")]),
    ("我被公司裁员了。", [("用户", "employer", "", "end", "ended")]),
    ("分手了。", [("用户", "partner", "", "end", "ended")]),
    ("我和小林分手了。", [("用户", "partner", "小林", "end", "ended")]),
    ("我们结婚了！", [("用户", "relationship_status", "已婚", "change", "stated")]),
    ("开始学日语。", [("用户", "language_studied", "日语", "add", "stated")]),
    ("我养了一只橘猫。", [("用户", "pet", "猫", "add", "stated")]),
    ("不养猫了。", [("用户", "pet", "猫", "stop", "ended")]),  # 不…了: no longer
    ("我已经不打羽毛球了。", [("用户", "sport", "羽毛球", "stop", "ended")]),
    ("我不再住在北京。", [("用户", "residence", "北京", "end", "ended")]),
    ("我吃素好几年了。", [("用户", "diet", "素", "set", "stated")]),  # a duration: a state, no change
    ("我换了一台新电脑。", [("用户", "device", "电脑", "change", "stated")]),
    ("我不在腾讯上班了。", [("用户", "employer", "腾讯", "end", "ended")]),
    ("我今天打篮球了。", [("用户", "sport", "篮球", "set", "stated")]),  # a game played, no new pastime
    ("我已经很久没打网球了。", [("用户", "sport", "网球", "stop", "ended")]),
    ("我把猫送给我妈了。", [("用户", "pet", "猫", "stop", "ended")]),
    ("我篮球不打了。", [("用户", "sport", "篮球", "stop", "ended")]),
    ("我的狗去世了。", [("用户", "pet", "狗", "stop", "ended")]),  # the value before the verb
    ("我研究生毕业了。", [("用户", "school", "研究生", "end", "ended")]),  # the holder is no value
    ("我的新上司是王磊。", [("用户", "manager", "王磊", "change", "stated")]),
    ("我换了号码，新号是13700002222。", [("用户", "phone", "13700002222", "change", "stated")]),
    ("我家有一只柯基。", [("用户", "pet", "柯基", "set", "stated")]),  # 我家有… is no address
])
def test_chinese_statements_have_their_kind(text, expected):
    assert _facts(text, speaker="用户") == expected


@pytest.mark.parametrize("text, speaker, expected", [
    ("My sister moved to Lyon.", "Jon", [("Jon's sister", "residence", "Lyon", "change", "stated")]),
    ("My roommate quit her job at the bakery.", "Jon", [("Jon's roommate", "employer", "bakery", "end", "ended")]),
    ("My colleague Priya went vegetarian.", "Jon", [("Priya", "diet", "vegetarian", "change", "stated"),
                                                   # the apposition (memctl/r2g/slot_statements_en.py)
                                                   ("Jon", "colleague", "Priya", "set", "stated")]),
    ("Melanie moved to Paris.", "Jon", [("Melanie", "residence", "Paris", "change", "stated")]),
    ("Hey Mike, we moved to Denver.", "Jon", [("Jon", "residence", "Denver", "change", "stated")]),  # a vocative
    ("我姐搬到了苏州。", "用户", [("用户的姐", "residence", "苏州", "change", "stated")]),
    ("我同事老刘离职了。", "用户", [("老刘", "employer", "", "end", "ended")]),
    ("我的上司入职了腾讯。", "用户", [("用户的上司", "employer", "腾讯", "change", "stated")]),
    ("我同学小周搬到了厦门。", "用户", [("小周", "residence", "厦门", "change", "stated")]),  # a name missed
])
def test_the_holder_is_the_speaker_their_relative_or_a_person_named(text, speaker, expected):
    assert _facts(text, speaker) == expected


@pytest.mark.parametrize("text, expected", [
    ("We moved to Denver last weekend.", [("residence", "change", "2024-W14")]),
    ("I started at Globex in March.", [("employer", "change", "2024-03")]),
    ("I've been working at Globex since May.", [("employer", "change", "2023-05")]),  # since: a new state
    ("I quit my job at Initech two months ago.", [("employer", "end", "2024-02")]),
    ("两年前我们搬到了上海。", [("residence", "change", "2022")]),
    ("我上个月入职了腾讯。", [("employer", "change", "2024-03")]),
    ("去年三月我辞职了。", [("employer", "end", "2023-03")]),
])
def test_the_statement_keeps_its_own_time(text, expected):
    assert _times(text, speaker="用户" if not text.isascii() else "Jon") == expected


@pytest.mark.parametrize("text", [
    "We might move to Denver next year.",  # a plan, a hypothesis
    "If I moved to Denver, I'd need a car.",
    "I'm moving to Denver next month.",
    "Did you move to Denver?",  # a question
    "When I lived in Boston, I walked everywhere.",  # past narration of an old state
    "I used to live in Boston.",
    "I miss Boston's food.",
    "She moved to Denver.",  # someone the sentence does not name
    "I picked up my kids.",
    "I started feeling better.",
    "I left the party early.",
    "I'm playing tennis with Sam today.",  # an activity of the day, no pastime stated
    "I still have that stuffed dog you gave me.",
    "So we broke up the fight.",  # a phrase without a value ends its clause
    "打算明年换工作。",
    "如果搬到上海，我就买车。",
    "以前住在北京的时候，我天天挤地铁。",
    "你搬到杭州了吗",
    "他辞职了。",
    "我在家工作。",  # 家 is no employer
    "我们搬到了新房子。",  # no place named
    "要是以后搬到上海，就方便了。",
])
def test_what_is_no_statement_gives_no_fact(text):
    assert _facts(text, speaker="用户" if not text.isascii() else "Jon") == []


def test_a_statement_keeps_the_event_facts_of_its_clause():
    result = extract("I moved to Seattle last year.", speaker="Caroline", ref_time=REF)
    assert [(slot.slot, slot.kind) for slot in result.slots] == [("residence", "change")]
    assert result.facts and result.facts[0].roles["AGENT"]


def test_r2g_stores_the_kind_and_time_of_a_statement(isolated_home, tmp_path):
    said = [("2024-01-05", "I live in Boston."), ("2024-04-10", "We moved to Denver last weekend."),
            ("2024-04-11", "I gave up squash."), ("2024-04-12", "I got laid off.")]
    ingest(isolated_home, write_jsonl(tmp_path / "chat.jsonl", [
        {"id": str(number), "speaker": "Jon", "ts": f"{day}T09:00:00", "text": text}
        for number, (day, text) in enumerate(said, 1)]))
    convert(isolated_home)
    nodes = {fact["props"]["attributes"]["value"]: fact["props"]
             for fact in nodes_of_type(isolated_home, "Fact").values() if "slot" in fact["props"]["attributes"]}
    facts = {value: props["attributes"] for value, props in nodes.items()}
    assert {value: (attributes["slot"], attributes["kind"], attributes["polarity"])
            for value, attributes in facts.items()} == {
        "Boston": ("residence", "set", "stated"), "Denver": ("residence", "change", "stated"),
        "squash": ("sport", "stop", "ended"), "": ("employer", "end", "ended")}
    assert facts["Denver"]["time"]["value"] == "2024-W14" and "time" not in facts["Boston"]
    assert facts["Denver"]["subject"] == "Jon" and facts["Denver"]["slot_surface"] == "moved to"
    assert nodes[""]["title"] == "Jon got laid off" and nodes[""]["keywords"] == ["got laid off"]  # no value named


def test_a_lexicon_directory_replaces_the_phrases_and_a_bad_file_is_named(tmp_path):
    (tmp_path / "changes.yaml").write_text(
        "markers:\n  en: {}\n  zh: {}\n"
        "statements:\n  residence:\n    en:\n      change: [\"(?:relocated|shifted) to …\"]\n", encoding="utf-8")
    try:
        use_directory(str(tmp_path))
        assert _facts("I shifted to Denver.") == [("Jon", "residence", "Denver", "change", "stated")]
        assert _facts("We moved to Denver.") == []  # the shipped phrases are replaced
        for text, message, where in [
                ("markers: {}\nstatements: {}\n", "a mapping of lead, holders_self", "markers.en"),
                ("markers: {en: {}, zh: {}}\nstatements: {nowhere: {}}\n", "a slot of slots.yaml",
                 "statements.nowhere"),
                ("markers: {en: {}, zh: {}}\nstatements: {pet: {en: {adopt: [x]}}}\n", "a kind among set",
                 "statements.pet.en.adopt"),
                ("markers: {en: {}, zh: {}}\nstatements: {pet: {en: {add: [\"adopted (…\"]}}}\n",
                 "a regular expression", "statements.pet.en.add"),
                ("markers: {en: {negation: not}, zh: {}}\nstatements: {}\n", "a list of strings",
                 "markers.en.negation")]:
            (tmp_path / "changes.yaml").write_text(text, encoding="utf-8")
            use_directory(None)
            use_directory(str(tmp_path))
            with pytest.raises(InputError, match=message) as error:
                change_rules()
            assert where in str(error.value.where)
    finally:
        use_directory(None)
