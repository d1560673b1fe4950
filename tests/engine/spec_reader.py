"""A reader of memctl stores written from MANIFEST.spec alone, and helpers that read MANIFEST.spec's text.

It imports nothing from `engine`: CURRENT, MANIFEST, WAL files and segment containers are decoded with
struct, zlib, numpy and the profile decoder (msgpack_profile) as the spec's byte tables describe them, so
the tests built on it fail when the code and the spec disagree. Every check the spec states for a valid file
is an assertion here (a store written by memctl is expected to pass them all).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import struct
import unicodedata
import zlib
from pathlib import Path

import numpy as np
import zstandard

from msgpack_profile import decode

REPOSITORY = Path(__file__).resolve().parents[2]
SPEC_PATH = REPOSITORY / "MANIFEST.spec"


# --- MANIFEST.spec's text ------------------------------------------------------------------------------


def spec_text() -> str:
    return SPEC_PATH.read_text(encoding="utf-8")


def spec_block(after: str) -> list[str]:
    """The indented block that follows the first line starting (after its indentation) with `after`: the
    lines after it, or after the blank lines that end its paragraph, up to the next blank line, without the
    four spaces that indent every block of the spec."""
    lines = spec_text().splitlines()
    position = next(index for index, line in enumerate(lines) if line.strip().startswith(after)) + 1
    while position < len(lines) and not lines[position].strip():
        position += 1
    block = []
    for line in lines[position:]:
        if not line.strip():
            break
        block.append(line.removeprefix("    "))
    return block


def spec_sentence(pattern: str) -> re.Match:
    """The first match of `pattern` in the spec, every run of white space (line breaks, indentation, table
    padding) read as one space."""
    flat = re.sub(r"\s+", " ", spec_text())
    match = re.search(pattern, flat)
    assert match, f"MANIFEST.spec no longer says {pattern!r}"
    return match


def hex_bytes(text: str) -> bytes:
    """Bytes written in the spec as space-separated pairs of hex digits."""
    return bytes.fromhex(text.replace(" ", ""))


# --- hashes (Conventions) ------------------------------------------------------------------------------


def blake2b_64(data: bytes) -> int:
    """BLAKE2b with an 8-byte output, read as a little-endian u64."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def packaged_stopwords(language: str, directory: Path = REPOSITORY / "engine" / "text" / "data") -> set:
    """The words a packaged list contributes: its lines stripped, without empty and "#" lines."""
    lines = (directory / f"stopwords_{language}.txt").read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def given_stopwords(words) -> set:
    """The words a list given by the caller contributes: NFKC, then case-folded, not stripped."""
    return {unicodedata.normalize("NFKC", word).casefold() for word in words}


def stopword_hash(words: set) -> str:
    joined = b"\n".join(sorted(word.encode("utf-8") for word in words))
    return hashlib.sha256(joined).hexdigest()[:16]


# --- CURRENT and MANIFEST (sections 5 and 6) -----------------------------------------------------------


def manifest(store_path: str) -> dict:
    current = Path(store_path, "CURRENT").read_bytes()
    match = re.fullmatch(rb"(MANIFEST-\d{6,})\n", current)
    assert match, f"CURRENT holds {current!r}"
    data = Path(store_path, match[1].decode()).read_bytes()
    magic, version, length, crc, reserved = struct.unpack_from("<8sIIII", data)
    assert (magic, reserved) == (b"MEMCTLMF", 0) and length == len(data) - 24
    body = data[24:]
    assert zlib.crc32(body) == crc
    fields = decode(body)
    assert fields["version"] == version
    assert set(fields) >= {"version", "number", "segments", "counters", "wal_number", "last_sequence",
                           "next_file_number"}
    return fields


def segment_paths(store_path: str, owner: str) -> list[str]:
    """Paths of the live segments of `owner`, oldest first, each checked against its MANIFEST entry."""
    paths = []
    for entry in manifest(store_path)["segments"]:
        path = os.path.join(store_path, "seg", entry["name"])
        data = Path(path).read_bytes()
        assert (len(data), zlib.crc32(data)) == (entry["size"], entry["crc"]), entry["name"]
        if entry["owner"] == owner:
            paths.append(path)
    return paths


# --- segment container (section 3) ---------------------------------------------------------------------


