import numpy as np
import pytest

from engine.text import bm25
from engine.text.bm25 import BM25Parameters
from engine.text.build import build_memory
from engine.text.search import Searcher
from engine.text.tokenizer import Tokenizer
from text_testkit import document, reference_bm25, segment

TEXTS = [
    {"title": "Bluetooth broken", "text": "Win11 蓝牙打不开了, the bluetooth adapter vanished after update"},
    {"text": "error 0x8007045D while copying files to the USB drive"},
    {"title": "Fox", "text": "the quick brown fox jumps over the lazy dog", "keywords": "fox dog"},
    {"text": "蓝牙耳机连接不上电脑 bluetooth headset"},
    {"text": "quick brown dogs and quick foxes", "entities": "Fox"},
    {"text": "EventID=17 WHEA logger reported a corrected hardware error"},
    {"title": "USB", "text": "usb drive not recognized, error code 43"},
    {"text": "brown bread recipe with quick yeast"},
]
QUERIES = ["quick brown fox", "bluetooth 蓝牙", "error usb drive", "fox dog dog", "hardware error 17"]


@pytest.fixture(scope="module")
def tokenizer():
    return Tokenizer()


def documents(tokenizer):
    return [document(tokenizer, number, f"d{number}", fields) for number, fields in enumerate(TEXTS)]


def searcher_scores(searcher, query):
    return {hit.key: hit.score for hit in searcher.search(query, top=100)}


@pytest.mark.parametrize("parameters", [
    BM25Parameters(),
    BM25Parameters(k1=0.9, b=0.4, delta=0.0, field_weights={"title": 3.0, "keywords": 0.5}),
])
@pytest.mark.parametrize("query", QUERIES)
def test_scores_equal_the_textbook_formula(tokenizer, parameters, query):
    docs = documents(tokenizer)
    searcher = Searcher([segment(docs)], tokenizer, parameters)
    weights = {name: parameters.weight(name) for name in ("title", "text", "keywords", "entities")}
    expected = reference_bm25(docs, tokenizer.parse_query(query, searcher.vocabulary()).terms,
                              parameters.k1, parameters.b, parameters.delta, weights)
    found = searcher_scores(searcher, query)
    assert found.keys() == expected.keys()
    for key, score in expected.items():
        assert found[key] == pytest.approx(score, abs=1e-6)


@pytest.mark.parametrize("query", QUERIES)
def test_statistics_span_segments_memory_part_and_deletions(tokenizer, query):
    docs = documents(tokenizer)
    replacement = document(tokenizer, 20, "d2", {"text": "a replaced fox document about brown bread"})
    parts = [segment(docs[:3]), segment(docs[3:6], deleted=[1]), segment(docs[6:] + [replacement])]
    searcher = Searcher(parts, tokenizer, deleted=[2])
    live = [doc for doc in docs if doc.docno not in (1, 2)] + [replacement]
    expected = reference_bm25(live, tokenizer.parse_query(query, searcher.vocabulary()).terms,
                              weights=bm25.DEFAULT_FIELD_WEIGHTS)
    found = searcher_scores(searcher, query)
    assert found.keys() == expected.keys()
    for key, score in expected.items():
        assert found[key] == pytest.approx(score, abs=1e-6)
    assert searcher.document_count == len(live)
    assert searcher.statistics()["deleted"] == 2


def test_scores_do_not_depend_on_how_documents_are_split_into_segments(tokenizer):
    docs = documents(tokenizer)
    whole = Searcher([segment(docs)], tokenizer)
    split = Searcher([segment(docs[index::3]) for index in range(3)], tokenizer)
    in_memory = Searcher([build_memory(docs[:5]), segment(docs[5:])], tokenizer)
    for query in QUERIES + ['"quick brown"', '"蓝牙"']:
        expected = [(h.key, h.score, h.terms) for h in whole.search(query)]
        assert [(h.key, h.score, h.terms) for h in split.search(query)] == expected
        assert [(h.key, h.score, h.terms) for h in in_memory.search(query)] == expected


def test_document_frequency_counts_live_documents_once(tokenizer):
    docs = documents(tokenizer)
    searcher = Searcher([segment(docs[:4]), segment(docs[4:])], tokenizer, deleted=[2])
    assert searcher.document_frequency("fox") == 1  # d2 (title, text, keywords) is deleted; d4 has it in entities
    assert searcher.document_frequency("quick") == 2


