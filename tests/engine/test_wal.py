"""engine.wal: the bytes MANIFEST.spec section 2 describes, and how a reader classifies a damaged file."""

from __future__ import annotations

import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine import wal
from engine.codec import crc32, mask_crc
from engine.errors import CorruptionError, UnsupportedVersion
from engine.format import (
    FORMAT_VERSION,
    WAL_BLOCK_SIZE,
    WAL_HEADER_FORMAT,
    WAL_HEADER_SIZE,
    WAL_MAGIC,
    WAL_RECORD_HEADER_FORMAT,
    WAL_RECORD_HEADER_SIZE,
    WAL_TYPE_FIRST,
    WAL_TYPE_FULL,
    WAL_TYPE_LAST,
    WAL_TYPE_MIDDLE,
)
from engine_testkit import flip_byte

SALT = 0x5EED1234
ROOM_IN_BLOCK_0 = WAL_BLOCK_SIZE - WAL_HEADER_SIZE - WAL_RECORD_HEADER_SIZE  # one FULL record fills block 0


def new_log(tmp_path, payloads=(), number=1, salt=SALT) -> str:
    path = wal.wal_path(str(tmp_path), number)
    writer = wal.WalWriter.create(path, number, salt)
    for payload in payloads:
        writer.append(payload)
    writer.close()
    return path


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def fragments(data: bytes) -> list[tuple[int, int, int]]:
    """(offset, type, length) of every fragment, parsed from the spec's grammar independently of engine.wal."""
    found = []
    position = WAL_HEADER_SIZE
    while position < len(data):
        left = WAL_BLOCK_SIZE - position % WAL_BLOCK_SIZE
        if left < WAL_RECORD_HEADER_SIZE:
            assert data[position: position + left] == bytes(left), "a block trailer must be zeros"
            position += left
            continue
        _crc, length, record_type = struct.unpack_from(WAL_RECORD_HEADER_FORMAT, data, position)
        assert WAL_RECORD_HEADER_SIZE + length <= left, "a fragment crosses a block boundary"
        found.append((position, record_type, length))
        position += WAL_RECORD_HEADER_SIZE + length
    return found


def expected_crc(salt: int, record_type: int, data: bytes) -> int:
    return mask_crc(crc32(struct.pack("<I", salt) + bytes((record_type,)) + data))


# --- file header ------------------------------------------------------------------------------------------


def test_header_bytes(tmp_path):
    path = new_log(tmp_path, number=7, salt=SALT)
    data = read_bytes(path)
    assert len(data) == WAL_HEADER_SIZE
    magic, version, number, salt, reserved, header_crc = struct.unpack(WAL_HEADER_FORMAT, data)
    assert (magic, version, number, salt, reserved) == (WAL_MAGIC, FORMAT_VERSION, 7, SALT, 0)
    assert header_crc == crc32(data[: WAL_HEADER_SIZE - 4])
    assert wal.read_header(data, path) == (7, SALT)
    assert os.path.basename(path) == "000007.log"


def test_create_leaves_no_temp_file(tmp_path):
    new_log(tmp_path)
    assert os.listdir(tmp_path) == ["000001.log"]


@pytest.mark.parametrize("data", [b"", b"MEMCTLWL", bytes(WAL_HEADER_SIZE), bytes(WAL_HEADER_SIZE + 100)])
def test_missing_or_zero_header_is_a_file_being_created(tmp_path, data):
    path = str(tmp_path / "000001.log")
    with open(path, "wb") as handle:
        handle.write(data)
    result = wal.scan(path)
    assert result.number == -1
    assert result.payloads == []
    assert result.status == ("eof" if not data else "torn_tail")


def test_zeroed_header_in_front_of_records_is_corruption(tmp_path):
    path = new_log(tmp_path)
    writer = wal.WalWriter(path, 1, SALT, WAL_HEADER_SIZE)
    writer.append(b"acknowledged")
    writer.close()
    with open(path, "r+b") as handle:
        handle.write(bytes(WAL_HEADER_SIZE))
    with pytest.raises(CorruptionError, match="zeroed"):
        wal.scan(path)


