"""A "when" question that asks when a value ended (memctl/recall/slot_question.py `ending`)."""

import pytest

from memctl.recall.query import build
from memctl.recall.slot_question import parse

NOW = 1711065600.0  # 2024-03-22


@pytest.mark.parametrize("text", ["When did Andre lose the goldfish?", "When did Priya drop German?",
                                  "When did Lucas lose interest in board games?", "孙婷是什么时候失去虎皮鹦鹉的？"])
def test_losing_or_dropping_a_value_asks_for_its_end(text):
    query = build(text, NOW, ())
    question = parse(query.text, query.language, query.times, NOW)
    assert (question.kind, question.ending) == ("when", True)


def test_getting_a_value_asks_for_its_start():
    query = build("When did Andre get the goldfish?", NOW, ())
    assert parse(query.text, query.language, query.times, NOW).ending is False

