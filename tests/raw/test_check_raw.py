"""`check_store` (memctl check) verifies raw chunks: blobs, sizes, sha256, reference counts; orphans are notes."""

import os

import zstandard

from engine.check import check_store
from engine.format import DAMAGE_FILE, RAW_CHUNK_TABLE
from engine.raw import RawStore, record_blob_path

TEXT = "用户: 蓝牙打不开 0x8007045D\n".encode()
TURNS = [{"speaker": "用户", "ts": None, "source_id": "t#1", "offset": len("用户: ".encode()),
          "length": len("蓝牙打不开 0x8007045D".encode()), "extra": {}}]


def stored(store) -> tuple[RawStore, str]:
    raw = RawStore(store)
    with raw.batch() as writer:
        raw_id = writer.put_turns(TEXT, {}, "c", TURNS).raw_id
    return raw, raw_id


def test_a_store_with_raw_chunks_checks_clean(store):
    stored(store)
    report = check_store(store.path)
    assert report.problems == [] and report.notes == []
    assert report.checked["raw_chunks"] == 1


def test_a_damaged_blob_is_a_problem_naming_its_file(store):
    raw, raw_id = stored(store)
    relative = record_blob_path(raw.get(raw_id))
    with open(os.path.join(store.path, relative), "wb") as handle:
        handle.write(zstandard.ZstdCompressor().compress(TEXT.replace(b"0x", b"0X")))
    assert check_store(store.path).problems == [
        {"file": relative, "offset": None, "message": f"sha256 mismatch: the blob's content is not {raw_id}'s"}]
    os.unlink(os.path.join(store.path, relative))
    marker, *problems = check_store(store.path).problems  # the first check marked the store damaged
    assert marker["file"] == DAMAGE_FILE and "sha256 mismatch" in marker["message"]
    assert problems == [{"file": relative, "offset": None, "message": f"blob of {raw_id} is missing"}]


def test_a_wrong_reference_count_is_a_problem_naming_the_record(store):
    raw, raw_id = stored(store)
    with store.batch() as batch:
        batch.put(RAW_CHUNK_TABLE, raw_id, {**raw.get(raw_id), "refcount": 5})
    [problem] = check_store(store.path).problems
    assert problem["file"] == f"raw.chunk/{raw_id}" and "reference count 5, but 1 turn(s)" in problem["message"]


def test_orphan_blobs_and_temp_files_are_notes(store):
    raw, raw_id = stored(store)
    relative = record_blob_path(raw.get(raw_id))
    orphan = f"raw/2020/01/01/ab/raw_{'ab' * 32}.blob.zst"
    for name in (orphan, relative + ".tmp"):
        os.makedirs(os.path.dirname(os.path.join(store.path, name)), exist_ok=True)
        open(os.path.join(store.path, name), "wb").close()
    report = check_store(store.path)
    assert report.problems == []
    assert sorted(note["file"] for note in report.notes) == sorted([orphan, relative + ".tmp"])
    assert all("memctl raw gc" in note["message"] for note in report.notes)


def test_memctl_check_accepts_turns_with_sessions_attachments_and_replies(cli, tmp_path):
    """An ingest that fills every generic turn field (and a malformed one is the check's problem: see
    tests/raw/test_turns.py) leaves a store `memctl check` finds clean."""
    import json

    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in [
        {"id": "u1", "session": "a", "role": "user", "content": "look", "attachments": [{"type": "image",
                                                                                         "caption": "a cat"}]},
        {"id": "b1", "session": "a", "role": "assistant", "content": "cute", "reply_to": "u1"},
        {"id": "u2", "session": "b", "role": "user", "content": "hello again", "reply_to": "elsewhere"}]))
    assert cli("ingest", "--raw", str(log), "--quiet").exit_code == 0
    result = cli("check", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["problems"] == [] and report["checked"]["raw_chunks"] == 1
