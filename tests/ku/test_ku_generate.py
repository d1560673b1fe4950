"""tools/ku/generate.py: the knowledge-update set is deterministic, in the LoCoMo shape memctl ingests, split
as documented, and every question's evidence is a turn that says what the answer says."""

from __future__ import annotations

import json
import re
from datetime import date

import pytest

from tools.ku import timewords
from tools.ku.generate import generate, main
from tools.ku.phrasebook import entries, fill, phrasebook, values

CONVERSATIONS = 6  # per language: conversations 2 and 5 of each are held out, and 3 dev2 ones beside them


@pytest.fixture(scope="module")
def samples():
    return generate(seed=19, conversations=CONVERSATIONS)


def turns_by_id(sample: dict) -> dict:
    return {turn["dia_id"]: turn for key, turns in sample["conversation"].items()
            if re.fullmatch(r"session_\d+", key) for turn in turns}


def test_the_same_seed_writes_the_same_bytes_and_another_seed_other_ones(tmp_path):
    first, second, other = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    assert main([str(first), "--conversations", "3"]) == 0
    assert main([str(second), "--conversations", "3"]) == 0
    assert main([str(other), "--conversations", "3", "--seed", "20"]) == 0
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes() != other.read_bytes()


def test_each_conversation_holds_three_timelines_with_questions_of_every_kind(samples):
    assert len(samples) == 2 * (CONVERSATIONS + CONVERSATIONS // 2)
    for sample in samples:
        timelines = {(qa["person"], qa["slot"]) for qa in sample["qa"]}
        assert len(timelines) == 3
        for timeline in timelines:
            kinds = {qa["kind"] for qa in sample["qa"] if (qa["person"], qa["slot"]) == timeline}
            assert {"current", "when"} <= kinds


def test_every_evidence_turn_exists_is_the_persons_and_names_the_value_asked_about(samples):
    for sample in samples:
        turns = turns_by_id(sample)
        for qa in sample["qa"]:
            assert qa["evidence"], qa
            for dia in qa["evidence"]:
                turn = turns[dia]
                assert turn["speaker"] == qa["person"], (sample["sample_id"], qa, turn)
                assert any(value in turn["text"] for value in qa["values"]), (sample["sample_id"], qa, turn)
            if qa["kind"] in ("current", "past"):
                assert all(value in qa["answer"] for value in qa["values"])


def test_roles_name_existing_turns_and_the_statements_questions_point_at(samples):
    for sample in samples:
        turns = turns_by_id(sample)
        assert set(sample["roles"]) <= set(turns)
        for qa in sample["qa"]:
            for dia in qa["evidence"]:
                role, person, slot = sample["roles"][dia]
                assert (person, slot) == (qa["person"], qa["slot"])
                assert role in (("state", "stop") if qa["kind"] == "when" else ("state",))
        assert {role for role, _, _ in sample["roles"].values()} >= {"state", "plan", "other"}


def test_past_questions_ask_about_a_value_no_longer_in_force_at_a_month_before_the_question(samples):
    asked = 0
    for sample in samples:
        for qa in sample["qa"]:
            if qa["kind"] != "past":
                continue
            asked += 1
            current = next(other for other in sample["qa"] if other["kind"] == "current"
                           and (other["person"], other["slot"]) == (qa["person"], qa["slot"]))
            assert qa["evidence"][0] not in current["evidence"] or len(current["values"]) > 1
            assert date.fromisoformat(qa["as_of"]).day == 15
            assert timewords.month_words(sample["lang"], date.fromisoformat(qa["as_of"])) in qa["question"]
    assert asked >= len(samples)


def test_when_answers_are_the_time_words_resolved_against_the_session_that_says_them():
    def word(language: str, point: str):
        return next(word for word in timewords.WORDS[language] if word.point == point)

    said = timewords.say(word("en", "last weekend"), "en", date(2024, 1, 12))  # said on a Friday
    assert said.moment.start == date(2024, 1, 6)
    said = timewords.say(word("en", "on {weekday}"), "en", date(2024, 1, 12))
    assert (said.point, said.moment.start) == ("on Tuesday", date(2024, 1, 9))
    said = timewords.say(word("zh", "上个月"), "zh", date(2024, 3, 5))
    assert said.moment.start == date(2024, 2, 1) and said.moment.end == date(2024, 2, 29)
    assert timewords.moment_words("en", said.moment) == "February 2024"
    assert timewords.moment_words("zh", said.moment) == "2024年2月"
    assert timewords.say(word("en", "at the start of the month"), "en", date(2024, 3, 5)) is None


def test_held_out_conversations_alone_use_reserved_phrasings_and_values(samples):
    reserved_values = {value for language in ("en", "zh") for spec in phrasebook(language)["slots"].values()
                       for value in set(values(spec.get("values", []), True)) - set(values(spec.get("values", []),
                                                                                           False))}
    assert reserved_values
    for sample in samples:
        if sample["split"] == "dev2":
            continue
        index = int(sample["sample_id"].rsplit("-", 1)[1]) - 1
        assert sample["split"] == ("heldout" if index % 3 == 2 else "dev")
        if sample["split"] == "dev":
            text = json.dumps(sample, ensure_ascii=False)
            assert not [value for value in reserved_values if re.search(rf"\b{re.escape(value)}\b", text)]
    assert {sample["split"] for sample in samples} == {"dev", "dev2", "heldout"}


def test_dev2_conversations_take_their_values_and_time_words_from_their_own_lists_and_change_no_other(samples):
    for language in ("en", "zh"):
        dev2_book, book = phrasebook(language, dev2=True), phrasebook(language)
        own = {value for spec in dev2_book["slots"].values() for value in values(spec.get("values", []), False)}
        statuses = {status for chain in dev2_book["slots"]["relationship_status"]["chains"] for status in chain}
        others = {value for spec in book["slots"].values() for value in values(spec.get("values", []), True)}
        assert own and not own & others
        for sample in (one for one in samples if one["lang"] == language):
            asked = {value for qa in sample["qa"] if qa["kind"] != "when" for value in qa["values"]}
            if sample["split"] == "dev2":
                assert sample["sample_id"].startswith(f"ku-{language}-d2-"), sample["sample_id"]
                assert asked <= own | statuses, sample["sample_id"]
            else:
                assert not asked & own, sample["sample_id"]
    words = [word for word in timewords.WORDS["en"] if word.only == "dev2"]
    assert words and all(timewords.usable(word, "dev2") and not timewords.usable(word, "dev") for word in words)
    assert not [word for word in timewords.WORDS["en"] if word.only != "dev2" and timewords.usable(word, "dev2")]
    without_dev2 = generate(seed=19, conversations=CONVERSATIONS, split="dev") + \
        generate(seed=19, conversations=CONVERSATIONS, split="heldout")
    assert {one["sample_id"]: one for one in samples if one["split"] != "dev2"} == \
        {one["sample_id"]: one for one in without_dev2}


def test_entries_keep_reserved_ones_for_held_out_conversations_and_fill_fills_english_forms():
    items = ["Plain {v}.", "(h) Reserved {v}."]
    assert entries(items, held_out=False) == ["Plain {v}."]
    assert entries(items, held_out=True) == ["Reserved {v}."]
    assert entries(["Only plain."], held_out=True) == ["Only plain."]
    assert fill("{T} I became {a_v}; {Who} did too.", "en", {"t": "last week", "v": "electrician",
                                                             "who": "my sister"}) \
        == "Last week I became an electrician; My sister did too."
    with pytest.raises(KeyError, match="needs {old}"):
        fill("No more {old}.", "en", {})


def test_a_generated_conversation_is_ingested_with_its_turns_as_citable_sources(tmp_path, samples):
    from memctl.memory import Memory
    from memctl.recall.pipeline import Recaller, Request
    from tools.eval_locomo import build_store_inprocess, sources_of

    sample = samples[0]
    conversation = tmp_path / "conv.json"
    conversation.write_text(json.dumps([sample], ensure_ascii=False), encoding="utf-8")
    build_store_inprocess(tmp_path / "store", conversation, None, "locomo")
    qa = next(qa for qa in sample["qa"] if qa["kind"] == "when")
    with Memory.open(home=str(tmp_path / "store")) as memory:
        results = Recaller(memory.store, memory.config, memory.tenant).recall(Request(q=qa["question"], top=20))
    cited = {source for sources in sources_of(results["results"]) for source in sources}
    assert cited and cited <= set(turns_by_id(sample))
