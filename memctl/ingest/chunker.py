"""Group a conversation's consecutive turns into RawChunks of about 1-2k tokens, with exact byte spans.

Token estimate (no tokenizer is loaded at ingest; a rough guide for chunk sizes, not a budget): every CJK
character (Han, kana, Hangul, CJK and full-width punctuation) counts 1 token, every other run of non-space
characters (a word with its punctuation, a number, an emoji) counts 1.3 tokens, rounded up over the text.

Rendering (stable: chunk bytes, hence raw ids and deduplication, depend on it): a turn with a speaker is
`<speaker>: <text>\\n`, a turn without one (plain text paragraphs) is `<text>\\n\\n`. A turn's span (its raw_ref)
covers exactly the UTF-8 bytes of its `text`, so `raw cat ID --offset --length` prints the turn's text.

Boundaries: a chunk closes before a turn that would take it past max_tokens, and before a session that would
not fit in it whole once it holds min_tokens (defaults MIN_TOKENS, MAX_TOKENS; config ingest.chunk_min_tokens /
chunk_max_tokens; changing them moves chunk boundaries, so inputs ingested before and after no longer
deduplicate); short sessions therefore share a chunk, as many as fit (one file per short session would be
thousands of tiny blobs that zstd cannot compress, and every blob file costs a file creation). A single turn
above max_tokens gets a chunk of its own. Chunks never span two conversations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memctl.ingest.model import Conversation, Turn

MIN_TOKENS = 1000
MAX_TOKENS = 2000

CJK_CLASS = "\u3001-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff00-\uffef\U00020000-\U0003134f"
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
class Chunk:
    """Consecutive turns of one conversation rendered into `data`; turn i's text is the bytes
    [offsets[i], offsets[i] + lengths[i]) of it."""

    conv_id: str
    data: bytes
    turns: list[Turn]
    offsets: list[int]
    lengths: list[int]
    characters: int = 0  # CJK characters and other words of the turns' texts, for the language guess
    words: int = 0

    def meta(self) -> dict:
        """Chunk metadata beyond what the stored turns say (seed §3.0: the store derives conv_id, role, ts and
        source_id from them): a language guess from the turns' texts."""
        return {"lang": language_of(self.characters, self.words)}


def chunk_conversation(conversation: Conversation, min_tokens: int = MIN_TOKENS,
                       max_tokens: int = MAX_TOKENS) -> list[Chunk]:
    turns = conversation.turns
    rendered: dict = {}  # speaker → (prefix bytes, suffix bytes, prefix tokens)
    tokens, characters, words, session_tokens = _turn_counts(turns, rendered)
    starts = _chunk_starts(tokens, session_tokens, min_tokens, max_tokens)
    return [_render_chunk(conversation.conv_id, turns[start:end], rendered, sum(characters[start:end]),
                          sum(words[start:end]))
            for start, end in zip(starts, [*starts[1:], len(turns)])]


def _chunk_starts(tokens: list[int], session_tokens: list[int], min_tokens: int, max_tokens: int) -> list[int]:
    """Index of each chunk's first turn."""
    starts = [0] if tokens else []
    so_far = 0
    for index, (turn_tokens, session) in enumerate(zip(tokens, session_tokens)):
        if so_far and (so_far + turn_tokens > max_tokens or (
                session and so_far >= min_tokens and so_far + session > max_tokens)):
            starts.append(index)
            so_far = 0
        so_far += turn_tokens
    return starts


def _render_chunk(conv_id: str, turns: list[Turn], rendered: dict, characters: int, words: int) -> Chunk:
    pieces: list[bytes] = []
    offsets: list[int] = []
    lengths: list[int] = []
    offset = 0
    for turn in turns:
        prefix, suffix, _ = rendered[turn.speaker]
        text = turn.text.encode()
        offset += len(prefix)
        offsets.append(offset)
        lengths.append(len(text))
        offset += len(text) + len(suffix)
        pieces += (prefix, text, suffix)
    return Chunk(conv_id, b"".join(pieces), turns, offsets, lengths, characters, words)


def _turn_counts(turns: list[Turn], rendered: dict) -> tuple[list[int], list[int], list[int], list[int]]:
    """Per turn: tokens, CJK characters, other words, and the tokens of the session it opens (0 inside a
    session); fills `rendered` with each speaker's prefix and suffix bytes and prefix tokens."""
    tokens, characters, words, session_tokens = [], [], [], []
    opening = -1  # index of the turn that opened the current session
    session = object()
    for index, turn in enumerate(turns):
        speaker = turn.speaker
        if speaker not in rendered:
            prefix, suffix = render(turn)
            rendered[speaker] = (prefix.encode(), suffix.encode(), estimate_tokens(prefix))
        turn_characters, turn_words = text_counts(turn.text)
        turn_tokens = max(1, rendered[speaker][2] + tokens_of(turn_characters, turn_words))
        tokens.append(turn_tokens)
        characters.append(turn_characters)
        words.append(turn_words)
        session_tokens.append(0)
        if turn.session != session or opening < 0:
            opening, session = index, turn.session
        session_tokens[opening] += turn_tokens
    return tokens, characters, words, session_tokens


def chunk_all(conversations: list[Conversation], min_tokens: int = MIN_TOKENS,
              max_tokens: int = MAX_TOKENS) -> list[Chunk]:
    return [chunk for conversation in conversations
            for chunk in chunk_conversation(conversation, min_tokens, max_tokens)]
