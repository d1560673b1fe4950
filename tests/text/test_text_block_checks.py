"""A query checks the blocks of the postings and key streams it reads, not the whole columns: a flipped byte in
a block a query reads fails that query with CorruptionError (segment file, block offset), while a query reading
only undamaged blocks still answers, and `check` reports the damage. The columns are stored compressed (the
segment container's frames): a stored block holds the frames of a span of the column's data."""

from __future__ import annotations

import glob
import os
import random
import shutil

import pytest

from engine.check import check_store
from engine.errors import CorruptionError
from engine.format import DAMAGE_FILE, SEGMENT_CHECKSUM_BLOCK_BYTES, SEGMENT_DIR
from engine.segment import Segment
from engine.store import Store
from engine.text.index import TextIndex
from engine.text.reader import TextSegment
from engine.text.tokenizer import Tokenizer
from engine_testkit import flip_byte

TOKENIZER = Tokenizer()
LETTERS = "bcdfghjklmnpqrtvwxz"  # no vowels and no s: the stemmer leaves the words alone
DOCUMENTS = 12000


def word(number: int) -> str:
    letters = ""
    for _place in range(3):
        number, digit = divmod(number, len(LETTERS))
        letters += LETTERS[digit]
    return "q" + letters


def key(number: int) -> str:
    """Keys that share little with their neighbours, so that the key blocks span several checksum blocks."""
    return f"doc{number:05d}-{number * 2654435761 % 10 ** 12:012d}"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("text-blocks") / "store")
    with Store.open(path) as store:
        index = TextIndex(store, TOKENIZER)
        index.add(key(0), "haystack")
        words = random.Random(5)  # postings that compress no better than real ones: several stored blocks
        index.add_many([{"key": key(number), "fields": " ".join(word(words.randrange(4000)) for _step in range(20))}
                        for number in range(1, DOCUMENTS - 1)])
        index.add(key(DOCUMENTS - 1), "needle")
        store.flush()
    return path


def postings_segment(path: str) -> str:
    (found,) = glob.glob(os.path.join(path, SEGMENT_DIR, "*.text.postings.seg"))
    return found


def frame_bytes(segment: Segment, column: str) -> int:
    """Bytes of the column's data per stored frame (per checksum block when it is stored as is)."""
    compressed = segment._compressed.get(column)
    return SEGMENT_CHECKSUM_BLOCK_BYTES if compressed is None else compressed.frame


def stored_byte(segment: Segment, column: str, position: int) -> int:
    """A stored byte of `column` whose damage hits its data byte `position`: that byte, or the middle of the
    stored bytes of the frame holding it."""
    compressed = segment._compressed.get(column)
    if compressed is None:
        return position
    frame = position // compressed.frame
    return (compressed.starts[frame] + compressed.starts[frame + 1]) // 2


def term_within_frame(segment: Segment, frame: int) -> tuple[str, int]:
    """A term whose postings bytes lie wholly inside frame `frame` of the postings column, and its first byte."""
    reader = TextSegment.from_segment(segment)
    offsets = segment.column("postings_offsets").tolist()
    size = frame_bytes(segment, "postings")
    start, end = frame * size, (frame + 1) * size
    ordinal = next(term for term in range(len(offsets) - 1) if offsets[term] >= start and offsets[term + 1] <= end)
    return reader.dictionary.terms()[ordinal], offsets[ordinal]


def damaged_copy(pristine: str, tmp_path, column: str, position: int) -> tuple[str, str, int]:
    """A copy of the store with a stored byte of `column` flipped where it damages its data byte `position`:
    (store, segment file, offset of the stored block holding the flipped byte)."""
    path = str(tmp_path / "store")
    shutil.copytree(pristine, path)
    segment_path = postings_segment(path)
    segment = Segment.open(segment_path)
    column_offset, flipped = segment.column_offset(column), stored_byte(segment, column, position)
    flip_byte(segment_path, column_offset + flipped)
    return path, segment_path, column_offset + flipped // SEGMENT_CHECKSUM_BLOCK_BYTES * SEGMENT_CHECKSUM_BLOCK_BYTES


def search(path: str, query: str, kernels: str = "numpy") -> list:
    store = Store.open(path, writable=False)
    try:
        return [hit.key for hit in TextIndex(store, TOKENIZER, kernels=kernels).search(query, top=50)]
    finally:
        store.close()


def test_the_postings_span_several_blocks_and_the_pristine_store_answers(pristine):
    segment = Segment.open(postings_segment(pristine))
    assert "postings" in segment._compressed and "key_blocks" in segment._compressed
    assert segment._columns["postings"][3] > 3 * SEGMENT_CHECKSUM_BLOCK_BYTES  # stored bytes
    assert segment._columns["key_blocks"][3] > SEGMENT_CHECKSUM_BLOCK_BYTES
    assert search(pristine, "needle") == [key(DOCUMENTS - 1)]
    assert check_store(pristine).clean


@pytest.mark.parametrize("kernels", ["numpy", "numba"])
def test_a_flipped_byte_in_postings_a_query_reads_is_corruption(pristine, tmp_path, kernels):
    segment = Segment.open(postings_segment(pristine))
    frames = -(-len(segment.column("postings")) // frame_bytes(segment, "postings"))
    damaged_term, first_byte = term_within_frame(segment, frames - 1)
    intact_term, _ = term_within_frame(segment, 0)
    expected = search(pristine, intact_term)
    path, segment_path, block_offset = damaged_copy(pristine, tmp_path, "postings", first_byte)

    assert search(path, intact_term, kernels) == expected  # its blocks are sound, and only they are read
    with pytest.raises(CorruptionError) as caught:
        search(path, f"{intact_term} {damaged_term}", kernels)
    assert (caught.value.path, caught.value.offset) == (segment_path, block_offset)
    assert "'postings'" in caught.value.reason
    # The failed search marked the store damaged: check reports the marker, then the block.
    assert [(problem["file"] == DAMAGE_FILE, problem["offset"]) for problem in check_store(path).problems] == \
        [(True, None), (False, block_offset)]


def test_a_flipped_byte_in_the_key_block_of_a_hit_is_corruption(pristine, tmp_path):
    segment = Segment.open(postings_segment(pristine))
    last_block_start = int(segment.column("key_block_offsets")[-2])
    path, segment_path, block_offset = damaged_copy(pristine, tmp_path, "key_blocks", last_block_start)
    assert search(path, "haystack") == [key(0)]  # its key is in the first block
    with pytest.raises(CorruptionError) as caught:
        search(path, "needle")
    assert (caught.value.path, caught.value.offset) == (segment_path, block_offset)
    assert "'key_blocks'" in caught.value.reason
