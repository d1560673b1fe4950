"""The raw passage index (memctl.indexes.PASSAGES): the words of every stored turn, searchable whatever R2G has
converted, for recall's raw fallback (memctl/recall/raw_fallback.py, seed 001 §4.y W5).

A passage is a turn or, for a turn above `ingest.passage_tokens` tokens (chunker.estimate_tokens), a piece of
it cut at sentence ends, then between words (memctl.ingest.cutting: the rule plain text paragraphs are cut into
turns by); a piece of spaces alone is no passage. Its document (MANIFEST.spec §4a):

    key        the passage's span `raw_<id>@<offset>+<length>` (engine.raw.spans), as recall cites it
    fields     the "text" field's tokens and positions, no text (its chunk holds it)
    timestamp  the turn's time in epoch seconds (memctl.node_documents.epoch_seconds); none when untimed

Tokens come from the default tokenizer with CJK character bigrams, whatever the `index` settings say: neither
an ingest nor a query (cut into bigrams too) then loads jieba's dictionary, and the index does not depend on
settings a user may change later.

Written in the batch that stores a chunk (a chunk stored before keeps the passages it has); deleted in the
batch that releases the chunk's last reference (RawStore's span_indexes, `raw_store` here); built for every
chunk of a store `memctl migrate` upgrades from a format without it (engine.migration.raw_passages).
"""

from __future__ import annotations

from engine.format import RAW_BLOB_MAX_BYTES
from memctl.indexes import PASSAGES

PASSAGE_TOKENS = 96  # the default of ingest.passage_tokens


def tokenizer():
    from engine.text.tokenizer import Tokenizer

    return Tokenizer(cjk="bigram")


def open_index(store):
    """The store's passage index, keeping tokens only."""
    from engine.text.bm25 import BM25Parameters
    from engine.text.index import TextIndex

    return TextIndex(store, tokenizer(), BM25Parameters(), store_text=False, owner=PASSAGES)


def raw_store(store, limit: int = RAW_BLOB_MAX_BYTES):
    """A RawStore whose releases delete the released chunks' passages."""
    from engine.raw import RawStore

    return RawStore(store, limit, span_indexes=(PASSAGES,))


def index_chunks(store, batch, chunks, passage_tokens: int = PASSAGE_TOKENS) -> int:
    """Add the passages of `chunks` to the index in `batch`: (raw_id, turn texts, their byte offsets in the
    chunk, their times as ISO 8601 or None) each. Returns how many passages."""
    documents = passage_documents(chunks, passage_tokens)
    if documents:
        open_index(store).add_many(documents, batch=batch)
    return len(documents)


def passage_documents(chunks, passage_tokens: int) -> list[dict]:
    """The passage documents of the turns of `chunks` (as index_chunks takes them)."""
    from engine.raw import span_key
    from memctl.ingest.chunker import estimate_tokens_all
    from memctl.node_documents import epoch_seconds

    texts = [text for _, chunk_texts, _, _ in chunks for text in chunk_texts]
    long = iter((estimate_tokens_all(texts) > passage_tokens).tolist() if texts else [])
    documents = []
    for raw_id, chunk_texts, offsets, times in chunks:
        for text, offset, ts in zip(chunk_texts, offsets, times):
            seconds = epoch_seconds(ts)
            for piece_offset, piece_length, piece in _pieces(text, offset, passage_tokens) if next(long) else \
                    ((offset, len(text.encode()), text),):
                if not piece.strip():
                    continue
                document = {"key": span_key(raw_id, piece_offset, piece_length), "fields": piece}
                if seconds is not None:
                    document["timestamp"] = seconds
                documents.append(document)
    return documents


def _pieces(text: str, offset: int, passage_tokens: int):
    """(byte offset, byte length, text) of the passages of a long turn that starts at byte `offset`."""
    from memctl.ingest.cutting import cut

    for start, end in cut(text, 0, len(text), passage_tokens):
        piece = text[start:end]
        length = len(piece.encode())
        yield offset, length, piece
        offset += length


def migration_hooks(passage_tokens: int = PASSAGE_TOKENS) -> dict:
    """What `memctl migrate` hands engine.migration.raw_passages: indexing every stored chunk, in a batch."""
    return {"raw_passages": lambda store, batch: index_stored(store, batch, passage_tokens)}


def index_stored(store, batch, passage_tokens: int = PASSAGE_TOKENS) -> dict:
    """Add the passages of every chunk of the store stored with turns (as ingest stores every chunk) to the
    index in `batch`: {"chunks", "passages"}."""
    from engine.raw import RawStore

    raw = RawStore(store)
    chunks = []
    for chunk in raw.turn_chunks():
        data = raw.read(chunk.raw_id)
        turns = raw.chunk_turns(chunk)
        references = [turn["raw_ref"] for turn in turns]
        texts = [data[reference["offset"]: reference["offset"] + reference["length"]].decode("utf-8")
                 for reference in references]
        chunks.append((chunk.raw_id, texts, [reference["offset"] for reference in references],
                       [turn["ts"] for turn in turns]))
    return {"chunks": len(chunks), "passages": index_chunks(store, batch, chunks, passage_tokens)}
