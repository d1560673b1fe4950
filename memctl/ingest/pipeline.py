"""One ingest: read, check and parse every source, chunk the turns, then store what is new in one batch.

`prepare` does all the reading and checking without a store, so bad input is refused before a store is opened
(or created) and before the writer lock is taken; `write` then stores the prepared chunks as one store batch
(one WAL record, one commit). A bad file or a crash therefore leaves the store as it was. Chunks are
content-addressed, so ingesting the same input again stores nothing and counts its chunks as duplicates.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from engine.errors import InputError
from engine.format import RAW_BLOB_MAX_BYTES, RAW_TURN_ORDINAL_DIGITS, RAW_TURN_TABLE
from memctl.ingest.chunker import MAX_TOKENS, MIN_TOKENS, Chunk, chunk_all
from memctl.ingest.decode import DEFAULT_SIZE_LIMIT, check_errors_mode, decode
from memctl.ingest.detect import normalize_format, parse_document
from memctl.ingest.model import Source
from memctl.ingest.sources import read_file


@dataclass(slots=True)
class Prepared:
    chunks: list[Chunk]
    summary: dict


def turn_key(raw_id: str, ordinal: int) -> str:
    return f"{raw_id}:{ordinal:0{RAW_TURN_ORDINAL_DIGITS}d}"


def ingest(store, sources, format: str | None = None, errors: str = "strict",
           size_limit: int = DEFAULT_SIZE_LIMIT, blob_limit: int = RAW_BLOB_MAX_BYTES,
           min_tokens: int = MIN_TOKENS, max_tokens: int = MAX_TOKENS, progress=None) -> dict:
    """Ingest `sources` (Source objects or file paths) into `store` (a writable engine Store).

    Returns {chunks_new, chunks_duplicate, bytes_in, bytes_stored, conversations, turns}. `progress`, if given,
    is called as progress(stage, done, total) with stage "parse" (bytes) then "store" (chunks).
    """
    prepared = prepare(sources, format, errors, size_limit, min_tokens, max_tokens, progress)
    return write(store, prepared, blob_limit, progress)


def prepare(sources, format: str | None = None, errors: str = "strict", size_limit: int = DEFAULT_SIZE_LIMIT,
            min_tokens: int = MIN_TOKENS, max_tokens: int = MAX_TOKENS, progress=None) -> Prepared:
    """Read, check, parse and chunk every source; raises InputError on the first bad one."""
    check_errors_mode(errors)
    format = normalize_format(format)
    if not 1 <= min_tokens <= max_tokens:
        raise InputError(f"chunk sizes must satisfy 1 <= min_tokens <= max_tokens (got {min_tokens}, {max_tokens})")
    sources = [source if isinstance(source, Source) else read_file(os.fspath(source), size_limit)
               for source in sources]
    if not sources:
        raise InputError("nothing to ingest")
    conversations = []
    total_bytes = sum(len(source.data) for source in sources)
    done_bytes = 0
    for source in sources:
        text = decode(source.data, source.name, errors, size_limit)
        conversations += parse_document(text, source.name, format, errors, max_tokens)[1]
        done_bytes += len(source.data)
        if progress:
            progress("parse", done_bytes, total_bytes)
    summary = {
        "chunks_new": 0,
        "chunks_duplicate": 0,
        "bytes_in": total_bytes,
        "bytes_stored": 0,
        "conversations": len({conversation.conv_id for conversation in conversations}),
        "turns": sum(len(conversation.turns) for conversation in conversations),
    }
    return Prepared(chunk_all(conversations, min_tokens, max_tokens), summary)


def write(store, prepared: Prepared, blob_limit: int = RAW_BLOB_MAX_BYTES, progress=None) -> dict:
    """Store the prepared chunks that are new, and their turns, in one batch; returns the summary."""
    from engine.raw import RawStore, raw_id_for

    summary = dict(prepared.summary)
    chunks = prepared.chunks
    seen = set()
    with RawStore(store, limit=blob_limit).batch() as writer:
        for index, chunk in enumerate(chunks, start=1):
            raw_id = raw_id_for(hashlib.sha256(chunk.data).hexdigest())
            if raw_id in seen or _store_chunk(writer, raw_id, chunk, summary):
                summary["chunks_duplicate"] += 1
            else:
                summary["chunks_new"] += 1
            seen.add(raw_id)
            if progress:
                progress("store", index, len(chunks))
    return summary


def _store_chunk(writer, raw_id: str, chunk: Chunk, summary: dict) -> bool:
    """Store a chunk not yet seen in this ingest; True when it was already stored. A duplicate adds no
    reference (its turn records exist already) but gets its blob rewritten if that file was lost."""
    is_new = writer.get(raw_id) is None
    result = writer.put(chunk.data, chunk.meta(), refs=len(chunk.spans) if is_new else 0)
    summary["bytes_stored"] += result.stored_bytes
    if not result.new:
        return True
    for ordinal, span in enumerate(chunk.spans):
        writer.batch.put(RAW_TURN_TABLE, turn_key(raw_id, ordinal), _turn_record(raw_id, span))
    return False


def _turn_record(raw_id: str, span) -> dict:
    turn = span.turn
    record = {
        "conv_id": turn.conv_id,
        "speaker": turn.speaker,
        "ts": turn.ts,
        "source_id": turn.source_id,
        "raw_ref": {"raw_id": raw_id, "offset": span.offset, "length": span.length},
    }
    if turn.extra:
        record["extra"] = turn.extra
    return record
