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
    chunks: list[Chunk] = []
    rendered: dict = {}  # speaker → (prefix bytes, suffix bytes, prefix tokens)
    pieces: list[bytes] = []
    turns: list[Turn] = []
    offsets: list[int] = []
    lengths: list[int] = []
    offset = tokens_so_far = characters_so_far = words_so_far = 0
    counts = _turn_counts(conversation.turns, rendered)
    for index, turn in enumerate(conversation.turns):
        tokens, characters, words, session_tokens = counts[index]
        if turns and (tokens_so_far + tokens > max_tokens or (
                session_tokens and tokens_so_far >= min_tokens and tokens_so_far + session_tokens > max_tokens)):
            chunks.append(Chunk(conversation.conv_id, b"".join(pieces), turns, offsets, lengths,
                                characters_so_far, words_so_far))
            pieces, turns, offsets, lengths = [], [], [], []
            offset = tokens_so_far = characters_so_far = words_so_far = 0
        prefix, suffix, _ = rendered[turn.speaker]
        text = turn.text.encode()
        offset += len(prefix)
        offsets.append(offset)
        lengths.append(len(text))
        offset += len(text) + len(suffix)
        pieces += (prefix, text, suffix)
        turns.append(turn)
        tokens_so_far += tokens
        characters_so_far += characters
        words_so_far += words
    if turns:
        chunks.append(Chunk(conversation.conv_id, b"".join(pieces), turns, offsets, lengths, characters_so_far,
                            words_so_far))
    return chunks


def _turn_counts(turns: list[Turn], rendered: dict) -> list[list[int]]:
    """[tokens, CJK characters, other words, the tokens of the session it opens (0 inside a session)] per turn;
    fills `rendered` with each speaker's prefix and suffix bytes and prefix tokens."""
    counts = []
    opening = None  # the counts of the turn that opened the current session
    session = object()
    for turn in turns:
        if turn.speaker not in rendered:
            prefix, suffix = render(turn)
            rendered[turn.speaker] = (prefix.encode(), suffix.encode(), estimate_tokens(prefix))
        characters, words = text_counts(turn.text)
        tokens = max(1, rendered[turn.speaker][2] + tokens_of(characters, words))
        count = [tokens, characters, words, 0]
        if turn.session != session or opening is None:
            opening, session = count, turn.session
        opening[3] += tokens
        counts.append(count)
    return counts


def chunk_all(conversations: list[Conversation], min_tokens: int = MIN_TOKENS,
              max_tokens: int = MAX_TOKENS) -> list[Chunk]:
    return [chunk for conversation in conversations
            for chunk in chunk_conversation(conversation, min_tokens, max_tokens)]
