import subprocess
import sys
from pathlib import Path

import pytest

from engine.text.tokenizer import CJK_MODE_BIGRAM, Tokenizer, Vocabulary, segment_query_run

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tokenizer():
    return Tokenizer()


def pairs(tokenizer, text):
    terms, positions = tokenizer.index_tokens(text)
    return list(zip(terms, positions))


def terms_of(tokenizer, text):
    return tokenizer.index_tokens(text)[0]


def test_latin_is_normalized_case_folded_and_stemmed(tokenizer):
    assert terms_of(tokenizer, "Ｒunning SHOES, naïvely!") == ["run", "shoe", "naïv"]


def test_stop_words_leave_their_positions(tokenizer):
    assert pairs(tokenizer, "the cat and the dog") == [("cat", 1), ("dog", 4)]


def test_numbers_are_kept(tokenizer):
    assert terms_of(tokenizer, "5 years in 2023") == ["5", "year", "2023"]


def test_hex_error_code_is_kept_whole_and_without_prefix(tokenizer):
    assert pairs(tokenizer, "error 0x8007045D") == [("error", 0), ("0x8007045d", 1), ("8007045d", 1)]
    assert terms_of(tokenizer, "8007045D") == ["8007045d"]


def test_key_value_and_version_tokens_are_whole_and_split(tokenizer):
    assert pairs(tokenizer, "EventID=17") == [("eventid=17", 0), ("eventid", 0), ("17", 1)]
    assert pairs(tokenizer, "Win11") == [("win11", 0), ("win", 0), ("11", 1)]
    assert terms_of(tokenizer, "v2.3.1") == ["v2.3.1", "v2", "v", "2", "3", "1"]


def test_urls_paths_and_uuids_are_whole_and_split(tokenizer):
    url = terms_of(tokenizer, "see https://example.com/docs/setup.html")
    assert "https://example.com/docs/setup.html" in url and "exampl" in url and "setup" in url
    path = terms_of(tokenizer, r"C:\Windows\System32\drivers")
    assert path[0] == r"c:\windows\system32\drivers" and "driver" in path and "system32" in path
    uuid = terms_of(tokenizer, "550E8400-E29B-41D4-A716-446655440000")
    assert uuid[0] == "550e8400-e29b-41d4-a716-446655440000" and "550e8400" in uuid and "446655440000" in uuid
    assert terms_of(tokenizer, "/var/log/syslog")[0] == "var/log/syslog"


def test_apostrophes_split_words(tokenizer):
    assert terms_of(tokenizer, "Caroline's shoes don't fit") == ["carolin", "shoe", "fit"]


def test_chinese_uses_jieba_search_mode_with_character_positions(tokenizer):
    found = pairs(tokenizer, "Win11 蓝牙打不开了")
    assert ("蓝牙", 2) in found and ("打不开", 4) in found
    assert all(term != "了" for term, _ in found)
    words = dict(pairs(tokenizer, "中华人民共和国"))
    assert words["中华人民共和国"] == 0 and words["人民"] == 2 and words["共和国"] == 4


def test_bigram_fallback(tmp_path):
    bigrams = Tokenizer(cjk=CJK_MODE_BIGRAM)
    assert bigrams.cjk_mode == CJK_MODE_BIGRAM
    assert pairs(bigrams, "蓝牙打不开") == [("蓝牙", 0), ("牙打", 1), ("打不", 2), ("不开", 3)]
    assert bigrams.query_tokens("蓝牙打不开", cjk_mode=CJK_MODE_BIGRAM)[0] == ["蓝牙", "牙打", "打不", "不开"]
    assert pairs(bigrams, "的") == []  # a run of one stop word
    assert pairs(Tokenizer(cjk=CJK_MODE_BIGRAM, stopwords_zh=["打不"]), "蓝牙打不开") == [("蓝牙", 0), ("牙打", 1),
                                                                                       ("不开", 3)]


def test_stop_word_lists_can_be_replaced():
    custom = Tokenizer(stopwords_en=["fox"], stopwords_zh=["蓝牙"])
    assert terms_of(custom, "the fox") == ["the"]
    assert "蓝牙" not in terms_of(custom, "蓝牙耳机")


def test_user_dictionary(tmp_path):
    dictionary = tmp_path / "user.txt"
    dictionary.write_text("蓝牙打不开 100 n\n", encoding="utf-8")
    custom = Tokenizer(user_dictionary=dictionary)
    assert "蓝牙打不开" in terms_of(custom, "电脑蓝牙打不开")


def test_query_segmentation_follows_the_index_vocabulary():
    frequencies = {"研究": 5, "研究生": 2, "生命": 4, "起源": 3}
    vocabulary = Vocabulary(lambda term: frequencies.get(term, 0), 100)
    assert segment_query_run("研究生命起源", vocabulary) == [("研究", 0), ("生命", 2), ("起源", 4)]


def test_query_segmentation_adds_indexed_substrings_like_cut_for_search(tokenizer):
    corpus = ["中华人民共和国成立", "人民的生活", "蓝牙耳机坏了"]
    vocabulary = {term for text in corpus for term in terms_of(tokenizer, text)}
    query_terms = set(tokenizer.query_tokens("中华人民共和国", vocabulary)[0])
    assert query_terms == set(terms_of(tokenizer, "中华人民共和国"))


def test_phrases_are_parsed_with_relative_offsets(tokenizer):
    parsed = tokenizer.parse_query('bluetooth "Win11 蓝牙" fails', {"蓝牙"})
    assert parsed.phrases == [[("win", 0), ("11", 1), ("蓝牙", 2)]]
    assert parsed.terms == ["bluetooth", "win11", "win", "11", "蓝牙", "fail"]


def test_query_path_imports_neither_jieba_nor_numba():
    code = ("import sys; from engine.text.tokenizer import Tokenizer; t = Tokenizer();"
            "t.parse_query('Win11 蓝牙 打不开 \"0x8007045D\"', {'蓝牙'});"
            "print(sorted(m for m in ('jieba', 'numba') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPOSITORY, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_missing_user_dictionary_is_an_input_error(tmp_path):
    from engine.errors import InputError

    with pytest.raises(InputError):
        Tokenizer(user_dictionary=tmp_path / "missing.txt").index_tokens("蓝牙耳机")
