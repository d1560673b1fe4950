"""Plain text: one turn per paragraph (blank-line separated), long paragraphs cut at sentence ends so that no
piece exceeds the chunk size (seed R2G-1: split by punctuation and length, about 1-2k tokens).

Generic fields: none. Plain text has no session, attachment or reply; its turns have no time either, so R2G
reads a document as one session.

Read from UTF-8 bytes, a paragraph at a time: a paragraph above WINDOW_BYTES (one 50 MB line) is decoded and cut
a window at a time (cutting.cut_windows), so that the whole text is never one str (an emoji makes Python hold a
str at 4 bytes per character). The pieces are the same whatever the window size.
"""

from __future__ import annotations

import codecs
import re

from memctl.ingest.chunker import MAX_TOKENS
from memctl.ingest.cutting import cut, cut_windows
from memctl.ingest.model import Conversation, Turn

# Blank lines between paragraphs. Only ASCII spaces after them are taken (bytes' \s): other spaces open the next
# paragraph, which changes none of its pieces (a space is no token) and no turn (turns are stripped).
BLANK_LINES = re.compile(rb"\n[ \t]*\n\s*")
NON_SPACE = re.compile(r"\S")  # re's \s is what str.strip strips
WINDOW_BYTES = 4 << 20  # a paragraph above this is decoded and cut a window at a time


def parse(text: str, name: str, max_tokens: int = MAX_TOKENS) -> list[Conversation]:
    return parse_bytes(text.encode("utf-8"), name, "strict", max_tokens)


def parse_bytes(data: bytes, name: str, errors: str = "strict", max_tokens: int = MAX_TOKENS) -> list[Conversation]:
    """The turns of UTF-8 `data` (no byte order mark, newlines normalized to \\n: decode.normalized_bytes),
    decoded with `errors`."""
    turns = []
    lines = _LineCounter()
    for start, end in _paragraphs(data):
        lines.skip_to_paragraph(data, start)
        for index, (_, piece) in enumerate(_pieces(data, start, end, errors, max_tokens)):
            stripped = piece.strip()
            if stripped:
                position = NON_SPACE.search(piece).start()
                turns.append(Turn(name, None, stripped, None, _source_id(name, *lines.at(piece, position), index)))
            lines.past(piece)
        lines.byte = end
    return [Conversation(name, turns)] if turns else []


def _paragraphs(data: bytes):
    position = 0
    for match in BLANK_LINES.finditer(data):
        yield position, match.start()
        position = match.end()
    yield position, len(data)


def _pieces(data: bytes, start: int, end: int, errors: str, max_tokens: int):
    """(character offset in the paragraph, text) of the consecutive pieces of the paragraph data[start:end]."""
    if end - start <= WINDOW_BYTES:
        text = data[start:end].decode("utf-8", errors)
        return ((piece_start, text[piece_start:piece_end]) for piece_start, piece_end in
                cut(text, 0, len(text), max_tokens))
    return cut_windows(lambda: _windows(data, start, end, errors), max_tokens)


def _windows(data: bytes, start: int, end: int, errors: str):
    """data[start:end] decoded WINDOW_BYTES at a time (a character split by a window's edge goes to the next)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    view = memoryview(data)
    for offset in range(start, end, WINDOW_BYTES):
        stop = min(offset + WINDOW_BYTES, end)
        yield decoder.decode(view[offset:stop], final=stop == end)


class _LineCounter:
    """Line and column of the turns' first characters, from the pieces read in order (each newline counted
    once: asking from the start each time made a long paragraph's pieces quadratic)."""

    def __init__(self):
        self.byte = 0  # end of the paragraph read last (bytes)
        self.line = 1
        self.column_base = 0  # characters of the current line before the current piece

    def skip_to_paragraph(self, data: bytes, start: int) -> None:
        """Count the lines between the paragraph read last and the one at byte `start`; what precedes it on
        its line is ASCII spaces (BLANK_LINES), a character per byte."""
        newlines = data.count(b"\n", self.byte, start)
        if newlines:
            self.line += newlines
            self.column_base = start - data.rfind(b"\n", self.byte, start) - 1
        else:
            self.column_base += start - self.byte

    def at(self, piece: str, position: int) -> tuple[int, int]:
        """(line, column), both from 1, of character `position` of `piece`."""
        newlines = piece.count("\n", 0, position)
        if newlines:
            return self.line + newlines, position - piece.rfind("\n", 0, position)
        return self.line, self.column_base + position + 1

    def past(self, piece: str) -> None:
        """Count `piece`'s lines: the next piece follows it."""
        newlines = piece.count("\n")
        if newlines:
            self.line += newlines
            self.column_base = len(piece) - piece.rfind("\n") - 1
        else:
            self.column_base += len(piece)


def _source_id(name: str, line: int, column: int, index: int) -> str:
    if index == 0:
        return f"{name}#{line}"
    return f"{name}#{line}:{column}"
