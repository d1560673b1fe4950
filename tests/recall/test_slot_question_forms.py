"""Slot questions asked in the words of a slot's domain (memctl/data/slot_questions.yaml): who manages, where
someone is enrolled, a line of work, 做哪一行, 归谁管, 开哪辆车, 家在哪儿."""

import pytest

from memctl.recall.query import build
from memctl.recall.slot_question import parse

NOW = 1711065600.0  # 2024-03-22


@pytest.mark.parametrize("text, slot", [
    ("Who manages Ana now?", "manager"),
    ("Where was Ravi enrolled in January 2023?", "school"),
    ("What line of work is Omar in now?", "job_title"),
    ("Who is Zoe in a relationship with now?", "partner"),
    ("王芳如今是做哪一行的？", "job_title"),
    ("李雷如今归谁管？", "manager"),
    ("张伟如今开哪辆车？", "vehicle"),
    ("赵敏如今的家在哪儿？", "residence"),
])
def test_a_slot_is_asked_in_the_words_of_its_domain(text, slot):
    query = build(text, NOW, ())
    question = parse(query.text, query.language, query.times, NOW)
    assert question is not None and question.slots[0] == slot
