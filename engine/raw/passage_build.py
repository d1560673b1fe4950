"""The documents of the raw passage index built from chunks: their bytes, their turn spans, their tokens.

Chunks are taken a block at a time (about BLOCK_TEXT_BYTES of text): each block's passages are analysed into one
TokenPiece (engine.text.pieces) and then only arrays of it are kept, so memory grows with the tokens, not with
the text. A block's passages get consecutive document numbers in chunk order: the passages of a chunk are a
run of docnos, which the segment's chunk columns name (engine/raw/passage_kind.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.format import RAW_CHUNK_TABLE, RAW_ID_PREFIX
from engine.raw.passage_text import FIELD, PASSAGE_TOKENS, PassageAnalyzer, weights, windows
from engine.raw.spans import span_key
from engine.raw.turn_columns import turn_spans
from engine.raw.turn_time import ts_order

BLOCK_TEXT_BYTES = 1 << 20  # text analysed at once: its code point arrays are the build's largest (4 MiB: +60 MB at peak)


@dataclass
class Built:
    """Sources of a segment build (engine.text.build.Sources) and the chunk id of each document (uint64)."""

    sources: object
    chunk_ids: list = field(default_factory=list)  # per block, uint64 per document

    @property
    def document_chunks(self) -> np.ndarray:
        return np.concatenate(self.chunk_ids) if self.chunk_ids else np.zeros(0, np.uint64)


def chunk_number(raw_id: str) -> int:
    """A raw id as the number its hex digits spell (the chunk columns hold these)."""
    return int(raw_id[len(RAW_ID_PREFIX):], 16)


def build_passages(store, chunks, first_docno: int, analyzer: PassageAnalyzer | None = None,
                   group_bytes: int | None = None):
    """Yield Built groups of the passages of `chunks` ((raw_id, raw.turns record) pairs, their docnos given in
    that order from `first_docno`), one per `group_bytes` of chunk bytes (all in one group when None). A chunk
    whose blob cannot be read and verified has no passages (`check` reports the blob)."""
    from engine.raw.store import RawStore

    raw = RawStore(store)

    def readable():
        for raw_id, record in chunks:
            chunk_record = store.get(RAW_CHUNK_TABLE, raw_id)
            data = raw.read_if_sound(raw_id, chunk_record) if chunk_record is not None else None
            if data is not None:
                yield (raw_id, data, *turn_spans(raw_id, record))

    return build_from_bytes(readable(), first_docno, analyzer, group_bytes)


def build_from_bytes(chunks, first_docno: int, analyzer: PassageAnalyzer | None = None,
                     group_bytes: int | None = None):
    """build_passages of chunks given as (raw_id, bytes, turn offsets, turn lengths, turn times as stored)."""
    from engine.text.build import Sources

    analyzer = analyzer or PassageAnalyzer()
    built = Built(Sources([], [], [], [], [], [], []))
    block: list = []
    block_bytes = group = 0
    for chunk in chunks:
        block.append(chunk)
        block_bytes += len(chunk[1])
        if block_bytes >= BLOCK_TEXT_BYTES:
            first_docno = _add_block(built, block, first_docno, analyzer)
            group += block_bytes
            block, block_bytes = [], 0
            if group_bytes is not None and group >= group_bytes:
                yield built
                built, group = Built(Sources([], [], [], [], [], [], [])), 0
    if block:
        _add_block(built, block, first_docno, analyzer)
    if built.sources.docnos:
        yield built


def _add_block(built: Built, block: list, first_docno: int, analyzer: PassageAnalyzer) -> int:
    """Add the passages of a block of chunks ((raw_id, bytes, offsets, lengths, times) each) to `built`; returns
    the next free docno."""
    from engine.text.pieces import TokenPiece

    passages = _passages(block)
    counts, codes = analyzer.analyze(passages.texts)
    kept = np.flatnonzero(counts)
    counts = counts[kept]
    starts = np.cumsum(counts) - counts
    positions = (np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)).astype(np.int32)
    sources = built.sources
    number = len(sources.pieces)
    sources.pieces.append(TokenPiece(analyzer.vocabulary, codes, positions, counts, np.arange(kept.size),
                                     np.zeros(kept.size, dtype=np.int64), [FIELD], kept.size))
    chosen = kept.tolist()
    sources.docnos += range(first_docno, first_docno + kept.size)
    sources.keys += [passages.keys[index] for index in chosen]
    sources.timestamps += [passages.times[index] for index in chosen]
    sources.types += [None] * kept.size
    sources.tags += [()] * kept.size
    sources.piece_of += [number] * kept.size
    sources.piece_documents += range(kept.size)
    built.chunk_ids.append(np.array(passages.chunks, dtype=np.uint64)[kept])
    return first_docno + kept.size


@dataclass
class _Passages:
    """Passages in chunk order: key (span), text, time (seconds or None) and chunk number each."""

    keys: list = field(default_factory=list)
    texts: list = field(default_factory=list)
    times: list = field(default_factory=list)
    chunks: list = field(default_factory=list)


def _passages(block: list) -> _Passages:
    """The passages of a block's turns: a turn, or the windows of a turn that weighs more than PASSAGE_TOKENS."""
    passages = _Passages()
    for raw_id, data, offsets, lengths, times in block:
        texts = [data[offset: offset + length].decode("utf-8", "replace") for offset, length in zip(offsets, lengths)]
        seconds = list(map(ts_order, times))
        heavy = np.flatnonzero(weights(texts) > PASSAGE_TOKENS).tolist()
        chunk = chunk_number(raw_id)
        if not heavy:
            passages.keys += [span_key(raw_id, offset, length) for offset, length in zip(offsets, lengths)]
            passages.texts += texts
            passages.times += seconds
            passages.chunks += [chunk] * len(texts)
            continue
        heavy = set(heavy)
        for index, (text, offset, length, moment) in enumerate(zip(texts, offsets, lengths, seconds)):
            pieces = [(offset, length, text)] if index not in heavy else _windows_of(text, offset)
            for piece_offset, piece_length, piece in pieces:
                passages.keys.append(span_key(raw_id, piece_offset, piece_length))
                passages.texts.append(piece)
                passages.times.append(moment)
                passages.chunks.append(chunk)
    return passages


def _windows_of(text: str, offset: int) -> list:
    """(byte offset, byte length, text) of the windows of a turn starting at byte `offset` of its chunk."""
    found = []
    for start, end in windows(text):
        piece = text[start:end]
        length = len(piece.encode("utf-8"))
        found.append((offset, length, piece))
        offset += length
    return found
