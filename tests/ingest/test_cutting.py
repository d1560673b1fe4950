"""memctl.ingest.cutting: pieces within a token limit, cut at sentence ends, then words; the same pieces whatever
the block and batch sizes it reads in, and in time and memory that do not depend on line length."""

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from memctl.ingest import cutting
from memctl.ingest.chunker import CJK_CLASS, estimate_tokens
from memctl.ingest.detect import parse_document

# The rule, unit by unit, as plain text cut paragraphs before cutting.py (each unit sliced and counted alone).
SENTENCE_END = re.compile(r"(?:[。！？；!?…]+[」』”’\"')）]*|\.(?=\s))\s*|\n")
CUT_UNIT = re.compile(f"[{CJK_CLASS}]\\s*|[^\\s{CJK_CLASS}]+\\s*|\\s+")


def reference_cut(text, start, end, max_tokens):
    if estimate_tokens(text[start:end]) <= max_tokens:
        return [(start, end)]
    pieces, piece_start, piece_tokens = [], start, 0
    for unit_start, unit_end in reference_units(text, start, end, max_tokens):
        tokens = estimate_tokens(text[unit_start:unit_end])
        if piece_tokens and piece_tokens + tokens > max_tokens:
            pieces.append((piece_start, unit_start))
            piece_start, piece_tokens = unit_start, 0
        piece_tokens += tokens
    pieces.append((piece_start, end))
    return pieces


def reference_units(text, start, end, max_tokens):
    ends = [match.end() for match in SENTENCE_END.finditer(text, start, end)]
    if not ends or ends[-1] < end:
        ends.append(end)
    for first, last in zip([start, *ends], ends):
        if estimate_tokens(text[first:last]) <= max_tokens:
            yield first, last
        else:
            yield from ((match.start(), match.end()) for match in CUT_UNIT.finditer(text, first, last))


PIECES = ["word ", "Win11", "蓝牙", "。", "! ", ". ", ".", "\n", "  ", "\u3000", "é", "😀", "\U00020001", "”",
          "…", "x\x00", "0x8007045D ", "a-b", "\t"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=120).map("".join), st.integers(1, 12), st.integers(1, 9),
       st.integers(1, 5), st.integers(0, 3))
@example("word\n  more words here", 1, 9, 5, 0)  # a long sentence's leading spaces are a unit of their own
def test_pieces_are_the_rules_whatever_the_block_and_batch_sizes(text, max_tokens, block, batch, margin):
    """Blocks and batches as small as a few characters cross every unit and sentence edge; the pieces must be
    those of the rule read unit by unit."""
    start, end = min(margin, len(text)), max(min(margin, len(text)), len(text) - margin)
    original = cutting.BLOCK_CHARACTERS, cutting.BATCH_SENTENCES
    cutting.BLOCK_CHARACTERS, cutting.BATCH_SENTENCES = block, batch
    try:
        pieces = cutting.cut(text, start, end, max_tokens)
    finally:
        cutting.BLOCK_CHARACTERS, cutting.BATCH_SENTENCES = original
    assert pieces == reference_cut(text, start, end, max_tokens)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60).map("".join), st.integers(1, 9))
def test_span_tokens_is_the_estimate_of_the_span(text, block):
    original, cutting.BLOCK_CHARACTERS = cutting.BLOCK_CHARACTERS, block
    try:
        assert cutting.span_tokens(text, 0, len(text)) == estimate_tokens(text)
    finally:
        cutting.BLOCK_CHARACTERS = original


def test_a_sentence_without_punctuation_is_cut_by_words():
    text = " ".join(f"word{index}" for index in range(4000))
    pieces = cutting.cut(text, 0, len(text), 2000)
    assert len(pieces) >= 3
    assert pieces[0][0] == 0 and pieces[-1][1] == len(text)
    assert all(previous[1] == following[0] for previous, following in zip(pieces, pieces[1:]))
    assert all(estimate_tokens(text[start:end]) <= 2000 for start, end in pieces)
    assert all(text[start - 1] == " " for start, _ in pieces[1:])  # between words


def test_one_long_line_becomes_turns_within_the_chunk_size_with_their_columns():
    """A single line of 6 MB (several blocks of the cutter) is cut into turns at sentence ends, every turn
    within the chunk size, nothing but spaces between them, each turn's source id naming line 1 and the
    column where it starts."""
    sentence = "The quick brown fox jumps over the lazy dog near the riverbank today. 今天天气很好。"
    line = sentence * (6_000_000 // len(sentence.encode()))
    _, conversations = parse_document(line + "\n", "line.txt", "text")
    turns = conversations[0].turns
    assert len(turns) > 100
    assert all(estimate_tokens(turn.text) <= 2000 for turn in turns)
    assert all(turn.text.endswith((".", "。")) for turn in turns)
    end = 0
    for index, turn in enumerate(turns):
        column = 1 if index == 0 else int(turn.source_id.rsplit(":", 1)[1])
        assert turn.source_id == ("line.txt#1" if index == 0 else f"line.txt#1:{column}")
        assert not line[end: column - 1].strip()
        assert line[column - 1: column - 1 + len(turn.text)] == turn.text
        end = column - 1 + len(turn.text)
    assert end == len(line)


def test_a_long_line_after_other_lines_counts_its_line_and_columns():
    text = "first\nsecond\n\n" + "Short sentence here. " * 800 + "\n\nlast"
    _, conversations = parse_document(text, "notes.txt", "text")
    turns = conversations[0].turns
    assert turns[0].source_id == "notes.txt#1" and turns[0].text == "first\nsecond"
    assert turns[1].source_id == "notes.txt#4"
    assert turns[2].source_id == f"notes.txt#4:{len(turns[1].text) + 2}"
    assert turns[-1].source_id == "notes.txt#6" and turns[-1].text == "last"
