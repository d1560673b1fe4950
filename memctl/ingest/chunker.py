"""Group a conversation's consecutive turns into RawChunks of about 1-2k tokens, with exact byte spans.

Token estimate: memctl.language.token_estimate's (a rough guide for chunk sizes, not a budget), counted for
all the turns of an ingest at once with numpy.

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

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter, itemgetter, ne

from memctl.ingest.model import Conversation
from memctl.language.token_estimate import CJK_RANGES, estimate_tokens, text_counts, tokens_of

MIN_TOKENS = 1000
MAX_TOKENS = 2000

TEXT, SPEAKER, TS, SOURCE_ID, EXTRA, SESSION, ATTACHMENTS, REPLY_TO = map(attrgetter, (
    "text", "speaker", "ts", "source_id", "extra", "session", "attachments", "reply_to"))
PREFIX, SUFFIX = itemgetter(0), itemgetter(1)


def language_of(characters: int, words: int) -> str | None:
    """A script-level guess for chunk metadata: "zh" when CJK characters outnumber other words, else "en"."""
    if characters == 0 and words == 0:
        return None
    return "zh" if characters >= words else "en"


def guess_language(text: str) -> str | None:
    return language_of(*text_counts(text))


def render_speaker(speaker: str | None) -> tuple[str, str]:
    """(prefix, suffix) around the text of a turn by `speaker` in a chunk."""
    if speaker is None:
        return "", "\n\n"
    return f"{speaker}: ", "\n"


@dataclass(slots=True)
class Chunk:
    """Consecutive turns of one conversation rendered into `data`; turn i's text is the bytes
    [offsets[i], offsets[i] + lengths[i]) of it. speakers, ts, source_ids, extras, sessions, attachments and
    reply_to are the turns' fields as columns (what the store's turn record is built from). A chunk keeps no
    Turn: their texts would be a second copy of the input until the batch is written."""

    conv_id: str
    data: bytes
    offsets: list[int]
    lengths: list[int]
    characters: int = 0  # CJK characters and other words of the turns' texts, for the language guess
    words: int = 0
    speakers: list = field(default_factory=list)
    ts: list = field(default_factory=list)
    source_ids: list = field(default_factory=list)
    extras: list = field(default_factory=list)
    sessions: list = field(default_factory=list)
    attachments: list = field(default_factory=list)
    reply_to: list = field(default_factory=list)

    def columns(self) -> tuple:
        """The turn columns engine.raw.TurnColumns.many takes, in its order."""
        return (self.speakers, self.ts, self.source_ids, self.offsets, self.lengths, self.extras, self.sessions,
                self.attachments, self.reply_to)

    def texts(self) -> list[str]:
        """The turns' texts, read back from `data`."""
        return [self.data[offset: offset + length].decode() for offset, length in zip(self.offsets, self.lengths)]

    def meta(self) -> dict:
        """Chunk metadata beyond what the stored turns say (seed §3.0: the store derives conv_id, role, ts and
        source_id from them): a language guess from the turns' texts."""
        return {"lang": language_of(self.characters, self.words)}


def chunk_conversation(conversation: Conversation, min_tokens: int = MIN_TOKENS,
                       max_tokens: int = MAX_TOKENS) -> list[Chunk]:
    return chunk_all([conversation], min_tokens, max_tokens)


