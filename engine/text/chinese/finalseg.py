"""jieba.finalseg: the 4-state (B M E S) HMM that cuts runs of characters the dictionary left as single pieces.

The same Viterbi as jieba's, with its probabilities (compiled from jieba/finalseg/prob_*.py) and its arithmetic
in the same order, so that every sum and every tie (broken by the state's letter) comes out the same; the best
path is kept as back-pointers instead of jieba's copied lists, which changes nothing but the cost.
"""

from __future__ import annotations

import re

MIN_FLOAT = -3.14e100
STATES = "BMES"
# jieba's PrevStatus: the states that may precede each state, in jieba's order.
_PREVIOUS = {"B": "ES", "M": "MB", "S": "SE", "E": "BM"}
_HAN = re.compile("([\u4E00-\u9FD5]+)")
_SKIP = re.compile(r"([a-zA-Z0-9]+(?:\.\d+)?%?)")
_UNSEEN = (MIN_FLOAT,) * 4


class Model:
    """start: state → log P; transitions: state → {state: log P}; emissions(): character → (B, M, E, S) log P,
    called once, when the model is first used (MIN_FLOAT stands for a pair jieba's tables lack)."""

    def __init__(self, start: dict, transitions: dict, emissions):
        self._start = [start[state] for state in STATES]
        self._steps = [[(STATES.index(previous), previous, transitions[previous].get(state, MIN_FLOAT))
                        for previous in _PREVIOUS[state]] for state in STATES]
        self._emissions_source = emissions
        self._emissions = None

    def cut(self, text: str, force_split=frozenset()):
        """jieba.finalseg.cut: Han runs by the HMM (a word in `force_split` comes out character by character),
        other characters in runs of letters and digits (with a decimal part and %) and single pieces."""
        for block in _HAN.split(text):
            if _HAN.match(block):
                for word in self._cut_han(block):
                    if word in force_split:
                        yield from word
                    else:
                        yield word
            else:
                for piece in _SKIP.split(block):
                    if piece:
                        yield piece

    def _cut_han(self, text: str):
        states = self._viterbi(text)
        begin = following = 0
        for index, character in enumerate(text):
            state = states[index]
            if state == "B":
                begin = index
            elif state == "E":
                yield text[begin: index + 1]
                following = index + 1
            elif state == "S":
                yield character
                following = index + 1
        if following < len(text):
            yield text[following:]

    def _viterbi(self, text: str) -> list:
        if self._emissions is None:
            self._emissions = self._emissions_source()
        emissions = self._emissions
        emitted = emissions.get(text[0], _UNSEEN)
        scores = [self._start[number] + emitted[number] for number in range(4)]
        pointers = []
        steps = self._steps
        for character in text[1:]:
            emitted = emissions.get(character, _UNSEEN)
            new_scores = [0.0] * 4
            chosen = [0] * 4
            for number in range(4):
                emission = emitted[number]
                score, _name, previous = max((scores[previous] + transition + emission, name, previous)
                                             for previous, name, transition in steps[number])
                new_scores[number] = score
                chosen[number] = previous
            pointers.append(chosen)
            scores = new_scores
        # jieba ends in E or S, the better score (on a tie, the later letter: S).
        state = max((scores[2], "E", 2), (scores[3], "S", 3))[2]
        path = [state]
        for chosen in reversed(pointers):
            state = chosen[state]
            path.append(state)
        return [STATES[number] for number in reversed(path)]
