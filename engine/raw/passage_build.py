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
from engine.raw.passage_text import FIELD, PASSAGE_TOKENS, PassageAnalyzer, windows
from engine.raw.spans import span_key
from engine.raw.turn_columns import turn_spans
from engine.raw.turn_time import ts_order

BLOCK_TEXT_BYTES = 4 << 20


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


def build_passages(store, chunks, first_docno: int, analyzer: PassageAnalyzer | None = None) -> Built:
    """The passages of `chunks` ((raw_id, raw.turns record) pairs, in the order their docnos are given from
    `first_docno`). A chunk whose blob cannot be read and verified has no passages (`check` reports the blob)."""
    from engine.raw.store import RawStore

    raw = RawStore(store)

    def readable():
        for raw_id, record in chunks:
            chunk_record = store.get(RAW_CHUNK_TABLE, raw_id)
            data = raw.read_if_sound(raw_id, chunk_record) if chunk_record is not None else None
            if data is not None:
                yield (raw_id, data, *turn_spans(raw_id, record))

    return build_from_bytes(readable(), first_docno, analyzer)


def build_from_bytes(chunks, first_docno: int, analyzer: PassageAnalyzer | None = None) -> Built:
    """The passages of `chunks` given as (raw_id, bytes, turn offsets, turn lengths, turn times as stored)."""
    from engine.text.build import Sources

    analyzer = analyzer or PassageAnalyzer()
    built = Built(Sources([], [], [], [], [], [], []))
    block: list = []
    block_bytes = 0
    for chunk in chunks:
        block.append(chunk)
        block_bytes += len(chunk[1])
        if block_bytes >= BLOCK_TEXT_BYTES:
            first_docno = _add_block(built, block, first_docno, analyzer)
            block, block_bytes = [], 0
    if block:
        _add_block(built, block, first_docno, analyzer)
    return built


def _add_block(built: Built, block: list, first_docno: int, analyzer: PassageAnalyzer) -> int:
    """Add the passages of a block of chunks ((raw_id, bytes, offsets, lengths, times) each) to `built`; returns
    the next free docno."""
    from engine.text.pieces import TokenPiece

    turns = _turn_passages(block)
    turn_counts, turn_codes = analyzer.analyze(turns.texts)
    long = turn_counts > PASSAGE_TOKENS
    cut = turns.windows(np.flatnonzero(long).tolist())
    window_counts, window_codes = analyzer.analyze(cut.texts)
    # The documents: the turns that are not long, then the windows of those that are (their tokens in that
    # order), each numbered by its place in chunk order (its turn, then its window); one without tokens goes.
    short = np.flatnonzero(~long)
    counts = np.concatenate((turn_counts[short], window_counts))
    codes = np.concatenate((turn_codes[np.repeat(~long, turn_counts)], window_codes))
    owners = np.concatenate((short, np.asarray(cut.owners, dtype=np.int64)))
    ranks = np.concatenate((np.zeros(short.size, np.int64), np.arange(len(cut.owners), dtype=np.int64)))
    kept = np.flatnonzero(counts)
    order = kept[np.lexsort((ranks[kept], owners[kept]))]  # the kept documents in chunk order
    place = np.empty(counts.size, dtype=np.int64)
    place[order] = np.arange(order.size)
    counts = counts[kept]
    starts = np.cumsum(counts) - counts
    positions = (np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)).astype(np.int32)
    sources = built.sources
    number = len(sources.pieces)
    sources.pieces.append(TokenPiece(analyzer.vocabulary, codes, positions, counts, place[kept],
                                     np.zeros(kept.size, dtype=np.int64), [FIELD], kept.size))
    every = turns.taken(short.tolist()).joined(cut)
    chosen = order.tolist()
    sources.docnos += range(first_docno, first_docno + kept.size)
    sources.keys += [every.keys[index] for index in chosen]
    sources.timestamps += [every.times[index] for index in chosen]
    sources.types += [None] * kept.size
    sources.tags += [()] * kept.size
    sources.piece_of += [number] * kept.size
    sources.piece_documents += range(kept.size)
    built.chunk_ids.append(np.array(every.chunks, dtype=np.uint64)[order])
    return first_docno + kept.size


@dataclass
class _Passages:
    """Passages: key (span), text, time (seconds or None), chunk number and the turn it comes from, each."""

    keys: list = field(default_factory=list)
    texts: list = field(default_factory=list)
    times: list = field(default_factory=list)
    chunks: list = field(default_factory=list)
    owners: list = field(default_factory=list)

    def taken(self, numbers: list) -> "_Passages":
        columns = (self.keys, self.texts, self.times, self.chunks, self.owners)
        return _Passages(*([column[number] for number in numbers] for column in columns))

    def joined(self, other: "_Passages") -> "_Passages":
        return _Passages(self.keys + other.keys, self.texts + other.texts, self.times + other.times,
                         self.chunks + other.chunks, self.owners + other.owners)

    def windows(self, numbers: list) -> "_Passages":
        """The sentence windows of the passages `numbers` (each owned by the number of the one it cuts)."""
        cut = _Passages()
        for number in numbers:
            key, text = self.keys[number], self.texts[number]
            raw_id, span = key.split("@", 1)
            offset = int(span.split("+", 1)[0])
            cursor = 0
            for start, end in windows(text):
                offset += len(text[cursor:start].encode("utf-8"))
                piece = text[start:end]
                length = len(piece.encode("utf-8"))
                cut.keys.append(span_key(raw_id, offset, length))
                cut.texts.append(piece)
                cut.times.append(self.times[number])
                cut.chunks.append(self.chunks[number])
                cut.owners.append(number)
                offset += length
                cursor = end
        return cut


def _turn_passages(block: list) -> _Passages:
    passages = _Passages()
    for raw_id, data, offsets, lengths, times in block:
        passages.keys += [span_key(raw_id, offset, length) for offset, length in zip(offsets, lengths)]
        passages.texts += [data[offset: offset + length].decode("utf-8", "replace")
                           for offset, length in zip(offsets, lengths)]
        passages.times += map(ts_order, times)
        passages.chunks += [chunk_number(raw_id)] * len(offsets)
    passages.owners = list(range(len(passages.keys)))
    return passages
