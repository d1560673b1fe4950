"""Front-coded document keys (engine/text/keys.py) and stored tokens (engine/text/stored.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from engine.errors import CorruptionError
from engine.format import TEXT_KEYS_PER_BLOCK
from engine.text import keys, stored


def reader(found: list, columns=None):
    columns = columns or keys.encode(found)
    return keys.KeyReader(columns.__getitem__, len(found))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=3 * TEXT_KEYS_PER_BLOCK + 5))
def test_every_key_reads_back(found):
    read = reader(found)
    assert read.keys() == found
    assert [read.key(local) for local in range(len(found))] == found


def test_neighbouring_keys_cost_a_few_bytes():
    found = [f"chat/{number:07d}" for number in range(10_000)]
    columns = keys.encode(found)
    assert columns["key_blocks"].size < 4.5 * len(found)
    assert reader(found, columns).key(5_437) == "chat/0005437"


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=300), min_size=2 * TEXT_KEYS_PER_BLOCK + 1,
                max_size=6 * TEXT_KEYS_PER_BLOCK + 5), st.integers(1, 2))
def test_keys_coded_a_few_blocks_at_a_time_are_the_bytes_of_one_coding(found, blocks_at_a_time):
    whole = keys.encode(found)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(keys, "ENCODE_BLOCKS", blocks_at_a_time)
        parts = keys.encode(found)
    assert {name: (array.dtype.str, array.tobytes()) for name, array in parts.items()} == \
        {name: (array.dtype.str, array.tobytes()) for name, array in whole.items()}
    assert reader(found, parts).keys() == found


def test_long_keys_take_the_varint_layout():
    found = ["x" * 300 + str(number) for number in range(TEXT_KEYS_PER_BLOCK)] + ["路径/文件.txt", "a"]
    assert reader(found).keys() == found
    assert reader(found).key(TEXT_KEYS_PER_BLOCK - 1) == found[TEXT_KEYS_PER_BLOCK - 1]


def test_damaged_key_blocks_are_corruption():
    found = [f"doc/{number}" for number in range(40)]
    columns = keys.encode(found)
    blocks = columns["key_blocks"].copy()
    blocks[1 + len("doc/0")] = 7  # the layout byte of block 0
    with pytest.raises(CorruptionError):
        reader(found, dict(columns, key_blocks=blocks)).keys()
    with pytest.raises(CorruptionError):
        reader(found, dict(columns, key_blocks=columns["key_blocks"][:-3])).keys()
    with pytest.raises(CorruptionError):
        keys.KeyReader(columns.__getitem__, 100).key(0)  # offsets for 40 keys, not 100


def test_stored_tokens_round_trip_in_both_widths():
    small = stored.encode(["蓝牙", "耳机", "0x1f"], [0, 0, 2])
    assert isinstance(small[0], str) and len(small[1]) == 6
    assert stored.decode(small, "here") == (["蓝牙", "耳机", "0x1f"], [0, 0, 2])
    wide = stored.encode(["far"], [70_000])
    assert len(wide[1]) == 4 and list(stored.decode(wide, "here")[1]) == [70_000]
    assert stored.decode(stored.encode([], []), "here") == ([], [])
    _joined, terms, positions, counts = stored.decode_all([small, stored.encode([], []), wide])
    assert terms == ["蓝牙", "耳机", "0x1f", "far"] and counts == [3, 0, 1]
    assert positions.dtype == np.int64 and positions.tolist() == [0, 0, 2, 70_000]


@pytest.mark.parametrize("terms, positions", [(["a b"], [0]), (["a", ""], [0, 1]), (["a"], [0, 1]),
                                              (["a"], [-1]), (["a"], [1 << 32])])
def test_stored_tokens_refuse_what_they_cannot_hold(terms, positions):
    with pytest.raises(ValueError):
        stored.encode(terms, positions)


def test_malformed_stored_tokens_are_corruption():
    with pytest.raises(CorruptionError):
        stored.decode(["a b", b"\x00\x00\x00"], "text.doc 'k'")
    with pytest.raises(CorruptionError):
        stored.decode("nonsense", "text.doc 'k'")
    with pytest.raises(ValueError):
        stored.decode_all([["a b", b"\x00\x00\x00"]])


def spec_key_blocks(found: list) -> bytes:
    """MANIFEST.spec 4a, key blocks, written out block by block."""
    from engine.codec import encode_varint

    out = b""
    for start in range(0, len(found), TEXT_KEYS_PER_BLOCK):
        block = [key.encode("utf-8") for key in found[start:start + TEXT_KEYS_PER_BLOCK]]
        first = block[0]
        pairs = []
        for key in block[1:]:
            shared = next((index for index, (left, right) in enumerate(zip(first, key)) if left != right),
                          min(len(first), len(key)))
            pairs += [shared, len(key) - shared]
        numbers = bytes([0] + pairs) if all(number < 256 for number in pairs) else \
            bytes([1]) + b"".join(encode_varint(number) for number in pairs)
        out += encode_varint(len(first)) + first + numbers + b"".join(key[shared:] for key, shared
                                                                       in zip(block[1:], pairs[0::2]))
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["", "chat/00", "路径/" * 30, "k" * 300]),
                          st.text(alphabet="0123蓝\x00😀/", max_size=20)), min_size=1, max_size=60))
def test_key_blocks_are_the_bytes_the_spec_describes(pairs):
    found = [prefix + suffix or "-" for prefix, suffix in pairs]
    assert keys.encode(found)["key_blocks"].tobytes() == spec_key_blocks(found)


def test_positions_of_many_fields_take_each_field_its_own_width():
    positions = stored.positions_array([0, 3, 70_000, 5, 1, 2])
    assert stored.positions_bytes(positions, [2, 2, 0, 2]) == [
        np.array([0, 3], "<u2").tobytes(), np.array([70_000, 5], "<u4").tobytes(), b"",
        np.array([1, 2], "<u2").tobytes()]
    with pytest.raises(ValueError):
        stored.positions_array([1, 2.5])
