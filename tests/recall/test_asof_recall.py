"""Recall over version chains (issue 19): the version a slot question asks for comes first, citing its evidence;
stale versions never look current; the trace says which chain was consulted and why; --as-of; recall is
unchanged when no chain answers."""

from __future__ import annotations

import pytest

from asof_testkit import NOW, chain_store
from engine.errors import InputError
from memctl.isotime import parse_time
from memctl.model import entity_id
from memctl.recall import pipeline
from recall_testkit import TENANT, recall

REFERENCE = parse_time(NOW, "--now", end_of_day=False)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return chain_store(tmp_path_factory.mktemp("chains"))


@pytest.fixture(scope="module")
def home(store):
    return store[0]


@pytest.fixture(scope="module")
def keys(store):
    return store[1]


def ask(home, q: str, **options) -> dict:
    return recall(home, q, **{"now": REFERENCE, **options})


def first(answer: dict) -> dict:
    return answer["results"][0]


def version_stage(answer: dict) -> dict | None:
    return next((stage for stage in answer["trace"]["stages"] if stage["name"] == "V: version chain"), None)


@pytest.mark.parametrize("q, chain, index, snippet", [
    ("Which city does Maria live in now?", ("Maria", "residence"), 1, "moved to Denver"),
    ("Where does Maria live?", ("Maria", "residence"), 1, "moved to Denver"),
    ("Who does Maria work for at the moment?", ("Maria", "employer"), 1, "joined Globex"),
    ("Where does Maria work?", ("Maria", "employer"), 1, "joined Globex"),  # no work_location chain
    ("王芳现在住在哪", ("王芳", "residence"), 1, "搬到杭州"),
    ("王芳养了什么宠物", ("王芳", "pet"), 1, "乐乐"),
])
def test_current_question_gets_the_version_in_force(home, keys, q, chain, index, snippet):
    card = first(ask(home, q))
    assert card["id"] == keys[chain][index]
    assert snippet in card["citations"][0]["snippet"]
    assert card["version"]["current"] and card["version"]["chosen"] == "current"
    assert not card["title"].startswith(("formerly", "no longer"))


def test_active_of_decides_over_a_newer_contested_claim(home, keys):
    initech, hooli = keys[("Tom", "employer")]
    card = first(ask(home, "Who does Tom work for now?"))
    assert card["id"] == initech and card["version"]["reason"] == "in force (ACTIVE_OF)"
    cards = {card["id"]: card for card in ask(home, "Tom Hooli", types=("Fact",), graph_only=True)["results"]}
    assert cards[hooli]["title"].startswith("contested: ") and cards[hooli]["version"]["current"] is False


def test_every_value_of_a_multi_valued_slot_in_force_comes_first(home, keys):
    cards = ask(home, "王芳现在养了哪些宠物？")["results"]
    assert [card["id"] for card in cards[:2]] == keys[("王芳", "pet")][::-1]
    assert all(card["version"]["current"] for card in cards[:2])


def test_the_turns_the_chosen_card_cites_are_not_repeated(home):
    results = ask(home, "Which city does Maria live in now?")["results"]
    cited = {citation["source_id"] for citation in results[0]["citations"]}
    assert cited == {"m6", "m8"}
    assert not [card["id"] for card in results[1:] for citation in card["citations"]
                if citation["source_id"] in cited]


def test_current_card_names_what_held_before(home):
    assert first(ask(home, "Which city does Maria live in now?"))["title"] == \
        "Maria · residence: Denver (since 2023-05-06; formerly Boston)"


@pytest.mark.parametrize("q, chain, index, snippet", [
    ("Where did Maria live in 2022?", ("Maria", "residence"), 0, "live in Boston"),
    ("Which company was Maria working for around March 2022?", ("Maria", "employer"), 0, "Acme Robotics"),
    ("Who was Maria working for in October 2022?", ("Maria", "employer"), 1, "joined Globex"),
    # Both held in 2022: Acme Robotics for seven and a half months, Globex for four and a half.
    ("Which company did Maria work for in 2022?", ("Maria", "employer"), 0, "Acme Robotics"),
    ("王芳2022年3月住在哪", ("王芳", "residence"), 0, "住在上海"),
])
def test_past_question_gets_the_version_valid_then(home, keys, q, chain, index, snippet):
    card = first(ask(home, q))
    assert card["id"] == keys[chain][index] and snippet in card["citations"][0]["snippet"]
    assert card["version"]["chosen"] == "past"


