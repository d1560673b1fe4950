import numpy as np
import pytest
from hypothesis import given, strategies as st

from engine.codec import encode_varint
from engine.errors import CorruptionError
from engine.text import varint

values_strategy = st.lists(st.integers(min_value=0, max_value=2**64 - 1), max_size=200)


@given(values_strategy)
def test_round_trip_matches_the_scalar_codec(values):
    encoded = varint.encode(np.array(values, dtype=np.uint64))
    assert encoded.tobytes() == b"".join(encode_varint(value) for value in values)
    assert varint.decode(encoded).tolist() == values


@given(values_strategy, st.data())
def test_a_cut_inside_a_value_is_corruption(values, data):
    encoded = varint.encode(np.array(values, dtype=np.uint64)).tobytes()
    ends = {0}
    cursor = 0
    for value in values:
        cursor += len(encode_varint(value))
        ends.add(cursor)
    cut = data.draw(st.integers(min_value=0, max_value=len(encoded)))
    if cut in ends:
        assert varint.decode(encoded[:cut]).size == sum(1 for end in ends if 0 < end <= cut)
    else:
        with pytest.raises(CorruptionError):
            varint.decode(encoded[:cut])


@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_or_raise_corruption(data):
    try:
        values = varint.decode(data)
    except CorruptionError:
        return
    assert varint.encode(values).size <= len(data)


def test_eleven_byte_varint_is_rejected():
    with pytest.raises(CorruptionError, match="longer than 10 bytes"):
        varint.decode(bytes([0x80] * 10 + [0x01]))


def test_value_beyond_64_bits_is_rejected():
    with pytest.raises(CorruptionError, match="overflows 64 bits"):
        varint.decode(bytes([0xFF] * 9 + [0x02]))
    assert varint.decode(bytes([0xFF] * 9 + [0x01])).tolist() == [2**64 - 1]


def test_error_names_file_and_offset():
    with pytest.raises(CorruptionError) as caught:
        varint.decode(bytes([0x05, 0x80]), path="seg/000001.text.postings.seg", offset=100)
    assert caught.value.path == "seg/000001.text.postings.seg"
    assert caught.value.offset == 101


@given(st.lists(st.integers(min_value=0, max_value=2**31 - 1), max_size=200),
       st.sampled_from([np.int32, np.int64, np.uint32, np.uint64]))
def test_every_integer_width_encodes_the_same_bytes(values, dtype):
    assert varint.encode(np.array(values, dtype=dtype)).tobytes() == b"".join(encode_varint(value) for value in values)
    assert varint.encoded_lengths(np.array(values, dtype=dtype)).tolist() == [len(encode_varint(value))
                                                                             for value in values]
