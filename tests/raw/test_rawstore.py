"""RawStore: content-addressed zstd blobs, reference counts, verified reads, spans and orphan collection."""

import hashlib
import os
import re
from datetime import datetime, timezone

import pytest
import zstandard

from engine.errors import CorruptionError, InputError
from engine.format import RAW_CHUNK_TABLE
from engine.raw import RawStore, raw_id_for, record_blob_path
from engine.store import Store

from raw_testkit import blob_files

TEXT = "用户: 蓝牙打不开，错误 0x8007045D 😀\n助手: 看看 BTHUSB EventID=17\n".encode()
FIXED_DAY = datetime(2025, 9, 15, 10, 35, tzinfo=timezone.utc)


def put(raw, data=TEXT, refs=1, meta=None):
    with raw.batch() as writer:
        return writer.put(data, meta or {"conv_id": "c"}, refs=refs)


def test_put_stores_one_compressed_blob_and_a_record(store):
    raw = RawStore(store, clock=lambda: FIXED_DAY)
    result = put(raw, refs=3, meta={"conv_id": "c", "lang": "zh"})
    sha = hashlib.sha256(TEXT).hexdigest()
    assert result.new and result.raw_id == "raw_" + sha[:16] == raw_id_for(sha)
    record = raw.get(result.raw_id)
    assert record == {  # the default mime is not stored
        "len_bytes": len(TEXT), "sha256": bytes.fromhex(sha),
        "created_at": int(FIXED_DAY.timestamp()), "refcount": 3, "stored_bytes": result.stored_bytes,
        "meta": {"conv_id": "c", "lang": "zh"},
    }
    path = f"raw/2025/09/15/{sha[:2]}/raw_{sha}.blob.zst"
    assert raw.describe(result.raw_id, record) == {
        "raw_id": result.raw_id, "mime": "text/plain; charset=utf-8", **record, "sha256": sha,
        "created_at": "2025-09-15T10:35:00+00:00", "path": path}
    assert blob_files(store.path) == [path]
    with open(os.path.join(store.path, path), "rb") as handle:
        blob = handle.read()
    assert len(blob) == result.stored_bytes
    assert zstandard.frame_content_size(blob) == len(TEXT)
    assert raw.read(result.raw_id) == TEXT


def test_blob_path_uses_the_day_of_creation(store):
    raw = RawStore(store)
    raw_id = put(raw).raw_id
    described = raw.describe(raw_id, raw.get(raw_id))
    assert re.fullmatch(r"raw/\d{4}/\d{2}/\d{2}/[0-9a-f]{2}/raw_[0-9a-f]{64}\.blob\.zst", described["path"])
    assert described["path"][4:14] == described["created_at"][:10].replace("-", "/")
    assert blob_files(store.path) == [described["path"]]


def test_same_bytes_again_are_one_blob_with_more_references(store):
    raw = RawStore(store)
    first = put(raw, refs=2)
    second = put(raw, refs=5)
    assert not second.new and second.raw_id == first.raw_id and second.stored_bytes == 0
    assert raw.get(first.raw_id)["refcount"] == 7
    assert len(blob_files(store.path)) == 1


def test_same_bytes_twice_in_one_batch(store):
    raw = RawStore(store)
    with raw.batch() as writer:
        first = writer.put(TEXT, {}, refs=1)
        second = writer.put(TEXT, {}, refs=1)
    assert (first.new, second.new) == (True, False)
    assert raw.get(first.raw_id)["refcount"] == 2
    assert len(blob_files(store.path)) == 1


def test_releasing_the_last_reference_deletes_record_and_blob(store):
    raw = RawStore(store)
    raw_id = put(raw, refs=2).raw_id
    with raw.batch() as writer:
        assert writer.release(raw_id) is False
    assert raw.get(raw_id)["refcount"] == 1 and len(blob_files(store.path)) == 1
    with raw.batch() as writer:
        assert writer.release(raw_id) is True
        assert len(blob_files(store.path)) == 1  # the file outlives the record until the commit
    assert raw.get(raw_id) is None
    assert blob_files(store.path) == []


def test_span_keys_name_a_chunk_and_a_span():
    from engine.raw import parse_span_key, span_key

    raw_id = "raw_" + "0123456789abcdef"
    assert span_key(raw_id, 5, 62) == raw_id + "@5+62" and parse_span_key(raw_id + "@5+62") == (raw_id, 5, 62)
    for key in (raw_id + "@05+62", raw_id + "@5+", raw_id + "@5+62\n", "raw_0123@5+62", raw_id, "notes.txt"):
        assert parse_span_key(key) is None


def test_release_then_store_again_in_one_batch_keeps_the_blob(store):
    raw = RawStore(store)
    raw_id = put(raw).raw_id
    with raw.batch() as writer:
        writer.release(raw_id)
        assert writer.put(TEXT, {}, refs=1).new
    assert raw.get(raw_id)["refcount"] == 1
    assert raw.read(raw_id) == TEXT


def test_unknown_ids_are_input_errors(store):
    raw = RawStore(store)
    with pytest.raises(InputError, match="no raw chunk raw_0000000000000000"):
        raw.read("raw_0000000000000000")
    with pytest.raises(InputError, match="no raw chunk raw_nope"):
        with raw.batch() as writer:
            writer.acquire("raw_nope")


def test_read_span(store):
    raw = RawStore(store)
    raw_id = put(raw).raw_id
    start = TEXT.index("蓝牙".encode())
    assert raw.read_span(raw_id, start, len("蓝牙".encode())).decode() == "蓝牙"
    assert raw.read_span(raw_id, len(TEXT), 0) == b""
    for offset, length in [(-1, 1), (0, len(TEXT) + 1), (len(TEXT), 1), (3, -2)]:
        with pytest.raises(InputError, match=f"span offset {offset}, length {length} is outside"):
            raw.read_span(raw_id, offset, length)


