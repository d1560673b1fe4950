"""The compiled Chinese dictionary: jieba's prefix dictionary, word classes and HMM tables in one mapped file.

It lives in the per-user cache (engine.text.chinese.cache), never in a store: it is derived from jieba's own
files and rebuilt when they change. Opening it maps the file and checks its header, its description and the
block index; the dictionary's half a million keys stay on disk until a text needs the block of their first
character (engine.text.chinese.dictionary), and each part is checked against its CRC-32 when first read, so
that a process cutting one sentence reads and checks a few kilobytes, not 13 MB.

Byte layout (header integers little-endian; section arrays in the writer's byte order, named in the
description; a file of another byte order is out of date, like one of another jieba):

    offset  size  field
    0       8     magic "MCZHDICT"
    8       4     layout version (uint32) = 1
    12      4     description length D (uint32)
    16      8     description offset P (uint64); the file is P + D bytes long
    24      4     CRC-32 of the description
    28      4     CRC-32 of bytes [0, 28)
    32      …     sections, each at an offset that is a multiple of 8, zero bytes between them
    P       D     description: a UTF-8 JSON object (below), the end of the file

Description: "byte_order" ("little"/"big"); "sources" {"jieba_version", "jieba_directory", "dictionary",
"user_dictionary"}, the last two a file's {"path", "size", "mtime_ns", "sha256"} (user_dictionary null when
there is none); "keys" K and "blocks" B; "total" (the frequency sum, jieba's Tokenizer.total); "tags" (the
word class names; class n is tags[n-1]); "force_split" (user words of frequency 0); "finalseg" {"start":
{state: log P}, "transitions": {state: {state: log P}}} for states B, M, E, S; "sections" {name: [offset,
length, CRC-32 of the section's bytes]}. Sections:

    first_characters  UTF-8, B characters in code point order: block b holds the keys that start with the b-th
    block_keys        uint32[B+1]: index of each block's first key; the last entry is K
    block_bytes       uint32[B+1]: offset of each block's first key in `keys`; the last entry is its length
    block_checksums   uint32[B]: CRC-32 of the block's bytes of `keys`, then of `frequencies`, then of `tags`
    keys              UTF-8: each block's keys (words and prefixes of words) joined by "\\n"
    frequencies       uint64[K]: jieba's FREQ of each key (0: a prefix only, or a word of frequency 0)
    tags              uint16[K]: the key's word class (0: none; jieba's word_tag_tab has no entry)
    hmm_characters    UTF-8, C characters in code point order: the rows of hmm_emissions
    hmm_emissions     float64[4C]: finalseg's log P of emitting the character from B, M, E, S (-3.14e100
                      where jieba's table has no entry, the value jieba uses for a missing one)
    posseg            UTF-8 JSON {"states", "start", "transitions"}: the posseg HMM's small tables
                      (engine.text.chinese.posseg.Model)
    posseg_seen_characters, posseg_seen_offsets (uint32[S+1]), posseg_seen_states (uint16): jieba.posseg's
                      char_state_tab, the S characters in code point order; character s was seen with the
                      states [offsets[s], offsets[s+1]) of posseg_seen_states
    posseg_emission_characters, posseg_emission_offsets, posseg_emission_states: the same shape for the
                      characters of jieba.posseg's prob_emit, and posseg_emission_values (float64, one per
                      entry of posseg_emission_states): the log P of emitting the character from that state

Checks: opening checks the header CRC, magic, version and length, the description's CRC and that every section
lies between the header and the description, and the CRCs of the four block index sections; a block is
checked against block_checksums when first read, the HMM sections when the HMM is first used, the posseg ones
when the class HMM is. Any failure is DamagedFile: at opening the cache builds the file again, later the reader answers
from jieba's own tables (engine.text.chinese) and the cache rebuilds the file in the next process.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import sys
import zlib

MAGIC = b"MCZHDICT"
LAYOUT_VERSION = 2
_HEADER = struct.Struct("<8sIIQII")
HEADER_SIZE = _HEADER.size  # 32
_INDEX_SECTIONS = ("first_characters", "block_keys", "block_bytes", "block_checksums")


class DamagedFile(Exception):
    """The compiled dictionary cannot be used as it is: truncated, a bad checksum, an unknown layout."""


class CompiledDictionary:
    """An open compiled dictionary. `total`, `force_split`, `sources` from the description; blocks and models
    decoded (and checked) on demand."""

    def __init__(self, path: str):
        self.path = path
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < HEADER_SIZE:
                raise DamagedFile(f"{path}: {size} bytes, shorter than the {HEADER_SIZE}-byte header")
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self.description = _checked_description(self._map, path)
        if self.description.get("byte_order") != sys.byteorder:
            raise DamagedFile(f"{path}: written on a {self.description.get('byte_order')}-endian machine")
        self.sources = self.description["sources"]
        self.total = self.description["total"]
        self.force_split = frozenset(self.description["force_split"])
        self._tag_names = [None, *self.description["tags"]]
        characters = str(self.section("first_characters"), "utf-8")
        self._block_keys = self.section("block_keys").cast("I")
        self._block_bytes = self.section("block_bytes").cast("I")
        self._block_checksums = self.section("block_checksums").cast("I")
        self._keys = self._region("keys")
        self._frequencies = self._region("frequencies").cast("Q")
        self._tags = self._region("tags").cast("H")
        blocks = len(characters)
        if not len(self._block_keys) == len(self._block_bytes) == len(self._block_checksums) + 1 == blocks + 1:
            raise DamagedFile(f"{path}: the block tables disagree with the {blocks} block characters")
        self._block_numbers = {character: number for number, character in enumerate(characters)}
        self._checked_blocks: set = set()

    def _region(self, name: str) -> memoryview:
        offset, length, _checksum = self.description["sections"][name]
        return memoryview(self._map)[offset: offset + length]

    def section(self, name: str) -> memoryview:
        """A whole section, checked against its CRC."""
        region = self._region(name)
        if zlib.crc32(region) != self.description["sections"][name][2]:
            raise DamagedFile(f"{self.path}: checksum mismatch in section {name}")
        return region

    def check_all(self) -> None:
        """Every section against its CRC (DamagedFile on the first mismatch): what a fresh build is read back with."""
        for name in self.description["sections"]:
            self.section(name)

    def _block(self, character: str):
        """(keys, first key index, end key index) of `character`'s block, checked; None when it has none."""
        number = self._block_numbers.get(character)
        if number is None:
            return None
        first, last = self._block_keys[number], self._block_keys[number + 1]
        data = self._keys[self._block_bytes[number]: self._block_bytes[number + 1]]
        if number not in self._checked_blocks:
            checksum = zlib.crc32(self._tags[first:last], zlib.crc32(self._frequencies[first:last], zlib.crc32(data)))
            if checksum != self._block_checksums[number]:
                raise DamagedFile(f"{self.path}: checksum mismatch in the block of {character!r}")
            self._checked_blocks.add(number)
        return str(data, "utf-8").split("\n"), first, last

    def block_frequencies(self, character: str):
        """(key, frequency) of every key that starts with `character`."""
        block = self._block(character)
        if block is None:
            return ()
        keys, first, last = block
        return zip(keys, self._frequencies[first:last].tolist())

    def block_tags(self, character: str) -> dict:
        """key → word class of the keys that start with `character` and have one."""
        block = self._block(character)
        if block is None:
            return {}
        keys, first, last = block
        names = self._tag_names
        return {key: names[number] for key, number in zip(keys, self._tags[first:last].tolist()) if number}

    def hmm_emissions(self) -> "EmissionRows":
        """finalseg's emissions: character → (B, M, E, S) log P, decoded a character at a time."""
        characters = str(self.section("hmm_characters"), "utf-8")
        values = self.section("hmm_emissions").cast("d")
        if len(values) != 4 * len(characters):
            raise DamagedFile(f"{self.path}: {len(values)} HMM emissions for {len(characters)} characters")
        return EmissionRows(characters, values)

    def posseg_tables(self) -> dict:
        """The posseg HMM as engine.text.chinese.posseg.Model reads it; the per-character tables decoded a
        character at a time (all of them at once: 200 ms)."""
        tables = json.loads(str(self.section("posseg"), "utf-8"))
        tables["characters"] = CharacterRows(*self._character_rows("posseg_seen"))
        values = self.section("posseg_emission_values").cast("d")
        tables["emissions"] = CharacterRows(*self._character_rows("posseg_emission"), values)
        return tables

    def _character_rows(self, prefix: str):
        characters = str(self.section(f"{prefix}_characters"), "utf-8")
        offsets = self.section(f"{prefix}_offsets").cast("I")
        states = self.section(f"{prefix}_states").cast("H")
        if len(offsets) != len(characters) + 1 or offsets[-1] != len(states):
            raise DamagedFile(f"{self.path}: {prefix} has {len(offsets)} offsets for {len(characters)} characters")
        return characters, offsets, states