def rewrite_header(path: str, recompute_crc: bool = True, **fields) -> None:
    data = bytearray(read_bytes(path))
    names = ("magic", "version", "number", "salt", "reserved", "crc")
    values = dict(zip(names, struct.unpack_from(WAL_HEADER_FORMAT, data)))
    values.update(fields)
    header = struct.pack(WAL_HEADER_FORMAT, *(values[name] for name in names))
    if recompute_crc and "crc" not in fields:
        header = header[:-4] + struct.pack("<I", crc32(header[:-4]))
    data[:WAL_HEADER_SIZE] = header
    with open(path, "wb") as handle:
        handle.write(data)


@pytest.mark.parametrize(
    "fields, recompute_crc, error, reason",
    [
        ({"magic": b"MEMCTLXX"}, True, CorruptionError, "bad magic"),
        ({"crc": 0}, True, CorruptionError, "header checksum"),
        ({"salt": SALT ^ 1}, False, CorruptionError, "header checksum"),  # a field damaged, the CRC stale
        ({"version": FORMAT_VERSION + 1}, True, UnsupportedVersion, "not supported"),
    ],
)
def test_bad_headers_are_refused(tmp_path, fields, recompute_crc, error, reason):
    path = new_log(tmp_path, [b"payload"])
    rewrite_header(path, recompute_crc, **fields)
    with pytest.raises(error) as caught:
        wal.scan(path)
    assert reason in str(caught.value)
    assert caught.value.path == path


# --- framing ----------------------------------------------------------------------------------------------


def test_a_record_is_crc_length_type_payload(tmp_path):
    path = new_log(tmp_path, [b"hello"])
    data = read_bytes(path)
    header = struct.unpack_from(WAL_RECORD_HEADER_FORMAT, data, WAL_HEADER_SIZE)
    assert header == (expected_crc(SALT, WAL_TYPE_FULL, b"hello"), 5, WAL_TYPE_FULL)
    assert data[WAL_HEADER_SIZE + WAL_RECORD_HEADER_SIZE:] == b"hello"


def test_frame_is_what_append_writes(tmp_path):
    payloads = [b"a" * 10, b"b" * 40_000, b"", b"c" * 5]
    path = new_log(tmp_path, payloads)
    expected = bytearray(wal.encode_header(1, SALT))
    for payload in payloads:
        expected += wal.frame(payload, SALT, len(expected))
    assert read_bytes(path) == bytes(expected)


def test_empty_record(tmp_path):
    path = new_log(tmp_path, [b"", b""])
    data = read_bytes(path)
    assert fragments(data) == [(WAL_HEADER_SIZE, WAL_TYPE_FULL, 0),
                               (WAL_HEADER_SIZE + WAL_RECORD_HEADER_SIZE, WAL_TYPE_FULL, 0)]
    result = wal.scan(path)
    assert (result.payloads, result.status, result.valid_end) == ([b"", b""], "eof", len(data))


def test_spec_worked_example(tmp_path):
    # MANIFEST.spec's example (v1 draft) says FIRST 31,690 / LAST 8,310: it subtracts the 32 header bytes twice.
    # Block 0 ends at offset 32,768, so FIRST carries 32,768 - 1,039 - 7 = 31,722 bytes and LAST 8,278.
    path = new_log(tmp_path, [b"x" * 1_000, b"y" * 40_000])
    assert fragments(read_bytes(path)) == [
        (32, WAL_TYPE_FULL, 1_000),
        (1_039, WAL_TYPE_FIRST, 31_722),
        (32_768, WAL_TYPE_LAST, 8_278),
    ]


def test_record_exactly_filling_a_block(tmp_path):
    path = new_log(tmp_path, [b"f" * ROOM_IN_BLOCK_0, b"next"])
    data = read_bytes(path)
    assert fragments(data) == [(WAL_HEADER_SIZE, WAL_TYPE_FULL, ROOM_IN_BLOCK_0), (WAL_BLOCK_SIZE, WAL_TYPE_FULL, 4)]
    assert wal.scan(path).payloads == [b"f" * ROOM_IN_BLOCK_0, b"next"]


@pytest.mark.parametrize("left", range(1, WAL_RECORD_HEADER_SIZE))
def test_fewer_than_seven_bytes_left_become_a_zero_trailer(tmp_path, left):
    first = b"f" * (ROOM_IN_BLOCK_0 - left)
    path = new_log(tmp_path, [first, b"next"])
    data = read_bytes(path)
    assert data[WAL_BLOCK_SIZE - left: WAL_BLOCK_SIZE] == bytes(left)
    assert fragments(data)[1] == (WAL_BLOCK_SIZE, WAL_TYPE_FULL, 4)
    assert wal.scan(path).payloads == [first, b"next"]


