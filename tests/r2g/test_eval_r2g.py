"""tools/eval_r2g.py's judging sheets: the dev split, seeded samples of a built graph with their source turns,
and the scores of judged sheets."""

from __future__ import annotations

import json

import pytest
import yaml

from tools import eval_r2g
from tools.r2g_eval.split import select, split_of
from tools.r2g_eval.verdicts import SheetError, score


def _sample(sample_id: str, speaker_a: str, speaker_b: str, lines: list[str]) -> dict:
    turns = [{"speaker": speaker_a if index % 2 == 0 else speaker_b, "dia_id": f"D1:{index + 1}", "text": text}
             for index, text in enumerate(lines)]
    return {"sample_id": sample_id, "qa": [],
            "conversation": {"speaker_a": speaker_a, "speaker_b": speaker_b,
                             "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": turns}}


CONVERSATIONS = [
    _sample("conv-26", "Caroline", "Melanie", [
        "I moved from Sweden to Boston with my mom last year.", "I love painting landscapes at the lake.",
        "My sister works at Google in London.", "I usually go running with Max on Sunday mornings."]),
    _sample("conv-30", "Jon", "Gina", [
        "I lost my job at the bank and opened a dance studio in Chicago.", "I hate waiting in long lines.",
        "Gina bought a new car from Tesla yesterday.", "I always drink coffee before work."]),
    _sample("conv-41", "John", "Maria", ["I visited Paris with my family in June."]),
]


@pytest.fixture
def conversations(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(CONVERSATIONS), encoding="utf-8")
    return path


def _sheet(tmp_path, conversations, *options) -> dict:
    out = tmp_path / f"sheet{len(list(tmp_path.glob('sheet*')))}.yaml"
    assert eval_r2g.main([str(conversations), "--out", str(out), *options]) == 0
    return yaml.safe_load(out.read_text(encoding="utf-8"))


