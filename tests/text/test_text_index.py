import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine import fs
from engine.errors import InputError
from engine.store import Store
from engine.text.index import TextIndex
from engine.text.search import Searcher
from engine.text.tables import text_tables
from engine.text.tokenizer import Tokenizer
from text_testkit import document, segment
from tools.testing.plain import files_containing

TOKENIZER = Tokenizer()
UNNAMED = text_tables("text")  # the tables of the unnamed text index, which TextIndex writes by default


class Crash(Exception):
    pass


def crash():
    raise Crash()


@pytest.fixture(autouse=True)
def _disarm():
    yield
    fs.disarm_all()


@pytest.fixture
def store(tmp_path):
    opened = Store.open(str(tmp_path / "store"))
    yield opened
    opened.close()


def results(index, query, **options):
    return [(hit.key, round(hit.score, 9)) for hit in index.search(query, top=50, **options)]


def test_add_search_update_delete_across_flush_and_compaction(store):
    index = TextIndex(store, TOKENIZER)
    index.add("a", "Win11 蓝牙打不开了", type="chat", timestamp=10)
    index.add_many([{"key": "b", "fields": {"title": "USB error", "text": "error 0x8007045D on the USB drive"}},
                    {"key": "c", "fields": "the quick brown fox"}])
    assert [hit.key for hit in index.search("蓝牙 打不开")] == ["a"]
    store.flush()
    index.add("c", "brown dogs and quick foxes")
    assert [hit.key for hit in index.search("quick brown")] == ["c"]
    assert index.get("c")["fields"] == {"text": "brown dogs and quick foxes"}
    store.flush()
    assert index.delete("a") is True
    assert index.delete("a") is False
    assert index.search("蓝牙") == []
    before = results(index, "quick brown error usb")
    assert index.statistics()["documents"] == 2
    store.compact()
    assert results(index, "quick brown error usb") == before
    assert index.statistics()["parts"] == 1


def test_results_are_identical_after_restart_and_for_a_reader(tmp_path):
    path = str(tmp_path / "store")
    with Store.open(path) as store:
        index = TextIndex(store, TOKENIZER)
        for number in range(30):
            index.add(f"k{number}", f"document {number} about topic{number % 4} and 蓝牙{'耳机' if number % 3 else ''}")
            if number % 10 == 9:
                store.flush()
        index.delete("k3")
        expected = {query: results(index, query) for query in ("topic1 document", "蓝牙耳机", "about")}
    with Store.open(path, writable=False) as reader:
        assert {query: results(TextIndex(reader, TOKENIZER), query) for query in expected} == expected
    with Store.open(path) as store:
        store.compact()
        assert {query: results(TextIndex(store, TOKENIZER), query) for query in expected} == expected


def test_one_batch_holds_several_versions_of_a_key(store):
    index = TextIndex(store, TOKENIZER)
    with store.batch() as batch:
        index.add("k", "first version alpha", batch=batch)
        index.add("k", "second version beta", batch=batch)
    assert [hit.key for hit in index.search("beta")] == ["k"]
    assert index.search("alpha") == []
    store.flush()
    assert index.search("alpha") == [] and index.statistics()["documents"] == 1


@pytest.mark.parametrize("document", [
    {"key": "", "fields": "x"},
    {"key": "k", "fields": 3},
    {"key": "k", "fields": {"text": b"bytes"}},
    {"key": "k", "fields": "x", "timestamp": "yesterday"},
    {"key": "k", "fields": "x", "timestamp": float("nan")},
    {"key": "k", "fields": "x", "tags": "one"},
    "not a mapping",
])
def test_bad_documents_are_refused_and_nothing_is_written(store, document):
    index = TextIndex(store, TOKENIZER)
    index.add("existing", "kept text")
    sequence = store.sequence
    with pytest.raises(InputError):
        index.add_many([{"key": "fine", "fields": "fine"}, document])
    assert store.sequence == sequence
    assert [hit.key for hit in index.search("fine kept")] == ["existing"]


def test_compaction_leaves_no_trace_of_deleted_text(store):
    index = TextIndex(store, TOKENIZER)
    index.add("secret", "the password is zanzibarquux 机密词汇")
    index.add("public", "an ordinary note")
    store.flush()
    index.delete("secret")
    store.compact()
    assert files_containing(store.path, b"zanzibarquux") == []
    assert files_containing(store.path, "机密词汇".encode()) == []
    assert [hit.key for hit in index.search("ordinary")] == ["public"]