def test_exactly_seven_bytes_left_start_an_empty_first_fragment(tmp_path):
    first = b"f" * (ROOM_IN_BLOCK_0 - WAL_RECORD_HEADER_SIZE)
    path = new_log(tmp_path, [first, b"next"])
    assert fragments(read_bytes(path))[1:] == [
        (WAL_BLOCK_SIZE - WAL_RECORD_HEADER_SIZE, WAL_TYPE_FIRST, 0),
        (WAL_BLOCK_SIZE, WAL_TYPE_LAST, 4),
    ]
    assert wal.scan(path).payloads == [first, b"next"]


def test_record_spanning_three_blocks(tmp_path):
    payload = bytes(range(256)) * (2 * WAL_BLOCK_SIZE // 256)
    path = new_log(tmp_path, [payload])
    data = read_bytes(path)
    middle = WAL_BLOCK_SIZE - WAL_RECORD_HEADER_SIZE
    assert fragments(data) == [
        (WAL_HEADER_SIZE, WAL_TYPE_FIRST, ROOM_IN_BLOCK_0),
        (WAL_BLOCK_SIZE, WAL_TYPE_MIDDLE, middle),
        (2 * WAL_BLOCK_SIZE, WAL_TYPE_LAST, len(payload) - ROOM_IN_BLOCK_0 - middle),
    ]
    for offset, record_type, length in fragments(data):
        body = data[offset + WAL_RECORD_HEADER_SIZE: offset + WAL_RECORD_HEADER_SIZE + length]
        assert struct.unpack_from("<I", data, offset)[0] == expected_crc(SALT, record_type, body)
    result = wal.scan(path)
    assert (result.payloads, result.status, result.valid_end) == ([payload], "eof", len(data))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(0, 3 * WAL_BLOCK_SIZE), min_size=1, max_size=6))
def test_any_sequence_of_payloads_round_trips(tmp_path_factory, sizes):
    directory = tmp_path_factory.mktemp("wal")
    payloads = [bytes([index % 251]) * size for index, size in enumerate(sizes)]
    path = new_log(directory, payloads)
    data = read_bytes(path)
    fragments(data)  # asserts every fragment stays inside its block and trailers are zeros
    result = wal.scan(path)
    assert (result.payloads, result.status, result.valid_end) == (payloads, "eof", len(data))


def test_oversized_batch_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(wal, "WAL_MAX_BATCH_BYTES", 100)
    path = wal.wal_path(str(tmp_path), 1)
    writer = wal.WalWriter.create(path, 1, SALT)
    with pytest.raises(ValueError):
        writer.append(b"x" * 101)
    writer.close()
    assert os.path.getsize(path) == WAL_HEADER_SIZE


# --- torn tails ---------------------------------------------------------------------------------------------


def record_ends(data: bytes) -> list[int]:
    return [offset + WAL_RECORD_HEADER_SIZE + length
            for offset, record_type, length in fragments(data) if record_type in (WAL_TYPE_FULL, WAL_TYPE_LAST)]


def assert_cut_reads_as_prefix(path: str, whole: bytes, payloads: list, cut: int) -> None:
    with open(path, "wb") as handle:
        handle.write(whole[:cut])
    result = wal.scan(path)
    ends = [WAL_HEADER_SIZE] + record_ends(whole)
    complete = sum(1 for end in ends[1:] if end <= cut)
    assert result.payloads == payloads[:complete], cut
    assert result.valid_end == ends[complete]
    assert result.status == ("eof" if cut == ends[complete] else "torn_tail"), cut
    if result.status == "torn_tail":
        assert result.problem_offset == ends[complete] or whole[ends[complete]: cut].strip(b"\0") == b""


def test_truncation_at_every_offset_of_the_last_two_records(tmp_path):
    payloads = [b"first" * 3, b"second" * 5, b"third" * 7]
    path = new_log(tmp_path, payloads)
    whole = read_bytes(path)
    for cut in range(record_ends(whole)[0], len(whole) + 1):
        assert_cut_reads_as_prefix(path, whole, payloads, cut)


