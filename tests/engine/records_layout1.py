"""Layout-1 records segments as formats 1 to 3 wrote them (MANIFEST.spec section 4): memctl writes only the
block layout now, and the tests of its layout-1 reader need old segments."""

from __future__ import annotations

import numpy as np

from engine.codec import pack
from engine.format import KIND_RECORDS, RECORD_FLAG_TOMBSTONE
from engine.records import TOMBSTONE, composite_key
from engine.records.rows import key_hashes
from engine.segment import SegmentWriter


def write_layout1(path: str, tables: dict, hashes=key_hashes) -> None:
    """A layout-1 segment of `tables` {table: {key: value or TOMBSTONE}}; `hashes` computes the key hashes."""
    rows = sorted((composite_key(table, key), value) for table, keys in tables.items() for key, value in keys.items())
    composites = [composite for composite, _ in rows]
    values = [b"" if value is TOMBSTONE else pack(value) for _, value in rows]
    hash_array = np.asarray(hashes(composites), dtype=np.uint64)
    order = np.argsort(hash_array, kind="stable")
    writer = SegmentWriter(path, KIND_RECORDS)
    writer.add_column("hashes", hash_array[order])
    writer.add_column("hash_rows", order.astype(np.uint32))
    writer.add_column("key_offsets", _offsets(composites))
    writer.add_bytes("keys", b"".join(composites))
    writer.add_column("value_offsets", _offsets(values))
    writer.add_bytes("values", b"".join(values))
    writer.add_column("flags", np.array([RECORD_FLAG_TOMBSTONE if value is TOMBSTONE else 0 for _, value in rows],
                                        dtype=np.uint8))
    ranges: dict = {}
    for row, composite in enumerate(composites):
        table = composite.split(b"\0", 1)[0].decode("utf-8")
        ranges.setdefault(table, [row, row])[1] = row + 1
    writer.set_meta({"tables": ranges, "count": len(rows)})
    writer.finish()


def _offsets(pieces: list) -> np.ndarray:
    offsets = np.zeros(len(pieces) + 1, dtype=np.uint64)
    np.cumsum([len(piece) for piece in pieces], out=offsets[1:])
    return offsets
