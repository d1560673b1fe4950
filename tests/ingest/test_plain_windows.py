"""Plain text read from its bytes a paragraph at a time, a long paragraph a window at a time (memctl/ingest/
plain.py, cutting.cut_windows): the same turns and stored records whatever the window size, and bad bytes
refused with their byte offset whatever the size of the pieces the check reads."""

import re
from contextlib import contextmanager

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.errors import InputError
from engine.format import RAW_CHUNK_TABLE, RAW_TURNS_TABLE
from engine.raw import RawStore
from engine.store import Store
from memctl.ingest import cutting, decode, detect, plain
from memctl.ingest.pipeline import ingest
from memctl.ingest.model import Source

# Sentence ends, words, CJK, astral characters (4 bytes in UTF-8), spaces of every kind, paragraph breaks.
PIECES = ["word ", "Win11", "蓝牙", "。", "! ", ". ", ".", "\n", "\n\n", " \n\t\n", "  ", "\u3000", "é", "😀",
          "\U00020001", "”", "…", "0x8007045D ", "a-b", "\t", "\n\u3000\n", "\r\n", "\r", "\r\n\r\n"]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=150).map("".join)
WIDE = 1 << 30


@contextmanager
def sizes(window: int = WIDE, check: int = WIDE, block: int = 1 << 20):
    saved = plain.WINDOW_BYTES, decode.CHECK_BYTES, cutting.BLOCK_CHARACTERS
    plain.WINDOW_BYTES, decode.CHECK_BYTES, cutting.BLOCK_CHARACTERS = window, check, block
    try:
        yield
    finally:
        plain.WINDOW_BYTES, decode.CHECK_BYTES, cutting.BLOCK_CHARACTERS = saved


def turns(data: bytes, max_tokens: int, errors: str = "strict", **size) -> list:
    with sizes(**size):
        data = decode.normalized_bytes(decode.checked(data, "in.txt", errors))
        conversations = plain.parse_bytes(data, "in.txt", errors, max_tokens)
    return [(turn.text, turn.source_id) for conversation in conversations for turn in conversation.turns]


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.integers(1, 12), st.lists(st.integers(0, 400), max_size=12), st.integers(1, 9))
@example("a. b. c", 1, [3], 1 << 20)  # the window ends inside a sentence end's spaces
@example("x" * 40, 2, [10, 20, 30], 1 << 20)  # one sentence over several windows
def test_windows_give_the_pieces_of_the_whole_text(text, max_tokens, edges, block):
    edges = sorted({0, len(text), *(min(edge, len(text)) for edge in edges)})
    windows = [text[start:end] for start, end in zip(edges, edges[1:])]
    with sizes(block=block):
        pieces = list(cutting.cut_windows(lambda: iter(windows), max_tokens))
        expected = [(start, text[start:end]) for start, end in cutting.cut(text, 0, len(text), max_tokens)]
    assert pieces == expected


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.integers(1, 12), st.integers(1, 24))
@example("蓝牙蓝牙。😀 word word\r\nmore", 2, 5)  # windows split 3- and 4-byte characters
def test_turns_are_the_same_whatever_the_window(text, max_tokens, window):
    data = text.encode("utf-8")
    if not data.strip():
        return  # refused as empty, whatever the window
    assert turns(data, max_tokens, window=window, check=max(4, window)) == turns(data, max_tokens)


