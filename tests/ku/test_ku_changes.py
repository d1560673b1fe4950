"""tools/ku/changes.py: the change-detection scorer counts what its docstring says on tiny hand-made sets, refuses
bad files with the item named, and the labelled set it scores holds what issue 19 asks for."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tools.ku.changes import ChangeFileError, Prediction, load, main, matches, score

DATA = Path(__file__).resolve().parents[2] / "tools" / "ku" / "data" / "changes.yaml"

ITEMS = [
    {"id": "a", "lang": "en", "split": "dev", "speaker": "Maya", "date": "2024-03-01",
     "text": "We moved to Denver last weekend.", "holder": "Maya", "slot": "residence", "value": "Denver",
     "kind": "change"},
    {"id": "b", "lang": "en", "split": "dev", "speaker": "Maya", "date": "2024-03-01",
     "text": "I gave up tennis.", "holder": "Maya", "slot": ["sport", "hobby"], "value": "tennis", "kind": "stop"},
    {"id": "c", "lang": "en", "split": "dev", "speaker": "Maya", "date": "2024-03-01",
     "text": "We might move to Lyon next year.", "kind": "none"},
    {"id": "d", "lang": "zh", "split": "heldout", "speaker": "林悦", "date": "2024-03-01",
     "text": "我姐上个月搬到了苏州。", "holder": "林悦的姐", "slot": "residence", "value": "苏州", "kind": "change"},
    {"id": "e", "lang": "zh", "split": "heldout", "speaker": "林悦", "date": "2024-03-01",
     "text": "我把车卖了。", "holder": "林悦", "slot": "vehicle", "value": None, "kind": "end"},
    {"id": "f", "lang": "en", "split": "dev", "speaker": "Maya", "date": "2024-03-01",
     "text": "I don't have a car.", "holder": "Maya", "slot": "vehicle", "value": "car", "kind": "set",
     "polarity": "negated"},
]

ANSWERS = {
    "We moved to Denver last weekend.": [("maya", "residence", "denver", "change")],  # right (case-folded)
    "I gave up tennis.": [("Maya", "hobby", "tennis", "stop"), ("Maya", "sport", "tennis", "set")],  # right + 1 wrong
    "We might move to Lyon next year.": [("Maya", "residence", "Lyon", "change")],  # a plan taken for a change
    "我姐上个月搬到了苏州。": [("林悦", "residence", "苏州", "change")],  # the speaker, not her sister
    "我把车卖了。": [Prediction("林悦", "vehicle", "旧车", "end")],  # null label value: any value
    "I don't have a car.": [("Maya", "vehicle", "car", "set")],  # polarity stated, label negated
}


def predict(text: str, speaker: str, date: str) -> list:
    return ANSWERS[text]


def test_per_kind_precision_and_recall_count_one_right_prediction_per_item():
    result = score(ITEMS, predict)
    dev, heldout = result.table("dev"), result.table("heldout")
    assert (dev["change"].labelled, dev["change"].predicted, dev["change"].right) == (1, 2, 1)
    assert (dev["stop"].labelled, dev["stop"].predicted, dev["stop"].right) == (1, 1, 1)
    assert (dev["set"].labelled, dev["set"].predicted, dev["set"].right) == (1, 2, 0)
    assert (dev["none"].labelled, dev["none"].predicted, dev["none"].right) == (1, 0, 0)
    assert (dev["all"].labelled, dev["all"].predicted, dev["all"].right) == (3, 5, 2)
    assert dev["all"].precision == pytest.approx(2 / 5) and dev["all"].recall == pytest.approx(2 / 3)
    assert (heldout["changes"].labelled, heldout["changes"].predicted, heldout["changes"].right) == (2, 2, 1)
    assert result.table("heldout", "zh")["end"].right == 1
    assert result.table("dev", "zh")["all"].labelled == 0


def test_the_trivial_baseline_is_right_on_none_items_only():
    result = score(ITEMS, lambda text, speaker, date: [])
    dev = result.table("dev")
    assert (dev["none"].labelled, dev["none"].predicted, dev["none"].right) == (1, 4, 1)
    assert dev["all"].predicted == 0 and dev["all"].precision is None and dev["all"].recall == 0


def test_errors_list_dev_items_only():
    listed = {item["id"] for item, _ in score(ITEMS, predict).errors}
    assert listed == {"b", "c", "f"}  # a is right; b right with a surplus prediction; d, e are held out


@pytest.mark.parametrize("prediction, right", [
    (("Maya", "residence", "Denver City", "change"), True),  # the label's value within the prediction's
    (("Maya", "residence", "Boston", "change"), False),
    (("Maya", "employer", "Denver", "change"), False),
    (("Maya", "residence", "Denver", "set"), False),
    (("Maya", "residence", "Denver", "change", "ended"), False),
    (("Maya's sister", "residence", "Denver", "change"), False),
])
def test_a_prediction_needs_the_label_s_holder_slot_value_kind_and_polarity(prediction, right):
    assert matches(ITEMS[0], Prediction(*prediction)) is right


def test_a_file_without_a_holder_is_refused_with_its_item_named(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("items:\n- {id: x1, lang: en, split: dev, speaker: A, date: '2024-01-01', text: Hi., "
                   "kind: change, slot: residence, value: Oslo}\n", encoding="utf-8")
    with pytest.raises(ChangeFileError, match=r"item 1 \(x1\): a change fact needs a holder"):
        load(str(bad))
    assert main([str(bad)]) == 2
    assert "item 1 (x1)" in capsys.readouterr().err


def test_a_file_with_an_unknown_kind_or_split_is_refused(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("items:\n- {id: x1, lang: en, split: tune, speaker: A, date: '2024-01-01', text: Hi., "
                   "kind: none}\n", encoding="utf-8")
    with pytest.raises(ChangeFileError, match="split is 'tune', expected one of dev, dev2, heldout"):
        load(str(bad))


def test_the_labelled_set_holds_300_sentences_in_both_languages_a_third_held_out_every_kind_in_every_part():
    items = load(str(DATA))
    assert len(items) >= 300
    assert len({item["id"] for item in items}) == len(items)
    by_part = Counter((item["lang"], item["split"], item["kind"]) for item in items)
    for language in ("en", "zh"):
        for kind in ("set", "change", "end", "add", "stop", "none"):
            assert all(by_part[(language, split, kind)] for split in ("dev", "dev2", "heldout")), (language, kind)
    first_written = [item for item in items if item["split"] != "dev2"]  # dev2 came later, beside the two
    held_out = sum(item["split"] == "heldout" for item in first_written) / len(first_written)
    assert 0.28 <= held_out <= 0.38
    assert sum(item["split"] == "dev2" for item in items) >= 100
    assert sum(item["source"] != "written" for item in items) >= 40  # real sentences of LoCoMo and MemDaily dev


def test_the_command_prints_a_table_per_language_and_split(capsys):
    assert main([str(DATA)]) == 0
    out = capsys.readouterr().out
    assert "-- en" in out and "-- zh" in out and "| heldout" in out


def test_a_prediction_of_a_fact_listed_under_also_is_neither_right_nor_wrong():
    item = dict(ITEMS[0], text="I left Acme and moved to Denver.",
                also=[{"holder": "Maya", "slot": "employer", "value": "Acme", "kind": "end"}])
    answers = [("Maya", "employer", "Acme", "end"), ("Maya", "residence", "Denver", "change")]
    dev = score([item], lambda text, speaker, date: answers).table("dev")
    assert (dev["all"].labelled, dev["all"].predicted, dev["all"].right) == (1, 1, 1)
    assert dev["end"].predicted == 0
