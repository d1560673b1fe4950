"""Chunks: about 1-2k estimated tokens, never across conversations, with exact byte spans per turn."""

import re

from hypothesis import given, settings, strategies as st

from memctl.ingest import chunker
from memctl.ingest.chunker import (
    MAX_TOKENS, MIN_TOKENS, SPACE_CODE_POINTS, chunk_all, chunk_conversation, guess_language)
from memctl.ingest.model import Conversation, Turn
from memctl.language.token_estimate import CJK_CLASS, estimate_tokens, text_counts


def conversation(texts, speaker="用户", session_of=lambda index: None, conv_id="c"):
    return Conversation(conv_id, [Turn(conv_id, speaker, text, None, f"t#{index}", session=session_of(index))
                                  for index, text in enumerate(texts)])


def test_token_estimate_counts_cjk_characters_and_latin_words():
    assert estimate_tokens("") == 0
    assert estimate_tokens("蓝牙打不开") == 5
    assert estimate_tokens("蓝牙打不开。") == 6  # CJK punctuation counts like a character
    assert estimate_tokens("the bluetooth switch") == 4  # 3 words × 1.3, rounded up
    assert estimate_tokens("Win11 的蓝牙") == 5  # one word (1.3 → 2) + three characters
    assert estimate_tokens("🎧 😀") == 3


def test_language_guess():
    assert guess_language("以后优先中文回答") == "zh"
    assert guess_language("Please answer in English") == "en"
    assert guess_language("  \n") is None


def test_rendering_and_spans_are_exact():
    [chunk] = chunk_conversation(Conversation("c", [
        Turn("c", "用户", "蓝牙打不开 😀", None, "a"),
        Turn("c", None, "a paragraph", None, "b"),
        Turn("c", "Bot", "", None, "c"),
    ]))
    assert chunk.data.decode() == "用户: 蓝牙打不开 😀\na paragraph\n\nBot: \n"
    assert list(zip(chunk.offsets, chunk.lengths)) == [(8, 20), (29, 11), (47, 0)]
    assert chunk.texts() == ["蓝牙打不开 😀", "a paragraph", ""]


def test_chunks_stay_within_the_maximum_and_keep_turn_order():
    texts = [f"turn {index}: " + "word " * 90 for index in range(200)]  # about 120 tokens each
    chunks = chunk_conversation(conversation(texts, speaker="A"))
    assert len(chunks) > 5
    assert [text for chunk in chunks for text in chunk.texts()] == texts
    for chunk in chunks:
        assert estimate_tokens(chunk.data.decode()) <= MAX_TOKENS + len(chunk.offsets)
    assert all(estimate_tokens(chunk.data.decode()) >= MIN_TOKENS for chunk in chunks[:-1])


def test_session_boundaries_close_a_chunk_only_once_it_is_big_enough():
    small = chunk_conversation(conversation(["短句。"] * 40, session_of=lambda index: str(index // 10)))
    assert len(small) == 1  # four short sessions share one chunk
    big_turn = "很" * 300
    big = chunk_conversation(conversation([big_turn] * 8, session_of=lambda index: str(index // 4)))
    assert [len(chunk.offsets) for chunk in big] == [4, 4]  # 1,200 tokens, and the next session would not fit
    sessions = "a" * 11 + "b" * 8 + "c" * 3  # turns of about 100 tokens: sessions of 1,100, 800 and 300
    packed = chunk_conversation(conversation(["很" * 95] * 22, session_of=lambda index: sessions[index]))
    assert [len(chunk.offsets) for chunk in packed] == [19, 3]  # b still fits whole after a; c does not


def test_an_oversized_turn_gets_its_own_chunk():
    texts = ["short", "字" * (MAX_TOKENS * 2), "short again"]
    chunks = chunk_conversation(conversation(texts))
    assert [len(chunk.offsets) for chunk in chunks] == [1, 1, 1]


def test_chunks_never_span_conversations():
    chunks = chunk_all([conversation(["a"], conv_id="one"), conversation(["b"], conv_id="two")])
    assert [(chunk.conv_id, len(chunk.offsets)) for chunk in chunks] == [("one", 1), ("two", 1)]


def test_chunk_meta():
    [chunk] = chunk_conversation(Conversation("c", [
        Turn("c", "用户", "我搬到深圳了", None, "D1:1"),
        Turn("c", "助手", "好的，记住了", "2024-07-10T08:05:00", "D1:2"),
    ]))
    assert chunk.meta() == {"lang": "zh"}  # the store derives the rest from the turns
    [single] = chunk_conversation(conversation(["hello there"], speaker="user"))
    assert single.meta() == {"lang": "en"}


turn_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.sampled_from(["用户", "助手", "Alice", "🤖 bot"])), turn_text),
                min_size=1, max_size=40))
def test_spans_round_trip_for_any_text(turns):
    source = Conversation("c", [Turn("c", speaker, text, None, f"#{index}")
                                for index, (speaker, text) in enumerate(turns)])
    chunks = chunk_conversation(source)
    assert [text for chunk in chunks for text in chunk.texts()] == [turn.text for turn in source.turns]
    assert [name for chunk in chunks for name in chunk.source_ids] == [turn.source_id for turn in source.turns]


def test_spans_round_trip_for_cjk_and_emoji_at_chunk_edges():
    texts = ["👨‍👩‍👧‍👦" * 50, "蓝牙" * 700, "𠮷野家 🍜", "é" * 3, "\u200d\ufe0f", "混合 mixed ✅"]
    chunks = chunk_conversation(conversation(texts * 5))
    assert len(chunks) > 1
    assert [text for chunk in chunks for text in chunk.texts()] == texts * 5


def reference_counts(text):
    """(CJK characters, other words) by the definition: each CJK character, each other run of non-spaces."""
    runs = re.findall(f"([{CJK_CLASS}]+)|[^\\s{CJK_CLASS}]+", text)
    return sum(len(run) for run in runs), sum(1 for run in runs if not run)


TEXT_PIECES = ["蓝牙", "。", "ｂ", "한", "\U00020001", "\u3000", "\u2003", " ", "\n", "Win11", "😀", "a", "-", "é",
               "\x01", "\x0b", "\x0e", "\x1c", "\x7f"]  # control characters: some are spaces, some not


@given(st.lists(st.sampled_from(TEXT_PIECES), max_size=12).map("".join))
def test_token_counts_match_their_definition(text):
    assert text_counts(text) == reference_counts(text)


def test_the_plane_table_and_the_astral_ranges_class_every_cjk_range():
    """chunker classes code points by a table of the Basic Multilingual Plane and by ASTRAL_CJK_RANGES above
    it: no range may straddle the two."""
    assert all(last < chunker.PLANE_SIZE or first >= chunker.PLANE_SIZE for first, last in chunker.CJK_RANGES)
    assert chunker.ASTRAL_CJK_RANGES == ((0x20000, 0x3134F),)


def test_space_code_points_are_what_str_split_splits_on():
    assert list(SPACE_CODE_POINTS) == [code for code in range(0x110000) if chr(code).isspace()]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from(TEXT_PIECES), max_size=12).map("".join), min_size=1, max_size=60),
       st.integers(1, 40))
