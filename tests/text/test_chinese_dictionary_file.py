"""The compiled Chinese dictionary file: built at first use in the user's cache, checked, rebuilt when jieba's
dictionary, jieba's version or the user dictionary changes, never served damaged, and jieba when it cannot be
had. Most tests use a jieba installation of their own (a small dict.txt, jieba's model tables linked in)."""

from __future__ import annotations

import json
import os
import struct

import jieba
import pytest

from engine.errors import InputError
from engine.text import chinese
from engine.text.chinese import cache, jieba_files
from engine.text.chinese.compiled import HEADER_SIZE, LAYOUT_VERSION, MAGIC, CompiledDictionary
from engine_testkit import flip_byte

WORDS = "蓝牙 500 n\n蓝牙耳机 80 n\n耳机 300 n\n打不开 50 v\n打 900 v\n不 1200 d\n开 700 v\n我 3000 r\n的 5000 uj\n" \
        "电脑 400 n\n升级 200 v\n中华 100 nz\n中华人民 40 n\n中华人民共和国 30 ns\n人民 600 n\n共和国 150 n\n"
SENTENCES = ["我的电脑升级了，蓝牙耳机打不开", "中华人民共和国的人民", "蓝牙打不开 C++ 3.5% ＡＢＣ", "李娜在耳机店"]


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A jieba installation in tmp_path/jieba (locate() finds it); the cache in tmp_path/cache."""
    real = jieba_files.locate()
    directory = tmp_path / "jieba"
    directory.mkdir()
    (directory / "__init__.py").write_text("__version__ = '0.42.1'\n", encoding="utf-8")
    (directory / "dict.txt").write_text(WORDS, encoding="utf-8")
    for model in ("finalseg", "posseg"):
        (directory / model).symlink_to(os.path.join(real.directory, model))
    monkeypatch.setattr(jieba_files, "locate", lambda: jieba_files.package_at(str(directory)))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    chinese.forget()
    yield directory
    chinese.forget()


def reference_tokenizer(directory, tmp_path):
    reference = jieba.Tokenizer(str(directory / "dict.txt"))
    reference.tmp_dir = str(tmp_path)  # jieba's own cache stays in the test's directory
    return reference


def cache_file() -> str:
    return cache.file_path(jieba_files.locate(), None)


def fresh_tokenizer(user_dictionary=None):
    chinese.forget()
    return chinese.tokenizer(user_dictionary)


def test_first_use_builds_a_checked_file_in_the_user_cache(package, tmp_path):
    assert not os.path.exists(cache_file())
    ours = fresh_tokenizer()
    path = cache_file()
    assert path.startswith(str(tmp_path / "cache" / "memctl")) and not chinese.notes()
    with open(path, "rb") as handle:
        header = handle.read(HEADER_SIZE)
    assert header[:8] == MAGIC and struct.unpack_from("<I", header, 8)[0] == LAYOUT_VERSION
    compiled = CompiledDictionary(path)
    compiled.check_all()
    assert compiled.sources["dictionary"]["size"] == len(WORDS.encode("utf-8"))
    assert compiled.total == sum(int(line.split()[1]) for line in WORDS.splitlines())
    reference = reference_tokenizer(package, tmp_path)
    for sentence in SENTENCES:
        assert list(ours.cut(sentence)) == list(reference.cut(sentence))
        assert list(ours.tokenize(sentence, mode="search")) == list(reference.tokenize(sentence, mode="search"))


def test_rebuilt_when_the_dictionary_or_jiebas_version_changes_not_when_only_touched(package):
    fresh_tokenizer()
    built = os.stat(cache_file()).st_ino
    os.utime(package / "dict.txt", ns=(1, 1))  # the same bytes, another time: the SHA-256 says unchanged
    fresh_tokenizer()
    assert os.stat(cache_file()).st_ino == built
    assert list(fresh_tokenizer().cut("蓝牙音箱")) == ["蓝牙", "音箱"]
    with open(package / "dict.txt", "a", encoding="utf-8") as handle:
        handle.write("蓝牙音箱 90 n\n")
    assert chinese.state()["state"].startswith("out of date (jieba's dictionary changed)")
    assert list(fresh_tokenizer().cut("蓝牙音箱")) == ["蓝牙音箱"]
    rebuilt = os.stat(cache_file()).st_ino
    assert rebuilt != built
    (package / "__init__.py").write_text("__version__ = '0.42.2'\n", encoding="utf-8")
    assert chinese.state()["state"].startswith("out of date (built for jieba 0.42.1")
    fresh_tokenizer()
    assert os.stat(cache_file()).st_ino != rebuilt and CompiledDictionary(cache_file()).sources["jieba_version"] == "0.42.2"


def test_a_user_dictionary_has_its_own_file_rebuilt_when_it_changes(package, tmp_path):
    user = tmp_path / "user.txt"
    user.write_text("蓝牙音箱 90 n\n", encoding="utf-8")
    assert list(fresh_tokenizer(str(user)).cut("蓝牙音箱")) == ["蓝牙音箱"]
    assert list(chinese.tokenizer().cut("蓝牙音箱")) == ["蓝牙", "音箱"]
    user_file = cache.file_path(jieba_files.locate(), str(user))
    assert user_file != cache_file() and os.path.exists(user_file) and os.path.exists(cache_file())
    user.write_text("蓝牙音箱 90 n\n打不开了 20 v\n", encoding="utf-8")
    assert list(fresh_tokenizer(str(user)).cut("打不开了")) == ["打不开了"]


def test_a_user_dictionary_that_is_not_utf8_is_an_input_error(package, tmp_path):
    user = tmp_path / "user.txt"
    user.write_bytes("蓝牙音箱 90 n\n".encode("utf-8") + b"\xff\xfe 3\n")
    with pytest.raises(InputError, match="line 2"):
        fresh_tokenizer(str(user))
    assert not chinese.notes()


@pytest.mark.parametrize("where", ["header", "description", "block index"])
def test_a_file_damaged_where_opening_looks_is_rebuilt(package, where):
    fresh_tokenizer()
    path = cache_file()
    compiled = CompiledDictionary(path)
    offsets = {"header": 9, "description": os.path.getsize(path) - 3,
               "block index": compiled.description["sections"]["block_keys"][0] + 4}
    del compiled
    flip_byte(path, offsets[where], 0x20)
    built = os.stat(path).st_ino
    assert chinese.state()["state"].startswith("damaged")
    assert list(fresh_tokenizer().cut("蓝牙耳机")) == ["蓝牙耳机"]
    assert os.stat(path).st_ino != built and not chinese.notes()
    CompiledDictionary(path).check_all()


def test_a_damaged_block_is_read_from_jiebas_files_and_the_file_rebuilt_next_time(package, tmp_path):
    fresh_tokenizer()
    path = cache_file()
    compiled = CompiledDictionary(path)
    keys_offset = compiled.description["sections"]["keys"][0]
    block = compiled._block_numbers["蓝"]
    flip_byte(path, keys_offset + compiled._block_bytes[block] + 1, 0x20)  # inside 蓝牙's first character
    del compiled
    ours = fresh_tokenizer()  # opening does not read the blocks
    assert list(ours.cut("我的蓝牙耳机打不开")) == list(reference_tokenizer(package, tmp_path).cut("我的蓝牙耳机打不开"))
    assert "checksum mismatch in the block of '蓝'" in " ".join(chinese.notes())
    assert not os.path.exists(path)
    fresh_tokenizer()
    CompiledDictionary(path).check_all()


def test_a_damaged_hmm_table_is_read_from_jiebas_files(package, tmp_path):
    fresh_tokenizer()
    path = cache_file()
    flip_byte(path, CompiledDictionary(path).description["sections"]["hmm_emissions"][0] + 5, 0x20)
    ours = fresh_tokenizer()
    assert list(ours.cut("李娜在耳机店")) == list(reference_tokenizer(package, tmp_path).cut("李娜在耳机店"))
    assert "hmm_emissions" in " ".join(chinese.notes())


def test_without_a_usable_cache_jieba_cuts_and_says_why(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    try:
        ours = fresh_tokenizer()
        assert ours is jieba.dt
        assert chinese.notes() and "fell back to jieba" in chinese.notes()[0]
        tagger = chinese.pos_tagger([("蓝牙耳机", "n")])
        assert tagger.word_tag_tab.get("蓝牙耳机") == "n" and "蓝牙耳机" not in jieba.dt.FREQ
    finally:
        chinese.forget()


def test_stats_name_the_file_and_its_state(cli, package):
    assert cli("ingest", "--text", "蓝牙耳机打不开了", "--quiet").exit_code == 0
    shown = json.loads(cli("stats", "--json").stdout)["chinese_segmentation"]
    assert shown == {"file": cache_file(), "state": "not built yet: built at the next Chinese text"}
    fresh_tokenizer()
    assert json.loads(cli("stats", "--json").stdout)["chinese_segmentation"]["state"].startswith("ready (")
    assert "chinese_segmentation: state" in cli("stats").stdout