@pytest.mark.parametrize("operation, failpoint", [
    ("flush", "flush.after_segments"), ("flush", "segment.before_rename"), ("flush", "flush.after_new_wal"),
    ("compact", "compact.after_segments"), ("compact", "compact.after_manifest.before_unlink"),
])
def test_a_crash_during_flush_or_compaction_loses_no_acknowledged_document(tmp_path, operation, failpoint):
    path = str(tmp_path / "store")
    store = Store.open(path)
    index = TextIndex(store, TOKENIZER)
    index.add("a", "alpha document")
    store.flush()
    index.add("b", "beta document")
    index.delete("a")
    if operation == "compact":
        store.flush()
        index.add("c", "gamma document")
    expected = results(index, "alpha beta gamma document")
    fs.arm(failpoint, 1, crash)
    with pytest.raises(Crash):
        getattr(store, operation)()
    fs.disarm_all()
    store.close()  # frees the lock as the crashed process's exit would; writes nothing
    with Store.open(path) as reopened:
        assert results(TextIndex(reopened, TOKENIZER), "alpha beta gamma document") == expected
        reopened.compact()
        assert results(TextIndex(reopened, TOKENIZER), "alpha beta gamma document") == expected
    with Store.open(path, writable=False) as reader:
        assert results(TextIndex(reader, TOKENIZER), "alpha beta gamma document") == expected


WORDS = ["alpha", "beta", "gamma", "delta", "蓝牙", "耳机", "0x1f", "v2.1"]
operations = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, 5), st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
              st.lists(st.sampled_from(WORDS), max_size=2)),
    st.tuples(st.just("delete"), st.integers(0, 5)),
    st.tuples(st.just("abandon"), st.integers(0, 5), st.lists(st.sampled_from(WORDS), min_size=1, max_size=6)),
    st.tuples(st.just("flush")),
    st.tuples(st.just("compact")),
    st.tuples(st.just("reopen")),
), max_size=25)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations)
def test_any_history_ranks_like_a_rebuild_from_scratch(tmp_path_factory, history):
    """abandon: a batch that is never committed (its docnos are handed out again); reopen: the unflushed
    documents come back from the WAL (a flush then decodes them instead of using the analysed batches)."""
    path = str(tmp_path_factory.mktemp("history") / "store")
    live = {}
    store = Store.open(path)
    try:
        index = TextIndex(store, TOKENIZER)
        for operation in history:
            if operation[0] == "add":
                fields = {"text": " ".join(operation[2])}
                if operation[3]:
                    fields["title"] = " ".join(operation[3])
                index.add(f"k{operation[1]}", fields)
                live[f"k{operation[1]}"] = fields
            elif operation[0] == "delete":
                assert index.delete(f"k{operation[1]}") == (live.pop(f"k{operation[1]}", None) is not None)
            elif operation[0] == "abandon":
                with pytest.raises(Crash), store.batch() as batch:
                    index.add(f"k{operation[1]}", " ".join(operation[2]), batch=batch)
                    crash()
            elif operation[0] == "reopen":
                store.close()
                store = Store.open(path)
                index = TextIndex(store, TOKENIZER)
            else:
                getattr(store, operation[0])()
        rebuilt = Searcher([segment([document(TOKENIZER, number, key, fields)
                                     for number, (key, fields) in enumerate(sorted(live.items()))])], TOKENIZER)
        jitted = TextIndex(store, TOKENIZER, kernels="numba")
        for query in ("alpha beta", "蓝牙耳机", "0x1f gamma", "delta v2.1 alpha"):
            expected = sorted((hit.key, round(hit.score, 9), tuple(hit.terms)) for hit in rebuilt.search(query, top=10))
            for searching in (index, jitted):
                found = searching.search(query, top=10)
                assert sorted((hit.key, round(hit.score, 9), tuple(hit.terms)) for hit in found) == expected
        assert index.statistics()["documents"] == len(live)
    finally:
        store.close()


