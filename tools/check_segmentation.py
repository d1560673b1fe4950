"""Compare engine.text.chinese with jieba, sentence by sentence, on a corpus of 100k+ sentences.

    python tools/check_segmentation.py                     # 120,000 sentences of tools/testing/chinese_corpus
    python tools/check_segmentation.py --sentences 20000 --seed 3 --file more.txt --show 10

For every sentence, every function memctl's segmentation stands in for must give jieba's exact output:
jieba.cut (HMM on and off), cut_for_search, tokenize(mode="search") (what the text index calls),
jieba.posseg.cut (HMM on and off: words and classes), and R2G's tagger (jieba's dictionary plus the lexicon
words nlp_zh adds: cut with HMM, posseg without). Prints, per function, the differences and the seconds each
side took; exit status 1 when any sentence differs. --file adds the lines of a UTF-8 file as sentences.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tools.testing.chinese_corpus import corpus  # noqa: E402


def contenders() -> list:
    """(name, ours, jieba's) per compared function: each side maps a sentence to a comparable list."""
    import jieba
    import jieba.posseg

    from engine.text import chinese
    from engine.text.chinese import fallback
    from memctl.r2g import nlp_zh

    jieba.setLogLevel(logging.WARNING)
    tokenizer = chinese.tokenizer()
    if chinese.notes():
        raise SystemExit(f"the compiled dictionary is not in use: {chinese.notes()}")
    tagger = chinese.pos_tagger()
    words = list(nlp_zh._lexicon_words())
    r2g_ours = chinese.pos_tagger(words)
    r2g_jieba = fallback.private_tagger()
    for word, word_class in words:
        r2g_jieba.tokenizer.add_word(word, r2g_jieba.tokenizer.FREQ.get(word) or None, tag=word_class)
    r2g_jieba.makesure_userdict_loaded()

    def pairs(cut):
        return lambda text: [(pair.word, pair.flag) for pair in cut(text)]

    return [
        ("cut", lambda text: list(tokenizer.cut(text)), lambda text: list(jieba.cut(text))),
        ("cut HMM=False", lambda text: list(tokenizer.cut(text, HMM=False)),
         lambda text: list(jieba.cut(text, HMM=False))),
        ("cut_for_search", lambda text: list(tokenizer.cut_for_search(text)),
         lambda text: list(jieba.cut_for_search(text))),
        ("tokenize search", lambda text: list(tokenizer.tokenize(text, mode="search")),
         lambda text: list(jieba.tokenize(text, mode="search"))),
        ("posseg.cut", pairs(tagger.cut), pairs(jieba.posseg.cut)),
        ("posseg.cut HMM=False", pairs(lambda text: tagger.cut(text, HMM=False)),
         pairs(lambda text: jieba.posseg.cut(text, HMM=False))),
        ("R2G tagger cut", lambda text: list(r2g_ours.tokenizer.cut(text)),
         lambda text: list(r2g_jieba.tokenizer.cut(text))),
        ("R2G tagger posseg HMM=False", pairs(lambda text: r2g_ours.cut(text, HMM=False)),
         pairs(lambda text: r2g_jieba.cut(text, HMM=False))),
    ]


def timed_outputs(function, sentences: list) -> tuple[list, float]:
    started = time.perf_counter()
    outputs = [function(sentence) for _part, sentence in sentences]
    return outputs, time.perf_counter() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=120_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--file", action="append", default=[], help="a UTF-8 file: one more sentence per line")
    parser.add_argument("--show", type=int, default=5, help="differences printed per function")
    arguments = parser.parse_args(argv)
    sentences = corpus(arguments.sentences, arguments.seed)
    for path in arguments.file:
        with open(path, encoding="utf-8") as handle:
            sentences.extend(("file", line.rstrip("\n")) for line in handle)
    parts: dict = {}
    for part, _sentence in sentences:
        parts[part] = parts.get(part, 0) + 1
    print(f"{len(sentences):,} sentences ({', '.join(f'{part} {count:,}' for part, count in parts.items())}), "
          f"{sum(len(sentence) for _part, sentence in sentences):,} characters")
    total = 0
    for name, ours, theirs in contenders():
        mine, our_seconds = timed_outputs(ours, sentences)
        reference, their_seconds = timed_outputs(theirs, sentences)
        different = [index for index, (a, b) in enumerate(zip(mine, reference)) if a != b]
        total += len(different)
        print(f"{name:30} {len(different):>6} different   ours {our_seconds:7.2f} s   jieba {their_seconds:7.2f} s")
        for index in different[: arguments.show]:
            print(f"    {sentences[index]!r}\n      ours:  {mine[index]}\n      jieba: {reference[index]}")
    print(f"{total} differences in all")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
