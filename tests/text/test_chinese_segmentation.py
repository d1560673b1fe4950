"""engine.text.chinese cuts and tags exactly as jieba does: a sample of tools/testing/chinese_corpus (the whole
corpus, 100k+ sentences, is tools/check_segmentation.py's), the lexicon words R2G adds, and a user dictionary."""

from __future__ import annotations

import logging

import jieba
import jieba.posseg
import pytest

from engine.text import chinese
from engine.text.chinese import fallback
from tools.testing.chinese_corpus import corpus

jieba.setLogLevel(logging.WARNING)
SAMPLE = corpus(2500, seed=7)


def differences(sentences, ours, theirs, limit=5) -> list:
    found = []
    for part, sentence in sentences:
        mine, reference = ours(sentence), theirs(sentence)
        if mine != reference:
            found.append((part, sentence, mine, reference))
            if len(found) == limit:
                break
    return found


def words_and_classes(pairs) -> list:
    return [(pair.word, pair.flag) for pair in pairs]


@pytest.fixture(scope="module")
def tokenizer():
    chinese.forget()
    ours = chinese.tokenizer()
    assert not chinese.notes() and not isinstance(ours, jieba.Tokenizer)
    return ours


def test_the_sample_has_every_part():
    parts = {part for part, _sentence in SAMPLE}
    assert {"markov", "synthetic", "dictionary", "mixed"} <= parts


@pytest.mark.parametrize("hmm", [True, False])
def test_cut_equals_jiebas(tokenizer, hmm):
    assert differences(SAMPLE, lambda text: list(tokenizer.cut(text, HMM=hmm)),
                       lambda text: list(jieba.cut(text, HMM=hmm))) == []


def test_cut_for_search_and_search_tokens_equal_jiebas(tokenizer):
    assert differences(SAMPLE, lambda text: list(tokenizer.cut_for_search(text)),
                       lambda text: list(jieba.cut_for_search(text))) == []
    assert differences(SAMPLE, lambda text: list(tokenizer.tokenize(text, mode="search")),
                       lambda text: list(jieba.tokenize(text, mode="search"))) == []


@pytest.mark.parametrize("hmm", [True, False])
def test_posseg_cut_equals_jiebas(hmm):
    chinese.forget()
    tagger = chinese.pos_tagger()
    assert differences(SAMPLE, lambda text: words_and_classes(tagger.cut(text, HMM=hmm)),
                       lambda text: words_and_classes(jieba.posseg.cut(text, HMM=hmm))) == []


def test_added_words_behave_as_in_a_jieba_copy():
    """R2G's tagger: lexicon words added with classes, a known word keeping its frequency, a new one getting
    jieba's suggested frequency (which depends on the words added before it); compiled into a file of its own."""
    words = [("蓝牙耳机", "n"), ("超市", "nplace"), ("踢足球", "v"), ("小明", "nr"), ("学", "v"), ("云南旅游", "nz"),
             ("打不开", "v"), ("王小明", "nr"), ("咖啡馆", "nplace")]
    chinese.forget()
    ours = chinese.pos_tagger(words)
    reference = fallback.private_tagger(words)
    assert ours.tokenizer.dictionary.total == reference.tokenizer.total
    assert [ours.tokenizer.FREQ.get(word) for word, _ in words] == [reference.tokenizer.FREQ.get(word) for word, _ in words]
    assert [ours.word_tag_tab.get(word) for word, _ in words] == [reference.word_tag_tab.get(word) for word, _ in words]
    sentences = SAMPLE[::5] + [("added", "小明去超市买了蓝牙耳机，打不开。王小明在咖啡馆学云南旅游")]
    assert differences(sentences, lambda text: list(ours.tokenizer.cut(text)),
                       lambda text: list(reference.tokenizer.cut(text))) == []
    assert differences(sentences, lambda text: words_and_classes(ours.cut(text, HMM=False)),
                       lambda text: words_and_classes(reference.cut(text, HMM=False))) == []
    assert list(chinese.tokenizer().cut("蓝牙耳机")) == ["蓝牙", "耳机"]  # the shared tokenizer never saw them
    assert ours.tokenizer.dictionary._source.path != chinese.tokenizer().dictionary._source.path


def test_user_dictionary_equals_jiebas(tmp_path):
    user = tmp_path / "user.txt"
    user.write_bytes("\ufeff蓝牙打不开 100 n\n小明踢足球\n云南旅游 5\n\n  咖啡馆 3 nplace  \nApple Watch 50 nz\n"
                     "中华人民 0\n打不开了 nz\n".encode("utf-8"))
    chinese.forget()
    ours = chinese.tokenizer(str(user))
    reference = jieba.Tokenizer()
    reference.load_userdict(str(user))
    try:
        assert ours.dictionary.total == reference.total and ours.dictionary.force_split == {"中华人民"}
        sentences = SAMPLE[::5] + [("user", "电脑蓝牙打不开了，小明踢足球，中华人民共和国，去云南旅游，咖啡馆")]
        assert differences(sentences, lambda text: list(ours.tokenize(text, mode="search")),
                           lambda text: list(reference.tokenize(text, mode="search"))) == []
        assert differences(sentences, lambda text: list(ours.cut(text, HMM=False)),
                           lambda text: list(reference.cut(text, HMM=False))) == []
    finally:
        jieba.finalseg.Force_Split_Words.discard("中华人民")  # jieba's is process-wide; ours is the dictionary's
