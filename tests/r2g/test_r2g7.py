"""Seed 001 R2G-7: "小明在公园里踢足球" and its English counterpart."""

from memctl.r2g.extract import extract


def _entities(result):
    return {(entity.name, entity.type) for entity in result.entities}


def _roles(fact, result):
    return {role: {result.entities[filler.entity].name for filler in fillers if filler.entity is not None}
            for role, fillers in fact.roles.items()}


def test_chinese_example_from_the_seed():
    result = extract("小明在公园里踢足球")
    assert result.lang == "zh"
    # issue 18: common nouns (公园, 足球) are words of the fact, not entities
    assert _entities(result) == {("小明", "Person")}
    [fact] = result.facts
    assert fact.predicate == "play_soccer"
    assert fact.negation is False
    assert _roles(fact, result)["AGENT"] == {"小明"}
    assert {role: [(filler.text, filler.entity) for filler in fillers] for role, fillers in fact.roles.items()
            if role != "AGENT"} == {"PATIENT": [("足球", None)], "LOCATION": [("公园", None)]}
    assert "ball_sports" in {concept.key for concept in result.concepts}


def test_english_example_with_a_resolved_time():
    result = extract("Tom played soccer in the park yesterday", ref_time="2023-05-10T14:00:00")
    assert result.lang == "en"
    # issue 18: an English common noun is a word of its fact, not an entity
    assert _entities(result) == {("Tom", "Person")}
    [fact] = result.facts
    assert fact.predicate == "play_soccer"
    assert _roles(fact, result)["AGENT"] == {"Tom"}
    assert [filler.text for filler in fact.roles["PATIENT"]] == ["soccer"]
    assert [(filler.text, filler.entity) for filler in fact.roles["LOCATION"]] == [("park", None)]
    [time] = fact.roles["TIME"]
    assert result.times[time.time].value == "2023-05-09"
    assert fact.time == {"expression": "yesterday", "span": [30, 39], "value": "2023-05-09", "granularity": "day"}


def test_role_spans_point_into_the_sentence():
    sentence = "我昨天在北京见了大学同学。"
    result = extract(sentence, ref_time="2023-05-10")
    for fact in result.facts:
        for fillers in fact.roles.values():
            for filler in fillers:
                assert sentence[filler.start : filler.end] == filler.text
    for entity in result.entities:
        assert sentence[entity.start : entity.end] == entity.name