def test_a_superseded_version_says_so(home):
    card = first(ask(home, "Where did Maria live in 2022?"))
    assert card["title"] == "formerly: Maria · residence: Boston (2022-01-10 – 2023-05-06; then Denver)"
    assert card["version"]["current"] is False and card["version"]["state"] == "superseded"
    assert card["version"]["valid_until"] == "2023-05-06"


def test_previous_question_gets_the_version_before(home, keys):
    assert first(ask(home, "Where did Maria live before Denver?"))["id"] == keys[("Maria", "residence")][0]
    assert first(ask(home, "王芳以前住在哪里？"))["id"] == keys[("王芳", "residence")][0]


@pytest.mark.parametrize("q, chain, index, snippet", [
    ("When did Maria move to Denver?", ("Maria", "residence"), 1, "moved to Denver last weekend"),
    ("When did Maria move?", ("Maria", "residence"), 1, "moved to Denver last weekend"),
    ("When did Maria leave Acme Robotics?", ("Maria", "employer"), 1, "I quit Acme Robotics"),
    ("When did Tom sell his car?", ("Tom", "vehicle"), 1, "I sold the Honda Civic"),
    ("王芳什么时候搬到杭州的", ("王芳", "residence"), 1, "搬到杭州"),
])
def test_when_question_gets_the_change_and_its_evidence(home, keys, q, chain, index, snippet):
    card = first(ask(home, q))
    assert card["id"] == keys[chain][index] and snippet in card["citations"][0]["snippet"]
    assert card["version"]["chosen"] == "when" and card["citations"][0]["ts"]


@pytest.mark.parametrize("q", [
    "When did Maria move in with Tom?",  # names another Entity: the chain does not know, no guess
    "When did Maria leave Denver?",  # single-valued, nothing replaced it
    "王芳什么时候不养咪咪了？",  # multi-valued: a later value is no end of this one
    "When did Tom get his car?",  # no value named and no change in the chain (the first statement is none)
])
def test_when_question_the_chain_cannot_answer_chooses_nothing(home, q):
    stage = version_stage(ask(home, q))
    assert stage["notes"]["chosen"] == "none (no chain answers): the ranking is unchanged" and stage["top"] == []


def test_an_ended_value_is_no_longer_presented(home, keys):
    card = first(ask(home, "What car does Tom drive now?"))
    assert card["id"] == keys[("Tom", "vehicle")][1]
    assert card["title"] == "no longer: Tom · vehicle: Honda Civic (ended 2023-02-01)"
    assert card["version"]["current"] is False


def test_an_end_naming_no_value_names_the_one_it_ended(home, keys):
    card = first(ask(home, "王芳现在的对象是谁？"))
    assert card["id"] == keys[("王芳", "partner")][1]
    assert card["title"] == "no longer: 王芳 · 伴侣: 李雷 (ended 2023-07-01)"


def test_stale_versions_in_the_normal_ranking_are_marked(home, keys):
    """r2g's own fact "My car is a Honda Civic" became a version that ended: as a card and folded in an
    Episode's supports it says so."""
    ended = keys[("Tom", "vehicle")][0]
    cards = {card["id"]: card for card in ask(home, "Honda Civic", types=("Fact",))["results"]}
    assert cards[ended]["title"].startswith("no longer: ") and cards[ended]["title"].endswith("(until 2023-02-01)")
    assert cards[ended]["version"]["current"] is False
    supports = [support for card in ask(home, "Honda Civic")["results"] for support in card.get("supports", ())]
    assert [support["title"] for support in supports if support["id"] == ended] == \
        [cards[ended]["title"]]


