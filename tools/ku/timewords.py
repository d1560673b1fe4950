"""Time words of change statements ("last weekend", "since March", "上个月", "三月初"), each resolved against the
date of the session that says it.

A time word is a rule: given the session date it returns the words as written, the start of the period they name
and the period's granularity (day, week, month), or None when it does not fit that date ("at the start of the
month" said on the 3rd). The generator writes the words into a change turn; the period is when the change
happened, the answer of "when did …" questions. A word's `only` keeps it to one split: "heldout" words appear in the
held-out conversations alone (beside the shared ones), "dev2" words are the whole vocabulary of the dev2
conversations (tools/ku/generate.py), which use no other.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Callable

EN_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
             "November", "December")
EN_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ZH_WEEKDAYS = ("一", "二", "三", "四", "五", "六", "日")
ZH_NUMBERS = ("一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二")


@dataclass(frozen=True)
class Moment:
    """When a change happened: the first day of the period and the period's granularity."""

    start: date
    granularity: str  # day | week | month

    @property
    def end(self) -> date:
        """The last day of the period."""
        if self.granularity == "day":
            return self.start
        if self.granularity == "week":
            return self.start + timedelta(days=6)
        return next_month(self.start) - timedelta(days=1)


@dataclass(frozen=True)
class TimeWord:
    """`point` is how a sentence says when ("last weekend", "in {month}", "上周末"); `since` how it follows
    "since"/"从…起" ("last weekend", "{month}"; None when it cannot: "since today"). Both may name the start's
    {month}, {weekday} and, in Chinese, {week} (上周/这周). `start` maps the session date to the period's first
    day, or None when the words do not fit that date."""

    point: str
    since: str | None
    start: Callable
    granularity: str
    only: str = ""  # "" shared by dev and held out; "heldout"; "dev2"


@dataclass(frozen=True)
class Said:
    point: str
    since: str | None
    moment: Moment


def first_of_month(day: date) -> date:
    return day.replace(day=1)


def next_month(day: date) -> date:
    return (day.replace(day=28) + timedelta(days=4)).replace(day=1)


def previous_month(day: date) -> date:
    return (day.replace(day=1) - timedelta(days=1)).replace(day=1)


def months_back(count: int):
    def start(day: date) -> date:
        month = first_of_month(day)
        for _ in range(count):
            month = previous_month(month)
        return month
    return start


def monday_of(day: date) -> date:
    return day - timedelta(days=day.weekday())


def last_saturday(day: date) -> date:
    """The Saturday of the weekend before `day`'s week (a Sunday's "last weekend" is the one before it)."""
    back = (day.weekday() - 5) % 7 or 7
    if day.weekday() == 6:
        back += 7
    return day - timedelta(days=back)


def days_before(count: int):
    return lambda day: day - timedelta(days=count)


def week_of_days_before(count: int):
    return lambda day: monday_of(day - timedelta(days=count))


def this_month_after_the_11th(day: date):
    """A change "at the start of the month" is said later in that month, not on its first days."""
    return first_of_month(day) if day.day >= 12 else None


EN = (
    TimeWord("today", None, days_before(0), "day"),
    TimeWord("this morning", None, days_before(0), "day"),
    TimeWord("yesterday", "yesterday", days_before(1), "day"),
    TimeWord("the day before yesterday", "the day before yesterday", days_before(2), "day", only="heldout"),
    TimeWord("last weekend", "last weekend", last_saturday, "day"),
    TimeWord("on {weekday}", "{weekday}", days_before(3), "day"),
    TimeWord("last week", "last week", week_of_days_before(7), "week"),
    TimeWord("two weeks ago", "two weeks ago", week_of_days_before(14), "week"),
    TimeWord("three weeks ago", "three weeks ago", week_of_days_before(21), "week", only="heldout"),
    TimeWord("ten days ago", "ten days ago", days_before(10), "day", only="heldout"),
    TimeWord("last month", "last month", months_back(1), "month"),
    TimeWord("at the start of the month", "the start of the month", this_month_after_the_11th, "month"),
    TimeWord("in early {month}", "early {month}", months_back(1), "month"),
    TimeWord("in {month}", "{month}", months_back(1), "month"),
    TimeWord("back in {month}", "{month}", months_back(2), "month", only="heldout"),
    TimeWord("earlier today", None, days_before(0), "day", only="dev2"),
    TimeWord("last night", "last night", days_before(1), "day", only="dev2"),
    TimeWord("a couple of days ago", None, days_before(2), "day", only="dev2"),
    TimeWord("four days ago", None, days_before(4), "day", only="dev2"),
    TimeWord("this past weekend", "the weekend", last_saturday, "day", only="dev2"),
    TimeWord("this past {weekday}", "{weekday}", days_before(5), "day", only="dev2"),
    TimeWord("about a week ago", None, week_of_days_before(7), "week", only="dev2"),
    TimeWord("a fortnight ago", None, week_of_days_before(14), "week", only="dev2"),
    TimeWord("earlier this month", "earlier this month", this_month_after_the_11th, "month", only="dev2"),
    TimeWord("at the end of last month", "the end of last month", months_back(1), "month", only="dev2"),
    TimeWord("in the middle of {month}", "mid-{month}", months_back(1), "month", only="dev2"),
    TimeWord("sometime in {month}", "{month}", months_back(1), "month", only="dev2"),
    TimeWord("a month or so ago", None, months_back(1), "month", only="dev2"),
)

