"""engine.text.merge: a merge of segments is the build of their live documents, byte for byte, whatever the
size of its term runs; it reads each segment's postings a run of terms at a time, never whole."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from engine.store import Store
from engine.text import merge as text_merge, stored
from engine.text.build import Document, build
from engine.text.postings import BLOCK_ENTRIES, PostingsReader
from engine.text.reader import TextSegment
from tools.testing.derived import TEXT_TABLES
from tools.testing.workload import apply_to_store, batch_operations, schedule

WORDS = ["alpha", "beta", "蓝牙", "耳机", "v2.1", "a", "zeta"]
fields_strategy = st.dictionaries(st.sampled_from(["text", "title", "body"]),
                                  st.lists(st.tuples(st.sampled_from(WORDS), st.integers(0, 40)), min_size=1,
                                           max_size=12), min_size=1)
document_strategy = st.tuples(fields_strategy, st.sampled_from([None, "note", "fact"]),
                              st.sampled_from([None, 1.5, 1e9]), st.lists(st.sampled_from(["x", "y"]), max_size=2))
# Per segment: its documents, and per document whether a later segment replaces it (same key, new docno).
segments_strategy = st.lists(st.lists(st.tuples(document_strategy, st.booleans()), min_size=1, max_size=12),
                             min_size=1, max_size=6)


def columns_of(built) -> tuple:
    columns, meta = built
    return {name: (array.dtype.str, array.shape, array.tobytes()) for name, array in columns.items()}, meta


def make_document(docno: int, key: str, spec) -> Document:
    fields, kind, timestamp, tags = spec
    stored_fields = {name: stored.encode([term for term, _position in tokens],
                                         sorted(position for _term, position in tokens))
                     for name, tokens in fields.items()}
    return Document(docno, key, stored_fields, kind, timestamp, tuple(tags))


def history(segment_specs) -> tuple[list, list, set]:
    """(segments, every document, deleted docnos): segment i's documents take docnos from 100·i; a replaced
    document's key comes back in the next segment under a new docno, and its old docno is deleted there."""
    segments, documents, deleted = [], [], set()
    replaced: list = []
    for number, specs in enumerate(segment_specs):
        part = [make_document(100 * number + index, key, spec) for index, (key, spec) in enumerate(replaced)]
        retired = {document.docno for document in documents if document.key in {key for key, _spec in replaced}}
        replaced = []
        for spec, replace in specs:
            document = make_document(100 * number + len(part), f"doc/{number}/{len(part)}", spec)
            part.append(document)
            if replace:
                replaced.append((document.key, spec))
        deleted |= retired
        segments.append(TextSegment.from_columns(*build(part, deleted=sorted(retired))))
        documents += part
    return segments, documents, deleted


@settings(max_examples=60, deadline=None)
@given(segments_strategy, st.lists(st.integers(0, 700), max_size=8), st.sampled_from([1, 3, 40, None]))
def test_a_merge_is_the_build_of_the_live_documents(segment_specs, extra_deleted, run_entries):
    segments, documents, deleted = history(segment_specs)
    deleted |= set(extra_deleted)
    live = [document for document in documents if document.docno not in deleted]
    # A field only deleted documents had stays in the merge's field list (with no tokens): not in a build.
    assume({name for document in live for name in document.fields} ==
           {name for segment in segments for name in segment.fields})
    merged = text_merge.merge(segments, deleted, run_entries=run_entries)
    assert columns_of(merged) == columns_of(build(live))


def test_a_tier_merge_keeps_the_retirements_of_older_segments():
    older = [make_document(docno, f"old/{docno}", ({"text": [("alpha", 0)]}, None, None, [])) for docno in range(3)]
    newer = [make_document(10 + docno, f"new/{docno}", ({"text": [("beta", 0)]}, None, None, [])) for docno in range(4)]
    segment = TextSegment.from_columns(*build(newer, deleted=[1, 11]))
    columns, meta = text_merge.merge([segment], deleted=[1, 11], deleted_below=[1], run_entries=1)
    assert columns["deleted"].tolist() == [1] and meta["documents"] == 3
    assert columns_of((columns, meta)) == columns_of(build([newer[0], *newer[2:]], deleted=[1]))
    assert older  # the older segment itself is not merged: its document 1 stays retired by the new one


