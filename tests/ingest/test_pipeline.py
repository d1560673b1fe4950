"""ingest(): one atomic batch per call, content-addressed chunks, turn records whose raw_refs round-trip."""

import os
import shutil
import subprocess
import sys

import pytest

from engine.errors import InputError
from engine.format import RAW_CHUNK_TABLE, RAW_TURNS_TABLE
from engine.raw import RawStore
from engine.store import Store
from memctl.ingest.model import Source
from memctl.ingest.pipeline import ingest, prepare
from memctl.ingest.sources import expand

from ingest_testkit import SAMPLES
from raw_testkit import blob_files

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def turn_records(store):
    return list(RawStore(store).iter_turns())


def blob_count(store):
    return len(blob_files(store.path))


def assert_spans_round_trip(store, expected_texts=None):
    raw = RawStore(store)
    texts = []
    for record in turn_records(store):
        ref = record["raw_ref"]
        assert record["turn_id"].startswith(ref["raw_id"] + ":")
        texts.append(raw.read_span(ref["raw_id"], ref["offset"], ref["length"]).decode("utf-8"))
    if expected_texts is not None:
        assert sorted(texts) == sorted(expected_texts)
    return texts


def test_ingest_the_samples_directory(store):
    summary = ingest(store, expand(SAMPLES))
    assert summary["conversations"] == 5
    assert summary["turns"] == 32 + 15 + 21 + 38 + 36
    assert summary["chunks_new"] == len(list(store.scan(RAW_CHUNK_TABLE))) == blob_count(store)
    assert summary["chunks_duplicate"] == 0
    assert 0 < summary["bytes_stored"] < summary["bytes_in"]
    blob_bytes = sum(os.path.getsize(os.path.join(store.path, path)) for path in blob_files(store.path))
    turn_row_bytes = sum(len(record["turns"]) for _, record in store.scan(RAW_TURNS_TABLE))
    assert summary["bytes_stored"] == blob_bytes + turn_row_bytes
    texts = assert_spans_round_trip(store)
    assert len(texts) == summary["turns"]
    assert any("0x8007045D" in text for text in texts)
    assert any("以后优先中文回答" in text for text in texts)
    assert any("🥜" in text for text in texts)


def test_the_records_an_ingest_leaves_in_memory_are_those_a_reopen_reads(store):
    """The batch hands its records to the memtable as they are (owned): they must equal what the WAL gives."""
    ingest(store, expand(SAMPLES))
    tables = (RAW_CHUNK_TABLE, RAW_TURNS_TABLE)
    in_memory = {table: list(store.scan(table)) for table in tables}
    with Store.open(store.path, writable=False) as reader:
        assert {table: list(reader.scan(table)) for table in tables} == in_memory


def test_turn_records_keep_speaker_time_source_and_extra(store):
    ingest(store, [os.path.join(SAMPLES, "xiaolin-life.locomo.json")])
    records = turn_records(store)
    photo = next(record for record in records if record["source_id"] == "D1:7")
    assert photo["conv_id"] == "xiaolin-2024" and photo["speaker"] == "小林"
    assert photo["ts"] == "2024-03-05T20:05:00"
    assert photo["attachments"] == [{"kind": "image", "caption": "一只刚洗完澡的柯基犬趴在浴巾上"}]
    assert photo["extra"] == {"place": "浙江杭州"} and photo["session"] == "1"
    raw_id = photo["raw_ref"]["raw_id"]
    chunk = RawStore(store).get(raw_id)
    assert chunk["meta"] == {"lang": "zh"}  # the rest of the chunk's meta is derived from its turns
    first = next(record for record in records if record["raw_ref"]["raw_id"] == raw_id)
    last = [record for record in records if record["raw_ref"]["raw_id"] == raw_id][-1]
    assert RawStore(store).describe(raw_id, chunk)["meta"] == {
        "conv_id": "xiaolin-2024", "role": None, "ts": first["ts"], "lang": "zh",
        "source_id": f"{first['source_id']}..{last['source_id']}"}
    assert chunk["refcount"] == sum(record["raw_ref"]["raw_id"] == photo["raw_ref"]["raw_id"] for record in records)


