import math

import jieba
import pytest

from engine.text.search import Searcher
from engine.text.tokenizer import CJK_MODE_BIGRAM, Tokenizer
from text_testkit import document, segment

CORPUS = [
    ("win", "Win11 蓝牙打不开了", "chat", 100.0, ("windows", "bluetooth")),
    ("usb", "Copying failed with error 0x8007045D on the USB drive", "ticket", 200.0, ("windows",)),
    ("fox", "the quick brown fox jumps over the lazy dog", "note", 300.0, ()),
    ("dogs", "brown quick dogs and lazy foxes", "note", 400.0, ("animals",)),
    ("headset", "蓝牙耳机连接不上电脑，重启以后还是不行", "chat", 500.0, ("bluetooth",)),
    ("whea", "EventID=17 WHEA-Logger corrected hardware error, driver v2.3.1", "ticket", None, ()),
    ("printer", "打印机卡纸了，提示错误代码 E-302", "chat", 700.0, ()),
]


@pytest.fixture(scope="module")
def tokenizer():
    return Tokenizer()


@pytest.fixture(scope="module")
def searcher(tokenizer):
    docs = [document(tokenizer, number, key, text, type=kind, timestamp=moment, tags=tags)
            for number, (key, text, kind, moment, tags) in enumerate(CORPUS)]
    return Searcher([segment(docs[:4]), segment(docs[4:])], tokenizer)


def keys(searcher, query, **options):
    return [hit.key for hit in searcher.search(query, **options)]


def test_hex_code_found_with_and_without_prefix(searcher):
    assert keys(searcher, "0x8007045D") == ["usb"]
    assert keys(searcher, "8007045d") == ["usb"]


def test_code_like_tokens(searcher):
    assert keys(searcher, "EventID=17")[0] == "whea"
    assert keys(searcher, "eventid")[0] == "whea"
    assert keys(searcher, "2.3.1")[0] == "whea"
    assert keys(searcher, "win11") == ["win"]
    assert keys(searcher, "E-302") == ["printer"]


def test_chinese_and_mixed_queries(searcher):
    assert keys(searcher, "蓝牙 打不开")[0] == "win"
    assert keys(searcher, "蓝牙打不开")[0] == "win"
    assert set(keys(searcher, "蓝牙")) == {"win", "headset"}
    assert keys(searcher, "Win11 蓝牙")[0] == "win"
    assert keys(searcher, "打印机错误")[0] == "printer"


def test_phrases_match_by_position(searcher):
    assert set(keys(searcher, "quick brown")) == {"fox", "dogs"}
    assert keys(searcher, '"quick brown"') == ["fox"]
    assert keys(searcher, '"brown quick"') == ["dogs"]
    assert keys(searcher, '"lazy dog"') == ["fox"]
    assert keys(searcher, '"dog lazy"') == []
    assert keys(searcher, '"Win11 蓝牙"') == ["win"]
    assert keys(searcher, '"0x8007045D on the USB"') == ["usb"]
    assert keys(searcher, "“蓝牙耳机”") == ["headset"]


def test_phrases_can_be_read_as_their_words(searcher):
    """phrases=False: a quoted phrase's words count as any other query words, the scores those of the words."""
    assert keys(searcher, '"dog lazy"', phrases=False) == keys(searcher, "dog lazy") != []
    assert [(hit.key, hit.score) for hit in searcher.search('"brown quick"', phrases=False)] == \
        [(hit.key, hit.score) for hit in searcher.search("brown quick")]


def test_matched_terms_are_reported(searcher):
    hits = {hit.key: hit.terms for hit in searcher.search("quick fox cat")}
    assert hits == {"fox": ["fox", "quick"], "dogs": ["fox", "quick"]}


