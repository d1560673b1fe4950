"""RawStore's typed reads, what memctl reads raw storage through: chunks (raw.chunk records as Chunk rows),
chunks stored with turns in conversation order (TurnChunk) and their decoded turns, and TurnColumns of a
whole batch with its times encoded at once."""

from __future__ import annotations

from datetime import datetime, timezone

from engine.format import RAW_MIME_TEXT
from engine.raw import Chunk, RawStore, TurnChunk, TurnColumns
from engine.raw.turn_columns import encode_turns
from engine.raw.turn_time import encode_ts_column
from engine.store import Store

DAY = datetime(2024, 3, 9, 12, 0, tzinfo=timezone.utc)


def one_turn(label: str, ts: str | None) -> tuple[bytes, list[dict]]:
    data = label.encode()
    return data, [{"speaker": "X", "ts": ts, "source_id": label, "offset": 0, "length": len(data), "extra": {}}]


def test_chunks_are_typed_rows_of_the_chunk_records(store):
    raw = RawStore(store, clock=lambda: DAY)
    with raw.batch() as writer:
        plain = writer.put(b"plain bytes", {"source": "a.txt"}, refs=2).raw_id
        data, turns = one_turn("with turns", "2024-03-01T10:00:00")
        turned = writer.put_turns(data, {}, "conv", turns).raw_id
        binary = writer.put(b"\x00\x01", {}, mime="application/octet-stream").raw_id
    record = raw.get(plain)
    assert raw.chunk(plain) == Chunk(plain, len(b"plain bytes"), record["stored_bytes"], int(DAY.timestamp()), 2,
                                     RAW_MIME_TEXT, {"source": "a.txt"})
    assert raw.chunk(turned).refcount == 1 and raw.chunk(turned).meta == {}
    assert raw.chunk(binary).mime == "application/octet-stream"
    assert raw.chunk("raw_0000000000000000") is None
    assert list(raw.chunks()) == [raw.chunk(raw_id) for raw_id in sorted([plain, turned, binary])]


def test_turn_chunks_come_in_conversation_then_time_then_storing_order(store):
    raw = RawStore(store)
    given = [("b", "2024-01-02T00:00:00", "b-late"), ("b", None, "b-untimed"), ("a", "2024-05-01T10:00:00", "a-2"),
             ("b", "2024-01-01", "b-early-date"), ("a", "2024-05-01T09:00:00+00:00", "a-1"),
             ("a", "2024-05-01T10:00:00", "a-2-tie")]
    ids = {}
    for conv_id, ts, label in given:
        with raw.batch() as writer:
            data, turns = one_turn(label, ts)
            ids[label] = writer.put_turns(data, {}, conv_id, turns).raw_id
    with raw.batch() as writer:  # a chunk without turns is not among them
        writer.put(b"no turns", {})
    listed = raw.turn_chunks()
    assert [chunk.raw_id for chunk in listed] == [ids[label] for label in
                                                  ("a-1", "a-2", "a-2-tie", "b-early-date", "b-late", "b-untimed")]
    assert [(chunk.conv_id, chunk.ts) for chunk in listed[:2]] == [("a", "2024-05-01T09:00:00+00:00"),
                                                                   ("a", "2024-05-01T10:00:00")]
    assert listed[-1].ts is None
    assert [chunk.seq for chunk in listed] == [4, 2, 5, 3, 0, 1]  # storing order numbers
    assert all(isinstance(chunk, TurnChunk) for chunk in listed)
    assert [raw.chunk_turns(chunk) for chunk in listed] == [raw.turns(chunk.raw_id) for chunk in listed]
    assert [turn for chunk in listed for turn in raw.chunk_turns(chunk)] == list(raw.iter_turns())


def test_a_reader_lists_what_the_writer_committed(store):
    raw = RawStore(store)
    with raw.batch() as writer:
        data, turns = one_turn("kept", "2024-05-01T10:00:00")
        raw_id = writer.put_turns(data, {}, "conv", turns).raw_id
    store.flush()
    reader_raw = RawStore(Store.open(store.path, writable=False))
    assert [chunk.raw_id for chunk in reader_raw.turn_chunks()] == [raw_id]
    assert reader_raw.chunk(raw_id) == raw.chunk(raw_id)


def test_turn_columns_of_a_batch_encode_their_times_together_as_each_alone():
    chunks = [(["a", "b"], ["2023-05-08T13:56:00", "2023-05-08"], ["D1:1", "D1:2"], [0, 2], [1, 1], [None, None]),
              ([], [], [], [], [], []),
              (["c"], [None], ["x#3"], [0], [4], [{"k": 1}])]
    many = TurnColumns.many(iter(chunks))
    assert [columns.encoded_ts for columns in many] == [encode_ts_column(chunk[1]) for chunk in chunks]
    for columns, chunk in zip(many, chunks):
        assert (columns.speakers, columns.ts, columns.source_ids, columns.offsets, columns.lengths,
                columns.extras) == chunk
    alone = TurnColumns(*chunks[0])
    assert encode_turns("c", many[0], 3) == encode_turns("c", alone, 3)
