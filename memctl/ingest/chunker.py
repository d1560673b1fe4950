"""Group a conversation's consecutive turns into RawChunks of about 1-2k tokens, with exact byte spans.

Token estimate (no tokenizer is loaded at ingest; a rough guide for chunk sizes, not a budget): every CJK
character (Han, kana, Hangul, CJK and full-width punctuation) counts 1 token, every other run of non-space
characters (a word with its punctuation, a number, an emoji) counts 1.3 tokens, rounded up over the text.

Rendering (stable: chunk bytes, hence raw ids and deduplication, depend on it): a turn with a speaker is
`<speaker>: <text>\\n`, a turn without one (plain text paragraphs) is `<text>\\n\\n`. A turn's span (its raw_ref)
covers exactly the UTF-8 bytes of its `text`, so `raw cat ID --offset --length` prints the turn's text.

Boundaries: a chunk closes before a turn that would take it past max_tokens, and at a session boundary once it
holds min_tokens (defaults MIN_TOKENS, MAX_TOKENS; config ingest.chunk_min_tokens / chunk_max_tokens; changing
them moves chunk boundaries, so inputs ingested before and after no longer deduplicate); short sessions
therefore share a chunk (one file per short session would be thousands of tiny blobs that zstd cannot
compress). A single turn above max_tokens gets a chunk of its own. Chunks never span two
conversations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memctl.ingest.model import Conversation, Turn

MIN_TOKENS = 1000
MAX_TOKENS = 2000

CJK_CLASS = "\u3001-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff00-\uffef\U00020000-\U0003134f"
# One pass per text: a CJK run (group 1, each character a token) or another word (group 1 empty).
CJK_RUN_OR_WORD = re.compile(f"([{CJK_CLASS}]+)|[^\\s{CJK_CLASS}]+")


def text_counts(text: str) -> tuple[int, int]:
    """(CJK characters, other words) of `text`."""
    if text.isascii():
        return 0, len(text.split())
    characters = words = 0
    for run in CJK_RUN_OR_WORD.findall(text):
        if run:
            characters += len(run)
        else:
            words += 1
    return characters, words


def tokens_of(characters: int, words: int) -> int:
    return characters + (words * 13 + 9) // 10


def estimate_tokens(text: str) -> int:
    return tokens_of(*text_counts(text))


def language_of(characters: int, words: int) -> str | None:
    """A script-level guess for chunk metadata: "zh" when CJK characters outnumber other words, else "en"."""
    if characters == 0 and words == 0:
        return None
    return "zh" if characters >= words else "en"


def guess_language(text: str) -> str | None:
    return language_of(*text_counts(text))


def render(turn: Turn) -> tuple[str, str]:
    """(prefix, suffix) around the turn's text in a chunk."""
    if turn.speaker is None:
        return "", "\n\n"
    return f"{turn.speaker}: ", "\n"


@dataclass(slots=True)
class Span:
    turn: Turn
    offset: int
    length: int


@dataclass(slots=True)
class Chunk:
    conv_id: str
    data: bytes
    spans: list[Span]
    characters: int = 0  # CJK characters and other words of the turns' texts, for the language guess
    words: int = 0

    def meta(self) -> dict:
        """Chunk metadata (seed §3.0): the conversation, its one speaker if it has only one, the first turn's
        time, a language guess from the turns' texts and the range of source ids it holds."""
        turns = [span.turn for span in self.spans]
        speakers = {turn.speaker for turn in turns}
        return {
            "conv_id": self.conv_id,
            "role": speakers.pop() if len(speakers) == 1 else None,
            "ts": next((turn.ts for turn in turns if turn.ts), None),
            "lang": language_of(self.characters, self.words),
            "source_id": _source_range(turns[0].source_id, turns[-1].source_id),
        }


def _source_range(first: str, last: str) -> str:
    """"D1:1..D2:7"; positions in the same file share its name: "notes.txt#1..40"."""
    if first == last:
        return first
    first_file, hash_sign, _ = first.rpartition("#")
    last_file, _, last_line = last.rpartition("#")
    if hash_sign and first_file == last_file:
        return f"{first}..{last_line}"
    return f"{first}..{last}"


def chunk_conversation(conversation: Conversation, min_tokens: int = MIN_TOKENS,
                       max_tokens: int = MAX_TOKENS) -> list[Chunk]:
    chunks: list[Chunk] = []
    group: list[tuple[Turn, int, int]] = []  # (turn, CJK characters, other words)
    group_tokens = 0
    prefix_tokens: dict = {}
    for turn in conversation.turns:
        if turn.speaker not in prefix_tokens:
            prefix_tokens[turn.speaker] = estimate_tokens(render(turn)[0])
        characters, words = text_counts(turn.text)
        tokens = max(1, prefix_tokens[turn.speaker] + tokens_of(characters, words))
        session_changed = bool(group) and turn.session != group[-1][0].session
        if group and (group_tokens + tokens > max_tokens or (session_changed and group_tokens >= min_tokens)):
            chunks.append(_build(conversation.conv_id, group))
            group, group_tokens = [], 0
        group.append((turn, characters, words))
        group_tokens += tokens
    if group:
        chunks.append(_build(conversation.conv_id, group))
    return chunks


def chunk_all(conversations: list[Conversation], min_tokens: int = MIN_TOKENS,
              max_tokens: int = MAX_TOKENS) -> list[Chunk]:
    return [chunk for conversation in conversations
            for chunk in chunk_conversation(conversation, min_tokens, max_tokens)]


def _build(conv_id: str, group: list[tuple[Turn, int, int]]) -> Chunk:
    pieces: list[bytes] = []
    spans: list[Span] = []
    offset = 0
    rendered: dict = {}  # speaker → (prefix, suffix) bytes
    for turn, _, _ in group:
        if turn.speaker not in rendered:
            rendered[turn.speaker] = tuple(part.encode() for part in render(turn))
        prefix, suffix = rendered[turn.speaker]
        text = turn.text.encode()
        offset += len(prefix)
        spans.append(Span(turn, offset, len(text)))
        offset += len(text) + len(suffix)
        pieces += (prefix, text, suffix)
    return Chunk(conv_id, b"".join(pieces), spans, sum(item[1] for item in group), sum(item[2] for item in group))
