"""Sentence splitting for Chinese, English and mixed text, with exact character and UTF-8 byte spans.

A sentence ends at a Chinese terminator (。！？；…), at an English terminator (. ! ?) followed by white space
or the end of the text, or at a line break. Closing quotes and brackets stay with the sentence they close.
A period does not end a sentence after a known abbreviation (Mr., e.g., U.S.) or an initial, or inside a
number (3.14). Spans exclude surrounding white space, so `text[start:end] == sentence.text` always holds and
`text.encode()[byte_start:byte_end] == sentence.text.encode()`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CJK_TERMINATORS = "。！？；!?;…"
_CLOSERS = "\"'”’」』》）)]】"
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st vs etc e.g i.e a.m p.m u.s u.k no fig approx dept inc ltd co corp mt ft".split()
)

# A boundary candidate: a run of terminators (and closers), or a line break.
_BOUNDARY = re.compile(
    rf"(?:[{re.escape(_CJK_TERMINATORS)}]+|\.(?:\.\.)?(?![\d]))[{re.escape(_CLOSERS)}]*|\n"
)
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    start: int
    end: int
    byte_start: int
    byte_end: int


def split_sentences(text: str) -> list[Sentence]:
    """Split `text` into sentences; the spans index into `text` (characters) and `text.encode()` (bytes)."""
    sentences: list[Sentence] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        end = match.end()
        if match.group() != "\n" and not _ends_sentence(text, match):
            continue
        _append(sentences, text, start, end)
        start = end
    _append(sentences, text, start, len(text))
    return _with_byte_spans(text, sentences)


def _ends_sentence(text: str, match: re.Match) -> bool:
    mark = match.group()
    following = text[match.end() : match.end() + 1]
    if mark[0] != ".":
        # CJK punctuation needs no space after it; ASCII ! ? ; need a space or the end, unless CJK follows.
        return mark[0] not in "!?;" or not following or following.isspace() or _is_cjk(following)
    if following and not following.isspace() and not _is_cjk(following):
        return False  # "example.com", "3.5", "U.S.A"
    if mark.startswith("..."):
        return True
    word = _WORD_BEFORE.search(text, 0, match.start())
    if word is None:
        return True
    token = word.group(1).casefold()
    if token in _ABBREVIATIONS:
        return False
    # A single capital letter before the period is an initial ("J. K. Rowling"), not an end.
    return not (len(token) == 1 and word.group(1).isupper() and word.group(1) != "I" and following.isspace())


def _is_cjk(character: str) -> bool:
    return "\u3400" <= character <= "\u9fff" or "\uf900" <= character <= "\ufaff"


def _append(sentences: list[Sentence], text: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        sentences.append(Sentence(text[start:end], start, end, 0, 0))


def _with_byte_spans(text: str, sentences: list[Sentence]) -> list[Sentence]:
    if text.isascii():
        return [Sentence(s.text, s.start, s.end, s.start, s.end) for s in sentences]
    result = []
    position = 0
    byte_position = 0
    for sentence in sentences:
        byte_start = byte_position + len(text[position : sentence.start].encode("utf-8"))
        byte_end = byte_start + len(sentence.text.encode("utf-8"))
        result.append(Sentence(sentence.text, sentence.start, sentence.end, byte_start, byte_end))
        position, byte_position = sentence.end, byte_end
    return result
