"""Sentence splitting: exact character and UTF-8 byte spans, Chinese, English and mixed."""

from hypothesis import given
from hypothesis import strategies as st

from memctl.r2g.lang import detect_language
from memctl.r2g.sentences import split_sentences


def _texts(text):
    return [sentence.text for sentence in split_sentences(text)]


def test_chinese_terminators():
    assert _texts("小明在公园里踢足球。他很开心！你呢？") == ["小明在公园里踢足球。", "他很开心！", "你呢？"]


def test_english_terminators_abbreviations_and_numbers():
    text = "Hi Mr. Smith. I paid $3.50 today!  Then I left... OK?\nNew line here"
    assert _texts(text) == ["Hi Mr. Smith.", "I paid $3.50 today!", "Then I left...", "OK?", "New line here"]
    assert _texts("J. K. Rowling wrote it. I went to the U.S. last year.") == [
        "J. K. Rowling wrote it.", "I went to the U.S. last year."]
    assert _texts("See example.com for details.") == ["See example.com for details."]


def test_mixed_text_splits_without_spaces_after_chinese_punctuation():
    assert _texts("我用Win11。It broke! 真的吗") == ["我用Win11。", "It broke!", "真的吗"]


def test_closing_quotes_stay_with_their_sentence():
    assert _texts("他说：“我明天来。”然后走了。") == ["他说：“我明天来。”", "然后走了。"]
    assert _texts('She said "wow!" Then left.') == ['She said "wow!"', "Then left."]


def test_spans_are_exact_for_characters_and_bytes():
    text = "  我的Win11蓝牙打不开了，一直报错。 Tom played soccer 😀 yesterday!\n\n好的。"
    encoded = text.encode("utf-8")
    for sentence in split_sentences(text):
        assert text[sentence.start : sentence.end] == sentence.text
        assert encoded[sentence.byte_start : sentence.byte_end] == sentence.text.encode("utf-8")
        assert sentence.text == sentence.text.strip()


@given(st.text(alphabet=st.sampled_from(list("ab 。.!?！？\n的我Win1😀“”\"'")), max_size=60))
def test_spans_are_exact_for_any_text(text):
    encoded = text.encode("utf-8")
    previous_end = 0
    for sentence in split_sentences(text):
        assert sentence.text and sentence.text == sentence.text.strip()
        assert text[sentence.start : sentence.end] == sentence.text
        assert encoded[sentence.byte_start : sentence.byte_end] == sentence.text.encode("utf-8")
        assert sentence.start >= previous_end
        previous_end = sentence.end
    assert "".join(text.split()) == "".join("".join(s.text.split()) for s in split_sentences(text))


def test_empty_and_blank_text():
    assert split_sentences("") == []
    assert split_sentences(" \n\t ") == []


def test_language_detection():
    assert detect_language("小明在公园里踢足球") == "zh"
    assert detect_language("我的Win11蓝牙打不开了") == "zh"
    assert detect_language("Tom played soccer") == "en"
    assert detect_language("I learned the word 你好 in class today with my friends") == "en"
