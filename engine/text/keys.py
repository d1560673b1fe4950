"""External keys of a segment's documents, in document order, front-coded in blocks of TEXT_KEYS_PER_BLOCK.

    key_blocks          uint8   the blocks, one after the other
    key_block_offsets           [blocks + 1] byte offsets of the blocks

A block of n keys: varint(bytes of the first key) · the first key (UTF-8); then one layout byte; then for
each further key, (bytes it shares with the first key, bytes of its suffix):
    layout 0   as 2 · (n − 1) bytes, one per number (every number of the block is below 256)
    layout 1   as 2 · (n − 1) varints
then the suffixes of the further keys, concatenated.

Keys of neighbouring documents usually share most of their bytes (`chat/0041207`, `chat/0041208`; paths of
one directory), so a key costs 3-4 bytes instead of its length plus a 4-byte offset: the 1.6 MB of keys of
100k documents become 0.45 MB, which is also what a cold `memctl search` reads and checksums. Coding against
the block's first key, with the lengths apart from the suffixes, lets a lookup find its key with a couple of
slices and one sum over the length bytes (layout 0), without building the keys before it.
"""

from __future__ import annotations

import numpy as np

from engine.errors import CorruptionError
from engine.format import TEXT_KEYS_PER_BLOCK as KEYS_PER_BLOCK
from engine.text import varint
from engine.text.frontcode import StringBuffer, gather_runs, shared_prefixes
from engine.text.postings import narrow

ENCODE_BLOCKS = 1024  # blocks coded together (a few MB of temporaries)
_SHORT, _LONG = 0, 1  # block layouts: the (shared, suffix) numbers as single bytes, or as varints


def encode(keys: list) -> dict:
    """Columns for `keys` (str, document order). Blocks stand alone, so they are coded ENCODE_BLOCKS at a
    time: the temporaries of a merge's half a million keys took 300 MB at once."""
    step = ENCODE_BLOCKS * KEYS_PER_BLOCK
    parts = [_encoded_blocks(keys[start: start + step]) for start in range(0, len(keys), step)]
    if len(parts) <= 1:
        return parts[0] if parts else _encoded_blocks(keys)
    blocks, offsets, base = [], [np.zeros(1, np.int64)], 0
    for part in parts:
        blocks.append(part["key_blocks"])
        offsets.append(part["key_block_offsets"][1:].astype(np.int64) + base)
        base += part["key_blocks"].size
    return {"key_blocks": np.concatenate(blocks), "key_block_offsets": narrow(np.concatenate(offsets))}


