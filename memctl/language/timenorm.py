"""Time normalisation (seed R2G-1 TimeNorm, R2G-4): time expressions → ISO 8601 with a granularity.

Relative expressions resolve against the turn's own timestamp (`ref`), never the wall clock, so a rebuild gives
the same answer. Every result keeps the original expression and its span. Values by granularity:

    minute  2023-05-07T15:30      day    2023-05-07       week  2023-W19 (ISO week)
    month   2023-05               year   2023             unspecified  value None

Conventions (the gold set follows them):
- Weeks are ISO weeks (Monday first). 上周/last week = the previous ISO week; 周末/weekend = the week holding it.
- 周二 / "on Tuesday" without 上/下: the day in the reference week, moved back a week when the sentence is in
  the past tense and that day is after the reference day, and forward when it is in the future tense and
  the day is before it. "last Friday" = the latest Friday strictly before the reference day; "next Friday" =
  the first Friday strictly after it; 上周五/下周五 = Friday of the previous/next ISO week.
- A month or day without a year (三月, 5月7日, "May 7") takes the reference year; after "since" a month lies
  in the past (the latest such month not after the reference month). "last March" = the latest March strictly
  before the reference month, "next March" the first strictly after it, "this March" the reference year's.
- Seasons resolve to their year: 今年夏天/"this summer" → the reference year, "last summer" → the year before.
- Without a reference time, relative expressions have granularity "unspecified"; absolute dates still resolve.
- Vague expressions (最近, recently, the other day, 以前, a few years ago, last summer) are kept with granularity
  "unspecified" and value None.

`time_interval` turns a value into the days it covers. R2G resolves the times a turn states against the turn's
own time; recall resolves the times a query names against now (or --now) and matches them to memories by
those days, so both read time the same way from this one module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

GRANULARITIES = ("minute", "day", "week", "month", "year", "unspecified")


@dataclass(frozen=True, slots=True)
class TimeExpr:
    expression: str
    start: int  # character span in the sentence
    end: int
    value: str | None
    granularity: str

    def to_dict(self) -> dict:
        return {
            "expression": self.expression,
            "span": [self.start, self.end],
            "value": self.value,
            "granularity": self.granularity,
        }


# ---------------------------------------------------------------------------------------------------------
# numbers

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2, "a couple": 2, "couple": 2,
}


def _zh_number(text: str) -> int:
    """Chinese or Arabic numerals up to 99: 3, 十五, 二十一, 两."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, units = text.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(units, 0) if units else 0)
    if len(text) == 4 and all(character in _ZH_DIGITS for character in text):  # 二〇二三
        return int("".join(str(_ZH_DIGITS[character]) for character in text))
    return _ZH_DIGITS[text]


def _en_number(text: str) -> int:
    text = text.lower()
    return int(text) if text.isdigit() else _EN_NUMBERS[text]


# ---------------------------------------------------------------------------------------------------------
# calendar helpers