def chunk_all(conversations: list[Conversation], min_tokens: int = MIN_TOKENS,
              max_tokens: int = MAX_TOKENS) -> list[Chunk]:
    """Chunks of every conversation, in order. The per-turn arithmetic (counts, tokens, byte offsets) runs on
    numpy arrays over all turns at once: an ingest's chunking is otherwise a few microseconds of Python per
    turn, as much as storing the turns costs."""
    import numpy as np

    turns = [turn for conversation in conversations for turn in conversation.turns]
    if not turns:
        return []
    texts = list(map(TEXT, turns))
    speakers = list(map(SPEAKER, turns))
    renderings = {speaker: _rendering(speaker) for speaker in dict.fromkeys(speakers)}
    speaker_numbers = dict(zip(renderings, range(len(renderings))))
    turn_speakers = np.fromiter(map(speaker_numbers.__getitem__, speakers), dtype=np.int64, count=len(turns))
    prefix_tokens, prefix_bytes, suffix_bytes = np.array([rendering[2:] for rendering in renderings.values()],
                                                         dtype=np.int64)[turn_speakers].T
    characters, words, text_bytes = _text_counts_all(texts)
    tokens = np.maximum(1, prefix_tokens + tokens_of(characters, words))
    sessions = list(map(SESSION, turns))
    starts = _chunk_starts_all(conversations, sessions, tokens, min_tokens, max_tokens)
    pieces = [None] * (3 * len(turns))  # prefix, text, suffix of each turn: a chunk's text is a slice of it
    pieces[0::3] = map(PREFIX, map(renderings.__getitem__, speakers))
    pieces[1::3] = texts
    pieces[2::3] = map(SUFFIX, map(renderings.__getitem__, speakers))
    columns = (speakers, list(map(TS, turns)), list(map(SOURCE_ID, turns)), list(map(EXTRA, turns)), sessions,
               list(map(ATTACHMENTS, turns)), list(map(REPLY_TO, turns)))
    offsets, lengths = _text_offsets(starts, prefix_bytes, text_bytes, suffix_bytes)
    chunk_characters = np.add.reduceat(characters, starts).tolist()
    chunk_words = np.add.reduceat(words, starts).tolist()
    bounds = starts.tolist() + [len(turns)]
    return [Chunk(turns[start].conv_id, "".join(pieces[3 * start: 3 * end]).encode(), offsets[start:end], lengths[start:end], chunk_characters[index], chunk_words[index],
                  *(column[start:end] for column in columns))
            for index, (start, end) in enumerate(zip(bounds, bounds[1:]))]


def _text_offsets(starts, prefix_bytes, text_bytes, suffix_bytes) -> tuple[list[int], list[int]]:
    """Each turn's text span (offset in its chunk's bytes, length), from the chunks' first turns and the
    rendered bytes of every turn."""
    import numpy as np

    turn_bytes = prefix_bytes + text_bytes + suffix_bytes
    turn_starts = np.cumsum(turn_bytes) - turn_bytes
    chunk_sizes = np.diff(np.append(starts, len(turn_bytes)))
    offsets = turn_starts + prefix_bytes - np.repeat(turn_starts[starts], chunk_sizes)
    return offsets.tolist(), text_bytes.tolist()


def _rendering(speaker: str | None) -> tuple[str, str, int, int, int]:
    """(prefix, suffix, prefix tokens, prefix bytes, suffix bytes) of a speaker's turns."""
    prefix, suffix = render_speaker(speaker)
    return prefix, suffix, estimate_tokens(prefix), len(prefix.encode()), len(suffix.encode())


def _chunk_starts_all(conversations: list[Conversation], sessions: list, tokens, min_tokens: int,
                      max_tokens: int):
    """Index of each chunk's first turn (a numpy array): conversation by conversation, a chunk closes before a
    turn that would take it past max_tokens, and before a session that would not fit in it whole once it holds
    min_tokens. A session opens at a conversation's first turn and wherever the session value changes.

    Chunk by chunk rather than turn by turn: with the running token sums, the turn that would overflow a chunk
    is found by bisection, and only the sessions opening inside it are looked at."""
    import numpy as np

    opens = np.fromiter(map(ne, sessions[1:], sessions[:-1]), dtype=bool, count=len(sessions) - 1)
    opens = np.concatenate(([True], opens))
    conversation_ends = np.cumsum([len(conversation.turns) for conversation in conversations])
    conversation_ends = conversation_ends[conversation_ends > 0]
    # Rising (np.unique would import numpy.ma, 8 ms of a cold ingest): an empty conversation repeats an end.
    conversation_ends = conversation_ends[np.diff(conversation_ends, prepend=0) > 0]
    opens[conversation_ends[:-1]] = True
    openings = np.flatnonzero(opens)
    sums = np.concatenate(([0], np.cumsum(tokens)))
    session_ends = sums[openings] + np.add.reduceat(tokens, openings)  # a session's last running sum
    return np.array(_chunk_starts(sums.tolist(), openings.tolist(), session_ends.tolist(),
                                  conversation_ends.tolist(), min_tokens, max_tokens), dtype=np.int64)