def test_failed_batch_leaves_no_record_and_no_file(store):
    raw = RawStore(store)
    with pytest.raises(RuntimeError):
        with raw.batch() as writer:
            writer.put(TEXT, {})
            writer.put(b"another chunk", {})
            raise RuntimeError("stop")
    assert list(raw.scan()) == []
    assert blob_files(store.path) == []


def test_chunk_above_the_blob_limit_is_refused(store):
    raw = RawStore(store, limit=100)
    with pytest.raises(InputError, match="a raw chunk of 101 bytes exceeds the 100-byte blob limit"):
        put(raw, b"x" * 101)
    assert blob_files(store.path) == []


def _blob_path(store, raw_id):
    return os.path.join(store.path, record_blob_path(RawStore(store).get(raw_id)))


def test_sha256_mismatch_is_corruption_naming_the_file(store):
    raw = RawStore(store)
    raw_id = put(raw).raw_id
    path = _blob_path(store, raw_id)
    tampered = bytearray(TEXT)
    tampered[-2] ^= 0x01  # same length, different content
    with open(path, "wb") as handle:
        handle.write(zstandard.ZstdCompressor().compress(bytes(tampered)))
    with pytest.raises(CorruptionError, match="sha256 mismatch") as raised:
        raw.read(raw_id)
    assert raised.value.path == path
    with pytest.raises(CorruptionError):
        raw.read_span(raw_id, 0, 4)


def test_length_mismatch_and_damaged_frames_are_corruption(store):
    raw = RawStore(store)
    raw_id = put(raw).raw_id
    path = _blob_path(store, raw_id)
    with open(path, "wb") as handle:
        handle.write(zstandard.ZstdCompressor().compress(TEXT + b"more"))
    with pytest.raises(CorruptionError, match=f"declares {len(TEXT) + 4:,} bytes, the record says {len(TEXT):,}"):
        raw.read(raw_id)
    with open(path, "wb") as handle:
        handle.write(b"not zstd at all")
    with pytest.raises(CorruptionError, match="not a zstd frame") as raised:
        raw.read(raw_id)
    assert raised.value.path == path
    good = zstandard.ZstdCompressor().compress(TEXT)
    with open(path, "wb") as handle:
        handle.write(good[:-3])
    with pytest.raises(CorruptionError, match="does not decompress"):
        raw.read(raw_id)


def test_missing_blob_is_corruption_and_ingesting_again_restores_it(store):
    raw = RawStore(store)
    raw_id = put(raw).raw_id
    path = _blob_path(store, raw_id)
    os.unlink(path)
    with pytest.raises(CorruptionError, match=f"blob of {raw_id} is missing") as raised:
        raw.read(raw_id)
    assert raised.value.path == path
    again = put(raw, refs=0)
    assert not again.new and again.stored_bytes > 0
    assert raw.read(raw_id) == TEXT
    assert raw.get(raw_id)["refcount"] == 1


def test_a_reader_snapshot_reads_blobs(store):
    raw_id = put(RawStore(store)).raw_id
    reader = Store.open(store.path, writable=False)
    assert RawStore(reader).read(raw_id) == TEXT
    with pytest.raises(Exception, match="needs the store opened for writing"):
        RawStore(reader).gc()


def test_gc_removes_orphans_and_temp_files_only(store):
    raw = RawStore(store)
    raw_id = put(raw).raw_id
    kept = record_blob_path(raw.get(raw_id))
    orphan_sha = hashlib.sha256(b"orphan").hexdigest()
    orphan = f"raw/2020/01/01/{orphan_sha[:2]}/raw_{orphan_sha}.blob.zst"
    temp = kept + ".tmp"
    foreign = "raw/README"
    for relative in (orphan, temp, foreign):
        os.makedirs(os.path.dirname(os.path.join(store.path, relative)), exist_ok=True)
        with open(os.path.join(store.path, relative), "wb") as handle:
            handle.write(b"x")
    assert sorted(raw.gc()) == sorted([orphan, temp])
    assert blob_files(store.path) == sorted([foreign, kept])
    assert not os.path.exists(os.path.join(store.path, "raw/2020"))  # emptied directories go too
    assert raw.read(raw_id) == TEXT


def test_scan_lists_chunks_in_id_order(store):
    raw = RawStore(store)
    ids = sorted(put(raw, data=f"chunk {index}".encode()).raw_id for index in range(5))
    assert [raw_id for raw_id, _ in raw.scan()] == ids
    assert [key for key, _ in store.scan(RAW_CHUNK_TABLE)] == ids


def test_verify_reports_damaged_blobs_and_unnamed_files_without_writing(store):
    raw = RawStore(store)
    good = put(raw, data=b"good chunk").raw_id
    bad = put(raw, data=b"bad chunk").raw_id
    with open(_blob_path(store, bad), "wb") as handle:
        handle.write(zstandard.ZstdCompressor().compress(b"bad chunK"))
    stray = os.path.join(os.path.dirname(_blob_path(store, good)), "raw_" + "0" * 64 + ".blob.zst")
    open(stray, "wb").close()
    reader = Store.open(store.path, writable=False)
    problems, unnamed = RawStore(reader).verify()
    assert [(error.path, "sha256 mismatch" in error.reason) for error in problems] == [(_blob_path(store, bad), True)]
    assert unnamed == [os.path.relpath(stray, store.path)]
    assert os.path.exists(stray)