def test_batch_counts_match_text_counts(texts, block_characters):
    """The numpy counts of a batch of texts (cut into blocks, small here to cross block edges) give each text's
    text_counts and UTF-8 length."""
    previous, chunker.COUNT_BLOCK_CHARACTERS = chunker.COUNT_BLOCK_CHARACTERS, block_characters
    try:
        characters, words, text_bytes = chunker._text_counts_all(texts)
    finally:
        chunker.COUNT_BLOCK_CHARACTERS = previous
    assert list(zip(characters.tolist(), words.tolist())) == [text_counts(text) for text in texts]
    assert text_bytes.tolist() == [len(text.encode()) for text in texts]


def reference_chunks(conversation_, min_tokens=MIN_TOKENS, max_tokens=MAX_TOKENS):
    """Chunk boundaries by the rules, turn by turn: (first turn index, last + 1) of each chunk."""
    bounds, start, so_far = [], 0, 0
    turns = conversation_.turns
    for index, turn in enumerate(turns):
        session_tokens = 0
        if index == 0 or turn.session != turns[index - 1].session:
            end = next((later for later in range(index + 1, len(turns)) if turns[later].session != turn.session),
                       len(turns))
            session_tokens = sum(turn_tokens(turns[position]) for position in range(index, end))
        tokens = turn_tokens(turn)
        if so_far and (so_far + tokens > max_tokens
                       or (session_tokens and so_far >= min_tokens and so_far + session_tokens > max_tokens)):
            bounds.append((start, index))
            start, so_far = index, 0
        so_far += tokens
    return bounds + [(start, len(turns))]


def turn_tokens(turn):
    prefix, _ = chunker.render_speaker(turn.speaker)
    return max(1, estimate_tokens(prefix) + estimate_tokens(turn.text))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["A", None, "用户"]), st.sampled_from(["s1", "s2", None]),
                          st.integers(0, 400), st.sampled_from(["word ", "蓝", "é "])), max_size=60),
       st.integers(1, 3))
def test_batch_chunking_follows_the_rules_across_conversations(rows, conversations):
    """chunk_all over several conversations at once: each chunk as the rules give it conversation by
    conversation (sessions, min and max tokens), never across two conversations."""
    sources = []
    for number in range(conversations):
        part = rows[number::conversations]
        sources.append(Conversation(f"c{number}", [Turn(f"c{number}", speaker, piece * size, None, f"#{index}",
                                                        session=session)
                                                   for index, (speaker, session, size, piece) in enumerate(part)]))
    chunks = chunk_all(sources, min_tokens=100, max_tokens=300)
    expected = [(source.conv_id, [(turn.speaker, turn.source_id, turn.text) for turn in source.turns[start:end]])
                for source in sources
                for start, end in (reference_chunks(source, 100, 300) if source.turns else [])]
    assert [(chunk.conv_id, list(zip(chunk.speakers, chunk.source_ids, chunk.texts()))) for chunk in chunks] == expected
