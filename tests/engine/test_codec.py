"""engine.codec: CRCs as MANIFEST.spec defines them, LEB128 varints, msgpack that only ever fails as corruption."""

from __future__ import annotations

import zlib

import msgpack
import pytest
from hypothesis import given, settings, strategies as st

from engine.codec import (
    crc32,
    crc32_combine,
    decode_varint,
    encode_varint,
    mask_crc,
    masked_crc32,
    pack,
    unmask_crc,
    unpack,
)
from engine.errors import CorruptionError
from engine.format import CRC_MASK_DELTA

u32 = st.integers(min_value=0, max_value=2**32 - 1)
u64 = st.integers(min_value=0, max_value=2**64 - 1)
msgpack_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False)
    | st.text() | st.binary(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=20,
)


def test_crc32_is_crc32_ieee():
    assert crc32(b"123456789") == 0xCBF43926  # the standard check value of CRC-32/IEEE
    assert crc32(b"") == 0


def test_crc32_chains_like_one_pass():
    assert crc32(b"world", crc32(b"hello ")) == crc32(b"hello world") == zlib.crc32(b"hello world")


def test_mask_follows_the_spec_formula():
    crc = crc32(b"memctl")
    rotated = ((crc >> 15) | (crc << 17)) & 0xFFFFFFFF
    assert mask_crc(crc) == (rotated + CRC_MASK_DELTA) & 0xFFFFFFFF
    assert mask_crc(0) == CRC_MASK_DELTA
    assert masked_crc32(b"memctl") == mask_crc(crc)


@given(u32)
def test_unmask_inverts_mask(crc):
    assert unmask_crc(mask_crc(crc)) == crc
    assert 0 <= mask_crc(crc) < 2**32


@pytest.mark.parametrize(
    "value, encoded",
    [(0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02"),
     (2**64 - 1, b"\xff" * 9 + b"\x01")],
)
def test_varint_known_encodings(value, encoded):
    assert encode_varint(value) == encoded
    assert decode_varint(encoded, 0) == (value, len(encoded))


@given(st.lists(u64, max_size=20))
def test_varints_round_trip_back_to_back(values):
    data = b"".join(map(encode_varint, values))
    offset = 0
    decoded = []
    while offset < len(data):
        value, offset = decode_varint(data, offset)
        decoded.append(value)
    assert decoded == values


def test_negative_varint_is_refused():
    with pytest.raises(ValueError):
        encode_varint(-1)


@pytest.mark.parametrize(
    "data, offset, reason",
    [
        (b"\x05\x80", 1, "past the end"),  # continuation bit set on the last byte
        (b"", 0, "past the end"),
        (b"\x80" * 10 + b"\x01", 0, "longer than 10 bytes"),
        (b"\xff" * 9 + b"\x02", 0, "overflows 64 bits"),  # 2**64 exactly
    ],
)
def test_bad_varints_are_corruption_with_path_and_offset(data, offset, reason):
    with pytest.raises(CorruptionError) as caught:
        decode_varint(data, offset, path="seg/000003.text.seg")
    assert caught.value.path == "seg/000003.text.seg"
    assert caught.value.offset == offset
    assert reason in caught.value.reason


@given(msgpack_values)
def test_pack_unpack_round_trip(value):
    assert unpack(pack(value)) == value


def test_bytes_and_text_stay_distinct():
    value = {"text": "é", "blob": b"\xc3\xa9", "seven": [None, True, 1.5]}
    assert unpack(pack(value)) == value
    assert pack("x") != pack(b"x")


@pytest.mark.parametrize(
    "data",
    [b"\x92\x01", b"\xc1", b"\x01\x02", b"\xdd\xff\xff\xff\xff", b"\x81\x80\x01", b"\x81\x90\x01",
     b"\x91" * 100_000],
    ids=["short-array", "never-used-byte", "extra-data", "huge-array-header", "map-as-key", "list-as-key",
         "deep-nesting"],
)
def test_malformed_msgpack_is_corruption(data):
    with pytest.raises(CorruptionError) as caught:
        unpack(data, path="wal/000001.log", offset=40)
    assert (caught.value.path, caught.value.offset) == ("wal/000001.log", 40)


@settings(max_examples=300)
@given(st.binary(max_size=64))
def test_unpack_of_any_bytes_returns_or_raises_corruption_only(data):
    try:
        unpack(data)
    except CorruptionError:
        pass


@given(msgpack_values, st.data())
def test_a_truncated_value_never_decodes_to_something_else_silently(value, data):
    packed = pack(value)
    cut = data.draw(st.integers(0, len(packed) - 1))
    with pytest.raises(CorruptionError):
        unpack(packed[:cut])


def test_pack_uses_the_bin_type_for_bytes():
    assert pack(b"\x00") == msgpack.packb(b"\x00", use_bin_type=True) == b"\xc4\x01\x00"


@settings(max_examples=200)
@given(st.binary(max_size=300), st.binary(max_size=3000), st.integers(0, 3))
def test_combined_crcs_are_the_crc_of_the_concatenation(first, second, repeat):
    second = second * (1 + 50 * repeat)  # lengths up to ~450 KB: several powers of two of zero bytes
    assert crc32_combine(crc32(first), crc32(second), len(second)) == crc32(first + second)
