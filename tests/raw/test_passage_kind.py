"""The raw passage index, the engine's `raw` kind (engine/raw/passage_kind.py): built from the chunks alone (no
record, no stored token), at flush from new chunks, in memory for unflushed ones; released chunks retired;
compaction, rebuild and check."""

from __future__ import annotations

import os

import numpy as np
import pytest

from engine.format import RAW_PASSAGES_SEGMENT_KIND
from engine.raw import RawStore, parse_span_key
from engine.raw.passage_kind import PassageKind, chunk_columns, chunk_problems
from engine.raw.paths import record_blob_path
from engine.store import Store
from engine.text.reader import TextSegment

LOCKER = ["Ann: my locker password is tulip-42.", "Bo: 蓝牙耳机又连不上了。", "Ann: thanks, noted."]
OTHER = ["Cy: the bakery opens at seven.", "Di: bring two loaves of bread."]
LONG = " ".join(f"Step {index} checks the driver and restarts the service." for index in range(40))


@pytest.fixture
def store(tmp_path):
    with Store.open(str(tmp_path / "store")) as opened:
        yield opened


def put_chunk(store, texts: list, times=None) -> str:
    """Store one chunk holding `texts` as its turns (one line each); returns its raw id."""
    data, turns, offset = b"", [], 0
    for index, text in enumerate(texts):
        encoded = text.encode()
        turns.append({"speaker": None, "ts": times[index] if times else None, "source_id": f"t:{index}",
                      "offset": offset, "length": len(encoded), "extra": None})
        data += encoded + b"\n"
        offset += len(encoded) + 1
    with RawStore(store).batch() as writer:
        return writer.put_turns(data, {}, "c", turns).raw_id


def release(store, raw_id: str) -> None:
    raw = RawStore(store)
    with raw.batch() as writer:
        assert writer.release(raw_id, raw.get(raw_id)["refcount"]) is True


def found(store, query: str, **filters) -> list:
    """The texts of the passages found, best first, read back through their span keys."""
    raw = RawStore(store)
    return [raw.read_span(*parse_span_key(hit.key)).decode()
            for hit in raw.passages().searcher().search(query, 10, **filters)]


def passage_segments(store) -> list:
    return [entry for entry in store.manifest.segments if entry["kind"] == RAW_PASSAGES_SEGMENT_KIND]


def test_turns_are_found_by_their_spans_unflushed_flushed_and_compacted(store):
    put_chunk(store, LOCKER)
    put_chunk(store, OTHER)
    for step in (lambda: None, store.flush, store.compact):
        step()
        assert found(store, "locker password") == [LOCKER[0]]
        assert found(store, "耳机") == [LOCKER[1]]
        assert sorted(found(store, "bread bakery")) == sorted(OTHER)
    assert len(passage_segments(store)) == 1 and store.kind("raw").stats()["passages"] == 5


def test_the_index_keeps_no_record_and_no_text(store):
    put_chunk(store, LOCKER)
    store.flush()
    tables = set().union(*(segment.tables for segment in store.records))
    assert tables == {"raw.chunk", "raw.turns"}
    [entry] = passage_segments(store)
    with open(os.path.join(store.path, "seg", entry["name"]), "rb") as handle:
        content = handle.read()
    assert b"locker password" not in content and b"noted" not in content  # no text: its terms, front-coded
    assert {"locker", "password", "tulip", "note"} <= set(TextSegment.from_segment(store.kind_segments["raw"][0])
                                                          .dictionary.terms())


def test_a_long_turn_is_cut_into_sentence_windows_with_exact_spans(store):
    raw_id = put_chunk(store, ["Ann: short.", LONG])
    store.flush()
    reader = TextSegment.from_segment(store.kind_segments["raw"][0])
    spans = sorted(parse_span_key(key)[1:] for key in reader.keys())
    assert len(spans) > 3
    first_end = len("Ann: short.")
    windows = spans[1:]
    assert windows[0][0] == first_end + 1 and all(left[0] + left[1] == right[0]
                                                  for left, right in zip(windows, windows[1:]))
    texts = [RawStore(store).read_span(raw_id, offset, length).decode() for offset, length in windows]
    assert "".join(texts) == LONG and all(text.rstrip().endswith(".") for text in texts)


