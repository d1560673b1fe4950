"""A MessagePack decoder that accepts only the profile of MANIFEST.spec's Conventions, written from the spec.

It decodes what memctl writes and refuses everything the profile leaves out: an integer, str, bin, array or
map header longer than its value needs, a signed form for a value >= 0, float 32, ext types, map keys that
are not str, a key twice in one map, str that is not UTF-8, leftover bytes. It shares no code with msgpack,
so the tests that run it over a store check the writer's bytes, not the reader's leniency.
"""

from __future__ import annotations

import struct
import sys


class ProfileError(ValueError):
    """The bytes are not a msgpack object of the profile; the message says what and at which offset."""


def decode(data: bytes):
    """The value of `data`, which must be exactly one object of the profile."""
    reader = _Reader(bytes(data))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * _MAX_DEPTH + 200))  # a few frames per level of 1024 allowed ones
    try:
        value = reader.item(depth=0)
    finally:
        sys.setrecursionlimit(limit)
    if reader.position != len(data):
        raise ProfileError(f"{len(data) - reader.position} bytes left over after the object")
    return value


# The smallest value that needs each longer header: a value below it has a shorter form.
_UINT_MINIMUM = {0xCC: 1 << 7, 0xCD: 1 << 8, 0xCE: 1 << 16, 0xCF: 1 << 32}
_INT_LIMIT = {0xD0: -(1 << 5), 0xD1: -(1 << 7), 0xD2: -(1 << 15), 0xD3: -(1 << 31)}  # value must be below
_STR_MINIMUM = {0xD9: 32, 0xDA: 1 << 8, 0xDB: 1 << 16}
_BIN_MINIMUM = {0xC4: 0, 0xC5: 1 << 8, 0xC6: 1 << 16}
_CONTAINER_MINIMUM = {0xDC: 16, 0xDD: 1 << 16, 0xDE: 16, 0xDF: 1 << 16}
_MAX_DEPTH = 1024  # arrays and maps inside one another
_CONTAINER_LEADS = {*range(0x80, 0xA0), 0xDC, 0xDD, 0xDE, 0xDF}


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.position = 0

    def fail(self, reason: str):
        raise ProfileError(f"offset {self.position}: {reason}")

    def take(self, count: int) -> bytes:
        if self.position + count > len(self.data):
            self.fail(f"{count} bytes needed, {len(self.data) - self.position} left")
        chunk = self.data[self.position: self.position + count]
        self.position += count
        return chunk

    def unsigned(self, width: int) -> int:
        return int.from_bytes(self.take(width), "big")

    def item(self, depth: int):
        if depth >= _MAX_DEPTH and self.data[self.position] in _CONTAINER_LEADS:
            self.fail("nested deeper than 1024 arrays and maps")
        lead = self.take(1)[0]
        if lead <= 0x7F:
            return lead
        if lead >= 0xE0:
            return lead - 0x100
        if lead <= 0x8F:
            return self.map(lead & 0x0F, depth)
        if lead <= 0x9F:
            return self.array(lead & 0x0F, depth)
        if lead <= 0xBF:
            return self.text(lead & 0x1F)
        return self.typed(lead, depth)

    def typed(self, lead: int, depth: int):
        if lead == 0xC0:
            return None
        if lead in (0xC2, 0xC3):
            return lead == 0xC3
        if lead in _BIN_MINIMUM:
            return self.binary(self.unsigned(1 << (lead - 0xC4)), _BIN_MINIMUM[lead])
        if lead == 0xCB:
            return struct.unpack(">d", self.take(8))[0]
        if lead in _UINT_MINIMUM:
            value = self.unsigned(1 << (lead - 0xCC))
            if value < _UINT_MINIMUM[lead]:
                self.fail(f"uint {value} is not in its shortest form")
            return value
        if lead in _INT_LIMIT:
            value = int.from_bytes(self.take(1 << (lead - 0xD0)), "big", signed=True)
            if value >= _INT_LIMIT[lead]:
                self.fail(f"int {value} is not in its shortest form (or is >= 0)")
            return value
        if lead in _STR_MINIMUM:
            length = self.unsigned(1 << (lead - 0xD9))
            if length < _STR_MINIMUM[lead]:
                self.fail(f"a str of {length} bytes has a longer header than it needs")
            return self.text(length)
        if lead in _CONTAINER_MINIMUM:
            count = self.unsigned(2 if lead in (0xDC, 0xDE) else 4)
            if count < _CONTAINER_MINIMUM[lead]:
                self.fail(f"a container of {count} entries has a longer header than it needs")
            return self.array(count, depth) if lead in (0xDC, 0xDD) else self.map(count, depth)
        if lead == 0xCA:
            self.fail("float 32 is not written by memctl")
        self.fail(f"type byte 0x{lead:02x} (ext or never used) is not in the profile")

    def binary(self, length: int, minimum: int) -> bytes:
        if length < minimum:
            self.fail(f"a bin of {length} bytes has a longer header than it needs")
        return self.take(length)

    def text(self, length: int) -> str:
        raw = self.take(length)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self.fail("a str is not UTF-8")

    def array(self, count: int, depth: int) -> list:
        return [self.item(depth + 1) for _ in range(count)]

    def map(self, count: int, depth: int) -> dict:
        result = {}
        for _ in range(count):
            key = self.item(depth + 1)
            if not isinstance(key, str):
                self.fail(f"map key {key!r} is not a str")
            if key in result:
                self.fail(f"map key {key!r} appears twice")
            result[key] = self.item(depth + 1)
        return result
