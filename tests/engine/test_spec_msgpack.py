"""The msgpack profile of MANIFEST.spec's Conventions against the code: the bytes the writer produces for each
type, what the reader refuses and what it accepts beyond the profile (the spec lists both), and the profile
decoder the other spec tests rely on refusing what the profile leaves out."""

from __future__ import annotations

import msgpack
import pytest

from engine.codec import pack, unpack
from engine.errors import CorruptionError, InputError
from msgpack_profile import ProfileError, decode

WRITTEN = [
    (None, "c0"), (False, "c2"), (True, "c3"),
    (0, "00"), (127, "7f"), (128, "cc80"), (255, "ccff"), (256, "cd0100"), (65536, "ce00010000"),
    (2**32, "cf0000000100000000"), (2**64 - 1, "cfffffffffffffffff"),
    (-1, "ff"), (-32, "e0"), (-33, "d0df"), (-129, "d1ff7f"), (-32769, "d2ffff7fff"),
    (-(2**31) - 1, "d3ffffffff7fffffff"), (-(2**63), "d38000000000000000"),
    (1.5, "cb3ff8000000000000"), (1e300, "cb7e37e43c8800759c"),
    ("x", "a178"), ("é", "a2c3a9"), ("a" * 31, "bf" + "61" * 31), ("a" * 32, "d920" + "61" * 32),
    ("a" * 256, "da0100" + "61" * 256),
    (b"x", "c40178"), (b"x" * 256, "c50100" + "78" * 256),
    ([1, 2], "920102"), ((1, 2), "920102"), (list(range(16)), "dc0010" + "".join(f"{i:02x}" for i in range(16))),
    ({"a": 1}, "81a16101"), ({str(i): i for i in range(16)}, "de0010" + "".join(
        f"a1{ord(str(i)):02x}{i:02x}" if i < 10 else f"a231{ord(str(i)[1]):02x}{i:02x}" for i in range(16))),
]


@pytest.mark.parametrize(("value", "encoded"), WRITTEN)
def test_the_writer_uses_the_shortest_form_of_each_type(value, encoded):
    assert pack(value).hex() == encoded
    assert decode(bytes.fromhex(encoded)) == (list(value) if isinstance(value, tuple) else value)


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1])
def test_an_integer_outside_the_profile_cannot_be_written(value, store):
    with pytest.raises(OverflowError):
        pack(value)
    with pytest.raises(InputError, match="cannot be stored"):
        with store.batch() as batch:
            batch.put("notes.plain", "big", {"n": value})
    assert store.get("notes.plain", "big") is None


def _nested(depth: int) -> list:
    value = 1
    for _ in range(depth):
        value = [value]
    return value


def _depth(value) -> int:
    """How many arrays hold one another (a loop: comparing such values would exhaust Python's stack)."""
    depth = 0
    while isinstance(value, list):
        value, depth = value[0], depth + 1
    return depth


def test_arrays_and_maps_nest_at_most_1024_deep_on_both_sides(store):
    deepest = pack(_nested(1024))
    assert _depth(unpack(deepest)) == _depth(decode(deepest)) == 1024
    with pytest.raises(ValueError):
        pack(_nested(1025))
    with pytest.raises(InputError, match="cannot be stored"):
        with store.batch() as batch:
            batch.put("notes.plain", "deep", _nested(1025))
    with pytest.raises(ProfileError, match="deeper than 1024"):
        decode(bytes.fromhex("91" * 1025 + "01"))


REFUSED_BY_THE_READER = {
    "bytes left over": "0102",
    "str longer than the bytes": "dbffffffff61",
    "array longer than the bytes": "ddffffffff01",
    "map longer than the bytes": "dfffffffff",
    "1025 nested arrays": "91" * 1025 + "01",
    "str not UTF-8": "a1ff",
    "array as a map key": "819002",
    "map as a map key": "818002",
    "int map key": "810102",
    "nil map key": "81c001",
    "ext type": "d40501",
    "ext inside a map value": "81a161d40501",
    "never-used type byte": "c1",
    "truncated": "9201",
}


@pytest.mark.parametrize("encoded", REFUSED_BY_THE_READER.values(), ids=REFUSED_BY_THE_READER.keys())
def test_the_reader_refuses_as_corruption(encoded):
    with pytest.raises(CorruptionError):
        unpack(bytes.fromhex(encoded), "file", 7)


ACCEPTED_BEYOND_THE_PROFILE = {
    "uint 16 holding 1": ("cd0001", 1),
    "int 8 holding 5": ("d005", 5),
    "str 8 holding one byte": ("d90161", "a"),
    "array 16 of one": ("dc000101", [1]),
    "float 32": ("ca3fc00000", 1.5),
    "bin map key": ("81c4016101", {b"a": 1}),
    "repeated map key, the last wins": ("82a16101a16102", {"a": 2}),
}


@pytest.mark.parametrize(("encoded", "value"), ACCEPTED_BEYOND_THE_PROFILE.values(),
                         ids=ACCEPTED_BEYOND_THE_PROFILE.keys())
def test_the_reader_accepts_more_than_the_writer_writes(encoded, value):
    decoded = unpack(bytes.fromhex(encoded))
    assert decoded == value and type(decoded) is type(value)
    with pytest.raises(ProfileError):
        decode(bytes.fromhex(encoded))


def test_the_one_ext_the_reader_lets_through_is_the_timestamp():
    """The gap the spec states: msgpack-python decodes ext type -1 (timestamp) itself, without the ext hook
    that refuses every other ext type."""
    assert isinstance(unpack(msgpack.packb(msgpack.Timestamp(1, 0))), msgpack.Timestamp)
    with pytest.raises(ProfileError):
        decode(msgpack.packb(msgpack.Timestamp(1, 0)))