def _iso_week(day: date) -> str:
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def _month_shift(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _valid_day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _weekday_in_week(ref: date, weekday: int, week_offset: int) -> date:
    monday = ref - timedelta(days=ref.weekday()) + timedelta(weeks=week_offset)
    return monday + timedelta(days=weekday)


def _bare_weekday(ref: date, weekday: int, tense: str) -> date:
    day = _weekday_in_week(ref, weekday, 0)
    if tense == "past" and day > ref:
        day -= timedelta(weeks=1)
    elif tense == "future" and day < ref:
        day += timedelta(weeks=1)
    return day


_PAST_EN = re.compile(
    r"\b(?:was|were|did|had|went|got|ago|last|yesterday|took|made|came|saw|found|gave|told|felt|left|bought|brought|"
    r"met|ran|ate|drank|wrote|spent|sent|won|lost|paid|sat|said|thought|knew|flew|drove|rode|slept|woke|began|broke|"
    r"caught|taught|sold|held|kept|fell|hurt|quit|"
    r"(?!(?:need|feed|speed|indeed|seed|succeed|proceed|exceed|bed|red|shed)\b)\w{2,}ed)\b",
    re.IGNORECASE,
)
_FUTURE_EN = re.compile(r"\b(?:will|'ll|gonna|going to|plan|planning|next|tomorrow)\b|'ll\b", re.IGNORECASE)
_PAST_ZH = re.compile(r"[了过]|已经|刚")
# 会 and 要 mark the future only as auxiliaries: 开会, 会议, 重要, 需要 do not.
_FUTURE_ZH = re.compile(r"将|(?<![开聚约机社学大晚协工宴舞展年体])会(?![议])|(?<![重需主想只])要(?![求是点])|打算|准备|计划|明天|下周|下个")


def _tense(sentence: str, lang: str) -> str:
    if lang == "zh":
        if _FUTURE_ZH.search(sentence):
            return "future"
        return "past" if _PAST_ZH.search(sentence) else "present"
    if _FUTURE_EN.search(sentence):
        return "future"
    return "past" if _PAST_EN.search(sentence) else "present"


# ---------------------------------------------------------------------------------------------------------
# Chinese patterns. Each rule: (compiled regex, resolver(match, ref, tense) -> (value, granularity)).

_ZH_NUM = r"[0-9]{1,4}|[零〇一二两三四五六七八九十]{1,4}"
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
_ZH_DAY_WORDS = {
    "大前天": -3, "前天": -2, "昨天": -1, "昨日": -1, "昨晚": -1, "昨夜": -1, "今天": 0, "今日": 0, "今晚": 0,
    "今早": 0, "今儿": 0, "当天": 0, "明天": 1, "明日": 1, "明早": 1, "明晚": 1, "后天": 2, "大后天": 3,
    "昨儿": -1, "前儿": -2, "明儿": 1,  # the colloquial 儿 forms (昨儿晚上, 前儿个)
}
_ZH_WEEK_WORDS = {"上上": -2, "上": -1, "这": 0, "这个": 0, "本": 0, "下": 1, "下下": 2}
_ZH_YEAR_WORDS = {"前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}
# 以前的老板 is a former boss, not a time: vague words directly before 的 are adjectives.
_ZH_VAGUE = r"(?:最近|近来|前阵子|前段时间|前些天|前几天|前两天|这两天|前不久|之前|以前|过去|将来|未来|不久前|刚才|小时候|那时候|当时|早些年|这几天|这些天)(?!的)"
_DAYPART = r"(?:早上|上午|中午|下午|傍晚|晚上|凌晨|夜里)?"
_ZH_CLOCK = rf"{_DAYPART}(?:{_ZH_NUM})点(?:半|(?:{_ZH_NUM})分?)?"
# 这个月初, 三月底: a part of the month is still the month (the granularity a statement's time keeps)
_ZH_PART_OF_MONTH = r"(?:初|底|末|中旬|上旬|下旬)"


def _zh_rules():
    week_prefix = r"(上上|下下|上|这个|这|本|下)"
    unit_word = r"(天|日|周|个?星期|个?礼拜|个?月|年)"
    year_part = r"(?:年?初|年?底|年?末|上半年|下半年)"
    return [
        # 2023年5月7日, 2023年5月, 2023-05-07 style handled by the shared numeric rule
        (rf"({_ZH_NUM})年({_ZH_NUM})月({_ZH_NUM})[日号]", _zh_ymd),
        (rf"({_ZH_NUM})年({_ZH_NUM})月(?:份)?", _zh_ym),
        (r"((?:19|20)[0-9]{2}|[一二][〇零一二三四五六七八九]{3})年(?:份)?", _zh_y),
        (rf"(前年|去年|今年|明年|后年)(?:的)?(?:({_ZH_NUM})月(?:份)?(?:({_ZH_NUM})[日号])?|[春夏秋冬](?:天|季)|{year_part})?",
         _zh_relative_year),
        (rf"(上个月|上月|这个月|本月|下个月|下月)(?:({_ZH_NUM})[日号]|{_ZH_PART_OF_MONTH})?", _zh_relative_month),
        (rf"({_ZH_NUM})月({_ZH_NUM})[日号]", _zh_md),
        (rf"(?<![年\d])({_ZH_NUM})月份?(?:{_ZH_PART_OF_MONTH})?(?![\d份日号])", _zh_m),
        (rf"(?<![月\d])({_ZH_NUM})号(?![线码楼房位床窗桌机])", _zh_d),
        (rf"({_ZH_NUM}|几)(?:来|多)?(?:个多)?{unit_word}(前|以前|之前|后|以后|之后)", _zh_offset),
        (r"半个(?:月)(前|以前|之前|后|以后|之后)", _zh_half_month),
        (r"半年(前|以前|之前|后|以后|之后)", _zh_half_year),
        (rf"{week_prefix}(?:个)?(?:周|星期|礼拜)([一二三四五六日天末])", _zh_week_day),
        (rf"(?<!每)(?:周|星期|礼拜)([一二三四五六日天])", _zh_bare_weekday),
        (r"(?:春节|国庆节?|中秋节?|元旦|清明节?|端午节?|劳动节|五一|十一长假|圣诞节?|情人节|七夕|元宵节?|除夕)(?:假期|长假|期间|那天)?", _vague),
        (rf"{week_prefix}(?:个)?(?:周末)", _zh_weekend),
        (r"(?<!上|下|这|本)周末", _zh_weekend),
        (rf"{week_prefix}(?:个)?(?:周|星期|礼拜)", _zh_week),
        (r"(大前天|前天|昨天|昨日|昨晚|昨夜|今天|今日|今晚|今早|今儿|昨儿|前儿|明儿|当天|明天|明日|明早|明晚|大后天|后天)"
         rf"(?:{_ZH_CLOCK}|{_DAYPART})?", _zh_day_word),
        (_ZH_VAGUE, _vague),
    ]


def _zh_ymd(match, ref, tense):
    day = _valid_day(_zh_number(match[1]), _zh_number(match[2]), _zh_number(match[3]))
    return (day.isoformat(), "day") if day else (None, "unspecified")


def _zh_ym(match, ref, tense):
    month = _zh_number(match[2])
    return (f"{_zh_number(match[1]):04d}-{month:02d}", "month") if 1 <= month <= 12 else (None, "unspecified")


def _zh_y(match, ref, tense):
    return f"{_zh_number(match[1]):04d}", "year"


def _zh_relative_year(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    year = ref.year + _ZH_YEAR_WORDS[match[1]]
    if match[2] is None:
        return f"{year:04d}", "year"
    month = _zh_number(match[2])
    if match[3] is None:
        return (f"{year:04d}-{month:02d}", "month") if 1 <= month <= 12 else (None, "unspecified")
    day = _valid_day(year, month, _zh_number(match[3]))
    return (day.isoformat(), "day") if day else (None, "unspecified")


def _zh_relative_month(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    offset = {"上个月": -1, "上月": -1, "这个月": 0, "本月": 0, "下个月": 1, "下月": 1}[match[1]]
    year, month = _month_shift(ref.year, ref.month, offset)
    if match[2] is None:
        return f"{year:04d}-{month:02d}", "month"
    day = _valid_day(year, month, _zh_number(match[2]))
    return (day.isoformat(), "day") if day else (None, "unspecified")


def _zh_md(match, ref, tense):
    year = ref.year if ref else None
    month, day_number = _zh_number(match[1]), _zh_number(match[2])
    if year is None:
        return None, "unspecified"
    day = _valid_day(year, month, day_number)
    return (day.isoformat(), "day") if day else (None, "unspecified")


def _zh_m(match, ref, tense):
    month = _zh_number(match[1])
    if ref is None or not 1 <= month <= 12:
        return None, "unspecified"
    return f"{ref.year:04d}-{month:02d}", "month"


def _zh_d(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    day = _valid_day(ref.year, ref.month, _zh_number(match[1]))
    return (day.isoformat(), "day") if day else (None, "unspecified")


def _zh_offset(match, ref, tense):
    if ref is None or match[1] == "几":
        return None, "unspecified"
    count = _zh_number(match[1])
    sign = -1 if match[3] in ("前", "以前", "之前") else 1
    unit = match[2].lstrip("个")
    return _offset(ref, sign * count, {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week",
                                        "月": "month", "年": "year"}[unit])


def _zh_half_month(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    return _offset(ref, -2 if match[1] in ("前", "以前", "之前") else 2, "week")


def _zh_half_year(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    return _offset(ref, -6 if match[1] in ("前", "以前", "之前") else 6, "month")


def _zh_week_day(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    offset = _ZH_WEEK_WORDS[match[1]]
    if match[2] == "末":
        return _iso_week(_weekday_in_week(ref, 5, offset)), "week"
    return _weekday_in_week(ref, _ZH_WEEKDAY[match[2]], offset).isoformat(), "day"


def _zh_bare_weekday(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    return _bare_weekday(ref, _ZH_WEEKDAY[match[1]], tense).isoformat(), "day"


def _zh_weekend(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    offset = _ZH_WEEK_WORDS[match[1]] if match.re.groups else 0
    return _iso_week(_weekday_in_week(ref, 5, offset)), "week"


def _zh_week(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    return _iso_week(ref + timedelta(weeks=_ZH_WEEK_WORDS[match[1]])), "week"


def _zh_day_word(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    day = ref + timedelta(days=_ZH_DAY_WORDS[match[1]])
    clock = _zh_clock(match.group()[len(match[1]):])
    if clock:
        return f"{day.isoformat()}T{clock[0]:02d}:{clock[1]:02d}", "minute"
    return day.isoformat(), "day"


_ZH_CLOCK_PARTS = re.compile(rf"({_DAYPART})({_ZH_NUM})点(半|({_ZH_NUM})分?)?")


def _zh_clock(text: str) -> tuple[int, int] | None:
    match = _ZH_CLOCK_PARTS.fullmatch(text)
    if not match:
        return None
    hour = _zh_number(match[2])
    if match[1] in ("下午", "傍晚", "晚上") and hour < 12:
        hour += 12
    minute = 30 if match[3] == "半" else (_zh_number(match[4]) if match[4] else 0)
    return (hour, minute) if hour < 24 and minute < 60 else None


def _vague(match, ref, tense):
    return None, "unspecified"


def _offset(ref: date, count: int, unit: str) -> tuple[str, str]:
    if unit == "day":
        return (ref + timedelta(days=count)).isoformat(), "day"
    if unit == "week":
        return _iso_week(ref + timedelta(weeks=count)), "week"
    if unit == "month":
        year, month = _month_shift(ref.year, ref.month, count)
        return f"{year:04d}-{month:02d}", "month"
    return f"{ref.year + count:04d}", "year"


# ---------------------------------------------------------------------------------------------------------
# English patterns

_MONTHS = {
    name: index
    for index, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
         ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
         ("november", "nov"), ("december", "dec")],
        start=1,
    )
    for name in names
}
_WEEKDAYS = {
    name: index
    for index, names in enumerate(
        [("monday", "mon"), ("tuesday", "tue", "tues"), ("wednesday", "wed"), ("thursday", "thu", "thurs"),
         ("friday", "fri"), ("saturday", "sat"), ("sunday", "sun")]
    )
    for name in names
}
_MONTH_RE = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
    r"(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?)"
)
# A month's full name; "May" only capitalised ("this may be" is no month)
_MONTH_NAME_RE = (r"(?:January|February|March|April|(?-i:May)|June|July|August|September|October|November|"
                  r"December)")
_WEEKDAY_RE = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_EN_NUM = r"\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a )?couple(?: of)?"
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_EN_CLOCK = r"(?:\s+at\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?)?"
_EN_VAGUE = (
    r"recently|lately|the other day|a while ago|a while back|some time ago|back then|in the past|in the future|"
    r"someday|one day|(?:in )?a few (?:days|weeks|months|years)(?: (?:ago|back))?|several (?:days|weeks|months|years) ago|"
    r"years ago|when I was (?:a kid|young|little)|"
    r"as a kid|(?:in|during) (?:my )?childhood"
)


# "at the start of the month", "in early March": a part of a month is still the month
_EN_PART_OF_MONTH = r"(?:(?:at|by|around|towards?|in) the (?:start|beginning|end|middle) of |(?:early|late|mid|earlier|later)[ -])"


def _en_rules():
    return [
        (r"(\d{4})-(\d{1,2})-(\d{1,2})", _numeric_ymd),
        (r"(\d{4})/(\d{1,2})/(\d{1,2})", _numeric_ymd),
        (r"(\d{1,2})/(\d{1,2})/(\d{4})", _numeric_mdy),
        (rf"({_MONTH_RE})\s+{_ORDINAL},?\s+(\d{{4}})", _en_month_day_year),
        (rf"(?:the\s+)?{_ORDINAL}\s+(?:of\s+)?({_MONTH_RE}),?\s+(\d{{4}})", _en_day_month_year),
        (rf"({_MONTH_RE})\s+(\d{{4}})", _en_month_year),
        (rf"({_MONTH_RE})\s+{_ORDINAL}(?![\d:])", _en_month_day),
        (rf"(?:the\s+)?{_ORDINAL}\s+of\s+({_MONTH_RE})", _en_day_month),
        (rf"(?:(?<=\b[Ii]n )|(?<=\b[Ss]ince )|(?<=\b[Uu]ntil )|(?<=\b[Bb]y ))({_MONTH_RE})(?!\s+\d)", _en_month),
        (r"(?:(?<=\b[Ii]n )|(?<=\b[Ss]ince )|(?<=\b[Oo]f ))(\d{4})\b", _en_year),
        (rf"(last|this|next) ({_MONTH_NAME_RE})\b", _en_relative_month_name),
        (rf"{_EN_PART_OF_MONTH}(last|this|the) year", _en_relative_year),
        (r"(last|this|next) (?:year|spring|summer|fall|autumn|winter)", _en_relative_year),
        (rf"{_EN_PART_OF_MONTH}(the|this|last) month", _en_relative_month),
        (rf"{_EN_PART_OF_MONTH}({_MONTH_RE})(?!\s+\d)", _en_month_part),
        (r"(last|this|next) month", _en_relative_month),
        (r"the week ?end before last", _en_weekend_before_last),
        (r"(last|this|next|the) (?:week ?end)", _en_weekend),
        (r"(?:earlier |later )?(last|this|next) week", _en_relative_week),
        (r"the week before last|a fortnight ago|(?:the )?other week", _en_two_weeks_ago),
        (r"this past (week ?end)", _en_last_weekend),
        (rf"(last|this|next|on|by|this past|this coming|until|till) ({_WEEKDAY_RE})(?!s)\b", _en_weekday),
        (rf"({_EN_NUM}) (days?|weeks?|months?|years?)(?: or so)? (ago|later|from now|before|back)", _en_offset),
        (rf"in ({_EN_NUM}) (days?|weeks?|months?|years?)\b", _en_in_offset),
        (r"(the day before yesterday|the day after tomorrow|yesterday|today|tonight|tomorrow|"
         r"this (?:morning|afternoon|evening)|last night)" + _EN_CLOCK, _en_day_word),
        (_EN_VAGUE, _vague),
        (r"(?:the )?(?:Fourth of July|4th of July|Christmas(?: Eve| Day)?|Thanksgiving|Easter|Halloween|New Year's(?: Eve| Day)?|"
         r"Valentine's Day|Labor Day|Memorial Day|spring break)(?: weekend| break| holidays?)?", _vague),
        (rf"(?<!every )(?<!each )({_WEEKDAY_RE})\b(?!s)", _en_bare_weekday),
    ]


def _numeric_ymd(match, ref, tense):
    day = _valid_day(int(match[1]), int(match[2]), int(match[3]))
    return (day.isoformat(), "day") if day else (None, "unspecified")


def _numeric_mdy(match, ref, tense):
    day = _valid_day(int(match[3]), int(match[1]), int(match[2]))
    return (day.isoformat(), "day") if day else (None, "unspecified")


def _month_number(name: str) -> int:
    return _MONTHS[name.lower().rstrip(".")]


def _en_month_day_year(match, ref, tense):
    day = _valid_day(int(match[3]), _month_number(match[1]), int(match[2]))
    return (day.isoformat(), "day") if day else (None, "unspecified")


def _en_day_month_year(match, ref, tense):
    day = _valid_day(int(match[3]), _month_number(match[2]), int(match[1]))
    return (day.isoformat(), "day") if day else (None, "unspecified")


def _en_month_year(match, ref, tense):
    return f"{int(match[2]):04d}-{_month_number(match[1]):02d}", "month"


def _en_month_day(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    day = _valid_day(ref.year, _month_number(match[1]), int(match[2]))
    return (day.isoformat(), "day") if day else (None, "unspecified")


def _en_day_month(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    day = _valid_day(ref.year, _month_number(match[2]), int(match[1]))
    return (day.isoformat(), "day") if day else (None, "unspecified")


def _en_month(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    month = _month_number(match[1])
    since = match.string[: match.start()].lower().endswith("since ")
    year = ref.year - 1 if since and month > ref.month else ref.year
    return f"{year:04d}-{month:02d}", "month"


def _en_two_weeks_ago(match, ref, tense):
    if ref is None or "other" in match[0].lower():
        return None, "unspecified"
    return _iso_week(ref - timedelta(weeks=2)), "week"


def _en_weekend_before_last(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    return _iso_week(_weekday_in_week(ref, 5, -1 if ref.weekday() >= 5 else -2)), "week"


def _en_last_weekend(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    return _iso_week(_weekday_in_week(ref, 5, 0 if ref.weekday() >= 5 else -1)), "week"


def _en_month_part(match, ref, tense):
    """The month named, in the year that puts it before the reference day when the sentence tells the past."""
    if ref is None:
        return None, "unspecified"
    month = _month_number(match[1])
    year = ref.year - 1 if tense == "past" and month > ref.month else ref.year
    return f"{year:04d}-{month:02d}", "month"


def _en_relative_month_name(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    month = _month_number(match[2])
    word = match[1].lower()
    if word == "last":
        year = ref.year if month < ref.month else ref.year - 1
    elif word == "next":
        year = ref.year if month > ref.month else ref.year + 1
    else:
        year = ref.year
    return f"{year:04d}-{month:02d}", "month"


def _en_year(match, ref, tense):
    return match[1], "year"


_LAST_THIS_NEXT = {"last": -1, "this": 0, "next": 1, "the": 0}


def _en_relative_year(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    return f"{ref.year + _LAST_THIS_NEXT[match[1].lower()]:04d}", "year"


def _en_relative_month(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    year, month = _month_shift(ref.year, ref.month, _LAST_THIS_NEXT[match[1].lower()])
    return f"{year:04d}-{month:02d}", "month"


def _en_weekend(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    word = match[1].lower()
    if word == "the":
        # "the weekend": the one just past in a past-tense sentence, else the coming one.
        offset = -1 if tense == "past" and ref.weekday() < 5 else 0
    else:
        offset = _LAST_THIS_NEXT[word]
    return _iso_week(_weekday_in_week(ref, 5, offset)), "week"


def _en_relative_week(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    return _iso_week(ref + timedelta(weeks=_LAST_THIS_NEXT[match[1].lower()])), "week"


def _en_weekday(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    word = match[1].lower()
    weekday = _WEEKDAYS[match[2].lower()]
    if word in ("last", "this past"):
        delta = (ref.weekday() - weekday) % 7 or 7
        return (ref - timedelta(days=delta)).isoformat(), "day"
    if word in ("by", "until", "till"):
        return _bare_weekday(ref, weekday, "future").isoformat(), "day"  # a deadline lies ahead
    if word in ("next", "this coming"):
        delta = (weekday - ref.weekday()) % 7 or 7
        return (ref + timedelta(days=delta)).isoformat(), "day"
    if word == "this":
        return _weekday_in_week(ref, weekday, 0).isoformat(), "day"
    return _bare_weekday(ref, weekday, tense).isoformat(), "day"


def _en_bare_weekday(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    return _bare_weekday(ref, _WEEKDAYS[match[1].lower()], tense).isoformat(), "day"


def _en_unit(word: str) -> str:
    return word.lower().rstrip("s")


def _en_offset(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    sign = 1 if match[3].lower() in ("later", "from now") else -1
    return _offset(ref, sign * _en_number(match[1]), _en_unit(match[2]))


def _en_in_offset(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    return _offset(ref, _en_number(match[1]), _en_unit(match[2]))


_EN_DAY_WORDS = {
    "the day before yesterday": -2, "yesterday": -1, "last night": -1, "today": 0, "tonight": 0,
    "this morning": 0, "this afternoon": 0, "this evening": 0, "tomorrow": 1, "the day after tomorrow": 2,
}


def _en_day_word(match, ref, tense):
    if ref is None:
        return None, "unspecified"
    day = ref + timedelta(days=_EN_DAY_WORDS[match[1].lower()])
    if match[2]:
        hour, minute = int(match[2]), int(match[3] or 0)
        suffix = (match[4] or "").lower().replace(".", "")
        if suffix == "pm" and hour < 12:
            hour += 12
        if hour < 24 and minute < 60:
            return f"{day.isoformat()}T{hour:02d}:{minute:02d}", "minute"
    return day.isoformat(), "day"


# ---------------------------------------------------------------------------------------------------------
# scanning

_COMPILED: dict[str, list] = {}


def _rules(lang: str) -> list:
    rules = _COMPILED.get(lang)
    if rules is None:
        flags = re.IGNORECASE if lang == "en" else 0
        source = _en_rules() if lang == "en" else _zh_rules() + _en_rules()[:3]
        rules = [(re.compile(pattern if lang == "zh" else rf"\b(?:{pattern})", flags), resolve) for pattern, resolve in source]
        _COMPILED[lang] = rules
    return rules


def as_date(ref) -> date | None:
    """Accept a date, a datetime, an ISO string or None as the reference time."""
    if ref is None or (isinstance(ref, date) and not isinstance(ref, datetime)):
        return ref
    if isinstance(ref, datetime):
        return ref.date()
    return parse_timestamp(ref).date()


# Most sentences hold no time at all: one cheap search for anything a rule could start with skips the rules.
_MAY_HOLD_TIME_PATTERNS = {
    "en": (
        r"\d|\b(?:today|tonight|tomorrow|yesterday|ago|later|week|weeks|weekend|month|months|year|years|day|days|"
        r"morning|afternoon|evening|night|recently|lately|a while|back then|the past|future|someday|childhood|"
        r"as a kid|i was (?:a kid|young|little)|"
        r"christmas|thanksgiving|easter|halloween|fourth|valentine's|labor|memorial|spring|summer|fall|autumn|winter|"
        r"jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|august|"
        r"september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    ),
    "zh": r"[\d今昨明前后天日周月年号星期礼拜最近来久刚候时当早这些节旦夕除秋冬春夏过将未往]",
}

_MAY_HOLD_TIME = {lang: re.compile(pattern, re.IGNORECASE) for lang, pattern in _MAY_HOLD_TIME_PATTERNS.items()}


def find_times(sentence: str, ref=None, lang: str = "en") -> list[TimeExpr]:
    """Every time expression in `sentence`, left to right; earlier rules win where expressions overlap."""
    if not _MAY_HOLD_TIME["zh" if lang == "zh" else "en"].search(sentence):
        return []
    ref_day = as_date(ref)
    tense = _tense(sentence, lang)
    taken: list[tuple[int, int]] = []
    found: list[TimeExpr] = []
    for pattern, resolve in _rules(lang):
        for match in pattern.finditer(sentence):
            start, end = match.span()
            if any(start < taken_end and taken_start < end for taken_start, taken_end in taken):
                continue
            value, granularity = resolve(match, ref_day, tense)
            taken.append((start, end))
            found.append(TimeExpr(match.group(), start, end, value, granularity))
    found.sort(key=lambda expr: expr.start)
    return found


# ---------------------------------------------------------------------------------------------------------
# the days a value covers


def time_interval(value: str, granularity: str) -> tuple[date, date]:
    """The first and last day an ISO value of timenorm covers: 2023-05-07 (day), 2023-W19, 2023-05, 2023."""
    if granularity in ("day", "minute"):
        day = date.fromisoformat(value[:10])
        return day, day
    if granularity == "week":
        year, week = value.split("-W")
        monday = date.fromisocalendar(int(year), int(week), 1)
        return monday, monday + timedelta(days=6)
    if granularity == "month":
        year, month = (int(part) for part in value.split("-"))
        following = date(year + month // 12, month % 12 + 1, 1)
        return date(year, month, 1), following - timedelta(days=1)
    if granularity == "year":
        return date(int(value), 1, 1), date(int(value), 12, 31)
    raise ValueError(f"no interval for granularity {granularity!r}")


# ---------------------------------------------------------------------------------------------------------
# reference timestamps


def parse_timestamp(text: str) -> datetime:
    """A turn's timestamp: ISO 8601 as ingest stores it, or any form memctl.ingest.dates reads (LoCoMo's
    "1:56 pm on 8 May, 2023", MemDaily's "2024年04月01日 周一 08:51"); ValueError otherwise."""
    text = text.strip()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        from memctl.ingest.dates import parse_timestamp as parse_dataset_timestamp

        return datetime.fromisoformat(parse_dataset_timestamp(text))
