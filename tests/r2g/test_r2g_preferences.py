"""Preference detection: instructions to the assistant, the speaker's tastes and habits, with polarity."""

import pytest

from memctl.r2g.extract import extract
from memctl.r2g.preferences import find_preferences, is_instruction

CASES = [
    ("以后请优先用中文回答。", "zh", 1, "用中文回答", "instruction"),
    ("别再给我推荐恐怖片了。", "zh", -1, "给我推荐恐怖片", "instruction"),
    ("不要在回答里使用英文缩写。", "zh", -1, "在回答里使用英文缩写", "instruction"),
    ("回答时不要太啰嗦。", "zh", -1, "太啰嗦", "instruction"),
    ("我希望你回答得简洁一点。", "zh", 1, "回答得简洁一点", "instruction"),
    ("总是用表格总结要点。", "zh", 1, "用表格总结要点", "instruction"),
    ("我不喜欢吃香菜。", "zh", -1, "吃香菜", "taste"),
    ("我更喜欢喝绿茶。", "zh", 1, "喝绿茶", "taste"),
    ("我讨厌下雨天出门。", "zh", -1, "下雨天出门", "taste"),
    ("我对花生过敏。", "zh", -1, "花生", "taste"),
    ("我最喜欢的运动是羽毛球。", "zh", 1, "羽毛球", "taste"),
    ("我挺喜欢苹果iPhone13这款手机的。", "zh", 1, "苹果iPhone13这款手机", "taste"),  # 挺, and the closing 的
    ("我特喜欢穿新百伦的FreshFoam1080v10运动鞋。", "zh", 1, "穿新百伦的FreshFoam1080v10运动鞋", "taste"),
    ("每天下班后去那里散步，感觉一天的疲劳都消失了。", "zh", 1, "下班后去那里散步", "habit"),  # no 我: the speaker's
    ("我特别钟爱新百伦的运动鞋。", "zh", 1, "新百伦的运动鞋", "taste"),
    ("我平时用的美妆产品是倩碧特效润肤露。", "zh", 1, "倩碧特效润肤露", "habit"),  # what the speaker uses as a rule
    ("倩碧特效润肤露保湿效果真心不错，对我这种经常在飞机上工作，皮肤容易干的人来说太合适了。", "zh", 1, "在飞机上工作", "habit"),
    ("对我这种爱画画的人来说太合适了。", "zh", 1, "画画", "taste"),
    ("傍晚的时候，咱们这些喜欢跳舞的人都会聚在那儿。", "zh", 1, "跳舞", "taste"),
    ("我家里用的松下空气净化器，我是真的挺喜欢的。", "zh", 1, "松下空气净化器", "taste"),  # the clause before names it
    ("Please always answer in English.", "en", 1, "answer in English", "instruction"),
    ("Don't use emojis in your replies.", "en", -1, "use emojis in your replies", "instruction"),
    ("From now on, reply in Chinese.", "en", 1, "reply in Chinese", "instruction"),
    ("Never share my address with anyone.", "en", -1, "share my address with anyone", "instruction"),
    ("Please don't recommend any restaurants with loud music.", "en", -1, "recommend any restaurants with loud music", "instruction"),
    ("I prefer short answers with bullet points.", "en", 1, "short answers with bullet points", "instruction"),
    ("I can't stand horror movies.", "en", -1, "horror movies", "taste"),
    ("I love reading fantasy novels before bed.", "en", 1, "reading fantasy novels before bed", "taste"),
    ("I'm not a fan of spicy food.", "en", -1, "spicy food", "taste"),
    ("I'd rather not talk about politics.", "en", -1, "talk about politics", "taste"),
    ("My favorite band is Coldplay.", "en", 1, "Coldplay", "taste"),
    ("I usually go running in the morning.", "en", 1, "go running in the morning", "habit"),
]


@pytest.mark.parametrize("sentence, lang, polarity, object_text, kind", CASES)
def test_preference(sentence, lang, polarity, object_text, kind):
    [hit] = find_preferences(sentence, lang)
    assert (hit.polarity, hit.object, hit.kind) == (polarity, object_text, kind)
    assert sentence[hit.start : hit.end] == hit.object


def test_a_clause_after_an_instruction_continues_it():
    hits = find_preferences("以后别叫我老张，叫我张总。", "zh")
    assert [(hit.polarity, hit.object) for hit in hits] == [(-1, "叫我老张"), (1, "叫我张总")]


def test_preference_in_a_later_clause():
    hits = find_preferences("I'm a vegetarian, so please avoid meat recipes.", "en")
    assert [(hit.polarity, hit.object, hit.kind) for hit in hits] == [(-1, "meat recipes", "instruction")]


@pytest.mark.parametrize("sentence, lang", [
    ("Tom likes jazz.", "en"),
    ("My kids love swimming at the beach.", "en"),
    ("他喜欢踢足球。", "zh"),
    ("每天都很开心。", "zh"),  # a mood, no routine
    ("我是真的挺喜欢的。", "zh"),  # nothing named
    ("Can you believe it?", "en"),
    ("请问现在几点？", "zh"),
    ("你喜欢吃什么？", "zh"),  # a question
    ("我喜欢吃香菜吗？", "zh"),
    ("我用的手机是华为Mate60。", "zh"),  # a possession, no habit word
    ("Thanks so much!", "en"),
])
def test_no_preference(sentence, lang):
    assert find_preferences(sentence, lang) == []


def test_instructions_state_no_facts():
    assert is_instruction("以后请优先用中文回答。", "zh")
    assert not is_instruction("我是素食主义者，不吃肉。", "zh")
    assert extract("Please always answer in English.").facts == []
    assert extract("我不喜欢吃香菜。").facts  # a taste is also a fact (like, negated)