def reference_turns(text: str, max_tokens: int) -> list:
    """Plain text as read before it was read from bytes: the whole text one str, paragraphs after Unicode
    blank lines, ids from the lines and columns of the whole text."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    bounds = [0, *(position for match in re.finditer(r"\n[ \t]*\n\s*", text) for position in match.span()),
              len(text)]
    found = []
    for start, end in zip(bounds[::2], bounds[1::2]):
        for index, (piece_start, piece_end) in enumerate(cutting.cut(text, start, end, max_tokens)):
            piece = text[piece_start:piece_end]
            if piece.strip():
                position = piece_start + re.search(r"\S", piece).start()
                line = text.count("\n", 0, position) + 1
                column = position - text.rfind("\n", 0, position)
                found.append((piece.strip(), f"in.txt#{line}" if index == 0 else f"in.txt#{line}:{column}"))
    return found


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.integers(1, 12), st.integers(1, 24))
def test_turns_are_those_of_the_whole_text_read_as_one_str(text, max_tokens, window):
    if text.strip():
        assert turns(text.encode("utf-8"), max_tokens, window=window) == reference_turns(text, max_tokens)


@settings(max_examples=200, deadline=None)
@given(TEXTS, st.lists(st.tuples(st.integers(0, 600), st.sampled_from([b"\xff", b"\xe8\x93", b"\xf0\x9f\x98",
                                                                        b"\xc3", b"\x80\x80"])), max_size=4),
       st.integers(1, 12), st.integers(1, 24))
def test_replaced_bytes_are_the_same_whatever_the_window(text, damage, max_tokens, window):
    data = bytearray(("x " + text).encode("utf-8"))
    for position, bad in damage:
        data[min(position, len(data)):min(position, len(data))] = bad
    data = bytes(data)
    whole = turns(data, max_tokens, "replace")
    assert turns(data, max_tokens, "replace", window=window) == whole
    assert "".join(text for text, _ in whole).count("\ufffd") >= (1 if damage else 0)


@settings(max_examples=200, deadline=None)
@given(TEXTS, st.integers(0, 600), st.sampled_from([b"\xff", b"\xe8\x93", b"\xf0\x9f\x98", b"\xc3", b"\x80"]),
       st.integers(4, 40))
def test_invalid_utf8_is_refused_at_its_offset_whatever_the_check_window(text, position, bad, check):
    valid = ("x " + text).encode("utf-8")
    position = min(position, len(valid))
    while position < len(valid) and valid[position] & 0xC0 == 0x80:
        position += 1  # at a character's first byte: every byte before it is then valid
    data = valid[:position] + bad + valid[position:]
    with sizes(check=check), pytest.raises(InputError) as narrow:
        decode.checked(data, "in.txt")
    with pytest.raises(UnicodeDecodeError) as whole:
        data.decode("utf-8")
    assert whole.value.start == position
    line = data.count(b"\n", 0, position) + 1
    assert f"invalid UTF-8 at byte offset {position} (line {line}," in str(narrow.value)
    assert f"{whole.value.reason}; pass --errors replace" in str(narrow.value)
    assert "in.txt" in str(narrow.value)


def test_a_long_line_is_detected_as_plain_text_from_its_head():
    line = ("word " * 20000 + "。").encode("utf-8")  # above HEAD_LINE_BYTES
    assert len(line) > detect.HEAD_LINE_BYTES
    assert detect.parse_bytes(line, "in.txt")[0] == "text"
    transcript = b"Alice: hi\nBob: " + b"word " * 20000 + b"\nAlice: bye\n"
    assert detect.parse_bytes(transcript, "in.txt")[0] == "transcript"
    blank_head = b" " * (detect.HEAD_LINE_BYTES + 10) + b"Alice: hi\nBob: yes\n"
    assert detect.parse_bytes(blank_head, "in.txt")[0] == "transcript"  # judged on the whole text


def stored(store) -> tuple:
    """The raw records (without their creation time, a reading of the clock) and the chunks' bytes."""
    raw = RawStore(store)
    chunks = {key: {name: value for name, value in record.items() if name != "created_at"}
              for key, record in store.scan(RAW_CHUNK_TABLE)}
    return (chunks, dict(store.scan(RAW_TURNS_TABLE)), {raw_id: raw.read(raw_id) for raw_id in chunks})


def test_a_long_line_stores_the_same_records_whatever_the_window(tmp_path):
    line = "".join(f"蓝牙耳机连不上 Win11 了😀，第{index}次重启之后好了。It works again after restart {index}! "
                   for index in range(3000))
    data = line.encode("utf-8") + b"\r\n\r\nA last paragraph, without a final newline."
    results = []
    for window in (WIDE, 4096, 777):
        path = str(tmp_path / f"store-{window}")
        with sizes(window=window, check=window), Store.open(path) as store:
            ingest(store, [Source("line.txt", data)])
        with Store.open(path, writable=False) as store:
            results.append(stored(store))
    chunks, turn_records, blobs = results[0]
    assert len(chunks) > 10 and len(turn_records) == len(chunks)
    assert results[1] == results[0] and results[2] == results[0]