def test_same_input_again_stores_nothing(store):
    path = os.path.join(SAMPLES, "win11-bluetooth.transcript.txt")
    first = ingest(store, [path])
    sequence = store.sequence
    again = ingest(store, [path])
    assert again["chunks_new"] == 0 and again["chunks_duplicate"] == first["chunks_new"] > 0
    assert again["bytes_stored"] == 0
    assert store.sequence == sequence  # not even an empty batch was written
    assert len(turn_records(store)) == first["turns"]


def test_identical_content_in_two_files_is_stored_once(store, tmp_path):
    original = os.path.join(SAMPLES, "dana-move-and-job.jsonl")
    copy = tmp_path / "copy.jsonl"
    shutil.copy(original, copy)
    both = ingest(store, [original, str(copy)])
    assert both["chunks_new"] == both["chunks_duplicate"] > 0
    assert blob_count(store) == both["chunks_new"]
    later = ingest(store, [str(copy)])
    assert later["chunks_new"] == 0
    assert blob_count(store) == both["chunks_new"]


def test_one_bad_source_stores_nothing_at_all(store, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"role": "user", "content": "fine"}\n{"role": "user", "content": \n')
    with pytest.raises(InputError, match="malformed JSON") as raised:
        ingest(store, [os.path.join(SAMPLES, "journal.txt"), str(bad)])
    assert raised.value.where == f"{bad}:2:29"
    assert store.sequence == 0
    assert list(store.scan(RAW_CHUNK_TABLE)) == [] and turn_records(store) == []
    assert blob_count(store) == 0


def test_sources_text_errors_and_size_limit(store):
    summary = ingest(store, [Source("text", "以后优先中文回答 😀".encode()),
                             Source("bad.txt", b"caf\xe9 au lait")], errors="replace")
    assert summary["turns"] == 2
    assert sorted(assert_spans_round_trip(store)) == sorted(["以后优先中文回答 😀", "caf\ufffd au lait"])
    with pytest.raises(InputError, match="above the limit of 10 bytes"):
        ingest(store, [Source("long", b"x" * 11)], size_limit=10)
    with pytest.raises(InputError, match="unknown format 'csv'"):
        ingest(store, [Source("x", b"a,b")], format="csv")
    with pytest.raises(InputError, match="nothing to ingest"):
        ingest(store, [])


def test_forced_format_applies_to_every_source(store):
    summary = ingest(store, [Source("a", b"Alice: hi\nBob: hello\n")], format="text")
    assert summary["turns"] == 1


def test_progress_reports_parse_bytes_then_stored_chunks(store):
    calls = []
    ingest(store, [Source("a", b"Alice: hi\nBob: yo\n"), Source("b", b"note")],
           progress=lambda stage, done, total: calls.append((stage, done, total)))
    assert calls == [("parse", 18, 22), ("parse", 22, 22), ("store", 1, 2), ("store", 2, 2)]


CRASHING_INGEST = """
import sys
from engine.store import Store
from memctl.ingest.pipeline import ingest
store = Store.open(sys.argv[1])
ingest(store, sys.argv[2:])
print("ACK")
"""


@pytest.mark.parametrize("failpoint, hit", [
    ("raw.before_sync", 1), ("raw.after_sync", 1)])
def test_an_ingest_killed_before_commit_leaves_only_orphans_that_gc_removes(tmp_path, failpoint, hit):
    store_path = str(tmp_path / "store")
    samples = sorted(os.path.join(SAMPLES, name) for name in os.listdir(SAMPLES))  # several chunks
    environment = dict(os.environ, MEMCTL_FAILPOINT=f"{failpoint}:{hit}", PYTHONPATH=REPOSITORY)
    result = subprocess.run([sys.executable, "-c", CRASHING_INGEST, store_path, *samples], env=environment,
                            capture_output=True, text=True, cwd=REPOSITORY)
    assert result.returncode == -9 and "ACK" not in result.stdout, result.stderr
    with Store.open(store_path) as store:
        raw = RawStore(store)
        assert list(raw.scan()) == [] and turn_records(store) == []
        assert raw.gc() and blob_count(store) == 0
        summary = ingest(store, samples)
        assert summary["chunks_new"] == len(prepare(samples).chunks) > 1
        assert_spans_round_trip(store)
