import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from engine.errors import CorruptionError
from engine.text import postings, termdict
from engine.text.postings import BLOCK_ENTRIES, PostingsReader

entries_strategy = st.lists(
    st.tuples(st.integers(0, 5), st.integers(0, 400), st.integers(0, 2), st.lists(st.integers(0, 3000), min_size=1,
                                                                                   max_size=4, unique=True)),
    min_size=1, max_size=300, unique_by=lambda entry: entry[:3])


def encode_entries(entries, field_slots=3, plain_field=0):
    entries = sorted(entries)
    used = sorted({term for term, *_ in entries})
    rank = {term: index for index, term in enumerate(used)}
    terms = [rank[term] for term, *_ in entries]
    positions = [position for *_, places in entries for position in sorted(places)]
    encoded = postings.encode(terms, [entry[1] for entry in entries], [entry[2] for entry in entries],
                              [len(entry[3]) for entry in entries], positions, len(used), field_slots, plain_field)
    return entries, used, encoded


def reader_for(encoded, field_slots=3, documents=401, plain_field=0):
    return PostingsReader(vars(encoded).__getitem__, field_slots, documents, plain_field=plain_field)


@settings(max_examples=60)
@given(entries_strategy, st.integers(0, 2))
def test_round_trip_per_term_and_whole_segment(entries, plain_field):
    entries, used, encoded = encode_entries(entries, plain_field=plain_field)
    reader = reader_for(encoded, plain_field=plain_field)
    for ordinal, term in enumerate(used):
        expected = [entry for entry in entries if entry[0] == term]
        documents, fields, frequencies = reader.entries(ordinal)
        assert documents.tolist() == [entry[1] for entry in expected]
        assert fields.tolist() == [entry[2] for entry in expected]
        assert frequencies.tolist() == [len(entry[3]) for entry in expected]
        assert reader.positions(ordinal, frequencies).tolist() == [p for entry in expected for p in sorted(entry[3])]
        assert int(encoded.document_frequencies[ordinal]) == len({entry[1] for entry in expected})
    terms, documents, fields, frequencies, positions = reader.all_entries()
    assert [used[term] for term in terms] == [entry[0] for entry in entries]
    chosen = list(range(len(used)))[::-2]  # any order, as a query's terms come
    *together, counts = reader.entries_of(chosen)
    assert counts.tolist() == [reader.entries(ordinal)[0].size for ordinal in chosen]
    for column, joined in enumerate(together):
        assert joined.tolist() == [value for ordinal in chosen for value in reader.entries(ordinal)[column].tolist()]
    assert documents.tolist() == [entry[1] for entry in entries]
    assert positions.tolist() == [p for entry in entries for p in sorted(entry[3])]


def test_long_postings_get_skip_entries_and_decode_by_block():
    documents = np.arange(0, 3000, 3)
    frequencies = 1 + (documents % 7 == 0)
    positions = np.concatenate([np.arange(frequency) for frequency in frequencies])
    encoded = postings.encode(np.zeros(documents.size, int), documents, np.zeros(documents.size, int),
                              frequencies, positions, 1, 1)
    reader = PostingsReader(vars(encoded).__getitem__, 1, 3000)
    blocks = -(-documents.size // BLOCK_ENTRIES)
    assert reader.skip_rows(0) == (0, blocks)
    assert encoded.skip_documents.tolist() == documents[::BLOCK_ENTRIES].tolist()
    found, _fields, found_frequencies = reader.entries(0, within=np.array([1500, 1503, 2997]))
    assert {1500, 1503, 2997} <= set(found.tolist())
    assert found.size <= 2 * BLOCK_ENTRIES
    assert found_frequencies.tolist() == (1 + (found % 7 == 0)).tolist()
    assert reader.entries(0)[0].tolist() == documents.tolist()
    assert reader.entries(0)[2].tolist() == frequencies.tolist()


def test_most_entries_take_one_varint():
    encoded = postings.encode(np.zeros(100, int), np.arange(100), np.zeros(100, int), np.ones(100, int),
                              np.zeros(100, int), 1, 1)
    assert encoded.postings.size == 100


def test_document_beyond_the_segment_is_corruption():
    _entries, _used, encoded = encode_entries([(0, 400, 0, [1])])
    with pytest.raises(CorruptionError):
        reader_for(encoded, documents=10).entries(0)


def test_missing_entry_details_are_corruption():
    encoded = postings.encode([0], [3], [0], [2], [0, 1], 1, 1)
    encoded.postings = encoded.postings[:1]
    with pytest.raises(CorruptionError):
        reader_for(encoded, field_slots=1).entries(0)


@given(st.sets(st.text(min_size=1, max_size=8), max_size=300))
def test_term_dictionary_lookup_and_prefixes(terms):
    ordered = sorted(terms)
    dictionary = termdict.TermDictionary(termdict.encode(ordered).__getitem__, len(ordered))
    assert dictionary.terms() == ordered
    for ordinal, term in enumerate(ordered):
        assert dictionary.ordinal(term) == ordinal
        assert dictionary.has_prefix(term[:1])
    assert dictionary.ordinal("\U0010ffff" * 9) == -1
    for probe in ["a", "zz", "蓝", "\x00"]:
        assert dictionary.has_prefix(probe) == any(term.startswith(probe) for term in ordered)
        assert (probe in dictionary) == (probe in terms)


def test_term_dictionary_detects_a_damaged_block():
    ordered = [f"term{index:03d}" for index in range(100)]
    columns = termdict.encode(ordered)
    damaged = columns["term_blocks"].copy()
    damaged[1] = 0x7F
    columns["term_blocks"] = damaged
    with pytest.raises(CorruptionError):
        termdict.TermDictionary(columns.__getitem__, len(ordered)).ordinal("term000")


def spec_term_blocks(ordered: list) -> bytes:
    """MANIFEST.spec 4a, term dictionary, written out term by term."""
    from engine.codec import encode_varint

    out = b""
    for ordinal, term in enumerate(ordered):
        data = term.encode("utf-8")
        previous = ordered[ordinal - 1].encode("utf-8") if ordinal % termdict.TERMS_PER_BLOCK else b""
        shared = next((index for index, (left, right) in enumerate(zip(previous, data)) if left != right),
                      min(len(previous), len(data)))
        out += encode_varint(shared) + encode_varint(len(data) - shared) + data[shared:]
    return out


@settings(max_examples=60, deadline=None)
@given(st.sets(st.tuples(st.sampled_from(["", "chat/", "x" * 40, "蓝牙耳机" * 5]),
                         st.text(alphabet="ab蓝\x00😀", max_size=12)), max_size=120))
def test_term_blocks_are_the_bytes_the_spec_describes(pairs):
    ordered = sorted({prefix + suffix for prefix, suffix in pairs if prefix + suffix})
    columns = termdict.encode(ordered)
    assert columns["term_blocks"].tobytes() == spec_term_blocks(ordered)
    firsts = ordered[::termdict.TERMS_PER_BLOCK]
    assert columns["term_first"].tobytes() == "".join(firsts).encode("utf-8")
    assert termdict.TermDictionary(columns.__getitem__, len(ordered)).terms() == ordered