def _encoded_blocks(keys: list) -> dict:
    strings = StringBuffer.of_texts(keys)
    count = len(keys)
    block_count = -(-count // KEYS_PER_BLOCK)
    blocks = np.arange(block_count)
    firsts = blocks * KEYS_PER_BLOCK
    followers = np.flatnonzero(np.arange(count) % KEYS_PER_BLOCK)  # every key but the first of its block
    follower_blocks = followers // KEYS_PER_BLOCK
    shared = shared_prefixes(strings, firsts[follower_blocks], followers)
    suffixes = strings.lengths[followers] - shared
    widest = np.zeros(block_count, dtype=np.int64)
    np.maximum.at(widest, follower_blocks, np.maximum(shared, suffixes))
    layouts = (widest > 255).astype(np.int64)
    # The number stream, block after block: its layout, then (shared, suffix bytes) of each further key.
    numbers = np.empty(block_count + 2 * followers.size, dtype=np.int64)
    numbers[2 * firsts - blocks] = layouts
    numbers[2 * followers - follower_blocks - 1] = shared
    numbers[2 * followers - follower_blocks] = suffixes
    number_blocks = np.repeat(blocks, np.minimum(count - firsts, KEYS_PER_BLOCK) * 2 - 1)
    number_sizes = _number_sizes(numbers, layouts[number_blocks] == _LONG)
    block_number_bytes = np.bincount(number_blocks, weights=number_sizes, minlength=block_count).astype(np.int64)
    first_lengths = strings.lengths[firsts]
    header_lengths = varint.encoded_lengths(first_lengths)
    headers = strings.data.size + np.cumsum(header_lengths) - header_lengths
    pool = np.concatenate([strings.data, varint.encode(first_lengths, header_lengths),
                           _number_bytes(numbers, number_sizes, layouts[number_blocks] == _LONG)])
    number_starts = strings.data.size + int(header_lengths.sum()) + np.cumsum(block_number_bytes) - block_number_bytes
    # Runs of a block: its header, its first key, its numbers, then the suffix of each further key.
    run_starts = np.empty(2 * block_count + count, dtype=np.int64)
    run_lengths = np.empty_like(run_starts)
    first_runs = 2 * blocks + firsts
    run_starts[first_runs], run_lengths[first_runs] = headers, header_lengths
    run_starts[first_runs + 1], run_lengths[first_runs + 1] = strings.starts[firsts], first_lengths
    run_starts[first_runs + 2], run_lengths[first_runs + 2] = number_starts, block_number_bytes
    suffix_runs = 2 * follower_blocks + followers + 2
    run_starts[suffix_runs], run_lengths[suffix_runs] = strings.starts[followers] + shared, suffixes
    run_ends = np.append(0, np.cumsum(run_lengths))
    return {"key_blocks": gather_runs(pool, run_starts, run_lengths),
            "key_block_offsets": narrow(run_ends[np.append(first_runs, run_lengths.size)])}


def _number_sizes(numbers: np.ndarray, long: np.ndarray) -> np.ndarray:
    """Bytes of each number: a varint in a block of layout 1, one byte in a block of layout 0."""
    sizes = np.ones(numbers.size, dtype=np.int64)
    sizes[long] = varint.encoded_lengths(numbers[long])
    return sizes


def _number_bytes(numbers: np.ndarray, sizes: np.ndarray, long: np.ndarray) -> np.ndarray:
    places = np.cumsum(sizes) - sizes
    out = np.empty(int(sizes.sum()), dtype=np.uint8)
    out[places[~long]] = numbers[~long]
    wide = np.flatnonzero(long)
    if wide.size:
        wide_sizes = sizes[wide]
        wide_ends = np.cumsum(wide_sizes)
        out[np.repeat(places[wide] - (wide_ends - wide_sizes), wide_sizes) + np.arange(int(wide_ends[-1]))] = \
            varint.encode(numbers[wide], wide_sizes)
    return out


class KeyReader:
    """key(local) over the columns written by `encode`; `column(name)` returns a numpy array, and
    `items(name, start, stop)` a range of one (a published segment then checks only the key blocks read)."""

    def __init__(self, column, document_count: int, path: str = "<memory>", items=None):
        self._column = column
        self._items = items
        self.document_count = document_count
        self.path = path
        self._offsets = None
        self._data = None

    def _block_offsets(self) -> list:
        if self._offsets is None:
            offsets = self._column("key_block_offsets")
            if offsets.size != -(-self.document_count // KEYS_PER_BLOCK) + 1:
                raise CorruptionError(self.path, None, "key blocks do not match the document count")
            self._offsets = offsets.tolist()
        return self._offsets

    def _columns(self) -> tuple[list, bytes]:
        """Offsets as a list and the blocks as one bytes object (read once: a lookup then never touches
        numpy, which would cost more than the decoding)."""
        if self._data is None:
            self._data = self._column("key_blocks").tobytes()
        return self._block_offsets(), self._data

    def key(self, local: int) -> str:
        block, wanted = divmod(local, KEYS_PER_BLOCK)
        if self._items is None:
            offsets, data = self._columns()
            start, end = offsets[block], offsets[block + 1]
            data = data[start:end]
        else:
            offsets = self._block_offsets()
            start, end = offsets[block], offsets[block + 1]
            if start > end:
                raise CorruptionError(self.path, None, "key block offsets are not ascending")
            data = self._items("key_blocks", start, end).tobytes()
        count = min(KEYS_PER_BLOCK, self.document_count - block * KEYS_PER_BLOCK)
        return _text(_block_keys(data, count, self.path, start, wanted)[0], self.path)

    def keys(self) -> list:
        """Every key in document order (compaction, checks)."""
        offsets, data = self._columns()
        found = []
        for block in range(len(offsets) - 1):
            count = min(KEYS_PER_BLOCK, self.document_count - block * KEYS_PER_BLOCK)
            found += _block_keys(data[offsets[block]:offsets[block + 1]], count, self.path, offsets[block])
        return [_text(key, self.path) for key in found]


def _block_keys(data: bytes, count: int, path: str, start: int, wanted: int | None = None) -> list:
    """Every key of a block of `count` keys, or only key `wanted` (as a one-element list)."""
    size = len(data)
    first_length, cursor = _varint(data, 0, size, path, start)
    first = data[cursor:cursor + first_length]
    cursor += first_length
    if cursor >= size:
        raise CorruptionError(path, start, "key block ends inside its first key")
    if wanted == 0:
        return [first]
    layout = data[cursor]
    cursor += 1
    if layout == _SHORT:
        numbers = data[cursor:cursor + 2 * (count - 1)]
        cursor += 2 * (count - 1)
    elif layout == _LONG:
        numbers = []
        for _index in range(2 * (count - 1)):
            number, cursor = _varint(data, cursor, size, path, start)
            numbers.append(number)
    else:
        raise CorruptionError(path, start, f"key block layout {layout} is unknown")
    if len(numbers) != 2 * (count - 1):
        raise CorruptionError(path, start, "key block ends inside its lengths")
    if wanted is not None:
        # The column's checksum guards these bytes; the full structure is checked by keys() (memctl check).
        place = 2 * (wanted - 1)
        suffix = cursor + sum(numbers[1:place:2])
        return [first[:numbers[place]] + data[suffix:suffix + numbers[place + 1]]]
    if numbers and (cursor + sum(numbers[1::2]) != size or max(numbers[0::2]) > first_length):
        raise CorruptionError(path, start, "key block lengths do not match its bytes")
    keys = [first]
    for place in range(0, len(numbers), 2):
        keys.append(first[:numbers[place]] + data[cursor:cursor + numbers[place + 1]])
        cursor += numbers[place + 1]
    return keys


def _varint(data: bytes, cursor: int, size: int, path: str, start: int) -> tuple[int, int]:
    if cursor < size and data[cursor] < 0x80:
        return data[cursor], cursor + 1
    value = shift = 0
    while cursor < size and shift < 64:
        byte = data[cursor]
        cursor += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, cursor
        shift += 7
    raise CorruptionError(path, start + cursor, "key block holds a malformed varint")


def _text(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CorruptionError(path, None, "a document key is not UTF-8") from None


class KeyList:
    """The same interface over a plain list (the in-memory part of a snapshot: nothing to encode)."""

    def __init__(self, keys: list):
        self._keys = keys

    def key(self, local: int) -> str:
        return self._keys[local]

    def keys(self) -> list:
        return list(self._keys)
