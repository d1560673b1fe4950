"""R2G's Chinese analyser tags with engine.text.chinese: a private tagger over the compiled dictionary (the
text index's tokenizer never sees its lexicon words), and jieba is imported only when that cannot be used."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from engine.text import chinese
from engine.text.tokenizer import Tokenizer
from memctl.r2g import nlp_zh


def test_the_private_tagger_leaves_the_shared_tokenizer_alone():
    tokens_before = Tokenizer().index_tokens("我的电脑升级到Win11之后蓝牙打不开了")
    private = nlp_zh._pos_tokenizer().tokenizer
    shared = chinese.tokenizer()
    assert private is not shared and private.dictionary is not shared.dictionary
    added = [word for word, _class in nlp_zh._lexicon_words() if word not in shared.FREQ]
    assert added and all(private.FREQ.get(word) for word in added)  # the lexicon's words went into the copy only
    assert Tokenizer().index_tokens("我的电脑升级到Win11之后蓝牙打不开了") == tokens_before
    assert {"小明", "公园"} <= {token.text for token in nlp_zh.tokenize("小明在公园里踢足球", [])}


def test_remembered_block_cuts_equal_cutting_the_whole_sentence():
    private = nlp_zh._pos_tokenizer().tokenizer
    sentences = ["小明在公园里踢足球", "我的电脑升级到Win11之后蓝牙打不开了。", "昨天 下午3点, 我和Tom去了 café 喝咖啡!!",
                 "小明在公园里踢足球，然后回家了", "iPhone 15 Pro 的电池 100% 还是不够用…", "  ", "", "C++和C#哪个好？"]
    for sentence in sentences * 2:  # the second time from the remembered blocks
        assert nlp_zh._words(sentence, private) == list(private.cut(sentence, HMM=True))
    assert nlp_zh._block_words().get("小明在公园里踢足球") is not None


PROBE = """
import json, sys
from memctl.cli.app import app
home, text = sys.argv[1], sys.argv[2]
app(["--home", home, "ingest", "--text", text, "--quiet"], standalone_mode=False)
app(["--home", home, "r2g", "--json"], standalone_mode=False)
app(["--home", home, "recall", text[:12], "--json"], standalone_mode=False)
print(json.dumps({name: name in sys.modules
                  for name in ("jieba", "engine.text.chinese.segmenter", "engine.text.chinese.posseg")}))
"""


def imports_of_a_session(home, text: str, cache_home: str) -> tuple[dict, str]:
    """Which modules an ingest + r2g + recall of `text` imported in one process, and what it printed."""
    environment = {**os.environ, "XDG_CACHE_HOME": cache_home}
    result = subprocess.run([sys.executable, "-c", PROBE, str(home), text], capture_output=True, text=True,
                            env=environment)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stdout


def test_english_ingest_r2g_and_recall_never_import_jieba(tmp_path):
    imported, _output = imports_of_a_session(tmp_path / "home", "Alice moved to Kyoto last May and loves hiking.",
                                             os.environ["XDG_CACHE_HOME"])
    assert imported == {"jieba": False, "engine.text.chinese.segmenter": False, "engine.text.chinese.posseg": False}


def test_chinese_r2g_imports_jieba_only_when_falling_back(tmp_path):
    chinese.tokenizer()  # the session's compiled dictionary exists: the probe opens it
    text = "小明昨天在公园里踢足球，然后去超市买了蓝牙耳机。"
    imported, _output = imports_of_a_session(tmp_path / "compiled", text, os.environ["XDG_CACHE_HOME"])
    assert imported == {"jieba": False, "engine.text.chinese.segmenter": True, "engine.text.chinese.posseg": True}
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    imported, output = imports_of_a_session(tmp_path / "fallback", text, str(blocker))
    assert imported["jieba"] is True
    assert "Chinese segmentation fell back to jieba" in output  # the r2g summary's note


def test_the_lexicon_words_come_in_one_order_in_every_process():
    """The frequency jieba suggests for a word depends on the words added before it, and the compiled file is
    keyed by the list: set order (string hashes differ from process to process) would change both."""
    code = ("from memctl.r2g import nlp_zh\nfrom engine.text.chinese.cache import words_digest\n"
            "print(words_digest(tuple(nlp_zh._lexicon_words())))")
    digests = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(digests) == 1
