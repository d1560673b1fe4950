"""Plain text: one turn per paragraph (blank-line separated), long paragraphs cut at sentence ends so that no
piece exceeds the chunk size (seed R2G-1: split by punctuation and length, about 1-2k tokens).

Generic fields: none. Plain text has no session, attachment or reply; its turns have no time either, so R2G
reads a document as one session."""

from __future__ import annotations

import re

from memctl.ingest.chunker import CJK_CLASS, MAX_TOKENS, estimate_tokens
from memctl.ingest.model import Conversation, Turn

# A sentence ends after CJK or ASCII terminal punctuation (with any closing quotes), or at a line end.
SENTENCE_END = re.compile(r"(?:[。！？；!?…]+[」』”’\"')）]*|\.(?=\s))\s*|\n")
# Units for cutting a sentence that is too long on its own: one CJK character, or a word with its spaces.
CUT_UNIT = re.compile(f"[{CJK_CLASS}]\\s*|[^\\s{CJK_CLASS}]+\\s*|\\s+")
BLANK_LINES = re.compile(r"\n[ \t]*\n\s*")


def parse(text: str, name: str, max_tokens: int = MAX_TOKENS) -> list[Conversation]:
    turns = []
    for start, end in _paragraphs(text):
        for index, (piece_start, piece_end) in enumerate(split_by_length(text, start, end, max_tokens)):
            piece = text[piece_start:piece_end]
            stripped = piece.strip()
            if not stripped:
                continue
            position = piece_start + (len(piece) - len(piece.lstrip()))
            turns.append(Turn(name, None, stripped, None, _source_id(text, name, position, index)))
    return [Conversation(name, turns)] if turns else []


def split_by_length(text: str, start: int, end: int, max_tokens: int) -> list[tuple[int, int]]:
    """Cut text[start:end] into consecutive pieces of at most max_tokens, at sentence ends where possible."""
    if estimate_tokens(text[start:end]) <= max_tokens:
        return [(start, end)]
    pieces: list[tuple[int, int]] = []
    piece_start, piece_tokens = start, 0
    for unit_start, unit_end in _units(text, start, end, max_tokens):
        tokens = estimate_tokens(text[unit_start:unit_end])
        if piece_tokens and piece_tokens + tokens > max_tokens:
            pieces.append((piece_start, unit_start))
            piece_start, piece_tokens = unit_start, 0
        piece_tokens += tokens
    pieces.append((piece_start, end))
    return pieces


def _units(text: str, start: int, end: int, max_tokens: int):
    """Sentences, with any sentence above max_tokens broken further into words or CJK characters."""
    position = start
    for match in SENTENCE_END.finditer(text, start, end):
        yield from _sentence_units(text, position, match.end(), max_tokens)
        position = match.end()
    if position < end:
        yield from _sentence_units(text, position, end, max_tokens)


def _sentence_units(text: str, start: int, end: int, max_tokens: int):
    if start == end:
        return
    if estimate_tokens(text[start:end]) <= max_tokens:
        yield start, end
        return
    for match in CUT_UNIT.finditer(text, start, end):
        yield match.start(), match.end()


def _paragraphs(text: str):
    position = 0
    for match in BLANK_LINES.finditer(text):
        yield position, match.start()
        position = match.end()
    yield position, len(text)


def _source_id(text: str, name: str, position: int, index: int) -> str:
    line = text.count("\n", 0, position) + 1
    if index == 0:
        return f"{name}#{line}"
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return f"{name}#{line}:{column}"
