"""jieba.posseg: words with their word classes, over a Segmenter and jieba's joint segmentation/class HMM.

`PosTagger.cut` is POSTokenizer.cut step for step: blocks are runs of Han characters, ASCII letters and digits
and +#&._ (no % or -, unlike the plain cut); a block's words come from the same route as Segmenter's, each
tagged with its dictionary class ('x' when it has none); runs of single characters that are no word go, with
HMM, through the posseg HMM, whose 256 states are (B/M/E/S, class) pairs. Outside blocks every piece is 'x'
(whitespace runs whole, anything else character by character).

The HMM's Viterbi restricts, like jieba's, each step's states to those the character was seen with that the
previous states can reach, and sums in jieba's order. States are numbered in the order of their (B/M/E/S,
class) tuples, so that the ties jieba breaks by comparing tuples break the same way on numbers.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from engine.text.chinese.dictionary import LazyTable

MIN_FLOAT = -3.14e100
MIN_INF = float("-inf")
# jieba.posseg's re_han_detail, re_skip_detail, re_han_internal, re_skip_internal, re_eng, re_num (its re_eng1,
# one ASCII letter or digit, is Segmenter.words_and_runs' test without HMM).
_HAN = re.compile("([\u4E00-\u9FD5]+)")
_DETAIL_SKIP = re.compile(r"([\.0-9]+|[a-zA-Z0-9]+)")
_BLOCK = re.compile(r"([\u4E00-\u9FD5a-zA-Z0-9+#&\._]+)")
_SKIP = re.compile("(\r\n|\\s)")
_ENGLISH = re.compile("[a-zA-Z0-9]+")
_NUMBER = re.compile(r"[\.0-9]+")
_NO_EMISSIONS: dict = {}


class Pair(NamedTuple):
    """A word and its class (jieba.posseg.pair: .word, .flag, and it unpacks as (word, flag))."""

    word: str
    flag: str


class PosTagger:
    """tokenizer: the Segmenter whose dictionary gives the words and classes; model: a Model (the HMM)."""

    def __init__(self, tokenizer, model):
        self.tokenizer = tokenizer
        self.model = model
        self.word_tag_tab = LazyTable(tokenizer.dictionary.tag)  # jieba's name

    def cut(self, sentence: str, HMM: bool = True):  # noqa: N803 (jieba's keyword)
        for block in _BLOCK.split(sentence):
            if _BLOCK.match(block):
                yield from self._cut_block(block, HMM)
                continue
            for piece in _SKIP.split(block):
                if _SKIP.match(piece):
                    yield Pair(piece, "x")
                else:  # jieba tests these characters for digits and letters, which the blocks took all of
                    yield from (Pair(character, "x") for character in piece)

    def _cut_block(self, block: str, hmm: bool):
        tags = self.tokenizer.dictionary.tags_for(block)
        for text, run in self.tokenizer.words_and_runs(block, hmm):
            if not run:
                yield Pair(text, tags.get(text, "x"))
            elif hmm:
                yield from self._single_run(text, tags)
            else:
                yield Pair(text, "eng")

    def _single_run(self, run: str, tags: dict):
        if len(run) == 1:
            yield Pair(run, tags.get(run, "x"))
        elif not self.tokenizer.dictionary.frequency(run):
            yield from self._cut_detail(run)
        else:
            for character in run:
                yield Pair(character, tags.get(character, "x"))

    def _cut_detail(self, text: str):
        for block in _HAN.split(text):
            if _HAN.match(block):
                yield from self._cut_han(block)
                continue
            for piece in _DETAIL_SKIP.split(block):
                if not piece:
                    continue
                if _NUMBER.match(piece):
                    yield Pair(piece, "m")
                elif _ENGLISH.match(piece):
                    yield Pair(piece, "eng")
                else:
                    yield Pair(piece, "x")

    def _cut_han(self, text: str):
        states = self.model.viterbi(text)
        begin = following = 0
        for index, character in enumerate(text):
            position, flag = states[index]
            if position == "B":
                begin = index
            elif position == "E":
                yield Pair(text[begin: index + 1], flag)
                following = index + 1
            elif position == "S":
                yield Pair(character, flag)
                following = index + 1
        if following < len(text):
            yield Pair(text[following:], states[following][1])


class Model:
    """The posseg HMM. tables(): {"states": [[position, class]…] in tuple order, "start": [log P per state],
    "transitions": [[[next state, log P]…] per state], "characters": {character: (states it was seen with)},
    "emissions": {character: {state: log P}}}, called when the model is first used; the last two need only
    `get`."""

    def __init__(self, tables):
        self._tables_source = tables
        self._ready = False

    def _load(self) -> None:
        tables = self._tables_source()
        self.states = [tuple(state) for state in tables["states"]]
        self.start = tables["start"]
        self.transitions = [{int(next_state): probability for next_state, probability in row}
                            for row in tables["transitions"]]
        self.characters = tables["characters"]
        self.emissions = tables["emissions"]
        self.all_states = tuple(range(len(self.states)))
        self._ready = True

    def viterbi(self, text: str) -> list:
        """jieba.posseg.viterbi's best path: one (position, class) per character."""
        if not self._ready:
            self._load()
        transitions = self.transitions
        emissions = self.emissions
        scores = {}
        first = emissions.get(text[0], _NO_EMISSIONS)
        for state in self.characters.get(text[0], self.all_states):
            scores[state] = self.start[state] + first.get(state, MIN_FLOAT)
        back = [dict.fromkeys(scores, None)]
        for character in text[1:]:
            previous_states = [state for state in scores if transitions[state]]
            reachable = {following for state in previous_states for following in transitions[state]}
            candidates = set(self.characters.get(character, self.all_states)) & reachable
            if not candidates:
                candidates = reachable if reachable else self.all_states
            emitted = emissions.get(character, _NO_EMISSIONS)
            new_scores = {}
            pointers = {}
            for state in candidates:
                emission = emitted.get(state, MIN_FLOAT)
                score, previous = max((scores[previous] + transitions[previous].get(state, MIN_INF) + emission,
                                       previous) for previous in previous_states)
                new_scores[state] = score
                pointers[state] = previous
            back.append(pointers)
            scores = new_scores
        _score, state = max((score, state) for state, score in scores.items())
        path = []
        for pointers in reversed(back):
            path.append(self.states[state])
            state = pointers[state]
        path.reverse()
        return path
