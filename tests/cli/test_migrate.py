"""`memctl migrate` on the committed format-3 store (tests/fixtures/format3_store, README.txt there says how the
code before format 4 built it): afterwards the store answers as that code did, keeps memories and documents
apart, and is of format 4; a store of this format, of a format too old or too new, none and a busy one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engine.format import FORMAT_VERSION, WRITER_LOCK_FILE
from engine_testkit import rewrite_manifest_as, store_files
from memctl.paths import tenant_dir
from tools.testing.migration import FIXTURE, copy_fixture, manifest_version

EXPECTED = json.loads((FIXTURE.parent / "expected.json").read_text(encoding="utf-8"))
INDEXED = {"notes/bluetooth.txt", "notes/groceries.txt"}  # notes/draft.txt was indexed, then deleted
LOCKS = {WRITER_LOCK_FILE, WRITER_LOCK_FILE + ".gc"}


@pytest.fixture
def old_store(isolated_home) -> str:
    path = tenant_dir(str(isolated_home), "default")
    copy_fixture(path)
    return path


def without_timings(value):
    """A recall answer but for what differs between runs (stage timings) or between the codes for other reasons
    than the store: the rank stage's note on stage B, which issue 16's settings schema reworded, what issue 17
    added to an answer (its packing, a card path's query words and matched fields) and the raw stage's notes,
    which count the stored passages since issue 17 where they counted the chunks searched."""
    if isinstance(value, dict):
        if value.get("name") == "W5: raw passages":
            value = {key: item for key, item in value.items() if key != "notes"}
        return {key: without_timings(item) for key, item in value.items() if key not in ("ms", "total_ms", "vector", "packing", "words", "fields")}
    if isinstance(value, list):
        return [without_timings(item) for item in value]
    return value


def data_files(path: str) -> dict:
    return {name: data for name, data in store_files(path).items() if name not in LOCKS}


def test_the_old_store_is_refused_until_migrated(cli, old_store):
    result = cli("recall", "Dana")
    assert result.exit_code == 3 and "run `memctl migrate`" in result.stderr
    assert manifest_version(old_store) == 3


def test_a_dry_run_reports_the_steps_and_writes_nothing(cli, old_store):
    before = data_files(old_store)
    result = cli("migrate", "--dry-run", "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report == {"path": old_store, "from_version": 3, "to_version": FORMAT_VERSION, "dry_run": True,
                      "migrated": False, "wal_batches": 5,
                      "steps": [{"name": "split_text_index", "to_version": 4,
                                 "counts": {"node_documents": 48, "documents": 2, "retired_docnos_dropped": 2}},
                                {"name": "turn_fields", "to_version": 4,
                                 "counts": {"chunks": 2, "turns": 14, "sessions": 8, "attachments": 1,
                                            "replies": 0}},
                                {"name": "raw_passages", "to_version": 4, "counts": {"chunks": 2}},
                                {"name": "fact_chains", "to_version": 5,
                                 "counts": {"chains": 0, "claims": 0, "in_force": 0, "contradictions": 0}}]}
    assert data_files(old_store) == before and WRITER_LOCK_FILE not in os.listdir(old_store)
    text = cli("migrate", "--dry-run").stdout
    assert "would migrate from format 3 to 5" in text and "node_documents 48, documents 2" in text


def test_the_migrated_store_answers_as_the_old_code_did(cli, old_store):
    result = cli("migrate", "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["migrated"], report["from_version"], report["to_version"]) == (True, 3, FORMAT_VERSION)
    assert manifest_version(old_store) == FORMAT_VERSION
    assert os.listdir(os.path.join(old_store, "wal")) and all(
        os.path.getsize(os.path.join(old_store, "wal", name)) == 32 for name in os.listdir(os.path.join(old_store, "wal")))
    check = cli("check", "--json")
    assert check.exit_code == 0 and json.loads(check.stdout)["problems"] == []

    # Recall: what the format-3 code answered before any document was indexed, although the old index also
    # held the documents indexed after (the new text:nodes index holds the nodes alone).
    for expected in EXPECTED["recall"]:
        found = cli("recall", "--q", expected["query"], "--now", "2024-06-01", "--json")
        assert found.exit_code == 0, found.stderr
        assert without_timings(json.loads(found.stdout)) == without_timings(expected)

    # The raw passage index, which format 3 did not have: every turn of both chunks, found with or without R2G.
    found = json.loads(cli("recall", "--allow-raw", "litter box", "--json").stdout)
    [stage] = [stage for stage in found["trace"]["stages"] if stage["name"] == "W5: raw passages"]
    assert stage["notes"] == {"passages": 14} and stage["candidates"] > 0

    # Search: the indexed files alone, where format 3 also returned R2G's nodes.
    assert {hit["key"] for hit in EXPECTED["search"]["litter"]["hits"]} - INDEXED, "the fixture mixes them"
    for query, keys in (("litter", ["notes/groceries.txt"]), ("Bluetooth headset", ["notes/bluetooth.txt"]),
                        ("litter Bluetooth Tofu", sorted(INDEXED)), ("Dana Miso 柯基", [])):
        hits = json.loads(cli("search", query, "--json").stdout)["hits"]
        assert sorted(hit["key"] for hit in hits) == keys, query
    tofu = json.loads(cli("search", "Tofu", "--json").stdout)["hits"]
    assert [(hit["key"], hit["time"][:10]) for hit in tofu] == [("notes/groceries.txt", "2024-05-02")]

    # Every citation reads back from its raw chunk, exactly the text the old code cited.
    for expected in EXPECTED["recall"]:
        for result_row in expected["results"]:
            for citation in result_row["citations"]:
                cited = cli("raw", "cat", citation["raw_id"], "--offset", str(citation["offset"]),
                            "--length", str(citation["length"]))
                assert cited.exit_code == 0 and cited.stdout == citation["snippet"]

    stats = json.loads(cli("stats", "--json").stdout)
    assert stats["text:nodes"]["documents"] == 48 and stats["text:documents"]["documents"] == 2
    assert "text" not in stats and not [name for name in stats["counters"] if name.startswith("text.")]

    # A second migration finds nothing to do and changes nothing.
    before = data_files(old_store)
    again = cli("migrate")
    assert again.exit_code == 0 and "already format 5, nothing to migrate" in again.stdout
    assert json.loads(cli("migrate", "--json").stdout)["migrated"] is False
    assert data_files(old_store) == before


def test_memories_and_documents_stay_apart_after_the_migration(cli, old_store, tmp_path):
    """What format 4 promises holds for a migrated store too: indexing more documents changes no recall."""
    assert cli("migrate").exit_code == 0
    query = ("recall", "--q", "litter for Miso", "--now", "2024-06-01", "--json")
    before = without_timings(json.loads(cli(*query).stdout))
    note = tmp_path / "litter.txt"
    note.write_text("Litter\nMiso's litter, unscented, clumping: litter litter.\n", encoding="utf-8")
    assert cli("index", "add", str(note)).exit_code == 0
    assert without_timings(json.loads(cli(*query).stdout)) == before


@pytest.mark.parametrize("version, advice", [(1, "re-create it"), (FORMAT_VERSION + 1, "upgrade memctl")])
def test_a_store_it_cannot_migrate_is_refused(cli, old_store, version, advice):
    rewrite_manifest_as(old_store, version)
    before = data_files(old_store)
    result = cli("migrate")
    assert result.exit_code == 3 and advice in result.stderr and f"format version {version}" in result.stderr
    assert data_files(old_store) == before


def test_no_store_is_bad_input(cli, isolated_home):
    result = cli("--tenant", "nobody", "migrate")
    assert result.exit_code == 2 and "no memctl store" in result.stderr
    assert not Path(tenant_dir(str(isolated_home), "nobody")).exists()


def test_a_busy_store_is_left_alone(cli, old_store):
    from engine.lock import WriterLock

    lock = WriterLock(old_store)
    lock.acquire(0, "another writer")
    try:
        before = data_files(old_store)
        result = cli("migrate")
        assert result.exit_code == 75 and "another writer" in result.stderr
        assert data_files(old_store) == before
    finally:
        lock.release()


def test_turns_get_the_generic_fields_their_adapter_writes_today(cli, old_store):
    """The fixture's MemDaily excerpt (dia_ids D1:n, a caption in extra) and its JSONL notes (ids dana-00n): the
    first gets sessions and an image attachment out of its extra, the second nothing, as ingest writes today."""
    assert cli("migrate").exit_code == 0
    from engine.raw import RawStore
    from engine.store import Store

    with Store.open(old_store, writable=False) as store:
        raw = RawStore(store)
        turns = [turn for chunk in raw.turn_chunks() for turn in raw.chunk_turns(chunk)]
    by_id = {turn["source_id"]: turn for turn in turns}
    assert {turn["session"] for id_, turn in by_id.items() if id_.startswith("D1:")} == {"1"}
    assert by_id["D1:7"]["attachments"] == [{"kind": "image", "caption": "一只刚洗完澡的柯基犬趴在浴巾上"}]
    assert "blip_caption" not in by_id["D1:7"]["extra"] and by_id["D1:7"]["extra"] == {"place": "浙江杭州"}
    dana = [turn for id_, turn in by_id.items() if id_.startswith("dana-")]
    assert dana and all(turn["session"] is None and not turn["attachments"] and turn["reply_to"] is None
                        for turn in dana)