def test_a_released_chunk_is_retired_then_dropped_by_compaction(store):
    locker = put_chunk(store, LOCKER)
    put_chunk(store, OTHER)
    store.flush()
    release(store, locker)
    assert found(store, "locker password") == []  # retired by the reader's memtable
    store.flush()
    assert found(store, "locker password") == []
    assert len(TextSegment.from_segment(store.kind_segments["raw"][-1]).deleted) == 3
    store.compact()
    [segment] = store.kind_segments["raw"]
    reader = TextSegment.from_segment(segment)
    assert "tulip" not in reader.dictionary.terms() and reader.document_count == 2
    assert all(parse_span_key(key)[0] != locker for key in reader.keys())


def test_a_chunk_released_and_stored_again_before_a_flush_is_indexed_once(store):
    locker = put_chunk(store, LOCKER)
    store.flush()
    release(store, locker)
    assert put_chunk(store, LOCKER) == locker
    assert found(store, "locker password") == [LOCKER[0]]
    store.flush()
    assert found(store, "locker password") == [LOCKER[0]]
    store.compact()
    assert found(store, "locker password") == [LOCKER[0]] and store.kind("raw").stats()["passages"] == 3


def test_a_time_window_uses_the_turns_times(store):
    put_chunk(store, ["Ann: the bakery on Monday.", "Bo: the bakery on Friday."],
              ["2024-05-06T10:00:00", "2024-05-10T10:00:00"])
    store.flush()
    assert found(store, "bakery", since=1715126400.0) == ["Bo: the bakery on Friday."]  # 2024-05-08


def test_rebuild_makes_what_compaction_makes_from_the_chunks_alone(store):
    put_chunk(store, LOCKER)
    store.flush()
    put_chunk(store, OTHER + [LONG])
    store.compact()
    compacted = TextSegment.from_segment(store.kind_segments["raw"][0])
    expected = (compacted.keys(), compacted.dictionary.terms(), compacted.docnos.tolist())
    store.rebuild()
    rebuilt = TextSegment.from_segment(store.kind_segments["raw"][0])
    assert sorted(rebuilt.keys()) == sorted(expected[0]) and rebuilt.dictionary.terms() == expected[1]


def test_a_chunk_whose_blob_is_gone_has_no_passages_and_the_flush_goes_on(store):
    lost = put_chunk(store, LOCKER)
    put_chunk(store, OTHER)
    os.remove(os.path.join(store.path, record_blob_path(RawStore(store).get(lost))))
    store.flush()
    assert found(store, "locker") == [] and found(store, "bakery") == [OTHER[0]]


def test_check_finds_chunk_columns_that_disagree_with_the_keys(store):
    raw_id = put_chunk(store, LOCKER)
    store.flush()
    segment = store.kind_segments["raw"][0]
    assert list(PassageKind(store).check([segment])) == []
    reader = TextSegment.from_segment(segment)
    columns = {name: segment.column(name) for name in segment.names()}
    columns["chunk_passages"] = columns["chunk_passages"] + 1
    damaged = TextSegment.from_columns(columns, reader.meta)
    assert chunk_problems(damaged) == ["column chunk_passages disagrees with the passage keys and docnos"]
    assert parse_span_key(reader.keys()[0])[0] == raw_id


def test_chunk_columns_refuse_a_chunk_split_in_two_runs():
    with pytest.raises(ValueError):
        chunk_columns(np.array([1, 2, 1], dtype=np.uint64), np.arange(3))
    columns = chunk_columns(np.array([7, 7, 3], dtype=np.uint64), np.array([10, 11, 12]))
    assert columns["chunk_ids"].tolist() == [3, 7] and columns["chunk_first_docnos"].tolist() == [12, 10]
    assert columns["chunk_passages"].tolist() == [1, 2]
