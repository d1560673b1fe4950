"""Block checksums of segment columns (MANIFEST.spec section 3): a flipped byte in any checksum block of a records
segment's `blocks` column (its compressed rows) fails the read that touches it and is reported by check, each
naming the segment file, the checksum block's file offset and the column."""

from __future__ import annotations

import os
import random
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
COUNT = 4 * SEGMENT_CHECKSUM_BLOCK_BYTES // VALUE_BYTES  # random values: the blocks column spans four and a bit


def value(row: int) -> bytes:
    return random.Random(row).randbytes(VALUE_BYTES)  # incompressible


def key(row: int) -> str:
    return f"k{row:05d}"  # zero-padded: row order is key order


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("blocks") / "store")
    store = Store.open(path)
    with store.batch() as batch:
        for row in range(COUNT):
            batch.put(TABLE, key(row), value(row))
    store.flush()
    store.close()
    return path


def records_segment(path: str) -> str:
    names = [name for name in os.listdir(os.path.join(path, SEGMENT_DIR)) if name.endswith(".records.seg")]
    assert len(names) == 1
    return os.path.join(SEGMENT_DIR, names[0])


def frames_inside_blocks(segment: Segment) -> dict:
    """{checksum block: (first row, frame start) of the first records block whose frame lies wholly inside it}."""
    offsets, rows = segment.column("block_offsets").tolist(), segment.column("block_rows").tolist()
    found: dict = {}
    for number in range(len(offsets) - 1):
        index = offsets[number] // SEGMENT_CHECKSUM_BLOCK_BYTES
        if (offsets[number + 1] - 1) // SEGMENT_CHECKSUM_BLOCK_BYTES == index:
            found.setdefault(index, (rows[number], offsets[number]))
    return found


@pytest.mark.parametrize("block", ["first", "middle", "last"])
def test_a_flipped_byte_in_any_block_fails_the_read_that_touches_it_and_check(pristine, tmp_path, block):
    path = str(tmp_path / "store")
    shutil.copytree(pristine, path)
    relative = records_segment(path)
    segment_path = os.path.join(path, relative)
    segment = Segment.open(segment_path)
    blocks_offset = segment.column_offset("blocks")
    inside = frames_inside_blocks(segment)
    assert len(inside) >= 4
    index = sorted(inside)[{"first": 0, "middle": len(inside) // 2, "last": -1}[block]]
    row, frame_start = inside[index]
    flip_byte(segment_path, blocks_offset + frame_start + 20)
    block_offset = blocks_offset + index * SEGMENT_CHECKSUM_BLOCK_BYTES

    store = Store.open(path, writable=False)
    try:
        with pytest.raises(CorruptionError) as caught:
            store.get(TABLE, key(row))
    finally:
        store.close()
    assert (caught.value.path, caught.value.offset) == (segment_path, block_offset)
    assert "'blocks'" in caught.value.reason and f"block {index}" in caught.value.reason

    # The reader recorded what it found: writers refuse the store, and check reports the marker too.
    assert [(found["file"], found["offset"]) for found in damage.read(path).findings] == [(relative, block_offset)]
    report = check_store(path)
    assert [(problem["file"], problem["offset"]) for problem in report.problems] == \
        [(DAMAGE_FILE, None), (relative, block_offset)]
    assert "'blocks'" in report.problems[1]["message"]


def test_the_undamaged_store_reads_back_and_checks_clean(pristine):
    store = Store.open(pristine, writable=False)
    try:
        assert [store.get(TABLE, key(row)) for row in (0, COUNT // 2, COUNT - 1)] == \
            [value(row) for row in (0, COUNT // 2, COUNT - 1)]
    finally:
        store.close()
    assert check_store(pristine).clean