def _chunk_starts(sums: list[int], openings: list[int], session_ends: list[int], conversation_ends: list[int],
                  min_tokens: int, max_tokens: int) -> list[int]:
    """sums[i]: tokens of the turns before turn i (one more entry than turns); openings: the turns that open a
    session, with session_ends the running sum at the end of each."""
    starts = []
    start = 0
    for conversation_end in conversation_ends:
        while start < conversation_end:
            starts.append(start)
            base = sums[start]
            # The first turn that would take the chunk past max_tokens (not the chunk's own first turn).
            end = bisect_right(sums, base + max_tokens, start + 2, conversation_end + 1) - 1
            # A session opening after min_tokens that would not fit whole closes the chunk before it.
            opening = bisect_left(openings, bisect_left(sums, base + min_tokens, start + 1))
            while opening < len(openings) and openings[opening] < end:
                if session_ends[opening] - base > max_tokens:
                    end = openings[opening]
                    break
                opening += 1
            start = end
    return starts


# Code points str.split() treats as spaces (str.isspace): fixed by the Unicode version, checked by a test.
SPACE_CODE_POINTS = (*range(0x09, 0x0E), *range(0x1C, 0x21), 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028,
                     0x2029, 0x202F, 0x205F, 0x3000)
WORD_CHARACTER, SPACE_CHARACTER, CJK_CHARACTER = 0, 1, 2
COUNT_BLOCK_CHARACTERS = 1 << 17  # one counting pass: its arrays stay in the CPU caches (measured fastest)
PLANE_SIZE = 0x10000
ASTRAL_CJK_RANGES = tuple((first, last) for first, last in CJK_RANGES if first >= PLANE_SIZE)


@lru_cache(maxsize=1)
def _plane_classes():
    """WORD_CHARACTER, SPACE_CHARACTER or CJK_CHARACTER for every code point of the Basic Multilingual Plane
    (64 KiB: a table of every code point, 1.1 MB, cost a new process half a millisecond of page faults).
    Above it there is no space, and CJK only in ASTRAL_CJK_RANGES."""
    import numpy as np

    classes = np.full(PLANE_SIZE, WORD_CHARACTER, dtype=np.uint8)
    classes[list(SPACE_CODE_POINTS)] = SPACE_CHARACTER
    for first, last in CJK_RANGES:
        classes[first: last + 1] = CJK_CHARACTER  # empty for an astral range
    return classes


def _character_classes_of(codes, astral):
    """The class of every code point in `codes` (uint32); `astral` marks those above the plane."""
    import numpy as np

    classes = np.take(_plane_classes(), codes, mode="clip")  # every astral code point as the plane's last: a word
    if astral.any():
        positions = np.flatnonzero(astral)
        astral_codes = codes[positions]
        cjk = np.zeros(len(positions), dtype=bool)
        for first, last in ASTRAL_CJK_RANGES:
            cjk |= (astral_codes >= first) & (astral_codes <= last)
        classes[positions[cjk]] = CJK_CHARACTER
    return classes


def character_classes(text: str):
    """WORD_CHARACTER, SPACE_CHARACTER or CJK_CHARACTER of every character of `text` (a numpy uint8 array),
    as text_counts tells them apart: CJK characters as CJK_RUN finds them, spaces as str.split splits on."""
    import numpy as np

    if text.isascii():  # no CJK character: a word or a space, one byte each
        words = np.frombuffer(text.encode("ascii").translate(_ascii_words()), dtype=np.uint8)
        return np.subtract(SPACE_CHARACTER, words, dtype=np.uint8)  # 1 - word: WORD_CHARACTER is 0
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)  # keeps trailing NULs
    return _character_classes_of(codes, codes >= PLANE_SIZE)


