"""extract(): negation, modality, speakers, aliases, concepts, determinism; episode summary and importance."""

import json

from memctl.r2g.extract import analyze_turn, episode_summary, extract, importance, sentiment

REF = "2023-05-10T14:00:00"


def _fact(sentence, **kwargs):
    [fact] = extract(sentence, ref_time=REF, **kwargs).facts
    return fact


def test_negation_and_modality_in_both_languages():
    assert _fact("我不喜欢吃香菜。").negation is True
    assert _fact("他没去参加婚礼。").negation is True
    cannot = _fact("我不能吃香菜。")
    assert (cannot.predicate, cannot.negation, cannot.modality) == ("eat", True, "ability")
    assert _fact("我可能下周二去医院。").modality == "possible"
    assert _fact("I never drink coffee after noon.").negation is True
    won_t = _fact("My laptop won't connect to the headphones.")
    assert (won_t.predicate, won_t.negation) == ("connect", True)
    assert _fact("Anna might visit Paris in June.").modality == "possible"
    assert _fact("Anna should grab dinner next week.").modality == "should"


def test_lexicon_phrases_that_contain_a_negation_are_not_negated():
    fact = _fact("我的蓝牙打不开了。")
    assert (fact.predicate, fact.negation) == ("fail_to_open", False)


def test_speaker_resolves_first_person():
    result = extract("I moved to Seattle last year.", ref_time=REF, speaker="Caroline")
    [agent] = result.facts[0].roles["AGENT"]
    entity = result.entities[agent.entity]
    assert (entity.type, entity.canonical, entity.normalized) == ("Person", "Caroline", "caroline")
    chinese = extract("我昨天去了北京。", ref_time=REF, speaker="王芳")
    [agent] = chinese.facts[0].roles["AGENT"]
    assert chinese.entities[agent.entity].canonical == "王芳"
    assert extract("I moved to Seattle.").facts[0].roles["AGENT"][0].entity is None


def test_aliases_give_one_canonical_entity():
    english = extract("My Win11 laptop crashed.")
    chinese = extract("我的Windows 11更新后很卡。")
    assert {entity.normalized for entity in english.entities if entity.type == "Product"} == {"windows 11"}
    assert {entity.normalized for entity in chinese.entities if entity.type == "Product"} == {"windows 11"}
    bluetooth = extract("我的蓝牙连不上耳机")
    assert any(entity.canonical == "Bluetooth" and "蓝牙" in entity.aliases for entity in bluetooth.entities)


def test_concepts_from_topic_words_and_word_groups():
    result = extract("我的Win11蓝牙打不开了，一直报错。")
    keys = {concept.key for concept in result.concepts}
    assert {"win11_bluetooth", "device_troubleshooting"} <= keys
    assert "ball_sports" in {concept.key for concept in extract("Tom played soccer").concepts}
    assert "pets" not in {concept.key for concept in extract("我买了一个新书包").concepts}


def test_keywords_and_sentiment():
    result = extract("Melanie painted a sunset over the lake last Friday.", ref_time=REF)
    assert {"Melanie", "sunset", "lake"} <= set(result.keywords)
    assert sentiment("I'm so happy and excited!", "en")["valence"] > 0.5
    assert sentiment("I'm not happy", "en")["valence"] < 0
    assert sentiment("我很难过", "zh")["valence"] < 0


def test_results_are_deterministic_and_serialisable():
    sentence = "上周五我和妈妈去上海看了周杰伦的演唱会。"
    first, second = extract(sentence, ref_time=REF), extract(sentence, ref_time=REF)
    assert first.to_dict() == second.to_dict()
    assert json.loads(json.dumps(first.to_dict(), ensure_ascii=False)) == first.to_dict()


def test_entities_are_deduplicated_within_a_sentence():
    result = extract("Jake met Jake's sister and Jake's brother.")
    assert [entity.name for entity in result.entities].count("Jake") == 1


def test_types_stay_within_the_model():
    from memctl.model import ENTITY_TYPES, ROLE_NAMES
    from memctl.language.timenorm import GRANULARITIES

    for sentence in ["上周五我和妈妈去上海看了周杰伦的演唱会。", "Mike sent me a postcard from Rome last week.",
                     "我的Win11蓝牙打不开了", "We met at a coffee shop in Brooklyn recently."]:
        result = extract(sentence, ref_time=REF)
        assert {entity.type for entity in result.entities} <= set(ENTITY_TYPES)
        assert {role for fact in result.facts for role in fact.roles} <= set(ROLE_NAMES)
        assert {time.granularity for time in result.times} <= set(GRANULARITIES)


