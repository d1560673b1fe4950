"""TermTable (numba) codes a batch's terms as the dict Vocabulary does: the same terms, numbered densely in
order of first use, across batches and growth, and refuses bad terms without keeping any of the batch."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from engine.text.pieces import TermRuns, Vocabulary
from engine.text.term_table import INITIAL_TERMS, TermTable

# Any text without the separator, lone surrogates included (a str may hold them; UTF-8 with surrogatepass).
terms = st.text(st.characters(blacklist_characters=" "), min_size=1, max_size=12)
batches = st.lists(st.lists(st.lists(terms, max_size=6), max_size=8), min_size=1, max_size=4)


def runs_of(term_lists: list) -> TermRuns:
    return TermRuns(term_lists, [" ".join(terms) for terms in term_lists])


def decoded(vocabulary, codes: np.ndarray) -> list:
    all_codes, all_terms = vocabulary.entries()
    term_of = dict(zip(all_codes.tolist(), all_terms))
    return [term_of[code] for code in codes.tolist()]


@settings(max_examples=60, deadline=None)
@given(batches)
def test_term_table_codes_like_the_dict_vocabulary(history):
    table, reference = TermTable(), Vocabulary()
    first_use: list = []
    for term_lists in history:
        runs = runs_of(term_lists)
        total = sum(map(len, term_lists))
        codes = table.code(runs, total)
        assert codes.dtype == np.int32 and codes.size == total
        all_terms = [term for terms in term_lists for term in terms]
        assert decoded(table, codes) == decoded(reference, reference.code(runs, total)) == all_terms
        first_use += [term for term in dict.fromkeys(all_terms) if term not in first_use]
        assert table.entries()[1] == first_use and table.entries()[0].tolist() == list(range(len(first_use)))


def test_the_table_grows_past_its_first_arrays():
    table = TermTable()
    words = [f"term{number}-{'x' * (number % 40)}" for number in range(5 * INITIAL_TERMS)]
    for start in range(0, len(words), 3000):
        batch = words[start:start + 3000] + words[:50]
        codes = table.code(runs_of([batch]), len(batch))
        assert decoded(table, codes) == batch
    assert table.term_count == len(words) and table.slots.size >= 2 * len(words)


@pytest.mark.parametrize("term_lists, total", [([["a b"]], 1), ([[""]], 1), ([["a", ""]], 2), ([["a"], [""]], 2),
                                               ([["a", "b"]], 3)])
def test_a_bad_batch_is_refused_and_leaves_the_table_as_it_was(term_lists, total):
    table = TermTable()
    table.code(runs_of([["kept", "terms"]]), 2)
    with pytest.raises(ValueError, match="non-empty, hold no spaces"):
        table.code(runs_of(term_lists), total)
    assert table.term_count == 2 and table.entries()[1] == ["kept", "terms"]
    assert table.code(runs_of([["terms", "new"]]), 2).tolist() == [1, 2]


def test_a_large_batch_is_coded_on_a_thread_and_read_after_it(monkeypatch):
    from engine.text import term_kernels, term_table

    table = TermTable()
    words = [f"w{number % 9000}" for number in range(term_table.THREAD_MIN_TOKENS + 5)]
    codes = table.code(runs_of([words]), len(words))  # may still be filling
    assert decoded(table, codes) == words  # entries() waits for it
    second = table.code(runs_of([words[:10] + ["new"]]), 11)  # waits for the first batch before coding
    assert table.entries()[1][-1] == "new" and second.tolist()[-1] == 9000

    def broken(*arguments):
        raise MemoryError("no room")

    monkeypatch.setattr(term_kernels, "code_terms", broken)
    table.code(runs_of([words]), len(words))
    with pytest.raises(MemoryError, match="no room"):  # raised to whoever reads next
        table.entries()
    table.wait()  # raised once
