"""Time normalisation relative to the turn's own timestamp (2023-05-10 is a Wednesday, ISO week 2023-W19), and the
days a resolved value covers."""

from datetime import date, datetime

import pytest

from memctl.language.timenorm import find_times, parse_timestamp, time_interval

REF = "2023-05-10T14:00:00"

CHINESE = [
    ("今天", "2023-05-10", "day"),
    ("昨天", "2023-05-09", "day"),
    ("前天", "2023-05-08", "day"),
    ("明天", "2023-05-11", "day"),
    ("后天", "2023-05-12", "day"),
    ("上周", "2023-W18", "week"),
    ("下周", "2023-W20", "week"),
    ("上个月", "2023-04", "month"),
    ("下个月", "2023-06", "month"),
    ("三天前", "2023-05-07", "day"),
    ("两周后", "2023-W21", "week"),
    ("十五天前", "2023-04-25", "day"),
    ("三个月后", "2023-08", "month"),
    ("上周五", "2023-05-05", "day"),
    ("下周二", "2023-05-16", "day"),
    ("去年", "2022", "year"),
    ("明年", "2024", "year"),
    ("今年三月", "2023-03", "month"),
    ("去年十月", "2022-10", "month"),
    ("今年夏天", "2023", "year"),
    ("5月7日", "2023-05-07", "day"),
    ("2023年5月7日", "2023-05-07", "day"),
    ("二〇二二年", "2022", "year"),
    ("下个月15号", "2023-06-15", "day"),
    ("上周末", "2023-W18", "week"),
    ("半年前", "2022-11", "month"),
    ("半年后", "2023-11", "month"),
    ("明天下午三点", "2023-05-11T15:00", "minute"),
    ("最近", None, "unspecified"),
    ("春节", None, "unspecified"),
]

ENGLISH = [
    ("today", "2023-05-10", "day"),
    ("yesterday", "2023-05-09", "day"),
    ("tomorrow", "2023-05-11", "day"),
    ("the day before yesterday", "2023-05-08", "day"),
    ("last week", "2023-W18", "week"),
    ("next week", "2023-W20", "week"),
    ("last month", "2023-04", "month"),
    ("next month", "2023-06", "month"),
    ("last year", "2022", "year"),
    ("last Friday", "2023-05-05", "day"),
    ("next Friday", "2023-05-12", "day"),
    ("May 7, 2023", "2023-05-07", "day"),
    ("7 May 2023", "2023-05-07", "day"),
    ("the 3rd of June", "2023-06-03", "day"),
    ("May 2021", "2021-05", "month"),
    ("two days ago", "2023-05-08", "day"),
    ("a couple of weeks ago", "2023-W17", "week"),
    ("in two weeks", "2023-W21", "week"),
    ("last weekend", "2023-W18", "week"),
    ("next summer", "2024", "year"),
    ("last March", "2023-03", "month"),  # the latest March before May 2023
    ("last June", "2022-06", "month"),
    ("next March", "2024-03", "month"),
    ("next June", "2023-06", "month"),
    ("this June", "2023-06", "month"),
    ("tomorrow at 3pm", "2023-05-11T15:00", "minute"),
    ("2023-05-07", "2023-05-07", "day"),
    ("recently", None, "unspecified"),
    ("a few weeks ago", None, "unspecified"),
]


@pytest.mark.parametrize("expression, value, granularity", CHINESE)
def test_chinese_expressions(expression, value, granularity):
    [found] = find_times(f"我{expression}去了那里", REF, "zh")
    assert (found.expression, found.value, found.granularity) == (expression, value, granularity)


@pytest.mark.parametrize("expression, value, granularity", ENGLISH)
def test_english_expressions(expression, value, granularity):
    sentence = f"We talked about it {expression}."
    [found] = find_times(sentence, REF, "en")
    assert (found.expression, found.value, found.granularity) == (expression, value, granularity)
    assert sentence[found.start : found.end] == expression


def test_years_and_months_after_a_preposition():
    assert [(t.expression, t.value) for t in find_times("I graduated in 2019.", REF, "en")] == [("2019", "2019")]
    assert [(t.value, t.granularity) for t in find_times("She moved there in March.", REF, "en")] == [("2023-03", "month")]
    assert [(t.value, t.granularity) for t in find_times("since January", REF, "en")] == [("2023-01", "month")]
    # after "since" a month lies in the past: in May 2023, "since June" is June 2022
    assert [t.value for t in find_times("I've lived here since June.", REF, "en")] == ["2022-06"]
    assert [t.value for t in find_times("She moves there in June.", REF, "en")] == ["2023-06"]


def test_may_is_a_month_only_when_it_names_one():
    assert find_times("This may be the last time.", REF, "en") == []
    assert [t.value for t in find_times("We moved last May.", REF, "en")] == ["2022-05"]


def test_bare_weekdays_follow_the_tense():
    assert find_times("We met on Tuesday.", REF, "en")[0].value == "2023-05-09"
    assert find_times("I will call on Tuesday.", REF, "en")[0].value == "2023-05-16"
    assert find_times("Audrey took her dogs to the vet on Thursday.", REF, "en")[0].value == "2023-05-04"
    assert find_times("周二我去了医院", REF, "zh")[0].value == "2023-05-09"
    assert find_times("周五我要去上海", REF, "zh")[0].value == "2023-05-12"
    assert find_times("Finish it by Monday.", REF, "en")[0].value == "2023-05-15"