def test_split_names_the_locomo_conversations_and_alternates_memdaily_positions():
    assert [split_of(name, 0) for name in ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44")] == \
        ["tune", "tune", "heldout", "heldout", "heldout", None]
    assert [split_of("md-01-events-1", position) for position in range(4)] == ["tune", "heldout", "tune", "heldout"]
    samples = [{"sample_id": f"md-{index}"} for index in range(5)]
    assert [sample["sample_id"] for sample in select(samples, "heldout")] == ["md-1", "md-3"]
    assert [sample["sample_id"] for sample in select(samples, "tune", limit=2)] == ["md-0", "md-2"]
    assert [sample["sample_id"] for sample in select(samples, conversations=["md-4", "md-1"])] == ["md-1", "md-4"]
    with pytest.raises(ValueError, match="no conversation md-9"):
        select(samples, conversations=["md-9"])
    with pytest.raises(ValueError, match="--split must be one of tune, heldout"):
        select(samples, "dev")


def test_sheet_rows_carry_the_node_its_arguments_and_the_whole_source_turn(tmp_path, conversations):
    sheet = _sheet(tmp_path, conversations, "--sample", "50", "--seed", "3", "--split", "tune")
    assert sheet["split"] == "tune" and sheet["conversations"] == ["conv-26", "conv-30"] and sheet["seed"] == 3
    items = sheet["items"]
    assert {item["type"] for item in items} == {"Fact", "Entity", "Preference"}
    assert sheet["drawn"] == {node_type: sheet["population"][node_type] for node_type in sheet["drawn"]}
    assert all(item["verdict"] == "" and item["note"] == "" for item in items)
    turns = {turn["text"]: (sample["sample_id"], turn["speaker"], turn["dia_id"]) for sample in CONVERSATIONS[:2]
             for turn in sample["conversation"]["session_1"]}
    for item in items:
        assert (item["conversation"], item["speaker"], item["source"]) == turns[item["turn"]]
        assert (item.get("sentence") or item.get("mention")) in item["turn"]
    moved = next(item for item in items if item["type"] == "Fact" and item["turn"].startswith("I moved from Sweden"))
    assert {"role": "AGENT", "entity": "Caroline (Person)"} in moved["arguments"]
    hate = next(item for item in items if item["type"] == "Preference" and item["speaker"] == "Gina"
                and "waiting" in item["object"])
    assert (hate["holder"], hate["polarity"]) == ("Gina", -1)


def test_the_same_seed_draws_the_same_rows_and_types_are_sampled_apart(tmp_path, conversations):
    first = _sheet(tmp_path, conversations, "--sample", "Fact=3,Entity=2", "--seed", "7")
    again = _sheet(tmp_path, conversations, "--sample", "Fact=3,Entity=2", "--seed", "7")
    entities_only = _sheet(tmp_path, conversations, "--sample", "2", "--types", "Entity", "--seed", "7")
    other_seed = _sheet(tmp_path, conversations, "--sample", "Fact=3,Entity=2", "--seed", "8")
    ids = [item["id"] for item in first["items"]]
    assert ids == [item["id"] for item in again["items"]]
    assert [item["id"] for item in first["items"] if item["type"] == "Entity"] == \
        [item["id"] for item in entities_only["items"]]
    assert ids != [item["id"] for item in other_seed["items"]]
    assert first["drawn"] == {"Fact": 3, "Entity": 2} and first["conversations"] == "all"


def test_conversations_and_limit_pick_from_the_file_before_it_is_built(tmp_path, conversations):
    sheet = _sheet(tmp_path, conversations, "--sample", "20", "--conversations", "conv-41,conv-30", "--limit", "1")
    assert sheet["conversations"] == ["conv-30"]
    assert {item["conversation"] for item in sheet["items"]} == {"conv-30"}


@pytest.mark.parametrize("options, message", [
    (["--sample", "0"], "--sample takes a count of at least 1"),
    (["--sample", "Task=3"], "'Task' is not one of Fact, Entity, Preference"),
    (["--sample", "3", "--types", "Fact,Episode"], "--types: Episode is not one of"),
    (["--sample", "3", "--conversations", "conv-99"], "no conversation conv-99"),
])
def test_bad_sampling_options_exit_2_with_a_message(tmp_path, conversations, capsys, options, message):
    assert eval_r2g.main([str(conversations), *options]) == 2
    assert message in capsys.readouterr().err


def test_split_needs_a_locomo_shaped_file(tmp_path, capsys):
    chat = tmp_path / "chat.txt"
    chat.write_text("Ann: I live in Paris.\n", encoding="utf-8")
    assert eval_r2g.main([str(chat), "--sample", "3", "--split", "tune"]) == 2
    assert "need a JSON file in the LoCoMo shape" in capsys.readouterr().err


def _judged(path, verdicts: dict) -> str:
    items = [{"id": f"n{index}", "type": node_type, "verdict": verdict}
             for index, (node_type, verdict) in enumerate(verdicts)]
    path.write_text(yaml.safe_dump({"sheet": "memctl r2g judging sheet 1", "items": items}), encoding="utf-8")
    return str(path)


def test_score_counts_correct_partial_wrong_and_unjudged_per_type(tmp_path, capsys):
    first = _judged(tmp_path / "a.yaml", [("Fact", "correct"), ("Fact", "p"), ("Fact", "wrong"), ("Fact", "W"),
                                          ("Entity", "c"), ("Preference", "")])
    second = _judged(tmp_path / "b.yaml", [("Fact", "correct"), ("Entity", "wrong")])
    tallies = score([first, second])
    fact, entity, preference = tallies["Fact"], tallies["Entity"], tallies["Preference"]
    assert (fact.judged, fact.correct, fact.partial, fact.wrong) == (5, 2, 1, 2)
    assert fact.precision == pytest.approx(0.4) and fact.with_partial == pytest.approx(0.5)
    assert (entity.precision, preference.unjudged, preference.precision) == (0.5, 1, None)
    assert eval_r2g.main(["--score", first, second, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["Fact"]["precision_half_partial"] == pytest.approx(0.5)


def test_a_sheet_that_cannot_be_scored_is_named(tmp_path, capsys):
    bad_verdict = _judged(tmp_path / "bad.yaml", [("Fact", "correct"), ("Entity", "maybe")])
    with pytest.raises(SheetError, match=r"bad.yaml: item 2 \(n1\): verdict 'maybe' is not one of"):
        score([bad_verdict])
    other = tmp_path / "other.yaml"
    other.write_text("items: []\n", encoding="utf-8")
    assert eval_r2g.main(["--score", str(other)]) == 2
    assert "not a judging sheet" in capsys.readouterr().err