def test_top_k_breaks_ties_by_document_number():
    scores = np.array([1.0, 3.0, 3.0, 2.0, 3.0])
    assert bm25.top_k(scores, np.array([9, 8, 7, 6, 5]), 2).tolist() == [4, 2]
    assert bm25.top_k(scores, np.arange(5), 10).tolist() == [1, 2, 4, 3, 0]


def test_parameters_are_validated():
    with pytest.raises(ValueError):
        BM25Parameters(b=1.5)
    with pytest.raises(ValueError):
        BM25Parameters(field_weights={"title": -1.0})


def test_numba_kernels_give_the_numpy_results(tokenizer):
    docs = documents(tokenizer)
    parts = [segment(docs[:4]), build_memory(docs[4:6]), segment(docs[6:], deleted=[0])]
    plain = Searcher(parts, tokenizer)
    jitted = Searcher(parts, tokenizer, kernels="numba")
    for query in QUERIES + ['"quick brown"', "蓝牙 bluetooth error"]:
        expected = [(h.key, h.score, h.terms) for h in plain.search(query, top=20)]
        found = [(h.key, h.score, h.terms) for h in jitted.search(query, top=20)]
        assert [(key, terms) for key, _, terms in found] == [(key, terms) for key, _, terms in expected]
        assert [score for _, score, _ in found] == pytest.approx([score for _, score, _ in expected], abs=1e-12)


@pytest.mark.parametrize("kernels", ["numpy", "numba"])
@pytest.mark.parametrize("capacity", [1 << 20, 3])
def test_a_searcher_remembering_decoded_terms_ranks_like_a_fresh_one(tokenizer, monkeypatch, capacity, kernels):
    from engine.text import search

    monkeypatch.setattr(search, "_CACHED_ENTRIES", capacity)  # 3: most terms evicted or never kept
    docs = documents(tokenizer)
    parts = [segment(docs[:4]), build_memory(docs[4:6]), segment(docs[6:], deleted=[0])]
    warm = Searcher(parts, tokenizer, kernels=kernels)
    queries = QUERIES + ['"quick brown"', "蓝牙 bluetooth error"]
    for _round in range(2):
        for query in queries + list(reversed(queries)):
            fresh = Searcher(parts, tokenizer, kernels=kernels)
            expected = [(h.key, h.score, h.terms) for h in fresh.search(query, top=20)]
            assert [(h.key, h.score, h.terms) for h in warm.search(query, top=20)] == expected


def test_numba_kernels_with_filters_and_more_than_64_query_terms(tokenizer):
    letters = "bcdfgkmnprtvz"
    words = sorted(f"zq{first}{second}" for first in letters for second in letters)[:70]
    docs = documents(tokenizer) + [
        document(tokenizer, 100 + number, f"many{number}", " ".join(words[number:number + 30]), type="note",
                 timestamp=float(number)) for number in range(0, 70, 10)]
    parts = [segment(docs[:5]), build_memory(docs[5:8]), segment(docs[8:], deleted=[1])]
    plain = Searcher(parts, tokenizer)
    jitted = Searcher(parts, tokenizer, kernels="numba")
    for query, filters in ((" ".join(words), {}), (" ".join(words) + " quick fox", {"types": ["note"]}),
                           ("w3 w45 w69 quick", {"since": 15.0}), ("quick brown", {"types": ["note"]})):
        expected = [(h.key, round(h.score, 9), h.terms) for h in plain.search(query, top=20, **filters)]
        found = [(h.key, round(h.score, 9), h.terms) for h in jitted.search(query, top=20, **filters)]
        assert found == expected
    hits = {hit.key: hit for hit in jitted.search(" ".join(words), top=20)}
    assert hits["many0"].terms == sorted(words[0:30]) and hits["many60"].terms == sorted(words[60:70])


def test_damaged_postings_are_corruption_on_the_kernel_path(tokenizer):
    from engine.errors import CorruptionError
    from engine.text.build import build
    from engine.text.reader import TextSegment

    columns, meta = build(documents(tokenizer))
    columns["postings"] = columns["postings"].copy()
    columns["postings"][-1] |= 0x80  # the last varint now runs past the end of its term
    damaged = TextSegment.from_columns(columns, meta)
    last_term = damaged.dictionary.terms()[-1]
    with pytest.raises(CorruptionError):
        Searcher([damaged], tokenizer, kernels="numba").search(last_term, top=5)