def test_frequencies_and_lookalikes_are_not_times():
    assert find_times("My son plays basketball every Saturday.", REF, "en") == []
    assert find_times("I work from home on Fridays.", REF, "en") == []
    assert find_times("我每周六都去游泳", REF, "zh") == []
    assert find_times("I may go there", REF, "en") == []
    assert find_times("前天我在超市碰到了以前的老板", REF, "zh")[0].expression == "前天"
    assert len(find_times("前天我在超市碰到了以前的老板", REF, "zh")) == 1
    assert find_times("坐地铁一号线", REF, "zh") == []


def test_without_a_reference_relative_times_are_unspecified_but_dates_resolve():
    [relative] = find_times("I saw her yesterday.", None, "en")
    assert (relative.expression, relative.value, relative.granularity) == ("yesterday", None, "unspecified")
    [absolute] = find_times("I saw her on May 7, 2023.", None, "en")
    assert (absolute.value, absolute.granularity) == ("2023-05-07", "day")


def test_reference_time_accepts_dates_datetimes_and_strings():
    for ref in (date(2023, 5, 10), datetime(2023, 5, 10, 9, 0), "2023-05-10", "1:56 pm on 10 May, 2023"):
        assert find_times("昨天", ref, "zh")[0].value == "2023-05-09"


def test_dataset_timestamps():
    assert parse_timestamp("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56)
    assert parse_timestamp("2024年04月01日 周一 08:51") == datetime(2024, 4, 1, 8, 51)
    assert parse_timestamp("2024年04月01日 周一") == datetime(2024, 4, 1)
    assert parse_timestamp("2023-05-10T14:00:00Z").year == 2023
    with pytest.raises(ValueError):
        parse_timestamp("sometime soon")


def test_invalid_calendar_dates_are_unspecified():
    [found] = find_times("2023年2月30日", REF, "zh")
    assert found.granularity == "unspecified"


def test_time_intervals():
    assert time_interval("2023-05-07", "day") == (date(2023, 5, 7), date(2023, 5, 7))
    assert time_interval("2023-W19", "week") == (date(2023, 5, 8), date(2023, 5, 14))
    assert time_interval("2024-02", "month") == (date(2024, 2, 1), date(2024, 2, 29))
    assert time_interval("2023-12", "month") == (date(2023, 12, 1), date(2023, 12, 31))
    assert time_interval("2022", "year") == (date(2022, 1, 1), date(2022, 12, 31))
    with pytest.raises(ValueError):
        time_interval("x", "unspecified")


@pytest.mark.parametrize("sentence, expression, value, granularity", [
    # a part of a month, a year or a week is still that month, year or week (the statement's time, its holder's
    # reading: "我这个月初搬到苏州了" has no word between 我 and 搬 once 这个月初 is a time)
    ("我这个月初搬家了", "这个月初", "2023-05", "month"),
    ("三月底我换了工作", "三月底", "2023-03", "month"),
    ("我今年初开始学日语", "今年初", "2023", "year"),
    ("去年底他搬走了", "去年底", "2022", "year"),
    ("一个多月前我辞职了", "一个多月前", "2023-04", "month"),
    ("十来天前我入职了", "十来天前", "2023-04-30", "day"),
    ("半个月前我搬家了", "半个月前", "2023-W17", "week"),
    ("In early March I moved", "early March", "2023-03", "month"),
    ("We moved at the start of the month", "at the start of the month", "2023-05", "month"),
    ("I quit at the end of last year", "at the end of last year", "2022", "year"),
    ("She left earlier this month", "earlier this month", "2023-05", "month"),
    ("I moved a fortnight ago", "a fortnight ago", "2023-W17", "week"),
    ("We moved this past weekend", "this past weekend", "2023-W18", "week"),
    ("I started the week before last", "the week before last", "2023-W17", "week"),
    ("We moved the weekend before last", "the weekend before last", "2023-W17", "week"),
    ("I moved in the middle of April", "in the middle of April", "2023-04", "month"),
    ("I joined a month or so ago", "a month or so ago", "2023-04", "month"),
    ("我昨儿晚上搬家了", "昨儿晚上", "2023-05-09", "day"),
    ("前儿我辞职了", "前儿", "2023-05-08", "day"),
])
def test_parts_of_periods_and_approximate_offsets(sentence, expression, value, granularity):
    found = find_times(sentence, REF, "zh" if sentence[0] > "~" else "en")
    assert [(time.expression, time.value, time.granularity) for time in found] == [(expression, value, granularity)]


@pytest.mark.parametrize("sentence", ["前几天我搬家了", "the other week I moved"])
def test_vague_recent_times_are_times_without_a_value(sentence):
    found = find_times(sentence, REF, "zh" if sentence[0] > "~" else "en")
    assert [(time.value, time.granularity) for time in found] == [(None, "unspecified")]


def test_the_year_alone_is_no_time():
    assert find_times("the year was hard", REF, "en") == []
