"""Cutting a text into consecutive pieces of at most a number of tokens, at sentence ends where possible, in time
linear in its length and memory bounded whatever its length (one 50 MB line included).

The rule (plain text paragraphs into turns, turns into raw passages): a text within the limit is one piece.
Otherwise it is read as units, its sentences (a sentence ends after CJK or ASCII terminal punctuation with any
closing quotes and following spaces, or at a line end), and a sentence above the limit as its words and CJK
characters (each with the spaces after it; a sentence's leading spaces are a unit of their own, of 0 tokens).
Units are packed greedily: a piece closes before the unit that would take it past the limit, unless the
piece holds no token yet. Tokens are token_estimate.estimate_tokens' of each unit alone.

How: sentence ends come from one regular-expression scan; sentences are counted in batches by the chunker's
numpy counts; the units of a long sentence come from its character classes, block by block; and the packing
finds each piece's end by bisecting running token sums, so Python steps are per sentence and per piece, never
per character or word, and no copy of more than a block is made.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from memctl.ingest.chunker import CJK_CHARACTER, SPACE_CHARACTER, WORD_CHARACTER, character_classes
from memctl.language.token_estimate import CJK_RUN, text_counts, tokens_of

# A sentence ends after CJK or ASCII terminal punctuation (with any closing quotes), or at a line end.
SENTENCE_END = re.compile(r"(?:[。！？；!?…]+[」』”’\"')）]*|\.(?=\s))\s*|\n")
SENTENCE_MARK = re.compile(r"[。！？；!?….\n]")  # the characters a sentence end can begin with
BLOCK_CHARACTERS = 1 << 20  # a block of characters classed (or counted) at once: 4 MB of code points at most
BATCH_SENTENCES = 4096  # sentences counted at once


def cut(text: str, start: int, end: int, max_tokens: int) -> list[tuple[int, int]]:
    """Consecutive (start, end) pieces of text[start:end], each of at most max_tokens where its units allow."""
    if span_tokens(text, start, end) <= max_tokens:
        return [(start, end)]
    packer = _Packer(max_tokens)
    for unit_starts, unit_tokens in _units(text, start, end, max_tokens):
        packer.feed(unit_starts, unit_tokens)
    cuts = packer.cuts
    return list(zip([start, *cuts], [*cuts, end]))


def span_tokens(text: str, start: int, end: int) -> int:
    """estimate_tokens(text[start:end]), counted a block at a time (a word crossing into the next
    block is counted once)."""
    if end - start <= BLOCK_CHARACTERS:
        return tokens_of(*text_counts(text[start:end]))
    return blocks_tokens(text[block_start: min(block_start + BLOCK_CHARACTERS, end)]
                         for block_start in range(start, end, BLOCK_CHARACTERS))


def blocks_tokens(blocks) -> int:
    """estimate_tokens of the concatenation of the strs `blocks`, one block at a time."""
    characters = words = 0
    previous = ""
    for block in blocks:
        if not block:
            continue
        block_characters, block_words = text_counts(block)
        characters += block_characters
        words += block_words - (previous != "" and _is_word(previous) and _is_word(block[0]))
        previous = block[-1]
    return tokens_of(characters, words)


def _is_word(character: str) -> bool:
    return not character.isspace() and CJK_RUN.match(character) is None


def _units(text: str, start: int, end: int, max_tokens: int):
    """(unit starts, unit tokens) numpy arrays, in text order, a batch of sentences or a block of a long one
    at a time."""
    for bounds in _sentence_batches(text, start, end):
        yield from _sentence_units(text, bounds, max_tokens)


def _sentence_batches(text: str, start: int, end: int, final: bool = True):
    """Lists of consecutive sentence bounds of text[start:end], each list starting where the one before ended.
    final=False: the text goes on past `end`, so the lists stop at the last sentence end that what follows
    cannot move (one that ends before `end`). Sentence ends are matched only where one can begin
    (SENTENCE_MARK): searching for the whole pattern tries it at every character, twice as slow over a long
    text."""
    bounds = [start]
    match_end = SENTENCE_END.match
    for mark in SENTENCE_MARK.finditer(text, start, end):
        if mark.start() < bounds[-1]:
            continue  # inside the sentence end matched last
        match = match_end(text, mark.start(), end)
        if match is None:
            continue
        if match.end() == end and not final:
            break  # its spaces, or a "." its following space, may go on past `end`
        bounds.append(match.end())
        if len(bounds) > BATCH_SENTENCES or match.end() - bounds[0] > BLOCK_CHARACTERS:
            yield bounds
            bounds = [match.end()]
    if final and bounds[-1] < end:
        bounds.append(end)
    if len(bounds) > 1:
        yield bounds


def cut_windows(windows, max_tokens: int):
    """The pieces cut(text, 0, len(text), max_tokens) finds, for a text given as consecutive strs: `windows()`
    returns a fresh iterator over them (it is read twice: once to count the whole text's tokens). Yields
    (start, piece text) in order, holding one window and the open piece at a time; a sentence longer than a
    window is held whole until its end comes."""
    if blocks_tokens(windows()) <= max_tokens:
        yield 0, "".join(windows())
        return
    packer = _Packer(max_tokens)
    text, base, scanned, emitted = "", 0, 0, 0  # text is the whole text's [base, base + len(text))
    for window, final in _marking_last(windows()):
        text += window
        for bounds in _sentence_batches(text, scanned - base, len(text), final):
            for starts, tokens in _sentence_units(text, bounds, max_tokens):
                packer.feed(starts + base, tokens)
            scanned = bounds[-1] + base
        position = base
        for cut_at in packer.cuts[emitted:]:
            yield position, text[position - base: cut_at - base]
            position = cut_at
        emitted = len(packer.cuts)
        text, base = text[position - base:], position
    yield base, text


def _marking_last(items):
    """(item, is_last) of each item."""
    iterator = iter(items)
    previous = next(iterator, None)
    if previous is None:
        return
    for item in iterator:
        yield previous, False
        previous = item
    yield previous, True


def _sentence_units(text: str, bounds: list, max_tokens: int):
    """The units of the sentences text[bounds[i]:bounds[i + 1]]: each sentence within the limit is one, a longer
    one is cut into words and CJK characters (_word_units)."""
    import numpy as np

    from memctl.ingest.chunker import _text_counts_all

    starts = np.array(bounds[:-1], dtype=np.int64)
    ends = bounds[1:]
    short = [text[first:last] if last - first <= BLOCK_CHARACTERS else "" for first, last in zip(bounds, ends)]
    characters, words, _ = _text_counts_all(short)
    tokens = tokens_of(characters, words)
    for index, (first, last) in enumerate(zip(bounds, ends)):
        if last - first > BLOCK_CHARACTERS:  # counted block by block instead of copied whole
            tokens[index] = span_tokens(text, first, last)
    long = np.flatnonzero(tokens > max_tokens).tolist()
    done = 0
    for index in long:
        if index > done:
            yield starts[done:index], tokens[done:index]
        yield from _word_units(text, bounds[index], ends[index])
        done = index + 1
    if done < len(starts):
        yield starts[done:], tokens[done:]


WORD_TOKENS = tokens_of(0, 1)
CJK_TOKENS = tokens_of(1, 0)


def _word_units(text: str, start: int, end: int):
    """The units of a sentence above the limit: a unit starts at its first character, at every CJK character
    and at every word character after a space or a CJK character; a word unit counts as one word, a CJK
    unit as one character, the sentence's leading spaces as nothing."""
    import numpy as np

    token_of_class = np.zeros(3, dtype=np.int64)
    token_of_class[[WORD_CHARACTER, CJK_CHARACTER, SPACE_CHARACTER]] = WORD_TOKENS, CJK_TOKENS, 0
    previous = None  # class of the character before the block
    for block_start in range(start, end, BLOCK_CHARACTERS):
        classes = character_classes(text[block_start: min(block_start + BLOCK_CHARACTERS, end)])
        before = np.empty_like(classes)
        before[1:] = classes[:-1]
        before[0] = SPACE_CHARACTER if previous is None else previous
        opens = (classes == CJK_CHARACTER) | ((classes == WORD_CHARACTER) & (before != WORD_CHARACTER))
        if previous is None:
            opens[0] = True
        positions = np.flatnonzero(opens)
        yield positions + block_start, token_of_class[classes[positions]]
        previous = classes[-1]


class _Packer:
    """The greedy packing of units into pieces, fed unit batches in text order; `cuts` are the starts of every
    piece but the first."""

    def __init__(self, max_tokens: int):
        self.max_tokens = max_tokens
        self.cuts: list = []
        self.carried = 0  # tokens of the open piece before the next batch

    def feed(self, starts, tokens) -> None:
        """sums[k] - origin is what the open piece holds before unit k; it closes before unit k (k after its
        first unit) when it holds a token and unit k would take it past the limit."""
        import numpy as np

        count = len(tokens)
        sums = np.empty(count + 1, dtype=np.int64)
        sums[0] = self.carried
        np.cumsum(tokens, out=sums[1:])
        sums[1:] += self.carried
        sums = sums.tolist()
        origin, lowest = 0, 0  # the open piece's first unit is before `lowest`
        while True:
            past = max(bisect_right(sums, origin + self.max_tokens), lowest + 1) - 1
            holding = max(bisect_right(sums, origin), lowest)
            close = max(past, holding)
            if close >= count:
                break
            self.cuts.append(int(starts[close]))
            origin, lowest = sums[close], close + 1
        self.carried = sums[count] - origin
