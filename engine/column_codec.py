"""Compressed segment columns (MANIFEST.spec section 3): a column's bytes cut into frames of COLUMN_FRAME_BYTES,
each filtered and compressed as one zstd frame, so a read decompresses only the frames holding what it reads.

Filters, chosen per column on its first frame (whichever compresses best, none included):
    delta    integer columns of one dimension: each item minus the one before it in its frame (the first kept),
             wrapping around in the column's dtype; ids, offsets and sorted columns become runs of small numbers
    shuffle  the frame's bytes regrouped by position in their item (every item's byte 0, then every byte 1…):
             the mostly-zero high bytes of small numbers, and the sign and exponent bytes of floats, line up
A column that compresses to more than COLUMN_KEEP_RATIO of its bytes is stored as is.
"""

from __future__ import annotations

import numpy as np
import zstandard

from engine.errors import CorruptionError

COLUMN_FRAME_BYTES = 64 << 10  # decompressed bytes per frame (the last may be shorter): a multiple of every itemsize
COLUMN_KEEP_RATIO = 0.9
COLUMN_MIN_BYTES = 1024  # smaller columns are stored as they are: a frame and its entry would eat the saving
FILTER_DELTA = 1
FILTER_SHUFFLE = 2
CODEC_ZSTD = "zstd"


def _filters(dtype: np.dtype, shape) -> list[int]:
    filters = [0]
    if dtype.itemsize > 1:
        filters.append(FILTER_SHUFFLE)
    if dtype.kind in "iu" and len(shape) == 1:
        filters += [FILTER_DELTA, FILTER_DELTA | FILTER_SHUFFLE] if dtype.itemsize > 1 else [FILTER_DELTA]
    return filters


def apply_filter(frame: np.ndarray, filter_bits: int) -> bytes:
    """The bytes stored (before compression) for one frame of items."""
    if filter_bits & FILTER_DELTA:
        deltas = frame.copy()
        np.subtract(frame[1:], frame[:-1], out=deltas[1:])  # wraps around in the dtype
        frame = deltas
    data = frame.view(np.uint8)
    if filter_bits & FILTER_SHUFFLE:
        data = data.reshape(-1, frame.dtype.itemsize).T
    return np.ascontiguousarray(data).tobytes()


def undo_filter(data: bytes, dtype: np.dtype, filter_bits: int) -> np.ndarray:
    """The items of one frame from its decompressed bytes."""
    raw = np.frombuffer(data, np.uint8)
    if filter_bits & FILTER_SHUFFLE:
        raw = np.ascontiguousarray(raw.reshape(dtype.itemsize, -1).T).reshape(-1)
    items = raw.view(dtype)
    if filter_bits & FILTER_DELTA:
        items = np.cumsum(items, dtype=dtype)
    return items


def compress_column(array: np.ndarray, level: int) -> tuple[list, dict] | None:
    """(frames, codec entry) of a column worth compressing, else None. The entry is the directory's 7th field:
    {"codec": "zstd", "filter": bits, "frame": COLUMN_FRAME_BYTES, "frames": u32 LE stored size of each frame}."""
    flat = np.ascontiguousarray(array.reshape(-1))
    if flat.nbytes < COLUMN_MIN_BYTES:
        return None
    compressor = zstandard.ZstdCompressor(level=level)
    per_frame = COLUMN_FRAME_BYTES // flat.dtype.itemsize
    pieces = [flat[start: start + per_frame] for start in range(0, len(flat), per_frame)]
    filter_bits = min(_filters(flat.dtype, array.shape),
                      key=lambda bits: len(compressor.compress(apply_filter(pieces[0], bits))))
    frames = [compressor.compress(apply_filter(piece, filter_bits)) for piece in pieces]
    if sum(map(len, frames)) > COLUMN_KEEP_RATIO * flat.nbytes:
        return None
    sizes = np.fromiter(map(len, frames), np.uint32, len(frames)).astype("<u4").tobytes()
    return frames, {"codec": CODEC_ZSTD, "filter": filter_bits, "frame": COLUMN_FRAME_BYTES, "frames": sizes}


class CompressedColumn:
    """A compressed column being read: its decompressed bytes, filled frame by frame as reads need them."""

    def __init__(self, codec, dtype: np.dtype, logical_length: int, stored_length: int, path: str, offset: int):
        """codec: the directory entry's 7th field; offset: the column's file offset. Raises CorruptionError
        when the entry does not describe `stored_length` bytes holding `logical_length`."""
        try:
            filter_bits, frame, sizes = codec["filter"], codec["frame"], codec["frames"]
            valid = (codec["codec"] == CODEC_ZSTD and type(filter_bits) is int and 0 <= filter_bits <= 3
                     and type(frame) is int and 0 < frame <= 1 << 30 and frame % dtype.itemsize == 0
                     and type(sizes) is bytes and len(sizes) % 4 == 0)
        except (TypeError, KeyError):
            valid = False
        if not valid:
            raise CorruptionError(path, offset, f"compressed column entry {codec!r} is malformed")
        sizes = np.frombuffer(sizes, "<u4").astype(np.int64)
        self.starts = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        if len(sizes) != -(-logical_length // frame) or self.starts[-1] != stored_length:
            raise CorruptionError(path, offset, "compressed column frames do not cover its bytes")
        self.filter_bits, self.frame, self.dtype = filter_bits, frame, dtype
        self.logical_length, self.path, self.offset = logical_length, path, offset
        self._data = None  # the decompressed bytes, made at the first read
        self.filled = bytearray(len(sizes))
        self.unfilled = len(sizes)

    @property
    def data(self) -> np.ndarray:
        """The column's decompressed bytes: the filled frames' data, zeros elsewhere (pages are taken from the
        system only as frames are filled)."""
        if self._data is None:
            self._data = np.zeros(self.logical_length, np.uint8)
        return self._data

    def frames_of(self, first_byte: int, end_byte: int) -> range:
        """Frames holding the decompressed bytes [first_byte, end_byte)."""
        if first_byte >= end_byte:
            return range(0)
        return range(first_byte // self.frame, (end_byte - 1) // self.frame + 1)

    def fill(self, index: int, stored: memoryview) -> None:
        """Decompress frame `index` from its stored bytes (whose checksums the caller verified)."""
        start = index * self.frame
        expected = min(self.frame, self.logical_length - start)
        where = self.offset + self.starts[index]
        try:
            declared = zstandard.frame_content_size(stored)
            if declared != expected:
                raise CorruptionError(self.path, where, f"column frame {index} declares {declared} bytes, not {expected}")
            data = zstandard.ZstdDecompressor().decompress(stored)
        except zstandard.ZstdError as error:
            raise CorruptionError(self.path, where, f"column frame {index} does not decompress ({error})") from None
        if len(data) != expected:
            raise CorruptionError(self.path, where, f"column frame {index} holds {len(data)} bytes, not {expected}")
        self.data[start: start + expected] = undo_filter(data, self.dtype, self.filter_bits).view(np.uint8)
        self.filled[index] = 1
        self.unfilled -= 1