class Segment:
    """A segment file decoded and checked as section 3 says: header, footer, directory, columns, CRCs."""

    def __init__(self, path: str):
        self.name = os.path.basename(path)
        data = Path(path).read_bytes()
        magic, version, kind, header_crc = struct.unpack_from("<8sI16sI", data)
        assert magic == b"MEMCTLSG" and zlib.crc32(data[:28]) == header_crc
        self.kind = kind.rstrip(b"\0").decode("ascii")
        footer = len(data) - 32
        offset, length, directory_crc, footer_version, reserved, footer_magic = struct.unpack_from(
            "<QIIII8s", data, footer)
        assert (footer_magic, reserved, footer_version) == (b"MEMCTLSF", 0, version)
        assert offset + length == footer and length <= 64 << 20
        directory = decode(data[offset:footer])
        assert zlib.crc32(data[offset:footer]) == directory_crc
        assert directory["kind"] == self.kind
        self.meta = directory["meta"]
        self.dtypes: dict = {}
        self.columns: dict = {}
        self.codecs: dict = {}
        end = 32
        for name, dtype, shape, start, size, block_crcs, *codec in directory["columns"]:
            assert start % 64 == 0 and data[end:start] == bytes(start - end), f"{name}: padding"
            assert start + size <= offset
            column = data[start: start + size]
            block = directory["checksum_block"]
            crcs = [zlib.crc32(column[first: first + block]) for first in range(0, size, block)]
            assert block_crcs == struct.pack(f"<{len(crcs)}I", *crcs), f"{name}: block CRCs"
            data_bytes = math.prod(shape) * np.dtype(dtype).itemsize
            if codec:
                self.codecs[name] = codec[0]
                column = decompress_column(column, codec[0], np.dtype(dtype), data_bytes, len(shape))
            assert len(column) == data_bytes
            self.dtypes[name] = dtype
            self.columns[name] = np.frombuffer(column, dtype=np.dtype(dtype)).reshape(shape)
            end = start + size

    def names(self) -> list[str]:
        return list(self.columns)


