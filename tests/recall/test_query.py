"""Query building (seed 001 §5.1, W3): patterns, question words, clauses, time constraints, CJK terms."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from engine.text.tokenizer import Tokenizer
from memctl.recall.query import QueryTokenizer, build, pattern_tokens, strip_question_words

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc).timestamp()


def test_pattern_tokens_each_kind():
    found = pattern_tokens("错误码 0x8007045D, see https://example.com/a?b=1 and /var/log/syslog; "
                           "id 123e4567-e89b-12d3-a456-426614174000, E1234, call foo_bar.baz() or `make test`")
    assert found["hex"] == ["0x8007045D"]
    assert found["url"] == ["https://example.com/a?b=1"]
    assert found["path"] == ["/var/log/syslog"]
    assert found["uuid"] == ["123e4567-e89b-12d3-a456-426614174000"]
    assert "E1234" in found["error_code"]
    assert "`make test`" in found["code"] and "foo_bar.baz()" in found["code"]


def test_plain_questions_have_no_pattern_tokens():
    assert pattern_tokens("When did Caroline go to the LGBTQ support group?") == {}
    assert pattern_tokens("Win11 蓝牙 打不开") == {}


def test_question_words_go_by_surface_form():
    stripped = strip_question_words("What kind of music would Melanie likely like?")
    assert "kind" not in stripped and "would" not in stripped and "likely" not in stripped
    assert "like?" in stripped and "Melanie" in stripped
    assert strip_question_words("Would you?") != ""  # never empties a query: "you" is kept


@pytest.mark.parametrize("question, kept", [
    ("How many times did Ann say she went to the beach?", ["times", "Ann", "she", "went", "to", "the", "beach?"]),
    ("According to Ben, what sort of things does Biscuit probably enjoy?", ["to", "Ben,", "of", "Biscuit", "enjoy?"]),
    ("What did Tim mention about his trip in May?", ["Tim", "about", "his", "trip", "in", "May?"]),  # May: a month
])
def test_english_question_phrasing_goes_and_the_content_stays(question, kept):
    assert strip_question_words(question).split() == kept


@pytest.mark.parametrize("question, stripped", [
    ("我上次提到的蓝牙耳机是什么牌子？", "我上次 的蓝牙耳机是 牌子？"),
    ("小王是否去过杭州？", "小王 去过杭州？"),
    ("我的猫怎么样了", "我的猫 了"),  # the longer word first: no 样 left behind
    ("他几乎每天都去哪怕下雨", "他几乎每天都去哪怕下雨"),  # single characters are never matched inside words
    ("什么？", "什么？"),  # nothing else: kept
])
def test_chinese_question_phrasing_goes_by_substring(question, stripped):
    assert strip_question_words(question) == stripped


def test_every_question_word_class_is_lowercase_and_chinese_words_are_longer_than_one_character():
    from memctl.language import question_words

    assert all(word == word.lower() and word.isalpha() for word in question_words.ENGLISH)
    assert all(len(word) > 1 for word in question_words.CHINESE)
    assert "may" not in question_words.ENGLISH and "like" not in question_words.ENGLISH


def test_clauses_only_for_multi_sentence_queries():
    assert build("我爸爸今年多大了？另外，我住的小区叫什么？", NOW).clauses == ["我爸爸今年多大了", "另外，我住的小区叫"]
    assert build("What did Ann adopt?", NOW).clauses == []


def test_relative_time_resolves_against_the_reference_time():
    query = build("我上周买了什么？", NOW)
    [time] = query.times
    assert time.expression == "上周" and time.granularity == "week"
    start = datetime.fromtimestamp(time.start, timezone.utc)
    end = datetime.fromtimestamp(time.end, timezone.utc)
    assert (start.date().isoformat(), end.date().isoformat()) == ("2024-05-06", "2024-05-12")
    assert build("Win11 蓝牙 打不开", NOW).times == []


def test_language():
    assert build("蓝牙", NOW).language == "zh"
    assert build("bluetooth", NOW).language == "en"


def test_single_cjk_terms_dropped_unless_nothing_else_is_left():
    tokenizer = QueryTokenizer(Tokenizer(cjk="bigram"))
    vocabulary = {"蓝牙", "打", "开"}
    assert tokenizer.parse_query("蓝牙打开", vocabulary, "jieba").terms == ["蓝牙"]
    assert tokenizer.parse_query("打开", vocabulary, "jieba").terms == ["打", "开"]
    kept = QueryTokenizer(Tokenizer(cjk="bigram"), drop_single_cjk=False)
    assert kept.parse_query("蓝牙打开", vocabulary, "jieba").terms == ["蓝牙", "打", "开"]


def test_last_month_name_is_a_month_window():
    [time] = build("What did she buy last May?", NOW).times  # NOW is 15 May 2024: last May is May 2023
    assert (time.value, time.granularity) == ("2023-05", "month")
    start, end = (datetime.fromtimestamp(value, timezone.utc) for value in (time.start, time.end))
    assert (start.date().isoformat(), end.date().isoformat()) == ("2023-05-01", "2023-05-31")
    [time] = build("plans for next March", NOW).times
    assert time.value == "2025-03"
    [time] = build("what happened last March", NOW).times
    assert time.value == "2024-03"
