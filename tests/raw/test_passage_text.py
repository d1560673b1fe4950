"""The raw passage analysis (engine/raw/passage_text.py): the Tokenizer's bigram-mode terms, computed over
numpy arrays of code points for a block of texts at once; and the sentence windows of a long turn."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import re

from engine.raw.passage_text import PASSAGE_TOKENS, PassageAnalyzer, weights, windows
from engine.text.tokenizer import _CJK_CLASS, Tokenizer

# The rule as regular expressions: what windows() and weights() compute over code points.
SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？\n]*")
WEIGHT = re.compile(rf"[{_CJK_CLASS}]|[^\W_{_CJK_CLASS}]+")

# Characters that take every path: words, stop words, digits, code-like chunks, apostrophes, CJK runs and
# single characters, full-width forms and the ideographic space (NFKC), ligatures and ß (NFKC and case folding
# change lengths), a combining accent, astral CJK, U+FFFF (the analyzer's own separator) and other spaces.
PIECES = ["the", "and", "Run", "running", "Win11", "0x8007045D", "v2.3.1", "a_b", "don't", "l’été", "x",
          "蓝牙", "耳机又连不上", "的", "了", "我", "ＡＢＣ", "，", "！", "１２", "\u3000", "ﬁle", "Straße",
          "e\u0301", "\U00020001\U00020002", "\uffff", " ", "\n", "\t", "\u00a0", ".", "-", "日本語のテキスト"]


def tokenizer_terms(texts: list) -> list:
    analysis = Tokenizer(cjk="bigram")
    return [sorted(analysis.index_tokens(text)[0]) for text in texts]


def analyzer_terms(texts: list) -> list:
    analyzer = PassageAnalyzer()
    counts, codes = analyzer.analyze(texts)
    terms = list(analyzer.vocabulary.codes)
    found, start = [], 0
    for count in counts.tolist():
        found.append(sorted(terms[code] for code in codes[start:start + count].tolist()))
        start += count
    return found


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=12).map("".join), max_size=8))
def test_the_terms_of_each_text_are_the_tokenizers_in_bigram_mode(texts):
    assert analyzer_terms(texts) == tokenizer_terms(texts)


def test_an_analyzer_used_again_codes_the_same_terms_the_same_way():
    analyzer = PassageAnalyzer()
    first_counts, first_codes = analyzer.analyze(["蓝牙耳机 running fast", "the 0x8007045D error"])
    again_counts, again_codes = analyzer.analyze(["蓝牙耳机 running fast", "the 0x8007045D error"])
    assert first_counts.tolist() == again_counts.tolist() == [5, 3]
    assert first_codes.tolist() == again_codes.tolist()


def test_no_text_and_empty_texts():
    assert analyzer_terms([]) == []
    assert analyzer_terms(["", " ", "the"]) == [[], [], []]


def regex_windows(text: str) -> list:
    found = []
    start = end = size = 0
    for match in SENTENCE.finditer(text):
        weight = len(WEIGHT.findall(match.group()))
        if size and size + weight > PASSAGE_TOKENS:
            found.append((start, end))
            start, size = match.start(), 0
        end = match.end()
        size += weight
    if end > start:
        found.append((start, len(text)))
    return found


SENTENCE_PIECES = PIECES + ["Done.", "Really?!", "好的。", "为什么？", "\n\n", "end!", "3.14", "..."] + \
    [" ".join(["word"] * 30), "长" * 40]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(SENTENCE_PIECES), max_size=40).map("".join), max_size=6))
def test_weights_and_windows_follow_the_regular_expressions(texts):
    assert weights(texts).tolist() == [len(WEIGHT.findall(text)) for text in texts]
    for text in texts:
        assert windows(text) == regex_windows(text)


def test_windows_cover_a_long_turn_at_sentence_ends():
    text = " ".join(f"Sentence {index} tells the driver to restart the service." for index in range(40))
    found = windows(text)
    assert found[0][0] == 0 and found[-1][1] == len(text)
    assert all(left[1] == right[0] for left, right in zip(found, found[1:]))
    assert len(found) > 1
    for start, end in found:
        assert text[start:end].rstrip().endswith(".")
        assert weights([text[start:end]])[0] <= PASSAGE_TOKENS


def test_a_sentence_longer_than_a_window_is_a_window_of_its_own():
    long_sentence = "word " * (PASSAGE_TOKENS * 2) + "end."
    text = "Short one. " + long_sentence + " Another short one."
    found = [text[start:end] for start, end in windows(text)]
    assert "".join(found) == text and any(piece.strip() == long_sentence.strip() for piece in found)