class _Rows:
    """A dict face (get) of rows keyed by character, each decoded when its character is first asked for."""

    def __init__(self, characters: str):
        self._rows = dict(zip(characters, range(len(characters))))
        self._decoded: dict = {}

    def get(self, character: str, default=None):
        found = self._decoded.get(character)
        if found is None:
            row = self._rows.get(character)
            if row is None:
                return default
            found = self._decoded[character] = self._decode(row)
        return found


class EmissionRows(_Rows):
    """The hmm_emissions rows: the 14,000-row table costs 6 ms to decode whole, a row a microsecond."""

    def __init__(self, characters: str, values: memoryview):
        super().__init__(characters)
        self._values = values

    def _decode(self, row: int) -> tuple:
        return tuple(self._values[4 * row: 4 * row + 4].tolist())


class CharacterRows(_Rows):
    """Per-character state rows: a tuple of state numbers, or with `values` a map of state number → value."""

    def __init__(self, characters: str, offsets: memoryview, states: memoryview, values: memoryview | None = None):
        super().__init__(characters)
        self._offsets = offsets
        self._states = states
        self._values = values

    def _decode(self, row: int):
        begin, end = self._offsets[row], self._offsets[row + 1]
        states = tuple(self._states[begin:end].tolist())
        if self._values is None:
            return states
        return dict(zip(states, self._values[begin:end].tolist()))