def test_truncation_of_a_record_spanning_blocks(tmp_path):
    payloads = [b"a" * 100, b"b" * (2 * WAL_BLOCK_SIZE)]
    path = new_log(tmp_path, payloads)
    whole = read_bytes(path)
    cuts = set()
    for boundary in (WAL_BLOCK_SIZE, 2 * WAL_BLOCK_SIZE, len(whole)):
        cuts.update(range(boundary - 9, min(boundary + 9, len(whole)) + 1))
    for cut in sorted(cuts):
        assert_cut_reads_as_prefix(path, whole, payloads, cut)


@pytest.mark.parametrize("zeros", [1, 6, 7, 100, WAL_BLOCK_SIZE + 5])
def test_zero_filled_tail_is_torn_not_corrupt(tmp_path, zeros):
    payloads = [b"one", b"two"]
    path = new_log(tmp_path, payloads)
    end = os.path.getsize(path)
    with open(path, "ab") as handle:
        handle.write(bytes(zeros))  # what a crash can expose when the size reached disk but the data did not
    result = wal.scan(path)
    assert (result.payloads, result.status, result.valid_end) == (payloads, "torn_tail", end)


def test_first_fragment_without_its_last_is_a_torn_tail(tmp_path):
    path = new_log(tmp_path, [b"done", b"z" * (WAL_BLOCK_SIZE + 10)])
    whole = read_bytes(path)
    with open(path, "wb") as handle:
        handle.write(whole[:WAL_BLOCK_SIZE])  # FIRST complete, LAST never written
    result = wal.scan(path)
    assert (result.payloads, result.status) == ([b"done"], "torn_tail")
    assert result.problem_offset == fragments(whole)[1][0]


def test_truncate_torn_tail_then_append(tmp_path):
    path = new_log(tmp_path, [b"kept"])
    with open(path, "ab") as handle:
        handle.write(b"\x01garbage")
    result = wal.scan(path)
    assert result.status == "torn_tail"
    wal.truncate_torn_tail(result)
    assert os.path.getsize(path) == result.valid_end
    writer = wal.WalWriter(path, result.number, result.salt, result.valid_end)
    writer.append(b"after")
    writer.close()
    assert wal.scan(path).payloads == [b"kept", b"after"]
    assert wal.scan(path).status == "eof"


# --- corruption -------------------------------------------------------------------------------------------


def test_damage_followed_by_a_valid_block_is_corruption(tmp_path):
    payloads = [bytes([index]) * 3_000 for index in range(30)]  # about 2.7 blocks
    path = new_log(tmp_path, payloads)
    victim = fragments(read_bytes(path))[2]
    flip_byte(path, victim[0] + WAL_RECORD_HEADER_SIZE + 10)
    result = wal.scan(path)
    assert result.status == "corruption"
    assert result.problem_offset == victim[0]
    assert result.payloads == payloads[:2]
    with pytest.raises(CorruptionError) as caught:
        result.raise_if_corrupt()
    assert (caught.value.path, caught.value.offset) == (path, victim[0])


def test_damage_followed_by_valid_records_in_the_same_block_is_corruption(tmp_path):
    """A log shorter than one block has no later block start: the records after the damage must count."""
    payloads = [b"batch %d" % index for index in range(10)]
    path = new_log(tmp_path, payloads)
    victim = fragments(read_bytes(path))[0]
    flip_byte(path, victim[0] + WAL_RECORD_HEADER_SIZE)
    assert wal.scan(path).status == "corruption"


def test_damaged_length_field_mid_log_is_corruption(tmp_path):
    path = new_log(tmp_path, [b"m" * 20_000, b"n" * 20_000, b"o" * 20_000])
    flip_byte(path, WAL_HEADER_SIZE + 5, 0x40)  # high byte of the first record's length
    result = wal.scan(path)
    assert (result.status, result.problem_offset, result.payloads) == ("corruption", WAL_HEADER_SIZE, [])


