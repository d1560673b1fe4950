"""Block checksums of segment columns (MANIFEST.spec section 3): a flipped byte in any block of a records
segment's values column fails the read that touches it and is reported by check, each naming the segment file,
the block's file offset and the column."""

from __future__ import annotations

import os
import shutil

import pytest

from engine import damage
from engine.check import check_store
from engine.errors import CorruptionError
from engine.format import DAMAGE_FILE, SEGMENT_CHECKSUM_BLOCK_BYTES, SEGMENT_DIR
from engine.segment import Segment
from engine.store import Store
from engine_testkit import flip_byte

TABLE = "test.blocks"
VALUE_BYTES = 1000
COUNT = 4 * SEGMENT_CHECKSUM_BLOCK_BYTES // VALUE_BYTES  # the values column spans four blocks and a bit


def key(row: int) -> str:
    return f"k{row:05d}"  # zero-padded: row order is key order


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("blocks") / "store")
    store = Store.open(path)
    with store.batch() as batch:
        for row in range(COUNT):
            batch.put(TABLE, key(row), f"{row:05d}" + "v" * VALUE_BYTES)
    store.flush()
    store.close()
    return path


def records_segment(path: str) -> str:
    names = [name for name in os.listdir(os.path.join(path, SEGMENT_DIR)) if name.endswith(".records.seg")]
    assert len(names) == 1
    return os.path.join(SEGMENT_DIR, names[0])


def row_inside_block(segment: Segment, block: int) -> int:
    """A row whose value bytes lie wholly inside block `block` of the values column."""
    offsets = segment.column("value_offsets").tolist()
    start, end = block * SEGMENT_CHECKSUM_BLOCK_BYTES, (block + 1) * SEGMENT_CHECKSUM_BLOCK_BYTES
    return next(row for row in range(len(offsets) - 1) if offsets[row] >= start and offsets[row + 1] <= end)


@pytest.mark.parametrize("block", ["first", "middle", "last"])
def test_a_flipped_byte_in_any_block_fails_the_read_that_touches_it_and_check(pristine, tmp_path, block):
    path = str(tmp_path / "store")
    shutil.copytree(pristine, path)
    relative = records_segment(path)
    segment_path = os.path.join(path, relative)
    segment = Segment.open(segment_path)
    values_offset = segment._columns["values"][2]
    blocks = -(-segment._columns["values"][3] // SEGMENT_CHECKSUM_BLOCK_BYTES)
    assert blocks >= 4
    index = {"first": 0, "middle": blocks // 2, "last": blocks - 1}[block]
    row = row_inside_block(segment, index)
    flip_byte(segment_path, values_offset + int(segment.column("value_offsets")[row]) + 2)
    block_offset = values_offset + index * SEGMENT_CHECKSUM_BLOCK_BYTES

    store = Store.open(path, writable=False)
    try:
        with pytest.raises(CorruptionError) as caught:
            store.get(TABLE, key(row))
    finally:
        store.close()
    assert (caught.value.path, caught.value.offset) == (segment_path, block_offset)
    assert "'values'" in caught.value.reason and f"block {index}" in caught.value.reason

    # The reader recorded what it found: writers refuse the store, and check reports the marker too.
    assert [(found["file"], found["offset"]) for found in damage.read(path).findings] == [(relative, block_offset)]
    report = check_store(path)
    assert [(problem["file"], problem["offset"]) for problem in report.problems] == \
        [(DAMAGE_FILE, None), (relative, block_offset)]
    assert "'values'" in report.problems[1]["message"]


def test_the_undamaged_store_reads_back_and_checks_clean(pristine):
    store = Store.open(pristine, writable=False)
    try:
        assert [store.get(TABLE, key(row)) for row in (0, COUNT // 2, COUNT - 1)] == \
            [f"{row:05d}" + "v" * VALUE_BYTES for row in (0, COUNT // 2, COUNT - 1)]
    finally:
        store.close()
    assert check_store(pristine).clean
