"""The token estimate: how ingest sizes chunks and recall packs cards into a budget, with no model tokenizer.

Every CJK character (Han, kana, Hangul, CJK and full-width punctuation) counts 1 token, every other run of
non-space characters (a word with its punctuation, a number, an emoji) counts 1.3 tokens, rounded up over the
text. memctl.ingest.chunker counts many texts at once with numpy by the same rule (checked by its tests).
"""

from __future__ import annotations

import re

CJK_RANGES = ((0x3001, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xAC00, 0xD7AF),
              (0xFF00, 0xFFEF), (0x20000, 0x3134F))
CJK_CLASS = "".join(f"{chr(first)}-{chr(last)}" for first, last in CJK_RANGES)
CJK_RUN = re.compile(f"[{CJK_CLASS}]+")


def text_counts(text: str) -> tuple[int, int]:
    """(CJK characters, other words) of `text`: with each CJK run replaced by one space (two C calls, no
    Python loop over the runs), the characters are the length lost plus one per run, the words what split()
    finds (re's \\s and str.split agree on what is a space)."""
    if text.isascii():
        return 0, len(text.split())
    spaced, runs = CJK_RUN.subn(" ", text)
    return len(text) - len(spaced) + runs, len(spaced.split())


def tokens_of(characters: int, words: int) -> int:
    return characters + (words * 13 + 9) // 10


def estimate_tokens(text: str) -> int:
    return tokens_of(*text_counts(text))
