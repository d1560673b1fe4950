"""engine.manifest: MANIFEST-<n> bytes (MANIFEST.spec section 5), CURRENT (section 6) and the publish protocol."""

from __future__ import annotations

import os
import struct

import pytest
from hypothesis import given, strategies as st

from engine.codec import crc32, pack, unpack
from engine.errors import CorruptionError, UnsupportedVersion
from engine.format import (
    CURRENT_FILE,
    FORMAT_VERSION,
    MANIFEST_HEADER_FORMAT,
    MANIFEST_HEADER_SIZE,
    MANIFEST_MAGIC,
    MANIFEST_PREFIX,
    OLDEST_MIGRATABLE_FORMAT_VERSION,
    OLDEST_STORE_FORMAT_VERSION,
    TEMP_SUFFIX,
    WAL_HEADER_SIZE,
)
from engine.manifest import Manifest, decode, encode, load, manifest_name, publish, read_current
from engine_testkit import SimulatedCrash, crash_at

SAMPLE = Manifest(
    number=7,
    segments=[{"name": "000005.records.seg", "kind": "records", "owner": "records", "size": 4096, "crc": 123}],
    counters={"doc": 42, "édition": 3},
    wal_number=6,
    last_sequence=99,
    next_file_number=8,
    wal_size=1039,
    wal_sequence=120,
)


def test_encode_bytes():
    data = encode(SAMPLE)
    magic, version, length, body_crc, reserved = struct.unpack_from(MANIFEST_HEADER_FORMAT, data)
    body = data[MANIFEST_HEADER_SIZE:]
    assert (magic, version, reserved) == (MANIFEST_MAGIC, FORMAT_VERSION, 0)
    assert length == len(body) == len(data) - MANIFEST_HEADER_SIZE
    assert body_crc == crc32(body)
    assert unpack(body) == {
        "version": FORMAT_VERSION, "number": 7, "segments": SAMPLE.segments, "counters": SAMPLE.counters,
        "wal_number": 6, "last_sequence": 99, "next_file_number": 8, "wal_size": 1039, "wal_sequence": 120,
    }


def test_the_wal_checkpoint_and_a_resolved_marker_round_trip_and_an_older_body_reads_without_them():
    resolved = Manifest(**{**SAMPLE.__dict__, "resolved_damage": 0xDEADBEEF})
    assert unpack(encode(resolved)[MANIFEST_HEADER_SIZE:])["resolved_damage"] == 0xDEADBEEF
    assert decode(encode(resolved), "M") == resolved
    older = {key: value for key, value in SAMPLE.body().items() if key not in ("wal_size", "wal_sequence")}
    body = pack(older)
    data = struct.pack(MANIFEST_HEADER_FORMAT, MANIFEST_MAGIC, FORMAT_VERSION, len(body), crc32(body), 0) + body
    decoded = decode(data, "M")
    assert (decoded.wal_size, decoded.wal_sequence, decoded.resolved_damage) == (WAL_HEADER_SIZE, 99, None)


@pytest.mark.parametrize("fields", [{"wal_size": 31}, {"wal_sequence": 98}, {"wal_size": "big"}])
def test_an_impossible_wal_checkpoint_is_corruption(fields):
    body = pack({**SAMPLE.body(), **fields})
    data = struct.pack(MANIFEST_HEADER_FORMAT, MANIFEST_MAGIC, FORMAT_VERSION, len(body), crc32(body), 0) + body
    with pytest.raises(CorruptionError):
        decode(data, "M")


names = st.text(alphabet="abcdefghij.", min_size=1, max_size=12)


@given(
    number=st.integers(1, 2**40),
    segments=st.lists(st.fixed_dictionaries({"name": names, "kind": names, "owner": names,
                                             "size": st.integers(0, 2**40), "crc": st.integers(0, 2**32 - 1)}),
                      max_size=4),
    counters=st.dictionaries(st.text(max_size=10), st.integers(0, 2**63), max_size=4),
    wal_number=st.integers(1, 2**40),
    last_sequence=st.integers(0, 2**63),
)
def test_decode_inverts_encode(number, segments, counters, wal_number, last_sequence):
    manifest = Manifest(number, segments, counters, wal_number, last_sequence, number + 1)
    assert decode(encode(manifest), "MANIFEST") == manifest


def with_header(body: bytes, **fields) -> bytes:
    values = {"magic": MANIFEST_MAGIC, "version": FORMAT_VERSION, "length": len(body), "crc": crc32(body),
              "reserved": 0}
    values.update(fields)
    return struct.pack(MANIFEST_HEADER_FORMAT, *values.values()) + body


