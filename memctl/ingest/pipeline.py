"""One ingest: read, check and parse every source, chunk the turns, then store what is new in one batch.

`prepare` does all the reading and checking without a store, so bad input is refused before a store is opened
(or created) and before the writer lock is taken; `write` then stores the prepared chunks as one store batch
(one WAL record, one commit). A bad file or a crash therefore leaves the store as it was. Chunks are
content-addressed, so ingesting the same input again stores nothing and counts its chunks as duplicates.

Python's cyclic garbage collector is paused for a whole ingest (engine.collector.paused): the turns, chunks and
records it builds are acyclic and live until it returns, and every full collection would rescan all of them
(a fifth of the CPU time of a 4 MB transcript ingest). They are also released before the pause ends: the
collector counts every object allocated while it was paused and not yet freed, so re-enabling it with them
alive starts a collection that scans them all (an eighth of a second after a 32 MB ingest).
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from dataclasses import dataclass

from engine.errors import InputError
from engine.format import RAW_BLOB_MAX_BYTES
from engine.heap import release_free_memory
from memctl.ingest.chunker import MAX_TOKENS, MIN_TOKENS, Chunk, chunk_all
from memctl.ingest.decode import DEFAULT_SIZE_LIMIT, check_errors_mode, checked, normalized_bytes
from memctl.ingest.detect import normalize_format, parse_bytes
from memctl.ingest.model import Source
from memctl.ingest.sources import read_file

RELEASE_BYTES = 4 << 20  # an ingest of this much input gives its phases' free heap back (engine.heap)


@dataclass(slots=True)
class Prepared:
    chunks: list[Chunk]
    summary: dict


def ingest(store, sources, format: str | None = None, errors: str = "strict",
           size_limit: int = DEFAULT_SIZE_LIMIT, blob_limit: int = RAW_BLOB_MAX_BYTES,
           min_tokens: int = MIN_TOKENS, max_tokens: int = MAX_TOKENS, progress=None, consume: bool = False) -> dict:
    """Ingest `sources` (Source objects or file paths) into `store`: a writable engine Store, or a function
    returning a context manager that yields one, called only once every input has been parsed (bad input then
    neither creates a store nor takes its writer lock). consume=True: `sources` is a list of the caller's own
    that the call empties as it parses, so that each input's bytes are freed once parsed.

    Returns {chunks_new, chunks_duplicate, bytes_in, bytes_stored (compressed blob and turn row bytes written),
    conversations, turns}. `progress`, if given, is called as progress(stage, done, total) with stage "parse"
    (bytes) then "store" (chunks).
    """
    from engine.collector import paused

    with paused():
        prepared = prepare(sources, format, errors, size_limit, min_tokens, max_tokens, progress, consume)
        large = prepared.summary["bytes_in"] >= RELEASE_BYTES
        if large:
            release_free_memory()  # what parsing built and dropped
        with store() if callable(store) else nullcontext(store) as opened:
            summary = write(opened, prepared, blob_limit, progress)
            # The chunks' bytes are in their blobs now: freed before closing the store flushes (and indexes)
            # them, and while the collector is still paused (see above).
            del prepared
            if large:
                release_free_memory()
    return summary


def prepare(sources, format: str | None = None, errors: str = "strict", size_limit: int = DEFAULT_SIZE_LIMIT,
            min_tokens: int = MIN_TOKENS, max_tokens: int = MAX_TOKENS, progress=None,
            consume: bool = False) -> Prepared:
    """Read, check, parse and chunk every source; raises InputError on the first bad one. consume: as ingest's."""
    check_errors_mode(errors)
    format = normalize_format(format)
    if not 1 <= min_tokens <= max_tokens:
        raise InputError(f"chunk sizes must satisfy 1 <= min_tokens <= max_tokens (got {min_tokens}, {max_tokens})")
    given = sources
    sources = [source if isinstance(source, Source) else read_file(os.fspath(source), size_limit)
               for source in sources]
    if not sources:
        raise InputError("nothing to ingest")
    if consume:
        given.clear()
    conversations = []
    total_bytes = sum(len(source.data) for source in sources)
    done_bytes = 0
    sources.reverse()
    while sources:
        done_bytes += _parse_next(sources, conversations, format, errors, size_limit, max_tokens)
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


def _parse_next(sources: list, conversations: list, format: str | None, errors: str, size_limit: int,
                max_tokens: int) -> int:
    """Parse the last of `sources` (taken off the list) into `conversations`; returns its size in bytes. Unless
    the caller holds the source, its bytes are freed once parsed, before the chunks are rendered; plain text is
    parsed from them a paragraph or window at a time (a 50 MB line decoded whole is a str of up to 200 MB)."""
    source = sources.pop()
    name, data = source.name, source.data
    del source
    size = len(data)
    data = normalized_bytes(checked(data, name, errors, size_limit))
    conversations += parse_bytes(data, name, format, errors, max_tokens)[1]
    return size


def write(store, prepared: Prepared, blob_limit: int = RAW_BLOB_MAX_BYTES, progress=None,
          stored: list | None = None) -> dict:
    """Store the prepared chunks that are new, with their turns, in one batch; returns the summary. `stored`
    receives the engine.raw.PutResult of every chunk (new or already stored)."""
    from engine.raw import RawStore, TurnColumns

    summary = dict(prepared.summary)
    chunks = prepared.chunks
    with RawStore(store, limit=blob_limit).batch(owned=True) as writer:  # our records: fresh dicts of plain values
        writer.write_ahead([chunk.data for chunk in chunks])  # zstd and the blobs' sync beside the records
        turns = TurnColumns.many(chunk.columns() for chunk in chunks)
        for index, (chunk, columns) in enumerate(zip(chunks, turns), start=1):
            result = writer.put_turns(chunk.data, chunk.meta(), chunk.conv_id, columns)
            summary["chunks_new" if result.new else "chunks_duplicate"] += 1
            if stored is not None:
                stored.append(result)
            summary["bytes_stored"] += result.stored_bytes
            if progress:
                progress("store", index, len(chunks))
    summary["bytes_stored"] += writer.deferred_stored_bytes
    return summary
