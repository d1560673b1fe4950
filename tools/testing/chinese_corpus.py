"""Sentences for comparing engine.text.chinese with jieba: tools/check_segmentation.py runs 100k+ of them,
tests/text/test_chinese_segmentation.py a sample of a few thousand.

Parts, each a share of the requested count (the real texts are taken in file order as far as they go; a part
whose data file is missing contributes nothing):
  memdaily    MemDaily dev turns and questions, whole and sentence by sentence (real Chinese chat)
  locomo      LoCoMo dev turns (English: blocks of letters, digits and punctuation)
  markov      Chinese from tools/bench/ingest_bench's Markov chains (new words for both HMMs), code-switched
  synthetic   node texts of tools/gen_synthetic.py (mixed Chinese/English phrases)
  dictionary  runs of jieba dictionary words, rare ones as often as common ones, with characters it lacks
  mixed       Chinese with digits (ASCII and full-width), decimals and percentages, ASCII and full-width
              punctuation and letters, emoji, kana, hangul, rare CJK, odd whitespace and code-like tokens
"""

from __future__ import annotations

import json
import os
import random
import re

LOCOMO_DEV = "/work/shared/locomo/locomo-dev.json"
MEMDAILY_DEV = "/work/shared/locomo/zh-memdaily-dev.json"
SHARES = {"memdaily": 0.12, "locomo": 0.03, "markov": 0.35, "synthetic": 0.10, "dictionary": 0.20, "mixed": 0.20}
_SENTENCE_END = re.compile(r"(?<=[。！？!?；])")
_PUNCTUATION = list("，。！？、；：“”‘’（）《》【】—…·,.!?;:'\"()[]{}<>/\\|@#$%^&*_+=~`-")
_FULL_WIDTH = [chr(code) for code in range(0xFF01, 0xFF5F)]  # ！ … ～, full-width digits and letters included
_EMOJI = ["😀", "👍", "👍🏽", "🎉", "❤️", "👨‍👩‍👧", "🇨🇳", "☕", "🐱", "✅"]
_SCRIPTS = ["ひらがな", "カタカナ", "한국어", "Ελληνικά", "русский", "ñandú", "café", "Straße"]
_SPACES = [" ", "  ", "\t", "\r\n", "\n", "\u3000", "\u00a0", "\u2003", "\u200b"]
_CODE_LIKE = ["C++", "C#", "AT&T", "a.b_c", "-5", "3.14", "50%", "12.5%", "v2.3.1", "0x8007045D", "Win11",
              "user@example.com", "https://例子.cn/路径?q=1", "BTHUSB", "Wi-Fi", "iPhone15", "3D打印", "T恤"]


def corpus(count: int, seed: int = 1) -> list[tuple[str, str]]:
    """`count` (part, sentence) pairs, the same for the same arguments."""
    rng = random.Random(seed)
    sentences: list = []
    for part, share in SHARES.items():
        wanted = round(count * share)
        sentences.extend((part, sentence) for sentence in _PARTS[part](rng, wanted))
    return sentences


def _dev_texts(path: str) -> list:
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        samples = json.load(handle)
    texts = [turn["text"] for sample in samples for key, turns in sample["conversation"].items()
             if key.startswith("session_") and isinstance(turns, list) for turn in turns]
    return texts + [question["question"] for sample in samples for question in sample.get("qa", [])]


def _memdaily(rng: random.Random, wanted: int) -> list:
    texts = _dev_texts(MEMDAILY_DEV)
    pieces = texts + [sentence for text in texts for sentence in _SENTENCE_END.split(text) if sentence]
    return pieces[:wanted]


def _locomo(rng: random.Random, wanted: int) -> list:
    return _dev_texts(LOCOMO_DEV)[:wanted]


def _markov(rng: random.Random, wanted: int) -> list:
    if not os.path.exists(MEMDAILY_DEV) or not os.path.exists(LOCOMO_DEV):
        return []
    from tools.bench.ingest_bench import TECH_TERMS, Chains

    chains = Chains()
    sentences = []
    for _ in range(wanted):
        sentence = chains.chinese_sentence(rng)
        if rng.random() < 0.3:
            cut = rng.randrange(len(sentence) + 1)
            sentence = f"{sentence[:cut]}{rng.choice(['', ' '])}{rng.choice(TECH_TERMS)}{sentence[cut:]}"
        sentences.append(sentence)
    return sentences


def _synthetic(rng: random.Random, wanted: int) -> list:
    from tools import gen_synthetic

    graph = gen_synthetic.generate(wanted, 0, rng.randrange(1 << 30))
    return [text for _title, text in gen_synthetic.node_texts(graph, 1)]


def _dictionary_words() -> list:
    from engine.text.chinese import jieba_files

    return [word for word, _frequency, _tag in jieba_files.dictionary_lines(jieba_files.locate().dictionary)]


def _dictionary(rng: random.Random, wanted: int) -> list:
    words = _dictionary_words()
    sentences = []
    for _ in range(wanted):
        pieces = [rng.choice(words) for _ in range(rng.randint(1, 12))]
        for _ in range(rng.randint(0, 2)):  # characters the dictionary lacks: rare CJK, extension A, beyond
            pieces.insert(rng.randrange(len(pieces) + 1), chr(rng.choice(
                [rng.randint(0x4E00, 0x9FD5), rng.randint(0x9FD6, 0x9FFF), rng.randint(0x3400, 0x4DBF)])))
        sentences.append("".join(pieces))
    return sentences


def _mixed(rng: random.Random, wanted: int) -> list:
    words = _dictionary_words()
    extras = [lambda: str(rng.randint(0, 10 ** rng.randint(1, 6))),
              lambda: "".join(chr(0xFF10 + int(digit)) for digit in str(rng.randint(0, 99999))),
              lambda: f"{rng.randint(0, 999)}.{rng.randint(0, 99)}{rng.choice(['', '%', '元', 'kg'])}",
              lambda: rng.choice(_PUNCTUATION), lambda: rng.choice(_FULL_WIDTH) * rng.randint(1, 3),
              lambda: rng.choice(_EMOJI), lambda: rng.choice(_SCRIPTS), lambda: rng.choice(_SPACES),
              lambda: rng.choice(_CODE_LIKE), lambda: rng.choice(["hello", "OK", "iPhone", "GPT-4", "Python"])]
    sentences = []
    for _ in range(wanted):
        pieces = []
        for _ in range(rng.randint(2, 14)):
            pieces.append(rng.choice(words) if rng.random() < 0.55 else rng.choice(extras)())
        sentences.append("".join(pieces))
    return sentences


_PARTS = {"memdaily": _memdaily, "locomo": _locomo, "markov": _markov, "synthetic": _synthetic,
          "dictionary": _dictionary, "mixed": _mixed}
