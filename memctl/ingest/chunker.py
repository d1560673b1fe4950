"""Group a conversation's consecutive turns into RawChunks of about 1-2k tokens, with exact byte spans.

Token estimate (no tokenizer is loaded at ingest; a rough guide for chunk sizes, not a budget): every CJK
character (Han, kana, Hangul, CJK and full-width punctuation) counts 1 token, every other run of non-space
characters (a word with its punctuation, a number, an emoji) counts 1.3 tokens, rounded up over the text.

Rendering (stable: chunk bytes, hence raw ids and deduplication, depend on it): a turn with a speaker is
`<speaker>: <text>\\n`, a turn without one (plain text paragraphs) is `<text>\\n\\n`. A turn's span (its raw_ref)
covers exactly the UTF-8 bytes of its `text`, so `raw cat ID --offset --length` prints the turn's text.

Boundaries: a chunk closes before a turn that would take it past max_tokens, and at a session boundary once it
holds min_tokens (defaults MIN_TOKENS, MAX_TOKENS; config ingest.chunk_min_tokens / chunk_max_tokens; changing
them moves chunk boundaries, so inputs ingested before and after no longer deduplicate); short sessions therefore share a chunk (one file per short session would be thousands of tiny
blobs that zstd cannot compress). A single turn above max_tokens gets a chunk of its own. Chunks never span two
conversations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memctl.ingest.model import Conversation, Turn

MIN_TOKENS = 1000
MAX_TOKENS = 2000

CJK_CLASS = "\u3001-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff00-\uffef\U00020000-\U0003134f"
CJK_CHARACTER = re.compile(f"[{CJK_CLASS}]")
OTHER_WORD = re.compile(f"[^\\s{CJK_CLASS}]+")


def estimate_tokens(text: str) -> int:
    cjk = len(CJK_CHARACTER.findall(text))
    words = len(OTHER_WORD.findall(text))
    return cjk + (words * 13 + 9) // 10


def guess_language(text: str) -> str | None:
    """A script-level guess for chunk metadata: "zh" when CJK characters outnumber other words, else "en"."""
    cjk = len(CJK_CHARACTER.findall(text))
    words = len(OTHER_WORD.findall(text))
    if cjk == 0 and words == 0:
        return None
    return "zh" if cjk >= words else "en"


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

    def meta(self) -> dict:
        """Chunk metadata (seed §3.0): the conversation, its one speaker if it has only one, the first turn's
        time, a language guess and the range of source ids it holds."""
        turns = [span.turn for span in self.spans]
        speakers = {turn.speaker for turn in turns}
        return {
            "conv_id": self.conv_id,
            "role": speakers.pop() if len(speakers) == 1 else None,
            "ts": next((turn.ts for turn in turns if turn.ts), None),
            "lang": guess_language(self.data.decode("utf-8")),
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
    group: list[Turn] = []
    group_tokens = 0
    for turn in conversation.turns:
        prefix, suffix = render(turn)
        tokens = max(1, estimate_tokens(prefix) + estimate_tokens(turn.text))
        session_changed = bool(group) and turn.session != group[-1].session
        if group and (group_tokens + tokens > max_tokens or (session_changed and group_tokens >= min_tokens)):
            chunks.append(_build(conversation.conv_id, group))
            group, group_tokens = [], 0
        group.append(turn)
        group_tokens += tokens
    if group:
        chunks.append(_build(conversation.conv_id, group))
    return chunks


def chunk_all(conversations: list[Conversation], min_tokens: int = MIN_TOKENS,
              max_tokens: int = MAX_TOKENS) -> list[Chunk]:
    return [chunk for conversation in conversations
            for chunk in chunk_conversation(conversation, min_tokens, max_tokens)]


def _build(conv_id: str, turns: list[Turn]) -> Chunk:
    pieces: list[bytes] = []
    spans: list[Span] = []
    offset = 0
    for turn in turns:
        prefix, suffix = render(turn)
        prefix_bytes, text_bytes, suffix_bytes = prefix.encode(), turn.text.encode(), suffix.encode()
        offset += len(prefix_bytes)
        spans.append(Span(turn, offset, len(text_bytes)))
        offset += len(text_bytes) + len(suffix_bytes)
        pieces += (prefix_bytes, text_bytes, suffix_bytes)
    return Chunk(conv_id, b"".join(pieces), spans)