def _checked_description(data, path: str) -> dict:
    magic, version, description_length, description_offset, description_crc, header_crc = _HEADER.unpack_from(data)
    if zlib.crc32(data[:28]) != header_crc:
        raise DamagedFile(f"{path}: header checksum mismatch")
    if magic != MAGIC:
        raise DamagedFile(f"{path}: not a compiled Chinese dictionary (magic {magic!r})")
    if version != LAYOUT_VERSION:
        raise DamagedFile(f"{path}: layout version {version}, this memctl reads {LAYOUT_VERSION}")
    if description_offset + description_length != len(data) or description_offset < HEADER_SIZE:
        raise DamagedFile(f"{path}: {len(data)} bytes, the header says {description_offset + description_length}")
    encoded = data[description_offset:]
    if zlib.crc32(encoded) != description_crc:
        raise DamagedFile(f"{path}: checksum mismatch in the description at offset {description_offset}")
    try:
        description = json.loads(encoded.decode("utf-8"))
        for name, (offset, length, _checksum) in description["sections"].items():
            if offset % 8 or offset < HEADER_SIZE or offset + length > description_offset:
                raise DamagedFile(f"{path}: section {name} at {offset} (+{length}) lies outside the sections")
        missing = set(_INDEX_SECTIONS) - description["sections"].keys()
    except (ValueError, KeyError, TypeError) as error:
        raise DamagedFile(f"{path}: unreadable description ({error})") from None
    if missing:
        raise DamagedFile(f"{path}: the description lacks sections {sorted(missing)}")
    return description


def write(handle, description: dict, sections: dict) -> None:
    """Write `sections` (name → bytes-like, in order) then `description` (this adds its "sections" and
    "byte_order") to the binary file `handle`, with the header in front."""
    body = bytearray()
    placed = {}
    for name, data in sections.items():
        data = memoryview(data).cast("B")
        placed[name] = [HEADER_SIZE + len(body), len(data), zlib.crc32(data)]
        body.extend(data)
        body.extend(bytes(-len(body) % 8))
    encoded = json.dumps(dict(description, byte_order=sys.byteorder, sections=placed),
                         ensure_ascii=False).encode("utf-8")
    header = bytearray(_HEADER.pack(MAGIC, LAYOUT_VERSION, len(encoded), HEADER_SIZE + len(body),
                                    zlib.crc32(encoded), 0))
    struct.pack_into("<I", header, 28, zlib.crc32(header[:28]))
    handle.write(header)
    handle.write(body)
    handle.write(encoded)