def decompress_column(stored: bytes, codec: dict, dtype: np.dtype, data_bytes: int, dimensions: int) -> bytes:
    """A compressed column's data from its stored frames (section 3, Compressed columns)."""
    assert codec["codec"] == "zstd" and codec["frame"] % dtype.itemsize == 0
    sizes = struct.unpack(f"<{len(codec['frames']) // 4}I", codec["frames"])
    assert len(sizes) == -(-data_bytes // codec["frame"]) and sum(sizes) == len(stored)
    assert codec["filter"] in (0, 2) or (dtype.kind in "iu" and dimensions == 1 and codec["filter"] in (1, 3))
    pieces, position = [], 0
    for index, size in enumerate(sizes):
        frame = stored[position: position + size]
        position += size
        expected = min(codec["frame"], data_bytes - index * codec["frame"])
        assert zstandard.frame_content_size(frame) == expected
        piece = zstandard.ZstdDecompressor().decompress(frame)
        count = expected // dtype.itemsize
        if codec["filter"] & 2:  # byte p of item j was stored at p·count + j
            piece = bytes(piece[byte * count + item] for item in range(count) for byte in range(dtype.itemsize))
        if codec["filter"] & 1:
            bits = 8 * dtype.itemsize
            items = [int.from_bytes(piece[item * dtype.itemsize: (item + 1) * dtype.itemsize], "little")
                     for item in range(count)]
            total, running = [], 0
            for item in items:
                running = (running + item) % (1 << bits)
                total.append(running)
            piece = b"".join(value.to_bytes(dtype.itemsize, "little") for value in total)
        pieces.append(piece)
    return b"".join(pieces)


# --- records segment (section 4) -----------------------------------------------------------------------


class RecordsSegment:
    """Rows of a records segment of either layout: (table, key, msgpack value bytes or None for a tombstone)."""

    def __init__(self, path: str):
        self.segment = segment = Segment(path)
        assert segment.kind == "records"
        self.layout = segment.meta.get("layout", 1)
        rows = self._block_rows() if self.layout == 2 else self._layout1_rows()
        self.composites = [composite for composite, _value in rows]
        assert self.composites == sorted(set(self.composites))
        self.rows = []
        for composite, value in rows:
            table, separator, key = composite.partition(b"\0")
            assert separator and b"\0" not in key
            self.rows.append((table.decode("utf-8"), key.decode("utf-8"), value))
        ranges: dict = {}
        for number, (table, _key, _value) in enumerate(self.rows):
            ranges.setdefault(table, [number, number])[1] = number + 1
        assert segment.meta["tables"] == ranges and segment.meta["count"] == len(rows)
        self.has_filter = "filter" in segment.columns
        if self.has_filter:
            assert segment.meta["filter_probes"] == 7
            assert segment.columns["filter"].tobytes() == bloom_filter(self.composites)
        else:
            assert "filter_probes" not in segment.meta

    def _layout1_rows(self) -> list:
        columns = self.segment.columns
        key_offsets, value_offsets = columns["key_offsets"].tolist(), columns["value_offsets"].tolist()
        keys, values = columns["keys"].tobytes(), columns["values"].tobytes()
        flags = columns["flags"].tolist()
        return [(keys[start:end], None if flags[row] & 1 else values[value_offsets[row]: value_offsets[row + 1]])
                for row, (start, end) in enumerate(zip(key_offsets, key_offsets[1:]))]

    def _block_rows(self) -> list:
        columns, meta = self.segment.columns, self.segment.meta
        offsets, first_rows = columns["block_offsets"].tolist(), columns["block_rows"].tolist()
        key_offsets, first_keys = columns["first_key_offsets"].tolist(), columns["first_keys"].tobytes()
        frames = columns["blocks"].tobytes()
        assert len(offsets) == len(first_rows) == len(key_offsets) == meta["blocks"] + 1
        assert (offsets[0], offsets[-1], first_rows[0], first_rows[-1]) == (0, len(frames), 0, meta["count"])
        rows = []
        self.block_bytes = []  # per block: its rows' key and value bytes, those of its last row, its row count
        for block in range(meta["blocks"]):
            frame = frames[offsets[block]: offsets[block + 1]]
            content = zstandard.ZstdDecompressor().decompress(frame)
            assert zstandard.frame_content_size(frame) == len(content)
            count = first_rows[block + 1] - first_rows[block]
            assert count >= 1
            planes = [content[plane * 2 * count: (plane + 1) * 2 * count] for plane in range(4)]
            lengths = [sum(planes[plane][index] << (8 * plane) for plane in range(4)) for index in range(2 * count)]
            flags = content[8 * count: 9 * count]
            position = 9 * count
            keys = []
            for length in lengths[:count]:
                keys.append(content[position: position + length])
                position += length
            for row, length in enumerate(lengths[count:]):
                value = content[position: position + length]
                position += length
                assert not flags[row] & 1 or value == b""
                rows.append((keys[row], None if flags[row] & 1 else value))
            assert position == len(content)
            assert rows[-count][0] == first_keys[key_offsets[block]: key_offsets[block + 1]]
            self.block_bytes.append((sum(lengths), lengths[count - 1] + lengths[-1], count))
        return rows

    def values(self, table: str) -> dict:
        """{key: msgpack bytes} of the table's live rows."""
        return {key: value for name, key, value in self.rows if name == table and value is not None}


def bloom_filter(composites: list) -> bytes:
    """The filter of a records segment holding these keys (section 4, Filter)."""
    size = max(8, -(-10 * len(composites) // 8))
    bits = bytearray(size)
    for composite in composites:
        hashed = blake2b_64(composite)
        low, high = hashed & 0xFFFFFFFF, hashed >> 32
        for probe in range(7):
            position = (low + probe * high) % (8 * size)
            bits[position // 8] |= 1 << (position % 8)
    return bytes(bits)


# --- write-ahead log (section 2) -----------------------------------------------------------------------


def wal_batches(path: str) -> list[bytes]:
    """The payload of every complete logical record of a WAL file, in order."""
    data = Path(path).read_bytes()
    if len(data) < 32:
        return []
    magic, _version, _number, salt, reserved, header_crc = struct.unpack_from("<8sIQIII", data)
    assert (magic, reserved) == (b"MEMCTLWL", 0) and zlib.crc32(data[:28]) == header_crc
    batches, pending, position = [], None, 32
    while position + 7 <= len(data):
        left = 32768 - position % 32768
        if left < 7:
            position += left
            continue
        masked, length, record_type = struct.unpack_from("<IHB", data, position)
        fragment = data[position + 7: position + 7 + length]
        crc = zlib.crc32(struct.pack("<I", salt) + bytes((record_type,)) + fragment)
        if record_type == 0 or len(fragment) < length or _masked(crc) != masked:
            break  # a torn tail (or the zeros after the last record)
        if record_type == 1:
            batches.append(fragment)
        elif record_type == 2:
            pending = fragment
        else:
            pending += fragment
            if record_type == 4:
                batches.append(pending)
        position += 7 + length
    return batches


def _masked(crc: int) -> int:
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