def test_filters_apply_before_the_top_k_cut(searcher):
    assert keys(searcher, "quick brown", top=1) == ["dogs"]
    assert keys(searcher, "quick brown", top=1, until=350) == ["fox"]
    assert keys(searcher, "error", types=["ticket"]) == ["usb", "whea"]
    assert keys(searcher, "error", types=["chat"]) == []
    assert keys(searcher, "蓝牙", types=["chat"], since=150) == ["headset"]
    assert keys(searcher, "error", since=0) == ["usb"]  # whea has no time: a window drops it
    assert keys(searcher, "蓝牙", until=150) == ["win"]
    assert keys(searcher, "蓝牙", tags=["windows"]) == ["win"]
    assert keys(searcher, "蓝牙 error", tags=["windows", "bluetooth"]) == ["win"]
    assert keys(searcher, "蓝牙", tags=["missing"]) == []


def test_filter_decodes_only_needed_skip_blocks(tokenizer):
    docs = [document(tokenizer, number, f"k{number}", "common word", type="rare" if number % 500 == 7 else "bulk")
            for number in range(2000)]
    searcher = Searcher([segment(docs)], tokenizer)
    assert keys(searcher, "common", top=10, types=["rare"]) == ["k7", "k507", "k1007", "k1507"]


def test_recency_boost_multiplies_scores_by_decayed_age(searcher):
    plain = {hit.key: hit.score for hit in searcher.search("蓝牙")}
    boosted = searcher.search("蓝牙", recency_tau=100.0, recency_weight=0.5, now=600.0)
    assert [hit.key for hit in boosted] == ["headset", "win"]
    factors = {"win": 0.5 + 0.5 * math.exp(-5.0), "headset": 0.5 + 0.5 * math.exp(-1.0)}
    for hit in boosted:
        assert hit.score == pytest.approx(plain[hit.key] * factors[hit.key])


def test_deleted_documents_are_never_returned(tokenizer):
    docs = [document(tokenizer, number, key, text) for number, (key, text, *_rest) in enumerate(CORPUS)]
    searcher = Searcher([segment(docs[:4]), segment([], deleted=[1])], tokenizer, deleted=[4])
    assert keys(searcher, "8007045d") == []
    assert keys(searcher, "蓝牙") == ["win"]


def test_empty_and_stop_word_queries(searcher):
    assert searcher.search("") == []
    assert searcher.search("the and of") == []
    assert searcher.search("quick", top=0) == []
    assert Searcher([], Tokenizer()).search("anything") == []


CHINESE = ["我的蓝牙耳机坏了", "电脑的蓝牙驱动需要更新", "今天天气很好，适合去公园散步", "公园里的花开了",
           "研究生命的起源是一个大问题", "他是一名研究生，研究人工智能", "中华人民共和国成立于一九四九年",
           "人民群众的生活水平提高了", "手机屏幕碎了需要维修", "维修电脑花了三百元"]
CHINESE_QUERIES = ["蓝牙耳机", "电脑维修", "公园散步", "生命起源", "研究生", "人民共和国", "手机屏幕", "天气"]


def test_query_segmentation_without_jieba_finds_what_jieba_tokens_find(tokenizer):
    docs = [document(tokenizer, number, f"z{number}", text) for number, text in enumerate(CHINESE)]
    searcher = Searcher([segment(docs)], tokenizer)
    for query in CHINESE_QUERIES:
        jieba_terms = [term for term in jieba.cut_for_search(query) if term not in tokenizer.stopwords]
        by_jieba = {hit.key for hit in searcher.search(" ".join(jieba_terms), top=3)}
        assert {hit.key for hit in searcher.search(query, top=3)} == by_jieba, query


def test_bigram_index_answers_chinese_queries():
    bigrams = Tokenizer(cjk=CJK_MODE_BIGRAM)
    docs = [document(bigrams, number, f"z{number}", text) for number, text in enumerate(CHINESE)]
    built = segment(docs)
    built.meta["tokenizer"] = {"cjk": CJK_MODE_BIGRAM}
    searcher = Searcher([built], bigrams)
    assert searcher.cjk_mode == CJK_MODE_BIGRAM
    assert [hit.key for hit in searcher.search("蓝牙耳机")][0] == "z0"
    assert [hit.key for hit in searcher.search('"屏幕碎了"')] == ["z8"]