def test_fragment_from_another_log_never_validates(tmp_path):
    """The salt in every CRC: bytes copied from a WAL with another salt are not records of this one."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ours = new_log(tmp_path / "a", [b"ours"], salt=SALT)
    theirs = new_log(tmp_path / "b", [b"theirs"], salt=SALT + 1)
    foreign = read_bytes(theirs)[WAL_HEADER_SIZE:]
    with open(ours, "ab") as handle:
        handle.write(foreign)
    result = wal.scan(ours)
    assert (result.payloads, result.status) == ([b"ours"], "torn_tail")
    assert result.reason == "record checksum mismatch"


def test_foreign_block_after_damage_is_not_evidence_of_corruption(tmp_path):
    """A whole block spliced in from another log is not 'a valid fragment after the damage'."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ours = new_log(tmp_path / "a", [b"o" * 100], salt=SALT)
    theirs = new_log(tmp_path / "b", [b"t" * 100, b"u" * (WAL_BLOCK_SIZE + 100)], salt=SALT + 1)
    data = read_bytes(ours)
    spliced = data + bytes(WAL_BLOCK_SIZE - len(data)) + read_bytes(theirs)[WAL_BLOCK_SIZE:]
    with open(ours, "wb") as handle:
        handle.write(spliced)
    result = wal.scan(ours)
    assert (result.payloads, result.status) == ([b"o" * 100], "torn_tail")


def test_wal_path_names_files_by_number(tmp_path):
    assert wal.wal_path("wal", 12) == os.path.join("wal", "000012.log")
    assert wal.wal_path("wal", 1_234_567) == os.path.join("wal", "1234567.log")


def raw_fragment(record_type: int, data: bytes, salt: int = SALT) -> bytes:
    """A fragment with a valid CRC, for sequences the writer never produces."""
    return struct.pack(WAL_RECORD_HEADER_FORMAT, expected_crc(salt, record_type, data), len(data), record_type) + data


@pytest.mark.parametrize(
    "fragments_written, reason",
    [
        ([(WAL_TYPE_FIRST, b"half"), (WAL_TYPE_FULL, b"other")], "new record before the last one ended"),
        ([(WAL_TYPE_MIDDLE, b"orphan")], "continuation fragment without a first fragment"),
        ([(WAL_TYPE_LAST, b"orphan")], "continuation fragment without a first fragment"),
        ([(9, b"unknown")], "unknown record type 9"),
    ],
)
def test_impossible_fragment_sequences_end_the_valid_log(tmp_path, fragments_written, reason):
    path = new_log(tmp_path, [b"good"])
    with open(path, "ab") as handle:
        for record_type, data in fragments_written:
            handle.write(raw_fragment(record_type, data))
    result = wal.scan(path)
    assert (result.payloads, result.status, result.reason) == ([b"good"], "torn_tail", reason)


def test_a_length_crossing_the_block_boundary_is_damage(tmp_path):
    path = new_log(tmp_path, [b"good"])
    data = bytearray(read_bytes(path))
    start = len(data)
    body = b"b" * (WAL_BLOCK_SIZE - start)  # one byte too long for what is left of block 0
    data += struct.pack(WAL_RECORD_HEADER_FORMAT, expected_crc(SALT, WAL_TYPE_FULL, body), len(body),
                        WAL_TYPE_FULL) + body
    with open(path, "wb") as handle:
        handle.write(data)
    result = wal.scan(path)
    assert (result.payloads, result.status, result.problem_offset) == ([b"good"], "torn_tail", start)
    assert "crosses a block boundary" in result.reason


def test_an_append_whose_first_pages_were_lost_is_a_torn_tail(tmp_path):
    """Power loss can persist the later pages of the last append and not its first ones: the surviving
    MIDDLE and LAST fragments belong to the unacknowledged batch and are no evidence of corruption."""
    payloads = [b"acknowledged", b"z" * (2 * WAL_BLOCK_SIZE)]
    path = new_log(tmp_path, payloads)
    data = bytearray(read_bytes(path))
    first = fragments(bytes(data))[1][0]
    data[first:WAL_BLOCK_SIZE] = bytes(WAL_BLOCK_SIZE - first)
    with open(path, "wb") as handle:
        handle.write(data)
    result = wal.scan(path)
    assert (result.payloads, result.status) == ([b"acknowledged"], "torn_tail")


def test_damage_before_a_record_that_starts_after_a_spanning_one_is_corruption(tmp_path):
    payloads = [b"a" * (WAL_BLOCK_SIZE + 100), b"b" * 10]  # b starts in block 1, after a's LAST fragment
    path = new_log(tmp_path, payloads)
    flip_byte(path, WAL_HEADER_SIZE + WAL_RECORD_HEADER_SIZE + 5)
    result = wal.scan(path)
    assert (result.status, result.problem_offset, result.payloads) == ("corruption", WAL_HEADER_SIZE, [])