def long_segments() -> list:
    """Two segments whose common term "alpha" has several skip blocks of entries in each."""
    count = 3 * BLOCK_ENTRIES
    spec = ({"text": [("alpha", 0), ("beta", 1)]}, None, None, [])
    first = [make_document(docno, f"a/{docno}", spec) for docno in range(count)]
    second = [make_document(10_000 + docno, f"b/{docno}", ({"text": [("alpha", 0), (f"t{docno}", 1)]}, None, None,
                                                           [])) for docno in range(count)]
    return [TextSegment.from_columns(*build(part)) for part in (first, second)]


def test_the_postings_are_read_a_run_of_terms_at_a_time(monkeypatch):
    segments = long_segments()
    read = []
    original = PostingsReader.term_range

    def recording(self, first, end):
        read.append(end - first)
        return original(self, first, end)

    monkeypatch.setattr(PostingsReader, "term_range", recording)
    keeps = [np.ones(segment.document_count, bool) for segment in segments]
    runs = text_merge.runs(segments, keeps, ["text"], run_entries=BLOCK_ENTRIES)
    first_run = next(runs)
    assert first_run.terms == ["alpha"] and first_run.entry_terms.size == 6 * BLOCK_ENTRIES  # a term is never cut
    assert read == [1, 1]  # one term of each segment, not their whole postings
    rest = list(runs)
    assert len(rest) > 2 and max(sum(read[2:]), 0) == sum(segment.term_count for segment in segments) - 2
    # A run ends at the term that fills it: beyond one term, it holds fewer entries than its budget before that.
    assert all(len(run.terms) == 1 or np.count_nonzero(run.entry_terms < len(run.terms) - 1) < BLOCK_ENTRIES
               for run in rest)
    assert any(len(run.terms) > 1 for run in rest)


def test_runs_lay_end_to_end_into_the_columns_of_one_run():
    segments = long_segments()
    deleted = list(range(0, 3 * BLOCK_ENTRIES, 5)) + [10_003]
    whole = columns_of(text_merge.merge(segments, deleted, run_entries=1 << 40))
    for run_entries in (1, 2, BLOCK_ENTRIES + 1):
        assert columns_of(text_merge.merge(segments, deleted, run_entries=run_entries)) == whole
    assert whole[0]["skip_documents"][1][0] > 1  # the long term has skip rows, laid across runs


def workload_store(path: str) -> Store:
    store = Store.open(path, flush_bytes=24 << 10)
    for step in schedule(11, 1, 60):
        if step[0] == "batch":
            apply_to_store(store, batch_operations(11, step[1]))
        elif step[0] == "flush":
            store.flush()
    store.flush()
    return store


@pytest.mark.parametrize("run_entries", [1, 7])
def test_a_compaction_in_small_runs_writes_the_segment_one_run_writes(tmp_path, monkeypatch, run_entries):
    """Many flushes, deletions and replaced documents of the crash workload's text index."""
    stores = {}
    for label in ("whole", "runs"):
        store = stores[label] = workload_store(str(tmp_path / label))
        assert len(store.kind_segments[TEXT_TABLES.owner]) > 3
        with monkeypatch.context() as patch:
            patch.setattr(text_merge, "RUN_ENTRIES", run_entries if label == "runs" else 1 << 40)
            store.compact()
    paths = [store.kind_segments[TEXT_TABLES.owner][0].path for store in stores.values()]
    contents = []
    for path in paths:
        with open(path, "rb") as handle:
            contents.append(handle.read())
    assert os.path.basename(paths[0]) == os.path.basename(paths[1]) and contents[0] == contents[1]
    for store in stores.values():
        store.close()
