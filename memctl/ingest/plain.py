"""Plain text: one turn per paragraph (blank-line separated), long paragraphs cut at sentence ends so that no
piece exceeds the chunk size (seed R2G-1: split by punctuation and length, about 1-2k tokens).

Generic fields: none. Plain text has no session, attachment or reply; its turns have no time either, so R2G
reads a document as one session."""

from __future__ import annotations

import re

from memctl.ingest.chunker import MAX_TOKENS
from memctl.ingest.cutting import cut
from memctl.ingest.model import Conversation, Turn

BLANK_LINES = re.compile(r"\n[ \t]*\n\s*")
NON_SPACE = re.compile(r"\S")  # re's \s is what str.strip strips


def parse(text: str, name: str, max_tokens: int = MAX_TOKENS) -> list[Conversation]:
    turns = []
    lines = _LineCounter(text)
    for start, end in _paragraphs(text):
        for index, (piece_start, piece_end) in enumerate(cut(text, start, end, max_tokens)):
            stripped = text[piece_start:piece_end].strip()
            if not stripped:
                continue
            position = NON_SPACE.search(text, piece_start, piece_end).start()
            turns.append(Turn(name, None, stripped, None, _source_id(name, *lines.at(position), index)))
    return [Conversation(name, turns)] if turns else []


def _paragraphs(text: str):
    position = 0
    for match in BLANK_LINES.finditer(text):
        yield position, match.start()
        position = match.end()
    yield position, len(text)


class _LineCounter:
    """Line and column of positions asked in increasing order, counting each newline once (asking from the
    start each time made a long paragraph's pieces quadratic)."""

    def __init__(self, text: str):
        self.text = text
        self.position = 0
        self.line = 1
        self.line_start = 0

    def at(self, position: int) -> tuple[int, int]:
        """(line, column), both from 1."""
        newlines = self.text.count("\n", self.position, position)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rfind("\n", self.position, position) + 1
        self.position = position
        return self.line, position - self.line_start + 1


def _source_id(name: str, line: int, column: int, index: int) -> str:
    if index == 0:
        return f"{name}#{line}"
    return f"{name}#{line}:{column}"