def test_check_finds_sound_segments_clean_and_damaged_postings_corrupt(store):
    from engine.check import check_store
    from engine.segment import Segment
    from engine.text.build import build
    from engine.text.kind import TextKind
    from engine.text.reader import TextSegment, verify

    index = TextIndex(store, TOKENIZER)
    index.add_many([{"key": f"k{number}", "fields": {"title": f"t{number}", "text": f"alpha beta {number} 蓝牙"}}
                    for number in range(300)])
    store.flush()
    index.delete("k5")
    store.flush()
    report = check_store(store.path)
    assert report.clean, report.problems
    segments = store.kind_segments["text"]
    assert list(TextKind(store).check(segments)) == []
    columns, meta = build([document(TOKENIZER, 0, "x", {"title": "alpha", "text": "alpha beta"}),
                           document(TOKENIZER, 1, "y", {"text": "beta gamma"})])
    assert verify(TextSegment.from_columns(columns, meta)) == []
    columns["document_frequencies"] = columns["document_frequencies"] + 1
    assert "document frequencies disagree with the postings" in verify(TextSegment.from_columns(columns, meta))
    assert isinstance(segments[0], Segment)


def test_field_weights_and_filters_through_the_index(store):
    from engine.text.bm25 import BM25Parameters

    index = TextIndex(store, TOKENIZER, BM25Parameters(field_weights={"title": 5.0, "text": 1.0}))
    index.add("body", {"text": "bluetooth driver bluetooth", "title": "audio"}, type="note", tags=["pc"])
    index.add("heading", {"text": "a driver", "title": "bluetooth"}, type="note", timestamp=50.0)
    assert [hit.key for hit in index.search("bluetooth")] == ["heading", "body"]
    store.flush()
    assert [hit.key for hit in index.search("bluetooth", tags=["pc"])] == ["body"]
    assert [hit.key for hit in index.search("driver", since=10)] == ["heading"]
    hit = index.search("bluetooth driver", types=["note"])[0]
    assert hit.type == "note" and set(hit.terms) == {"bluetooth", "driver"}


def test_a_searcher_answers_many_queries_with_the_index_parameters(store):
    from engine.text.bm25 import BM25Parameters

    title_first = TextIndex(store, TOKENIZER, BM25Parameters(field_weights={"title": 5.0, "text": 1.0}))
    text_first = TextIndex(store, TOKENIZER, BM25Parameters(field_weights={"title": 0.1, "text": 1.0}))
    title_first.add("body", {"text": "bluetooth driver bluetooth", "title": "audio"})
    title_first.add("heading", {"text": "a driver", "title": "bluetooth"})
    searcher = title_first.searcher()
    assert [hit.key for hit in searcher.search("bluetooth", 10)] == ["heading", "body"]
    assert [hit.key for hit in text_first.searcher().search("bluetooth", 10)] == ["body", "heading"]
    assert searcher.document_count == 2 and searcher is title_first.searcher()
    title_first.delete("heading")
    assert [hit.key for hit in title_first.searcher().search("bluetooth", 10)] == ["body"]


def test_records_of_format_2_are_read_flushed_and_compacted_like_new_ones(tmp_path):
    """Format 2 kept each field's tokens as a [terms, positions] pair and always wrote "tags"."""
    from engine.text import stored

    texts = {"old1": "蓝牙耳机 打不开 alpha", "old2": "beta alpha alpha", "new": "gamma 蓝牙 beta"}
    with Store.open(str(tmp_path / "reference")) as reference:
        index = TextIndex(reference, TOKENIZER)
        index.add_many([{"key": key, "fields": {"title": key, "text": text}} for key, text in texts.items()])
        expected = results(index, "蓝牙 alpha beta gamma")
    with Store.open(str(tmp_path / "store")) as store:
        with store.batch() as batch:
            for docno, key in enumerate(["old1", "old2"]):
                batch.put(UNNAMED.documents, key, {
                    "docno": docno, "fields": {"title": key, "text": texts[key]}, "type": None, "ts": None, "tags": [],
                    "tokens": {name: list(stored.encode(*TOKENIZER.index_tokens(text)))
                               for name, text in (("title", key), ("text", texts[key]))}})
            batch.allocate(UNNAMED.docno, 2)
        index = TextIndex(store, TOKENIZER)
        index.add("new", {"title": "new", "text": texts["new"]})
        record = index.get("new")
        assert set(record) == {"docno", "tokens", "positions", "fields"}  # no type, time or tags: none given
        assert record["tokens"]["text"] == "gamma 蓝牙 beta" and isinstance(record["positions"]["text"], bytes)
        assert results(index, "蓝牙 alpha beta gamma") == expected
        store.flush()
        assert results(index, "蓝牙 alpha beta gamma") == expected
        store.compact()
        assert results(index, "蓝牙 alpha beta gamma") == expected


