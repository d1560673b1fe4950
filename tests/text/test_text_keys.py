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
    terms, positions, counts = stored.decode_all([small, stored.encode([], []), wide])
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