def test_garbage_does_not_crash():
    for text in ["", "   ", "！！！", "??", "1234", "😀😀", "a", "的", "http://example.com/a?b=1", "0x8007045D 报错"]:
        extract(text, ref_time=REF)


def test_short_turn_summary_is_the_turn():
    assert episode_summary("小明在公园里踢足球。") == "小明在公园里踢足球。"
    assert episode_summary("Hi   there!\nHow are you?") == "Hi there! How are you?"


def test_long_turn_summary_is_extractive_and_shorter():
    turn = ("Wow, thanks so much! That's awesome. Last Friday I finally adopted a puppy from the shelter in Austin "
            "with my sister. She is a golden retriever and her name is Luna. We took her to the vet on Saturday "
            "and she is healthy. Haha, anyway, how was your week? Did you do anything fun? I hope you did!")
    summary = episode_summary(turn, REF)
    assert len(summary) < len(turn)
    assert "adopted a puppy" in summary
    assert "thanks so much" not in summary
    sentences = [sentence.text for sentence, _ in analyze_turn(turn, REF).sentences]
    chosen = [sentence for sentence in sentences if sentence in summary]
    assert " ".join(chosen) == summary  # whole sentences of the turn, in their order


def test_long_chinese_turn_summary():
    turn = ("哈哈哈，谢谢你！" * 3 + "我上周五在北京参加了华为的面试，面试官问了很多关于分布式系统的问题。"
            "下个月我可能就要搬到深圳去了。" + "嗯嗯，好的好的。" * 3)
    summary = episode_summary(turn, REF)
    assert len(summary) < len(turn)
    assert "华为" in summary


def test_importance_ranks_content_over_small_talk():
    small_talk = importance("Thanks!")
    preference = importance("以后请优先用中文回答。")
    event = importance("Last Friday I adopted a puppy from the shelter in Austin.", REF)
    assert 0.05 <= small_talk < event <= 1.0
    assert small_talk < preference


def test_chinese_attribute_statements_link_to_one_named_event():
    """Issue 18: "X的Y是Z" is a slot fact (memctl/r2g/slots.py), which replaces the analyser's has_Y fact."""
    place = extract("模型艺术盛宴的地点是北京。")
    [slot] = place.slots
    assert place.facts == [] and (slot.slot, slot.slot_surface, slot.value) == ("venue", "地点", "北京")
    owner = place.entities[slot.subject_entity]
    assert (owner.name, owner.type) == ("模型艺术盛宴", "Other")
    assert place.entities[slot.value_entity].name == "北京"
    size = extract("大湾区中学语文教育创新论坛的规模是六千人。")
    [slot] = size.slots
    assert (slot.slot, slot.value, slot.value_entity) == ("scale", "六千人", None)
    assert size.entities[slot.subject_entity].name == "大湾区中学语文教育创新论坛"
    nurse = extract("王强的妻子是一名护士。")  # the wife's job, not a partner named 一名护士
    assert nurse.slots == [] and nurse.facts[0].predicate == "be"


def test_the_memo_keeps_sentences_without_times_and_answers_them_without_new_work():
    from memctl.r2g.recent import Recent

    memo = Recent(16)
    untimed = extract("Tom plays soccer with friends.", ref_time="2023-05-10", speaker="Ann", memo=memo)
    again = extract("Tom plays soccer with friends.", ref_time="2024-01-01", speaker="Ann", memo=memo)
    assert again is untimed and len(memo) == 1
    assert extract("Tom plays soccer with friends.", speaker="Ben", memo=memo) is not untimed  # "I" differs
    timed = extract("Tom played soccer yesterday.", ref_time="2023-05-10", memo=memo)
    later = extract("Tom played soccer yesterday.", ref_time="2023-06-10", memo=memo)
    assert len(memo) == 2 and timed.times[0].value == "2023-05-09" and later.times[0].value == "2023-06-09"
    assert extract("Tom plays soccer with friends.", ref_time="2023-05-10", speaker="Ann").to_dict() == untimed.to_dict()