def test_malformed_document_records_are_corruption_at_flush(store):
    from engine.errors import CorruptionError

    index = TextIndex(store, TOKENIZER)
    index.add("fine", "alpha beta")
    with store.batch() as batch:
        batch.put(UNNAMED.documents, "bad", {"docno": 7, "tokens": {"text": "alpha"}, "positions": {"title": b"\0\0"}})
    with pytest.raises(CorruptionError, match="'bad' is malformed"):
        store.flush()


def _fielded(number: int, text: str) -> dict:
    return {"key": f"doc/{number:04d}", "fields": {"title": f"t{number % 7}", "text": f"{text} {number}"},
            "type": ("note", None)[number % 2], "tags": ["x"] * (number % 3 == 0)}


def _plain_text(number: int, text: str) -> dict:
    return {"key": f"doc/{number:04d}", "fields": f"{text} {number}"}


@pytest.mark.parametrize("make", [_fielded, _plain_text])
@pytest.mark.parametrize("caller_batch", [False, True])
@pytest.mark.parametrize("kernels", [("numpy", "numpy"), ("numba", "numba"), ("numba", "numpy")])
def test_a_flush_from_the_analysed_batches_writes_the_segment_a_replayed_wal_does(tmp_path, make, caller_batch,
                                                                                  kernels):
    """The batches' token arrays (engine.text.pieces) are a shortcut: the same bytes as decoding the records,
    also when a caller's batch, committed without handing its values over, holds equal copies of them, and
    whichever vocabulary (a dict, or the numba TermTable) coded each batch's terms."""
    import numpy as np

    documents = [make(number, text)
                 for number, text in enumerate(["蓝牙耳机打不开了 Win11", "error 0x8007045D on USB", "the quick fox"] * 40)]
    segments = []
    for replay in (False, True):
        path = str(tmp_path / f"store-{replay}")
        with Store.open(path, flush_bytes=1 << 40) as store:
            TextIndex(store, TOKENIZER, kernels=kernels[0]).add_many(documents[:70])
            index = TextIndex(store, TOKENIZER, kernels=kernels[1])
            if caller_batch:
                with store.batch() as batch:
                    index.add_many(documents[50:] + documents[:3], batch=batch)
            else:
                index.add_many(documents[50:] + documents[:3])  # replaces some of the first batch
            index.delete("doc/0010")
            if not replay:
                store.flush()
        if replay:
            with Store.open(path, flush_bytes=1 << 40) as store:
                store.flush()
        with Store.open(path, writable=False) as reader:
            [segment] = reader.kind_segments["text"]
            segments.append({name: np.asarray(segment.column(name)).tobytes() for name in segment.names()})
    assert segments[0] == segments[1]


@pytest.mark.parametrize("store_text", [True, False])
def test_a_document_of_the_text_field_alone_keeps_its_tokens_without_maps(tmp_path, store_text):
    from engine.text import stored

    path = str(tmp_path / "store")
    with Store.open(path) as store:
        index = TextIndex(store, TOKENIZER, store_text=store_text)
        index.add_many([{"key": "plain", "fields": "蓝牙耳机 alpha"}, {"key": "named", "fields": {"title": "alpha"}},
                        {"key": "both", "fields": {"text": "alpha", "title": "beta"}, "type": "note"},
                        {"key": "mapped", "fields": {"text": "蓝牙耳机 alpha"}}])
        expected = results(index, "alpha 蓝牙")
    with Store.open(path, writable=False) as reopened:  # the records as the WAL gives them back
        plain, named, both = (reopened.get(UNNAMED.documents, key) for key in ("plain", "named", "both"))
        assert reopened.get(UNNAMED.documents, "mapped") == {**plain, "docno": 3}  # the same record either way
        terms, positions = TOKENIZER.index_tokens("蓝牙耳机 alpha")
        assert plain == {"tokens": " ".join(terms), "positions": stored.encode(terms, positions)[1], "docno": 0,
                         **({"fields": "蓝牙耳机 alpha"} if store_text else {})}
        assert stored.record_fields(plain) == {"text": stored.encode(terms, positions)}
        assert set(named["tokens"]) == {"title"} and set(both["tokens"]) == {"text", "title"}
        if store_text:
            assert both["fields"] == {"text": "alpha", "title": "beta"} and named["fields"] == {"title": "alpha"}
            assert stored.record_texts(plain) == {"text": "蓝牙耳机 alpha"}
            assert stored.record_texts(both) == both["fields"]
        else:
            assert all(stored.record_texts(record) is None for record in (plain, named, both))
        assert both["type"] == "note" and "type" not in named and "ts" not in named
        assert results(TextIndex(reopened, TOKENIZER), "alpha 蓝牙") == expected
    with Store.open(path) as store:
        store.compact()
        assert results(TextIndex(store, TOKENIZER), "alpha 蓝牙") == expected


