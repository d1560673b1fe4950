"""The raw passage index an ingest writes (memctl/raw_passages.py): one document per turn, long turns cut into
passages, keyed by their spans, tokens only, in the ingest's own batch; deleted with their chunk."""

from __future__ import annotations

import json

import pytest

from engine.raw import RawStore, parse_span_key
from engine.store import Store
from engine.text.index import TextIndex
from memctl import raw_passages
from memctl.indexes import PASSAGES
from memctl.ingest.api import ingest_paths
from memctl.ingest.chunker import estimate_tokens
from memctl.settings import load

LONG_TURN = " ".join(f"Step {index} checks the driver and restarts the service." for index in range(60))
TURNS = [
    {"id": "a1", "ts": "2024-05-01T10:00:00", "role": "Ann", "content": "My locker password is tulip-42."},
    {"id": "a2", "ts": "2024-05-01T10:01:00", "role": "Bo", "content": LONG_TURN},
    {"id": "a3", "role": "Ann", "content": "蓝牙耳机又连不上了。"},
]


@pytest.fixture
def store(tmp_path):
    with Store.open(str(tmp_path / "store")) as opened:
        yield opened


def ingest_turns(store, tmp_path, turns=TURNS, name="chat.jsonl", config=None) -> dict:
    path = tmp_path / name
    path.write_text("".join(json.dumps(turn, ensure_ascii=False) + "\n" for turn in turns), encoding="utf-8")
    return ingest_paths(store, [str(path)], config=config)


def passages(store) -> dict:
    """key → record of every passage document."""
    return dict(store.scan(TextIndex(store, owner=PASSAGES).tables.documents))


def passage_texts(store) -> dict:
    raw = RawStore(store)
    return {key: raw.read_span(*parse_span_key(key)).decode() for key in passages(store)}


def test_every_turn_is_indexed_by_its_span_and_long_turns_in_passages(store, tmp_path):
    summary = ingest_turns(store, tmp_path)
    texts = passage_texts(store)
    assert summary["passages"] == len(texts)
    short = [text for text in texts.values() if text in (TURNS[0]["content"], TURNS[2]["content"])]
    assert len(short) == 2
    pieces = sorted((parse_span_key(key)[1], text) for key, text in texts.items() if text not in short)
    assert len(pieces) > 1 and "".join(text for _, text in pieces) == LONG_TURN
    assert all(estimate_tokens(text) <= raw_passages.PASSAGE_TOKENS for _, text in pieces)
    assert all(text.rstrip().endswith(".") for _, text in pieces)  # cut at sentence ends


def test_a_passage_keeps_tokens_and_its_turn_time_but_no_text(store, tmp_path):
    ingest_turns(store, tmp_path)
    records = {passage_texts(store)[key]: record for key, record in passages(store).items()}
    first = records[TURNS[0]["content"]]
    assert "fields" not in first and "locker" in first["tokens"] and "tulip" in first["tokens"]
    assert first["ts"] == 1714557600.0  # 2024-05-01T10:00:00 as UTC
    assert "ts" not in records[TURNS[2]["content"]]
    assert records[TURNS[2]["content"]]["tokens"].split() == ["蓝牙", "牙耳", "耳机", "机又", "又连", "连不", "不上",
                                                              "上了"]  # bigrams: no jieba


def test_ingesting_the_same_input_again_indexes_nothing(store, tmp_path):
    first = ingest_turns(store, tmp_path)
    before = passages(store)
    again = ingest_turns(store, tmp_path)
    assert (again["chunks_new"], again["passages"]) == (0, 0) and first["passages"] == len(before)
    assert passages(store) == before


def test_the_passage_size_is_a_setting(store, tmp_path):
    config_file = tmp_path / "memctl.yaml"
    config_file.write_text("ingest:\n  passage_tokens: 24\n", encoding="utf-8")
    ingest_turns(store, tmp_path, config=load(user_file=str(config_file)))
    texts = passage_texts(store).values()
    assert all(estimate_tokens(text) <= 24 for text in texts)
    assert len(texts) > 2 + len(LONG_TURN) // 200


def test_releasing_a_chunks_last_reference_deletes_its_passages_in_the_same_batch(store, tmp_path):
    ingest_turns(store, tmp_path, TURNS[:1], "first.jsonl")
    ingest_turns(store, tmp_path, TURNS[1:], "second.jsonl")
    by_chunk = {}
    for key in passages(store):
        by_chunk.setdefault(parse_span_key(key)[0], []).append(key)
    first_chunk = parse_span_key(next(key for key, text in passage_texts(store).items()
                                      if text == TURNS[0]["content"]))[0]
    kept = {key for raw_id, keys in by_chunk.items() if raw_id != first_chunk for key in keys}
    raw = raw_passages.raw_store(store)
    with raw.batch() as writer:
        writer.acquire(first_chunk)
        assert writer.release(first_chunk) is False
    assert set(passages(store)) == kept | set(by_chunk[first_chunk])
    sequence = store.sequence
    with raw.batch() as writer:
        assert writer.release(first_chunk) is True
    assert store.sequence == sequence + 1  # one batch: the chunk, its turns and its passages
    assert set(passages(store)) == kept
    assert raw_passages.open_index(store).search("locker password", top=5) == []
