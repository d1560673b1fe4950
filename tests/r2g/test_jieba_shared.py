"""The Chinese analyser shares jieba's loaded dictionary with the text index instead of loading its own."""

from __future__ import annotations

import jieba

from engine.text.tokenizer import Tokenizer
from memctl.r2g import nlp_zh


def test_one_dictionary_load_and_no_change_to_the_shared_tokenizer():
    tokens_before = Tokenizer().index_tokens("我的电脑升级到Win11之后蓝牙打不开了")
    tagger = nlp_zh._pos_tokenizer()
    private = tagger.tokenizer
    assert private is not jieba.dt and private.FREQ is not jieba.dt.FREQ
    assert private.initialized and jieba.dt.initialized
    added = [word for word in private.FREQ if word not in jieba.dt.FREQ]
    assert added  # the lexicon's words went into the copy only
    assert Tokenizer().index_tokens("我的电脑升级到Win11之后蓝牙打不开了") == tokens_before
    assert {"小明", "公园"} <= {token.text for token in nlp_zh.tokenize("小明在公园里踢足球", [])}


def test_remembered_block_cuts_equal_jieba_cutting_the_whole_sentence():
    private = nlp_zh._pos_tokenizer().tokenizer
    sentences = ["小明在公园里踢足球", "我的电脑升级到Win11之后蓝牙打不开了。", "昨天 下午3点, 我和Tom去了 café 喝咖啡!!",
                 "小明在公园里踢足球，然后回家了", "iPhone 15 Pro 的电池 100% 还是不够用…", "  ", "", "C++和C#哪个好？"]
    for sentence in sentences * 2:  # the second time from the remembered blocks
        assert nlp_zh._words(sentence, private) == list(private.cut(sentence, HMM=True))
    assert nlp_zh._block_words().get("小明在公园里踢足球") is not None
