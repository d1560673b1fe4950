"""The checksums and hashes of MANIFEST.spec's Conventions against the code: the spec's own examples, a layout-1
records segment hashed as section 4 words it, and the stop-word hash of the analysis signature recomputed from
the word lists."""

from __future__ import annotations

import hashlib
import os
import zlib

from engine.codec import crc32
from engine.records import composite_key, open_segment
from engine.records.rows import key_hash
from engine.segment import Segment
from engine.text.tokenizer import Tokenizer
from records_layout1 import write_layout1
from spec_reader import (
    RecordsSegment,
    blake2b_64,
    given_stopwords,
    hex_bytes,
    manifest,
    packaged_stopwords,
    spec_sentence,
    stopword_hash,
    wal_batches,
)

HEX = r"((?:[0-9a-f]{2} )*[0-9a-f]{2})"


def test_the_crc_is_the_one_whose_check_value_the_spec_gives():
    check = int(spec_sentence(r'the CRC of the nine ASCII bytes "123456789" is (0x[0-9A-F]{8})')[1], 16)
    assert zlib.crc32(b"123456789") == check
    assert crc32(b"123456789") == check


def test_the_blake2b_example_of_the_spec():
    said = spec_sentence(rf"the composite key `graph.node NUL bob` \({HEX}\) gives the bytes {HEX}, the u64 "
                         rf"(0x[0-9a-f]{{16}}); the first 8 bytes of its BLAKE2b-512 would be {HEX}\.")
    composite, digest, number, long_prefix = hex_bytes(said[1]), hex_bytes(said[2]), int(said[3], 16), said[4]
    assert composite == b"graph.node\0bob"
    assert hashlib.blake2b(composite, digest_size=8).digest() == digest
    assert int.from_bytes(digest, "little") == number == key_hash(composite)
    assert hashlib.blake2b(composite).digest()[:8] == hex_bytes(long_prefix) != digest


def test_a_layout1_segment_hashed_as_the_spec_says_is_read(tmp_path):
    """Layout 1 is only read now: a segment whose `hashes` are BLAKE2b-64 of its composite keys computed as the
    spec words it (not by engine code) answers every point read, the spec's example key included."""
    tables = {"notes.plain": {f"key-{index:03d}": index for index in range(300)},
              "notes.wide": {f"键{index}é": [index] for index in range(300)}, "graph.node": {"bob": {"id": 0}}}
    path = str(tmp_path / "000003.records.seg")
    write_layout1(path, tables, hashes=lambda composites: [blake2b_64(composite) for composite in composites])
    records = RecordsSegment(path)
    columns = records.segment.columns
    bob_row = records.composites.index(b"graph.node\0bob")
    bob_hash = int(spec_sentence(r"the u64 (0x[0-9a-f]{16})")[1], 16)
    assert columns["hashes"].tolist()[columns["hash_rows"].tolist().index(bob_row)] == bob_hash
    reader = open_segment(Segment.open(path))
    for table, rows in tables.items():
        for key, value in rows.items():
            composite = composite_key(table, key)
            assert reader.get(composite, key_hash(composite)) == (True, value)


def test_the_stopword_example_of_the_spec():
    said = spec_sentence(rf'English \["the", "A"\] and Chinese \["的"\] are hashed as the 9 bytes {HEX} '
                         rf'\("a", LF, "the", LF, "的"\), whose SHA-256 begins ([0-9a-f]{{16}}): the signature\'s '
                         rf'"stopwords" is "([0-9a-f]{{16}})"')
    words = given_stopwords(["the", "A"]) | given_stopwords(["的"])
    assert b"\n".join(sorted(word.encode("utf-8") for word in words)) == hex_bytes(said[1])
    assert stopword_hash(words) == said[2] == said[3]
    assert Tokenizer(stopwords_en=["the", "A"], stopwords_zh=["的"]).signature()["stopwords"] == said[3]


def test_the_stopword_hash_of_the_packaged_lists():
    words = packaged_stopwords("en") | packaged_stopwords("zh")
    assert Tokenizer().signature()["stopwords"] == stopword_hash(words)


def test_packaged_lines_are_stripped_and_comment_and_empty_lines_skipped(tmp_path, monkeypatch):
    from engine.text import tokenizer

    (tmp_path / "stopwords_en.txt").write_text("# a comment\n  padded\t\n\n #not a comment\nthe\r\n", "utf-8")
    (tmp_path / "stopwords_zh.txt").write_text("的\n\u3000了\u3000\n", "utf-8")
    monkeypatch.setattr(tokenizer, "_DATA", tmp_path)
    tokenizer.default_stopwords.cache_clear()
    try:
        words = packaged_stopwords("en", tmp_path) | packaged_stopwords("zh", tmp_path)
        assert words == {"padded", "#not a comment", "the", "的", "了"}
        assert Tokenizer().signature()["stopwords"] == stopword_hash(words)
    finally:
        tokenizer.default_stopwords.cache_clear()


def test_given_stopwords_are_normalised_and_case_folded_but_not_stripped():
    english, chinese = ["ＦＯＸ", "Straße", " padded "], ["蓝牙", "ｱ"]
    expected = stopword_hash(given_stopwords(english) | given_stopwords(chinese))
    assert {"fox", "strasse", " padded ", "ア"} <= given_stopwords(english) | given_stopwords(chinese)
    assert Tokenizer(stopwords_en=english, stopwords_zh=chinese).signature()["stopwords"] == expected


def test_a_wal_record_crc_covers_salt_type_and_data(store):
    with store.batch() as batch:
        batch.put("notes.plain", "only", "x" * 40_000)  # a FIRST and a LAST fragment
    live_wal = os.path.join(store.path, "wal", f"{manifest(store.path)['wal_number']:06d}.log")
    (batch_bytes,) = wal_batches(live_wal)
    assert batch_bytes.endswith(b"x" * 40_000)