GOOD_BODY = encode(SAMPLE)[MANIFEST_HEADER_SIZE:]
INCOMPLETE_BODY = pack({key: value for key, value in SAMPLE.body().items() if key != "wal_number"})


@pytest.mark.parametrize(
    "data, offset, reason",
    [
        (b"", 0, "shorter than its header"),
        (encode(SAMPLE)[:MANIFEST_HEADER_SIZE - 1], 0, "shorter than its header"),
        (with_header(GOOD_BODY, magic=b"MEMCTLXX"), 0, "bad magic"),
        (with_header(GOOD_BODY, length=len(GOOD_BODY) + 1), None, "does not match the file"),
        (with_header(GOOD_BODY)[:-1], None, "does not match the file"),
        (with_header(GOOD_BODY) + b"\0", None, "does not match the file"),
        (with_header(GOOD_BODY, length=2**32 - 1), None, "does not match the file"),
        (with_header(GOOD_BODY, crc=crc32(GOOD_BODY) ^ 1), MANIFEST_HEADER_SIZE, "checksum mismatch"),
        (with_header(GOOD_BODY[:-1] + b"\xc1"), MANIFEST_HEADER_SIZE, "undecodable"),
        (with_header(INCOMPLETE_BODY), MANIFEST_HEADER_SIZE, "lacks required fields"),
        (with_header(pack([1, 2, 3])), MANIFEST_HEADER_SIZE, "lacks required fields"),
        (with_header(pack(5)), MANIFEST_HEADER_SIZE, "lacks required fields"),
    ],
    ids=["empty", "short-header", "magic", "length-too-long", "truncated", "trailing-byte", "huge-length",
         "crc", "bad-msgpack", "missing-field", "body-is-list", "body-is-int"],
)
def test_damaged_manifest_is_corruption_with_offset(data, offset, reason):
    with pytest.raises(CorruptionError) as caught:
        decode(data, "store/MANIFEST-000007")
    assert caught.value.path == "store/MANIFEST-000007"
    assert offset is None or caught.value.offset == offset  # None: see the length-field test below
    assert reason in caught.value.reason


LENGTH_FIELD_OFFSET = struct.calcsize(MANIFEST_HEADER_FORMAT[:4])  # after magic[8] and version u32


def test_length_mismatch_is_reported_at_the_length_field():
    with pytest.raises(CorruptionError) as caught:
        decode(with_header(GOOD_BODY)[:-1], "MANIFEST-000007")
    assert caught.value.offset == LENGTH_FIELD_OFFSET


def test_newer_version_is_refused():
    with pytest.raises(UnsupportedVersion, match="upgrade memctl"):
        decode(with_header(GOOD_BODY, version=FORMAT_VERSION + 1), "MANIFEST-000007")


def test_store_of_format_1_is_refused_with_how_to_recreate_it():
    # Format 1 kept raw.turns as rows: reading those records as columns would misread them.
    with pytest.raises(UnsupportedVersion, match="re-create it") as caught:
        decode(with_header(GOOD_BODY, version=OLDEST_MIGRATABLE_FORMAT_VERSION - 1), "MANIFEST-000007")
    assert caught.value.found == 1 and "migrate" not in str(caught.value)


@pytest.mark.parametrize("version", range(OLDEST_MIGRATABLE_FORMAT_VERSION, OLDEST_STORE_FORMAT_VERSION))
def test_store_of_a_format_before_5_is_refused_with_the_advice_to_migrate(version):
    # Formats 2 and 3 kept memctl's nodes and documents in the one unnamed text index; format 4 has no fact chains.
    assert (OLDEST_MIGRATABLE_FORMAT_VERSION, OLDEST_STORE_FORMAT_VERSION) == (2, 5)
    with pytest.raises(UnsupportedVersion, match="predates format 5: run `memctl migrate`") as caught:
        decode(with_header(GOOD_BODY, version=version), "MANIFEST-000007")
    assert caught.value.found == version and caught.value.exit_code == 3


def test_file_names():
    assert manifest_name(7) == MANIFEST_PREFIX + "000007"
    assert manifest_name(12_345_678) == MANIFEST_PREFIX + "12345678"
    assert SAMPLE.file_name() == "MANIFEST-000007"


# --- publish and CURRENT ------------------------------------------------------------------------------------


