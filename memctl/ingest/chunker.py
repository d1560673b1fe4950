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


# --- counting every turn at once ------------------------------------------------------------------------------

COUNT_SLAB_CHARACTERS = 1 << 20  # characters counted per vectorized pass (bounds its temporary arrays)
OTHER, SPACE, CJK = 0, 1, 2
_classes = None


def _class_table():
    """OTHER / SPACE / CJK of every BMP code point: CJK_CLASS's ranges, and str.isspace (what str.split splits
    on; no space lies above U+3000)."""
    global _classes
    if _classes is None:
        import numpy

        table = numpy.zeros(0x10000, numpy.uint8)
        table[[code for code in range(0x3001) if chr(code).isspace()]] = SPACE
        for low, high in BMP_CJK_RANGES:
            table[low: high + 1] = CJK
        _classes = table
    return _classes


BMP_CJK_RANGES = ((0x3001, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xAC00, 0xD7AF),
                  (0xFF00, 0xFFEF))
ASTRAL_CJK_RANGE = (0x20000, 0x3134F)


def turn_counts(texts: list[str]) -> tuple[list[int], list[int], list[int]]:
    """(CJK characters, other words, UTF-8 bytes) of each text, as text_counts and len(text.encode()) give
    them, in vectorized passes over the code points of many texts at once (per-turn calls cost a chunked
    ingest more than its compression)."""
    characters: list[int] = []
    words: list[int] = []
    sizes: list[int] = []
    for slab in _slabs(texts):
        for column, values in zip((characters, words, sizes), _count_slab(slab)):
            column += values
    return characters, words, sizes


def _slabs(texts: list[str]):
    start, total = 0, 0
    for index, text in enumerate(texts):
        total += len(text)
        if total >= COUNT_SLAB_CHARACTERS:
            yield texts[start: index + 1]
            start, total = index + 1, 0
    if start < len(texts):
        yield texts[start:]


def _count_slab(texts: list[str]) -> tuple[list[int], list[int], list[int]]:
    import numpy

    joined = "".join(texts)
    lengths = numpy.fromiter(map(len, texts), numpy.int64, len(texts))
    ends = numpy.cumsum(lengths)
    starts = ends - lengths

    def per_text(values):
        running = numpy.concatenate(([0], numpy.cumsum(values, dtype=numpy.int64)))
        return (running[ends] - running[starts]).tolist()

    if joined.isascii():
        codes = numpy.frombuffer(joined.encode("ascii"), numpy.uint8)
        classes = _class_table()[codes]
        sizes = lengths.tolist()
    else:
        codes = numpy.frombuffer(joined.encode("utf-32-le"), numpy.uint32)
        classes = _class_table()[numpy.minimum(codes, 0xFFFF)]
        astral = codes > 0xFFFF
        if astral.any():
            astral_codes = codes[astral]
            low, high = ASTRAL_CJK_RANGE
            classes[astral] = numpy.where((astral_codes >= low) & (astral_codes <= high), CJK, OTHER)
        sizes = per_text(1 + (codes >= 0x80).astype(numpy.uint8) + (codes >= 0x800) + (codes >= 0x10000))
    other = classes == OTHER
    word_starts = other.copy()  # a word starts at an OTHER character after a space, a CJK one or a text start
    word_starts[1:] &= ~other[:-1]
    opened = starts[lengths > 0]
    word_starts[opened] = other[opened]
    return per_text(classes == CJK), per_text(word_starts), sizes


# --- chunking -------------------------------------------------------------------------------------------------


def chunk_conversation(conversation: Conversation, min_tokens: int = MIN_TOKENS,
                       max_tokens: int = MAX_TOKENS) -> list[Chunk]:
    return chunk_all([conversation], min_tokens, max_tokens)


def chunk_all(conversations: list[Conversation], min_tokens: int = MIN_TOKENS,
              max_tokens: int = MAX_TOKENS) -> list[Chunk]:
    characters, words, sizes = turn_counts([turn.text for conversation in conversations
                                            for turn in conversation.turns])
    chunks = []
    start = 0
    for conversation in conversations:
        end = start + len(conversation.turns)
        chunks += _chunk_turns(conversation, TurnCounts(characters[start:end], words[start:end], sizes[start:end]),
                               min_tokens, max_tokens)
        start = end
    return chunks


@dataclass(slots=True)
class TurnCounts:
    """Per turn of one conversation: CJK characters, other words and UTF-8 bytes of its text."""

    characters: list[int]
    words: list[int]
    sizes: list[int]


@dataclass(slots=True)
class Rendering:
    """How one speaker's turns are rendered: prefix and suffix strings, their UTF-8 sizes, the prefix's tokens."""

    prefix: str
    suffix: str
    prefix_bytes: int
    suffix_bytes: int
    prefix_tokens: int


def _renderings(turns: list[Turn]) -> dict:
    renderings = {}
    for turn in turns:
        if turn.speaker not in renderings:
            prefix, suffix = render(turn)
            renderings[turn.speaker] = Rendering(prefix, suffix, len(prefix.encode()), len(suffix.encode()),
                                                 estimate_tokens(prefix))
    return renderings


def _chunk_turns(conversation: Conversation, counts: TurnCounts, min_tokens: int, max_tokens: int) -> list[Chunk]:
    turns = conversation.turns
    renderings = _renderings(turns)
    styles = [renderings[turn.speaker] for turn in turns]
    tokens = [max(1, style.prefix_tokens + characters + (words * 13 + 9) // 10)
              for style, characters, words in zip(styles, counts.characters, counts.words)]
    starts = _chunk_starts(tokens, _session_tokens(turns, tokens), min_tokens, max_tokens)
    return [_render_chunk(conversation.conv_id, turns, styles, counts, start, end)
            for start, end in zip(starts, [*starts[1:], len(turns)])]


def _session_tokens(turns: list[Turn], tokens: list[int]) -> list[int]:
    """Per turn, the tokens of the session it opens (0 inside a session): a session is a run of consecutive
    turns with the same `session` value."""
    session_tokens = [0] * len(tokens)
    opening = 0
    previous = object()
    for index, turn in enumerate(turns):
        if turn.session != previous or index == 0:
            opening, previous = index, turn.session
        session_tokens[opening] += tokens[index]
    return session_tokens


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


def _render_chunk(conv_id: str, turns: list[Turn], styles: list[Rendering], counts: TurnCounts, start: int,
                  end: int) -> Chunk:
    """Turns [start, end) rendered as one string encoded once; spans from the counted UTF-8 sizes."""
    pieces: list[str] = []
    offsets: list[int] = []
    offset = 0
    lengths = counts.sizes[start:end]
    for turn, style, length in zip(turns[start:end], styles[start:end], lengths):
        offset += style.prefix_bytes
        offsets.append(offset)
        offset += length + style.suffix_bytes
        pieces += (style.prefix, turn.text, style.suffix)
    return Chunk(conv_id, "".join(pieces).encode(), turns[start:end], offsets, lengths,
                 sum(counts.characters[start:end]), sum(counts.words[start:end]))
