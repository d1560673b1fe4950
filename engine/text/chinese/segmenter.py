"""jieba.Tokenizer's segmentation over an engine.text.chinese.dictionary.Dictionary.

The algorithm is jieba 0.42's, step for step: a text is split into blocks (runs of Han characters, ASCII
letters and digits and +#&._%-; everything else goes out one character at a time, whitespace runs whole), and
each block is cut by
  1. the DAG: from each character, every dictionary word that starts there (walking the prefixes while they
     are keys of the prefix dictionary);
  2. the route: from the end backwards, the path maximising the sum of log(frequency or 1) - log(total), ties
     going to the longer word (jieba compares (score, end) tuples);
  3. with HMM, runs of single characters that are not one dictionary word go through finalseg's HMM; without,
     single ASCII letters and digits are glued into one piece.
`cut_for_search` and `tokenize(mode="search")` add the dictionary's 2- and 3-character words inside longer
words. Sums are computed in jieba's order with the same math.log, so the routes are the same to the last bit.
"""

from __future__ import annotations

import re
from math import log

from engine.text.chinese.dictionary import LazyTable

# jieba's re_han_default, re_skip_default and re_eng.
BLOCK = re.compile("([\u4E00-\u9FD5a-zA-Z0-9+#&\\._%\\-]+)", re.U)
_SKIP = re.compile("(\r\n|\\s)", re.U)
_ASCII_ALPHANUMERIC = re.compile("[a-zA-Z0-9]", re.U)


class Segmenter:
    """dictionary: a Dictionary; hmm: an engine.text.chinese.finalseg.Model (None: cuts without HMM only)."""

    def __init__(self, dictionary, hmm=None):
        self.dictionary = dictionary
        self.hmm = hmm
        self.FREQ = LazyTable(dictionary.frequency)  # jieba's name, for callers written against jieba

    # --- jieba's public calls ------------------------------------------------------------------------------

    def cut(self, sentence: str, HMM: bool = True):  # noqa: N803 (jieba's keyword)
        for block in BLOCK.split(sentence):
            if not block:
                continue
            if BLOCK.match(block):
                yield from self._cut_block(block, HMM)
            else:
                for piece in _SKIP.split(block):
                    if _SKIP.match(piece):
                        yield piece
                    else:
                        yield from piece

    def cut_for_search(self, sentence: str, HMM: bool = True):  # noqa: N803
        for word, _start, _end in self.tokenize(sentence, mode="search", HMM=HMM):
            yield word

    def tokenize(self, sentence: str, mode: str = "default", HMM: bool = True):  # noqa: N803
        """(word, start, end) in text order; mode "search" also yields the dictionary's 2- and 3-character words
        inside each longer word, before it."""
        start = 0
        for word in self.cut(sentence, HMM=HMM):
            width = len(word)
            if mode != "default":
                yield from self._inner_words(word, start)
            yield word, start, start + width
            start += width

    def add_word(self, word: str, freq=None, tag: str | None = None) -> None:
        """jieba's add_word: without a frequency, the one `suggest_freq` finds for keeping the word whole."""
        frequency = int(freq) if freq is not None else self.suggest_freq(word)
        self.dictionary.add(word, frequency, tag)

    def suggest_freq(self, word: str) -> int:
        """jieba's suggest_freq(word, tune=False): a frequency at which the route keeps `word` in one piece."""
        total = self.dictionary.total
        frequencies = self.dictionary.frequencies_for(word)
        probability = 1
        for piece in self.cut(word, HMM=False):
            probability *= frequencies.get(piece, 1) / float(total)
        return max(int(probability * total) + 1, frequencies.get(word, 1))

    # --- one block -----------------------------------------------------------------------------------------

    def route(self, block: str) -> list:
        """jieba's get_DAG + calc: route[i] = (best log probability from i on, end of the word at i)."""
        frequencies = self.dictionary.frequencies_for(block)
        count = len(block)
        ends_at = []
        for start in range(count):
            ends = []
            end = start
            fragment = block[start]
            while end < count and fragment in frequencies:
                if frequencies[fragment]:
                    ends.append(end)
                end += 1
                fragment = block[start: end + 1]
            ends_at.append(ends or [start])
        route = [None] * count + [(0, 0)]
        log_total = log(self.dictionary.total)
        for start in range(count - 1, -1, -1):
            route[start] = max((log(frequencies.get(block[start: end + 1]) or 1) - log_total + route[end + 1][0], end)
                               for end in ends_at[start])
        return route

    def words_and_runs(self, block: str, hmm: bool):
        """The route's words of a block as (text, False), in order, with consecutive one-character words joined
        into runs, (text, True): every one with HMM (the HMM's input), ASCII letters and digits without."""
        route = self.route(block)
        start = 0
        buffer = ""
        while start < len(block):
            end = route[start][1] + 1
            word = block[start:end]
            if end - start == 1 and (hmm or _ASCII_ALPHANUMERIC.match(word)):
                buffer += word
            else:
                if buffer:
                    yield buffer, True
                    buffer = ""
                yield word, False
            start = end
        if buffer:
            yield buffer, True

    def _cut_block(self, block: str, hmm: bool):
        frequencies = self.dictionary.frequencies_for(block)
        for text, run in self.words_and_runs(block, hmm):
            if run and hmm:
                yield from self._single_run(text, frequencies)
            else:
                yield text

    def _single_run(self, run: str, frequencies: dict):
        """Characters the route left alone: one is a word; several are the HMM's unless they are one word."""
        if len(run) == 1:
            yield run
        elif not frequencies.get(run):
            yield from self.hmm.cut(run, self.dictionary.force_split)
        else:
            yield from run

    def _inner_words(self, word: str, start: int):
        length = len(word)
        if length <= 2:
            return
        frequencies = self.dictionary.frequencies_for(word)
        for index in range(length - 1):
            gram = word[index: index + 2]
            if frequencies.get(gram):
                yield gram, start + index, start + index + 2
        if length > 3:
            for index in range(length - 2):
                gram = word[index: index + 3]
                if frequencies.get(gram):
                    yield gram, start + index, start + index + 3