def _text_counts_all(texts: list[str]):
    """text_counts of every text, and its UTF-8 bytes, as three numpy int64 arrays. ASCII texts and the others
    are counted apart: one curly quote would otherwise send a whole block of English down the 32-bit code point
    path, four times the bytes to class (LoCoMo: 1% of its turns are not ASCII)."""
    import numpy as np

    ascii = np.fromiter(map(str.isascii, texts), dtype=bool, count=len(texts))
    if ascii.all() or not ascii.any():
        return _text_counts_blocks(texts)
    counts = np.empty((3, len(texts)), dtype=np.int64)
    for group in (np.flatnonzero(ascii), np.flatnonzero(~ascii)):
        counts[:, group] = _text_counts_blocks(list(map(texts.__getitem__, group.tolist())))
    return tuple(counts)


def _text_counts_blocks(texts: list[str]):
    """_text_counts_all in blocks of about COUNT_BLOCK_CHARACTERS characters."""
    import numpy as np

    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    ends = np.cumsum(lengths + 1)
    cuts = np.searchsorted(ends, np.arange(COUNT_BLOCK_CHARACTERS, ends[-1], COUNT_BLOCK_CHARACTERS)).tolist()
    bounds = [0, *dict.fromkeys(cut + 1 for cut in cuts if cut + 1 < len(texts)), len(texts)]
    results = [_text_counts_block(texts[start:end], lengths[start:end]) for start, end in zip(bounds, bounds[1:])]
    return tuple(np.concatenate(column) for column in zip(*results))


def _text_counts_block(texts: list[str], lengths):
    """The texts joined by newlines (a space: no word or CJK run crosses from one text into the next), classed
    character by character; each text's counts are sums over its span, its newline included.

    A command counts one input, so its first pass is the one that matters: the steps avoid what costs most
    then, fresh temporaries eight bytes an item (an index array for numpy's take, an int64 copy for a sum),
    which a new process pays for in page faults, and a first use of the UTF-32 codec (an import)."""
    import numpy as np

    joined = "\n".join(texts) + "\n"
    starts = np.zeros(len(texts), dtype=np.int64)
    np.cumsum(lengths[:-1] + 1, out=starts[1:])
    word_starts = np.empty(len(joined), dtype=bool)  # first the scratch of the ASCII path's check
    if joined.isascii():  # no CJK character, one byte each
        encoded = joined.encode("ascii")
        data = np.frombuffer(encoded, dtype=np.uint8)
        word = data > 0x20  # every ASCII space is at most 0x20; below it, only control characters are words
        low = data[np.flatnonzero(np.less(data, 0x1C, out=word_starts))]  # newlines mostly: few
        if ((low < 0x09) | (low > 0x0D)).any():  # a control character that is no space (0x00-08, 0x0E-1B)
            word = np.frombuffer(encoded.translate(_ascii_words()), dtype=bool)
        characters, text_bytes = np.zeros(len(texts), dtype=np.int64), lengths
    else:
        codes = np.array([joined]).view(np.uint32)  # code points, as numpy stores str
        astral = codes >= PLANE_SIZE
        widths = (codes >= 0x80).view(np.uint8) + (codes >= 0x800) + astral  # UTF-8 bytes - 1
        text_bytes = np.add.reduceat(widths, starts, dtype=np.int64) + lengths
        classes = _character_classes_of(codes, astral)
        word = classes == WORD_CHARACTER
        characters = np.add.reduceat(classes == CJK_CHARACTER, starts, dtype=np.int64)
    word_starts[0] = word[0]
    np.greater(word[1:], word[:-1], out=word_starts[1:])  # a word character after a space
    # Every text holds at least its newline, so the starts rise strictly: no empty reduceat range.
    return characters, np.add.reduceat(word_starts.view(np.uint8), starts, dtype=np.int32).astype(np.int64), \
        text_bytes


@lru_cache(maxsize=1)
def _ascii_words() -> bytes:
    """bytes.translate table: 1 for an ASCII byte that is part of a word, 0 for a space."""
    return bytes(int(code >= 0x80 or _plane_classes()[code] == WORD_CHARACTER) for code in range(256))