ZH = (
    TimeWord("今天", None, days_before(0), "day"),
    TimeWord("今天上午", None, days_before(0), "day"),
    TimeWord("昨天", "昨天", days_before(1), "day"),
    TimeWord("前天", "前天", days_before(2), "day", only="heldout"),
    TimeWord("上周末", "上周末", last_saturday, "day"),
    TimeWord("{week}{weekday}", "{week}{weekday}", days_before(3), "day"),
    TimeWord("上周", "上周", week_of_days_before(7), "week"),
    TimeWord("两周前", "两周前", week_of_days_before(14), "week"),
    TimeWord("三个星期前", "三个星期前", week_of_days_before(21), "week", only="heldout"),
    TimeWord("十天前", "十天前", days_before(10), "day", only="heldout"),
    TimeWord("上个月", "上个月", months_back(1), "month"),
    TimeWord("这个月初", "这个月初", this_month_after_the_11th, "month"),
    TimeWord("{month}月初", "{month}月初", months_back(1), "month"),
    TimeWord("{month}月份", "{month}月", months_back(1), "month"),
    TimeWord("{month}月份的时候", "{month}月", months_back(2), "month", only="heldout"),
    TimeWord("今儿早上", None, days_before(0), "day", only="dev2"),
    TimeWord("昨儿晚上", "昨儿晚上", days_before(1), "day", only="dev2"),
    TimeWord("大前天", "大前天", days_before(3), "day", only="dev2"),
    TimeWord("四天前", "四天前", days_before(4), "day", only="dev2"),
    TimeWord("上个周末", "上个周末", last_saturday, "day", only="dev2"),
    TimeWord("上礼拜", "上礼拜", week_of_days_before(7), "week", only="dev2"),
    TimeWord("半个月前", "半个月前", week_of_days_before(14), "week", only="dev2"),
    TimeWord("这个月上旬", "这个月上旬", this_month_after_the_11th, "month", only="dev2"),
    TimeWord("上个月底", "上个月底", months_back(1), "month", only="dev2"),
    TimeWord("{month}月中旬", "{month}月中旬", months_back(1), "month", only="dev2"),
    TimeWord("一个多月前", "一个多月前", months_back(1), "month", only="dev2"),
)

WORDS = {"en": EN, "zh": ZH}


def say(word: TimeWord, language: str, session_day: date) -> Said | None:
    start = word.start(session_day)
    if start is None:
        return None
    names = {"month": EN_MONTHS[start.month - 1], "weekday": EN_WEEKDAYS[start.weekday()], "week": ""}
    if language == "zh":
        names = {"month": ZH_NUMBERS[start.month - 1], "weekday": ZH_WEEKDAYS[start.weekday()],
                 "week": "上周" if monday_of(start) < monday_of(session_day) else "这周"}
    since = word.since.format(**names) if word.since else None
    return Said(word.point.format(**names), since, Moment(start, word.granularity))


def usable(word: TimeWord, split: str) -> bool:
    """Whether conversations of `split` (dev, heldout, dev2) may say the word."""
    return word.only == split if split == "dev2" else word.only in ("", split)


def choices(language: str, split: str, session_day: date, after: date) -> list:
    """[Said] the time words of this split can say on `session_day` for a change that happened after
    `after` (the last day the old value was still stated)."""
    out = []
    for word in WORDS[language]:
        if not usable(word, split):
            continue
        said = say(word, language, session_day)
        if said is not None and after < said.moment.start <= session_day:
            out.append(said)
    return out


def month_words(language: str, month: date) -> str:
    """A month as a question names it: "March 2022", "2022年3月"."""
    if language == "en":
        return f"{EN_MONTHS[month.month - 1]} {month.year}"
    return f"{month.year}年{month.month}月"


def moment_words(language: str, moment: Moment) -> str:
    """The answer of a "when" question at the moment's granularity."""
    start = moment.start
    if language == "en":
        day = f"{start.day} {EN_MONTHS[start.month - 1]} {start.year}"
        return {"day": day, "week": f"the week of {day}", "month": month_words("en", start)}[moment.granularity]
    day = f"{start.year}年{start.month}月{start.day}日"
    return {"day": day, "week": f"{day}那一周", "month": month_words("zh", start)}[moment.granularity]
