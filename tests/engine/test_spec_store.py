"""A store written by memctl's own commands (ingest, r2g, index) read as MANIFEST.spec says: every msgpack
object in it is of the Conventions' profile, every records segment is cut into blocks as section 4 says, and
every stored analysis signature carries the stop-word hash of the packaged lists."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import zstandard
from typer.testing import CliRunner

from engine.codec import pack
from engine.records.blocks import encode_block
from engine.store import Store
from memctl.cli.app import app
from msgpack_profile import decode
from spec_reader import (
    RecordsSegment,
    Segment,
    hex_bytes,
    manifest,
    packaged_stopwords,
    segment_paths,
    spec_sentence,
    stopword_hash,
    wal_batches,
)

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture(scope="module")
def samples_store(tmp_path_factory) -> str:
    home = tmp_path_factory.mktemp("home")
    runner = CliRunner()
    for arguments in (["ingest", "--raw", str(SAMPLES)], ["r2g"], ["index", "--add", str(SAMPLES / "journal.txt")]):
        result = runner.invoke(app, arguments, env={"MEMCTL_HOME": str(home)}, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return str(home / "tenants" / "default")


def _maps(value):
    """Every map inside a decoded value, the value itself included."""
    if isinstance(value, dict):
        yield value
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            yield from _maps(item)


def _every_msgpack_value(store_path: str):
    """(what, decoded value) of every msgpack object of the store, each decoded by the profile decoder (which
    raises on anything outside the profile); `what` is a table name for record values."""
    yield "MANIFEST", manifest(store_path)
    for path in segment_paths(store_path, "records"):
        for table, _key, packed in RecordsSegment(path).rows:
            if packed is not None:
                value = decode(packed)
                yield table, value
                if table == "raw.turns":
                    yield "raw.turns columns", decode(zstandard.ZstdDecompressor().decompress(value["turns"]))
    for name in os.listdir(os.path.join(store_path, "seg")):
        yield "segment meta", Segment(os.path.join(store_path, "seg", name)).meta  # its directory: decoded too
    for payload in _wal_payloads(store_path):
        yield "WAL batch", decode(payload)


def _wal_payloads(store_path: str) -> list[bytes]:
    directory = os.path.join(store_path, "wal")
    return [payload for name in sorted(os.listdir(directory)) for payload in wal_batches(os.path.join(directory, name))]


def test_every_msgpack_object_is_of_the_profile(samples_store):
    checked = {what for what, _value in _every_msgpack_value(samples_store)}
    assert {"MANIFEST", "segment meta", "WAL batch", "raw.chunk", "raw.turns", "raw.turns columns", "graph.node",
            "graph.edge", "graph.type", "text:nodes.doc", "text:nodes.meta"} <= checked


def test_wal_batches_are_sequence_and_operations(samples_store):
    batches = [decode(payload) for payload in _wal_payloads(samples_store)]
    assert batches
    for sequence, operations in batches:
        assert sequence > manifest(samples_store)["last_sequence"]
        for code, name, *rest in operations:
            assert (code, len(rest)) in ((1, 2), (2, 1), (3, 1)) and isinstance(name, str)
            assert isinstance(rest[0], int if code == 3 else str)


def test_the_manifest_records_the_live_wal_its_writers_left(samples_store):
    """§5: after the last writer closed, `wal_size` is the live WAL's size and `wal_sequence` its last batch."""
    fields = manifest(samples_store)
    live = os.path.join(samples_store, "wal", f"{fields['wal_number']:06d}.log")
    sequences = [decode(payload)[0] for payload in wal_batches(live)]
    assert fields["wal_size"] == os.path.getsize(live)
    assert fields["wal_sequence"] == max(sequences, default=fields["last_sequence"]) >= fields["last_sequence"]
    assert "resolved_damage" not in fields


def test_every_records_segment_is_cut_into_blocks_as_the_spec_says(samples_store, tmp_path):
    """Layout 2 (decoded by spec_reader from section 4 alone): a block ends with the row that takes its keys and
    values to the mark or more, never later, and earlier only before a row of another mark or at the end. The
    mark is RECORDS_BLOCK_BYTES in a flush's segment (which has a filter); in a compaction's (which has none),
    RECORDS_POINT_READ_BLOCK_BYTES in graph.node's rows and RECORDS_COMPACTION_BLOCK_BYTES in the rest."""
    flush_mark = int(spec_sentence(r"RECORDS_BLOCK_BYTES \((\d+) KiB\)")[1]) * 1024
    point_read = spec_sentence(r"RECORDS_POINT_READ_BLOCK_BYTES \((\d+) KiB\) .*? \(RECORDS_POINT_READ_TABLES: "
                               r"([a-z.]+)\) and RECORDS_COMPACTION_BLOCK_BYTES \((\d+) KiB\)")
    point_read_table = point_read[2]

    def mark_of(has_filter: bool, table: str) -> int:
        if has_filter:
            return flush_mark
        return int(point_read[1 if table == point_read_table else 3]) * 1024

    compacted = str(tmp_path / "compacted")
    shutil.copytree(samples_store, compacted)
    with Store.open(compacted) as store:
        store.compact()
    paths = segment_paths(samples_store, "records") + segment_paths(compacted, "records")
    kinds, marks_seen = set(), set()
    for path in paths:
        records = RecordsSegment(path)  # a flush's filter is checked bit for bit as the spec builds it
        assert records.layout == 2 and len(records.block_bytes) > 1
        kinds.add(records.has_filter)
        tables = [table for table, _key, _value in records.rows]
        start = 0
        for block, (total, last_row, count) in enumerate(records.block_bytes):
            marks = {mark_of(records.has_filter, table) for table in tables[start: start + count]}
            assert len(marks) == 1, f"{path}: block {block} holds rows of the marks {marks}"
            mark = marks.pop()
            marks_seen.add((records.has_filter, mark))
            assert total - last_row < mark
            start += count
            ends_early = start == len(tables) or mark_of(records.has_filter, tables[start]) != mark
            assert mark <= total or ends_early
    assert kinds == {True, False}
    assert {mark for has_filter, mark in marks_seen if not has_filter} == {int(point_read[1]) * 1024,
                                                                         int(point_read[3]) * 1024}


def test_the_block_example_of_the_spec():
    said = spec_sentence(r"decompresses to the (\d+) bytes ((?:[0-9a-f]{2}(?: · | ))*[0-9a-f]{2})\.")
    expected = hex_bytes(said[2].replace("·", ""))
    assert len(expected) == int(said[1])
    assert encode_block([b"t.x\0a", b"t.x\0b"], [pack(1), None]) == expected


def test_every_stored_signature_holds_the_stopword_hash_of_the_packaged_lists(samples_store):
    expected = stopword_hash(packaged_stopwords("en") | packaged_stopwords("zh"))
    found = [found_map["stopwords"] for _where, value in _every_msgpack_value(samples_store)
             for found_map in _maps(value) if "stopwords" in found_map]
    assert found and set(found) == {expected}