class _SpacedTokenizer(Tokenizer):
    def index_tokens(self, text: str):
        return (["two words"], [0]) if text == "bad" else super().index_tokens(text)


@pytest.mark.parametrize("kernels", ["numpy", "numba"])
def test_a_term_holding_the_separator_is_refused_and_forgotten(store, kernels):
    index = TextIndex(store, _SpacedTokenizer(), kernels=kernels)
    index.add("fine", "alpha beta")
    sequence = store.sequence
    with pytest.raises(ValueError, match="hold no spaces"):
        index.add_many([{"key": "more", "fields": "gamma"}, {"key": "bad", "fields": "bad"}])
    assert store.sequence == sequence
    index.add("later", "gamma delta")
    store.flush()
    assert sorted(hit.key for hit in index.search("alpha gamma")) == ["fine", "later"]


def test_a_flush_in_two_steps_writes_what_one_step_does_and_reports_a_failed_build(tmp_path, monkeypatch):
    """Store.flush lets the text kind build its segment on a thread while the records are written
    (TextKind.start_flush): the same bytes as TextKind.flush, and a build that fails fails the flush."""
    import numpy as np

    from engine.errors import CorruptionError
    from engine.text.kind import TextKind

    documents = [{"key": f"doc/{number}", "fields": f"蓝牙耳机 error {number}"} for number in range(300)]
    segments = []
    for two_steps in (True, False):
        if not two_steps:
            monkeypatch.delattr(TextKind, "start_flush")
        path = str(tmp_path / f"store-{two_steps}")
        with Store.open(path) as store:
            TextIndex(store, TOKENIZER).add_many(documents)
            store.flush()
            [segment] = store.kind_segments["text"]
            segments.append({name: np.asarray(segment.column(name)).tobytes() for name in segment.names()})
    assert segments[0] == segments[1]
    monkeypatch.undo()

    def broken(*arguments):
        raise CorruptionError("text.doc", None, "text index inputs are inconsistent (test)")

    monkeypatch.setattr(TextKind, "_build", broken)
    with Store.open(str(tmp_path / "failing")) as store:
        TextIndex(store, TOKENIZER).add("a", "alpha")
        with pytest.raises(CorruptionError, match="inconsistent"):
            store.flush()
        with pytest.raises(Exception, match="unusable"):
            TextIndex(store, TOKENIZER).add("b", "beta")


def test_the_signature_is_compared_without_reading_the_records_and_written_when_it_changes(store, monkeypatch):
    tables = text_tables("text")
    TextIndex(store, TOKENIZER).add("a", "alpha")
    store.compact()  # the signature's record now lies in the compaction's records segment
    reads = []
    original_get = store.get
    monkeypatch.setattr(store, "get", lambda table, key: reads.append((table, key)) or original_get(table, key))
    TextIndex(store, TOKENIZER).add("b", "beta")
    assert (tables.meta, "tokenizer") not in reads and store.memtable(tables.meta) == {}
    unstemmed = Tokenizer(stem=False)
    TextIndex(store, unstemmed).add("c", "gamma")
    assert store.memtable(tables.meta)["tokenizer"]["stemmer"] is None
    store.flush()
    monkeypatch.undo()
    assert store.get(tables.meta, "tokenizer") == TextIndex(store, unstemmed).snapshot().signature