def test_the_trace_shows_the_chain_the_versions_and_the_reason(home, keys):
    answer = ask(home, "Which company was Maria working for around March 2022?")
    stage = version_stage(answer)
    notes = stage["notes"]
    assert notes["question"] == "slot employer | work_location · past at March 2022" and notes["subjects"] == ["Maria"]
    assert notes["chains"] == [f"{entity_id(TENANT, 'Maria', 'Person')}|employer"]
    assert notes["versions"] == ["Acme Robotics 2021-03-01 → 2022-08-15 superseded",
                                 "Globex 2022-08-15 → … active"]
    assert notes["chosen"] == "Acme Robotics: valid at March 2022"
    assert stage["candidates"] == 2 and stage["top"][0][0] == keys[("Maria", "employer")][0]
    assert first(answer)["version"]["reason"] == "valid at March 2022"


def test_reference_time_before_the_change_gets_the_version_valid_then(home, keys):
    early = parse_time("2022-06-01", "--now", end_of_day=False)
    card = first(recall(home, "Where does Maria live now?", now=early))
    assert card["id"] == keys[("Maria", "residence")][0] and card["version"]["reason"] == "valid at the reference time"


def test_as_of_answers_as_of_that_time(home, keys):
    as_of = parse_time("2022-06-01", "--as-of", end_of_day=True)
    answer = ask(home, "Where does Maria live?", as_of=as_of)
    assert first(answer)["id"] == keys[("Maria", "residence")][0]
    assert version_stage(answer)["notes"]["question"] == "slot residence · past at --as-of"
    # The other results are those of --until T.
    assert all(citation["ts"] <= "2022-06-01T23:59:59" for card in answer["results"][1:]
               for citation in card["citations"])


def test_as_of_in_the_api_takes_iso_text_too(home, keys):
    assert first(ask(home, "Where does Maria live?", as_of="2022-06-01"))["id"] == keys[("Maria", "residence")][0]
    with pytest.raises(InputError) as error:
        ask(home, "Where does Maria live?", as_of="June")
    assert error.value.where == "as_of" and "ISO date" in str(error.value)
    with pytest.raises(InputError):
        ask(home, "Where does Maria live?", as_of=[2022])


def test_as_of_filters_any_question(home):
    as_of = parse_time("2022-06-01", "--as-of", end_of_day=True)
    answer = ask(home, "Boston harbour winters", as_of=as_of)
    assert answer["results"] and version_stage(answer) is None
    assert all(citation["ts"] <= "2022-06-01T23:59:59" for card in answer["results"] for citation in card["citations"])
    assert any("Boston" in citation["snippet"] for card in answer["results"] for citation in card["citations"])


def test_past_with_nothing_known_then_leaves_recall_unchanged(home, monkeypatch):
    answer = ask(home, "Where did Maria live in 2019?")
    assert version_stage(answer)["notes"]["chosen"] == "none (no chain answers): the ranking is unchanged"
    assert [card["id"] for card in answer["results"]] == _without_chains(home, "Where did Maria live in 2019?",
                                                                         monkeypatch)


@pytest.mark.parametrize("q", ["Where does Tom live now?", "Boston winters", "What did Maria say about mountains?"])
def test_no_chain_no_change(home, monkeypatch, q):
    answer = ask(home, q)
    assert all("version" not in card or card["version"].get("chosen") is None for card in answer["results"])
    assert [card["id"] for card in answer["results"]] == _without_chains(home, q, monkeypatch)


def _without_chains(home, q: str, monkeypatch) -> list:
    with monkeypatch.context() as patched:
        patched.setattr(pipeline, "CHAIN_EDGES", ())
        return [card["id"] for card in ask(home, q)["results"]]


def test_my_is_the_user(tmp_path):
    home, keys = chain_store(tmp_path, {("user", "residence"): list(_user_residence())})
    card = first(ask(home, "Where do I live now?"))
    assert card["id"] == keys[("user", "residence")][1]
    assert first(ask(home, "我以前住在哪里？"))["id"] == keys[("user", "residence")][0]


def _user_residence():
    from asof_testkit import V

    return (V("Boston", "m3", "2022-01-10", "2023-05-06", "superseded"),
            V("Denver", "m6", "2023-05-06", None, "active", "change"))


def test_the_top_counts_the_chosen_version(home):
    assert len(ask(home, "Where does Maria live?", top=3)["results"]) == 3
    assert len(ask(home, "Where does Maria live?", top=1)["results"]) == 1
