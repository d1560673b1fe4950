"""The numba build kernels (engine.text.build_kernels) give the bytes the numpy build gives: postings of any
entries, whole segments of any documents (fields, repeated terms, search-mode positions out of order, long
postings with skip rows), a merge, and the same errors."""

import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import engine.text
from engine.text import build, build_kernels, postings, stored
from engine.text.build import Document
from engine.text.merge import merge
from engine.text.postings import BLOCK_ENTRIES

entries_strategy = st.lists(
    st.tuples(st.integers(0, 5), st.integers(0, 400), st.integers(0, 2),
              st.lists(st.integers(0, 70_000), min_size=1, max_size=4, unique=True)),
    min_size=1, max_size=300, unique_by=lambda entry: entry[:3])
WORDS = ["alpha", "beta", "蓝牙", "耳机", "0x1f", "v2.1", "a"]
fields_strategy = st.dictionaries(st.sampled_from(["text", "title"]),
                                  st.lists(st.tuples(st.sampled_from(WORDS), st.integers(0, 40)), max_size=40),
                                  min_size=1)


def columns_of(built) -> dict:
    columns, meta = built
    arrays = {name: np.asarray(values) for name, values in columns.items()}
    return {name: (array.dtype.str, array.tobytes()) for name, array in arrays.items()}, meta


def both_ways(make) -> list:
    """make() with the numpy build, then with the numba kernels."""
    results = []
    for kernels in ("numpy", "numba"):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(engine.text, "BUILD_KERNELS", kernels)
            results.append(make())
    return results


@settings(max_examples=80, deadline=None)
@given(entries_strategy, st.integers(0, 2))
def test_postings_are_encoded_to_the_same_bytes(entries, plain_field):
    entries = sorted(entries)
    rank = {term: index for index, term in enumerate(sorted({entry[0] for entry in entries}))}
    arguments = ([rank[entry[0]] for entry in entries], [entry[1] for entry in entries],
                 [entry[2] for entry in entries], [len(entry[3]) for entry in entries],
                 [position for entry in entries for position in sorted(entry[3])], len(rank), 3, plain_field)
    assert vars(build_kernels.encode_postings(*arguments)).keys() == vars(postings.encode(*arguments)).keys()
    for name, values in vars(postings.encode(*arguments)).items():
        found = getattr(build_kernels.encode_postings(*arguments), name)
        assert found.dtype == values.dtype and found.tobytes() == values.tobytes(), name


def test_long_postings_with_skip_rows_are_the_same_bytes():
    documents = np.arange(5 * BLOCK_ENTRIES + 7) * 3
    arguments = (np.zeros(documents.size, np.int64), documents, documents % 2, 1 + documents % 3,
                 np.concatenate([np.arange(1 + number % 3) for number in documents.tolist()]), 1, 2, 0)
    expected = postings.encode(*arguments)
    assert expected.skip_documents.size == 6
    for name, values in vars(expected).items():
        assert getattr(build_kernels.encode_postings(*arguments), name).tobytes() == values.tobytes(), name


@pytest.mark.parametrize("arguments, message", [
    (([0, 2], [0, 1], [0, 0], [1, 1], [0, 0], 3, 1, 0), "every term needs at least one entry"),
    (([0, 0], [0, 1], [0, 0], [2, 1], [5, 4, 0], 1, 1, 0), "positions must ascend within an entry"),
    (([0], [0], [0], [1], [-1], 1, 1, 0), "positions must be non-negative"),
])
def test_bad_entries_are_refused_alike(arguments, message):
    for encode in (postings.encode, build_kernels.encode_postings):
        with pytest.raises(ValueError, match=message):
            encode(*arguments)


def make_documents(specs) -> list:
    documents = []
    for docno, (fields, kind) in enumerate(specs):
        stored_fields = {}
        for name, tokens in fields.items():
            terms = [term for term, _position in tokens]
            stored_fields[name] = stored.encode(terms, [position for _term, position in tokens])
        documents.append(Document(3 * docno + 1, f"doc/{docno}", stored_fields, type=kind))
    return documents


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(fields_strategy, st.sampled_from([None, "note"])), min_size=1, max_size=30),
       st.lists(st.integers(0, 200), max_size=5), st.randoms(use_true_random=False))
def test_segments_are_built_to_the_same_bytes(specs, deleted, random):
    """Documents in any order: a build's tokens then come in no place order."""
    documents = make_documents(specs)
    random.shuffle(documents)
    numpy_built, numba_built = both_ways(lambda: columns_of(build.build(documents, deleted)))
    assert numpy_built == numba_built


def test_a_merge_and_the_in_memory_part_are_the_same():
    from engine.text.reader import TextSegment

    first = make_documents([({"text": [(WORDS[number % 7], number % 5), ("alpha", 0)]}, None)
                            for number in range(400)])
    second = [Document(document.docno + 5000, document.key + "b", document.fields) for document in first[:100]]
    segments = [TextSegment.from_columns(*build.build(part)) for part in (first, second)]
    numpy_merged, numba_merged = both_ways(lambda: columns_of(merge(segments, deleted=[1, 4, 5001])))
    assert numpy_merged == numba_merged
    numpy_memory, numba_memory = both_ways(
        lambda: [array.tolist() for array in build.build_memory(first).postings.all_entries()])
    assert numpy_memory == numba_memory


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(st.sampled_from("ab蓝牙x/0"), max_size=20), min_size=1, max_size=60), st.data())
def test_shared_prefixes_are_counted_alike(texts, data):
    from engine.text import frontcode

    buffer = frontcode.StringBuffer.of_texts(texts)
    pairs = st.lists(st.integers(0, len(texts) - 1), min_size=1, max_size=80)
    left, right = np.array(data.draw(pairs)), np.array(data.draw(pairs))
    size = min(left.size, right.size)
    left, right = left[:size], right[:size]
    numpy_shared, numba_shared = both_ways(lambda: frontcode.shared_prefixes(buffer, left, right).tolist())
    assert numpy_shared == numba_shared
    assert numpy_shared == [len(os.path.commonprefix([texts[a].encode(), texts[b].encode()]))
                            for a, b in zip(left.tolist(), right.tolist())]


def reference_entries(terms, places, positions) -> tuple:
    """Entries by the definition: tokens ordered by (term, place, position), one entry per (term, place)."""
    order = np.lexsort((positions, places, terms))
    terms, places, positions = terms[order], places[order], positions[order]
    firsts = [index for index in range(len(terms))
              if index == 0 or (terms[index], places[index]) != (terms[index - 1], places[index - 1])]
    return terms[firsts].tolist(), places[firsts].tolist(), np.diff(firsts + [len(terms)]).tolist(), positions.tolist()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 30), st.integers(0, 9)), min_size=1, max_size=200),
       st.booleans())
def test_tokens_sort_into_entries_by_term_place_and_position(tokens, wide):
    """The numpy build's token sort: by packed keys, or (keys wider than 64 bits) by sort passes, the same
    entries as the definition, repeated tokens included."""
    terms, places, positions = (np.array(column, dtype=np.int32) for column in zip(*tokens))
    term_count = int(terms.max()) + 1
    if wide:  # places and positions far apart enough that (term, place, position) take more than 63 bits
        places, positions = places.astype(np.int64) * (1 << 30), positions * (1 << 27)
    term_count += (1 << 12) if wide else 0
    entries = build._sorted_entries(terms, places, positions, term_count)
    assert [np.asarray(column).tolist() for column in entries] == list(reference_entries(terms, places, positions))
