"""Query building (seed 001 §5.1, W3): keywords, pattern tokens, time constraints and clauses of a query.

Keywords are the index tokenizer's terms (stop words out, English stemmed, CJK runs segmented against the
index's own vocabulary so that jieba's dictionary is never loaded), minus two kinds of words:
- question phrasing (memctl.language.question_words: interrogatives, auxiliaries, hedges such as "likely" or
  "kind of", quantity asks, words that refer to the conversation, placeholders; 是否, 多少, 怎么, 提到…), which
  describe the wanted answer, not the memory; dropped by surface form before stemming, so that "likely" does
  not remove "like";
- one-character CJK terms (的 and 了 are stop words already; what is left, such as 买 or 天, matches almost
  every turn of a Chinese store). Both are kept when nothing else would be left.

Pattern tokens (W5 triggers): hex (0x8007045D, long hex runs), uuid, url, path, code (`backticks`,
snake_case, dotted.names(), Key=Value) and error_code (E1234, ERR_FOO, five or more digits).

Time constraints: relative and absolute expressions ("上周", "last May", "2023-05-07") resolved against the
reference time (now, or --now) by memctl.language.timenorm, which is imported only when a cheap test says the
query may hold a time word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CLAUSE = re.compile(r"[^。！？!?；;\n]+")

PATTERNS = {
    "uuid": re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    "url": re.compile(r"\b(?:https?://|www\.)[^\s<>\"'，。）)]+", re.IGNORECASE),
    "path": re.compile(r"(?:(?<![\w/])~?/[\w.\-]+(?:/[\w.\-]+)+|\b[A-Za-z]:\\[\w.\-\\]+)"),
    "hex": re.compile(r"\b0[xX][0-9a-fA-F]+\b|\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b"),
    "error_code": re.compile(r"\b(?:[A-Z]{1,5}[-_]?\d{3,}|ERR(?:OR)?_[A-Z0-9_]+|\d{5,})\b"),
    "code": re.compile(r"`[^`]+`|\b[A-Za-z_]\w*(?:\.\w+)+\(\)?|\b[a-z]+_[a-z0-9_]+\b|\b[A-Za-z]\w*=\w+"),
}
_MAY_HOLD_TIME = re.compile(
    r"\b(?:1[89]|20)\d\d\b|\d{1,4}[-/.]\d{1,2}|\b\d+\s*(?:st|nd|rd|th|am|pm|days?|weeks?|months?|years?)\b|"
    r"yesterday|today|tonight|tomorrow|\bago\b|\blast\b|\bnext\b|\bthis (?:week|month|year|weekend)|weekend|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|summer|winter|spring|autumn|"
    r"[昨今明前后去上下本这][天周月年个]|[周星][期一二三四五六日天末]|[一二三四五六七八九十两几\d]+\s*[天周月年号日]|"
    r"春天|夏天|秋天|冬天|最近|以前", re.IGNORECASE)


@dataclass
class TimeConstraint:
    expression: str
    value: str | None
    granularity: str
    start: float | None = None  # seconds since the epoch, inclusive
    end: float | None = None

    def as_dict(self) -> dict:
        return {"expression": self.expression, "value": self.value, "granularity": self.granularity,
                "since": self.start, "until": self.end}


@dataclass
class Query:
    text: str
    search_text: str  # text handed to BM25 (question-template words removed)
    language: str
    patterns: dict = field(default_factory=dict)  # kind → [token]
    times: list = field(default_factory=list)  # TimeConstraint
    clauses: list = field(default_factory=list)  # search texts of the query's sentences (two or more, else [])
    keywords: list = field(default_factory=list)  # terms actually searched, filled by stage A
    entities: list = field(default_factory=list)  # stored Entities the query names, filled by the pipeline

    @property
    def pattern_kinds(self) -> list:
        return sorted(self.patterns)

    def as_dict(self) -> dict:
        return {"text": self.text, "language": self.language, "keywords": self.keywords,
                "entities": self.entities, "patterns": self.patterns,
                "times": [time.as_dict() for time in self.times], "clauses": self.clauses}


def build(text: str, reference: float, question_stopwords: bool = True) -> Query:
    """Everything of §5.1 that needs no index: language, pattern tokens, time constraints and clauses."""
    language = "zh" if _CJK.search(text) else "en"
    search_text = strip_question_words(text) if question_stopwords else text
    query = Query(text=text, search_text=search_text, language=language, patterns=pattern_tokens(text),
                  times=time_constraints(text, reference, language))
    clauses = [clause.strip() for clause in _CLAUSE.findall(search_text) if clause.strip()]
    query.clauses = clauses if len(clauses) > 1 else []
    return query


def strip_question_words(text: str) -> str:
    """`text` without its question phrasing (each word becomes a space); `text` itself when no word is left."""
    from memctl.language.question_words import ENGLISH

    stripped = _WORD.sub(lambda match: " " if match.group().lower() in ENGLISH else match.group(), text)
    if _CJK.search(stripped):
        stripped = _chinese_question_words().sub(" ", stripped)
    return stripped if any(map(str.isalnum, stripped)) else text


@lru_cache(maxsize=1)
def _chinese_question_words() -> re.Pattern:
    from memctl.language.question_words import CHINESE

    return re.compile("|".join(CHINESE))


def pattern_tokens(text: str) -> dict:
    """{kind: [tokens]} of the pattern kinds present; a token counts for its most specific kind only."""
    found: dict = {}
    taken: list = []
    for kind, pattern in PATTERNS.items():
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < taken_end and taken_start < end for taken_start, taken_end in taken):
                continue
            taken.append((start, end))
            found.setdefault(kind, []).append(match.group())
    return found


def time_constraints(text: str, reference: float, language: str) -> list:
    if not _MAY_HOLD_TIME.search(text):
        return []
    constraints = _relative_months(text, reference)
    from datetime import datetime, timedelta, timezone

    from memctl.language.timenorm import find_times, time_interval

    moment = datetime.fromtimestamp(reference, timezone.utc).replace(tzinfo=None)
    taken = {constraint.expression.casefold() for constraint in constraints}
    for expression in find_times(text, moment.isoformat(timespec="seconds"), language):
        if any(expression.expression.casefold() in seen for seen in taken):
            continue
        constraint = TimeConstraint(expression.expression, expression.value, expression.granularity)
        if expression.value and expression.granularity != "unspecified":
            try:
                first, last = time_interval(expression.value, expression.granularity)
            except ValueError:
                first = last = None
            if first is not None:
                begin = datetime(first.year, first.month, first.day, tzinfo=timezone.utc)
                finish = datetime(last.year, last.month, last.day, tzinfo=timezone.utc) + timedelta(days=1)
                constraint.start, constraint.end = begin.timestamp(), finish.timestamp() - 1e-6
        constraints.append(constraint)
    return constraints


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_RELATIVE_MONTH = re.compile(rf"\b(last|this|next)\s+({'|'.join(_MONTHS)})\b", re.IGNORECASE)


def _relative_months(text: str, reference: float) -> list:
    """"last May", "this June", "next March": the timenorm rules leave a bare "May" alone (the modal verb), so
    recall reads these itself. last = the latest such month before the reference month; next = the first after."""
    from datetime import datetime, timezone

    now = datetime.fromtimestamp(reference, timezone.utc)
    found = []
    for match in _RELATIVE_MONTH.finditer(text):
        which, month = match.group(1).lower(), _MONTHS.index(match.group(2).lower()) + 1
        year = now.year
        if which == "last" and month >= now.month:
            year -= 1
        elif which == "next" and month <= now.month:
            year += 1
        start = datetime(year, month, 1, tzinfo=timezone.utc)
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=timezone.utc)
        found.append(TimeConstraint(match.group(), f"{year}-{month:02d}", "month", start.timestamp(),
                                    end.timestamp() - 1e-6))
    return found


def is_single_cjk(term: str) -> bool:
    return len(term) == 1 and bool(_CJK.match(term))


class QueryTokenizer:
    """The index tokenizer with recall's query rules: one-character CJK terms dropped unless nothing else is
    left. Everything else (signature, index tokens) is the wrapped tokenizer's, so the searcher accepts it."""

    def __init__(self, tokenizer, drop_single_cjk: bool = True):
        self.tokenizer = tokenizer
        self.drop_single_cjk = drop_single_cjk
        self.last_terms: list = []

    def __getattr__(self, name):
        return getattr(self.tokenizer, name)

    def parse_query(self, text, vocabulary=None, cjk_mode=None):
        parsed = self.tokenizer.parse_query(text, vocabulary, cjk_mode) if cjk_mode else \
            self.tokenizer.parse_query(text, vocabulary)
        if self.drop_single_cjk:
            kept = [term for term in parsed.terms if not is_single_cjk(term)]
            if kept:
                parsed.terms = kept
        self.last_terms = list(parsed.terms)
        return parsed