def test_publish_writes_the_manifest_then_current(tmp_path):
    publish(str(tmp_path), SAMPLE)
    assert sorted(os.listdir(tmp_path)) == [CURRENT_FILE, "MANIFEST-000007"]
    assert (tmp_path / CURRENT_FILE).read_bytes() == b"MANIFEST-000007\n"
    assert (tmp_path / "MANIFEST-000007").read_bytes() == encode(SAMPLE)
    assert read_current(str(tmp_path)) == "MANIFEST-000007"
    assert load(str(tmp_path), "MANIFEST-000007") == SAMPLE


def test_publish_moves_current_and_keeps_the_old_file_for_the_writer_to_delete(tmp_path):
    publish(str(tmp_path), SAMPLE)
    newer = Manifest(9, [], {"doc": 50}, 8, 120, 10)
    publish(str(tmp_path), newer)
    assert read_current(str(tmp_path)) == "MANIFEST-000009"
    assert load(str(tmp_path), read_current(str(tmp_path))) == newer
    assert sorted(os.listdir(tmp_path)) == [CURRENT_FILE, "MANIFEST-000007", "MANIFEST-000009"]


@pytest.mark.parametrize(
    "failpoint",
    ["manifest.file.write.before_fsync", "manifest.file.before_rename", "manifest.file.after_rename.before_dirsync",
     "manifest.before_current", "manifest.write.before_fsync", "manifest.before_rename"],
)
def test_a_crash_before_current_is_replaced_leaves_the_old_manifest_in_force(tmp_path, failpoint):
    publish(str(tmp_path), SAMPLE)
    crash_at(failpoint)
    with pytest.raises(SimulatedCrash):
        publish(str(tmp_path), Manifest(9, [], {}, 8, 120, 10))
    assert read_current(str(tmp_path)) == "MANIFEST-000007"
    assert load(str(tmp_path), "MANIFEST-000007") == SAMPLE


def test_a_crash_after_the_rename_of_current_leaves_the_new_manifest_in_force(tmp_path):
    publish(str(tmp_path), SAMPLE)
    crash_at("manifest.after_rename.before_dirsync")
    with pytest.raises(SimulatedCrash):
        publish(str(tmp_path), Manifest(9, [], {}, 8, 120, 10))
    assert read_current(str(tmp_path)) == "MANIFEST-000009"


def test_no_current_means_a_new_store(tmp_path):
    assert read_current(str(tmp_path)) is None


@pytest.mark.parametrize(
    "content",
    [b"", b"MANIFEST-000007", b"MANIFEST-7\n", b"MANIFEST-00000x\n", b"manifest-000007\n", b" MANIFEST-000007\n",
     b"MANIFEST-000007\nMANIFEST-000008\n", b"../MANIFEST-000007\n", b"MANIFEST-000007\r\n", b"\xff\xfe\n",
     b"MANIFEST-" + b"0" * 300 + b"7\n"],
    ids=["empty", "no-newline", "short-number", "not-digits", "lower-case", "leading-space", "two-lines",
         "path", "crlf", "not-ascii", "longer-than-the-read"],
)
def test_bad_current_is_corruption(tmp_path, content):
    (tmp_path / CURRENT_FILE).write_bytes(content)
    with pytest.raises(CorruptionError) as caught:
        read_current(str(tmp_path))
    assert (caught.value.path, caught.value.offset) == (str(tmp_path / CURRENT_FILE), 0)


def test_current_with_an_extra_newline_is_corruption(tmp_path):
    (tmp_path / CURRENT_FILE).write_bytes(b"MANIFEST-000007\n\n")
    with pytest.raises(CorruptionError):
        read_current(str(tmp_path))


def test_current_naming_a_missing_manifest(tmp_path):
    (tmp_path / CURRENT_FILE).write_bytes(b"MANIFEST-000007\n")
    with pytest.raises(CorruptionError) as caught:
        load(str(tmp_path), read_current(str(tmp_path)))
    assert caught.value.path == str(tmp_path / "MANIFEST-000007")
    assert "does not exist" in caught.value.reason


def test_manifest_under_another_number_is_corruption(tmp_path):
    (tmp_path / "MANIFEST-000008").write_bytes(encode(SAMPLE))  # its body says number 7
    with pytest.raises(CorruptionError) as caught:
        load(str(tmp_path), "MANIFEST-000008")
    assert "does not match its name" in caught.value.reason


def test_publish_leaves_no_temp_files(tmp_path):
    publish(str(tmp_path), SAMPLE)
    assert not [name for name in os.listdir(tmp_path) if name.endswith(TEMP_SUFFIX)]
