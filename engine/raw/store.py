"""RawStore: reading the stored raw chunks and their turns, and opening the batches that write them.

A chunk's bytes are addressed by their sha256 (engine.raw.paths); its metadata is the record
`raw.chunk/<raw_id>`, and the turns it holds are one record, `raw.turns/<raw_id>` (engine.raw.turn_columns).
References are counted on the chunk record: `put_turns` adds one per turn, `acquire`/`release` move counts,
and releasing the last reference deletes both records (so the next flush retires the chunk's raw passages:
engine/raw/passage_kind.py) and, after that commit, the blob file (RawWriter).

Reading checks before trusting: the frame's declared content size against the limit and the record (before
any allocation), a window-size cap, a streamed byte counter for frames without a declared size
(engine.raw.decompress), then the length and sha256 against the record. Any mismatch is a CorruptionError
naming the blob file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

from engine import damage
from engine.errors import CorruptionError, InputError
from engine.format import RAW_BLOB_MAX_BYTES, RAW_CHUNK_TABLE, RAW_KIND, RAW_MIME_TEXT, RAW_SEQUENCE_COUNTER, \
    RAW_TURNS_TABLE
from engine.raw.chunks import Chunk, TurnChunk, chunk_of, chunk_order, turn_chunk_of, turns_meta
from engine.raw.decompress import COMPRESSED_SLACK, decompress_bounded
from engine.raw.paths import record_blob_path
from engine.raw.turn_columns import decode_turns


class RawStore:
    def __init__(self, store, limit: int = RAW_BLOB_MAX_BYTES, clock=None):
        self.store = store
        self.limit = limit
        self._clock = clock or (lambda: datetime.now(timezone.utc))

    # --- reading -------------------------------------------------------------------------------------------

    def get(self, raw_id: str) -> dict | None:
        return self.store.get(RAW_CHUNK_TABLE, raw_id)

    def scan(self, prefix: str = ""):
        """(raw_id, record) in raw_id order."""
        return self.store.scan(RAW_CHUNK_TABLE, prefix)

    def describe(self, raw_id: str, record: dict) -> dict:
        """A chunk record for people and JSON: its mime, sha256 in hex, created_at in ISO 8601, the blob's path,
        and for a chunk stored with turns a meta completed from them (conv_id, role: its only speaker, ts: the
        first turn time, source_id: the first and last turns' ids)."""
        created = datetime.fromtimestamp(record["created_at"], timezone.utc)
        described = {"raw_id": raw_id, "mime": RAW_MIME_TEXT, **record, "sha256": record["sha256"].hex(),
                     "created_at": created.isoformat(timespec="seconds"), "path": record_blob_path(record)}
        turns_record = self.store.get(RAW_TURNS_TABLE, raw_id)
        if turns_record is not None:
            described["meta"] = {**turns_meta(decode_turns(raw_id, turns_record)), **record.get("meta", {})}
        return described

    def read(self, raw_id: str) -> bytes:
        """The chunk's decompressed bytes, verified against its record's length and sha256."""
        return self.read_verified(raw_id, self._record(raw_id))

    def read_verified(self, raw_id: str, record: dict) -> bytes:
        """read() of a chunk whose record the caller holds already; a blob that fails is recorded as damage
        (engine/damage.py)."""
        try:
            return self._read_blob(raw_id, record)
        except CorruptionError as error:
            raise damage.found(error, self.store.path) from None

    def read_if_sound(self, raw_id: str, record: dict) -> bytes | None:
        """read() of a chunk whose record the caller holds, or None when its blob is missing or fails a check:
        for indexes built from the chunks, which leave such a chunk out (`check` reports it, as damage)."""
        try:
            return self._read_blob(raw_id, record)
        except CorruptionError:
            return None

    def _read_blob(self, raw_id: str, record: dict) -> bytes:
        path = os.path.join(self.store.path, record_blob_path(record))
        try:
            with open(path, "rb") as handle:
                blob = handle.read(self.limit + COMPRESSED_SLACK + 1)
        except FileNotFoundError:
            raise CorruptionError(path, None, f"blob of {raw_id} is missing") from None
        if len(blob) > self.limit + COMPRESSED_SLACK:
            raise CorruptionError(path, None, "blob file is larger than any blob within the limit")
        data = decompress_bounded(blob, path, self.limit, record["len_bytes"])
        if len(data) != record["len_bytes"]:
            raise CorruptionError(path, None, f"blob holds {len(data):,} bytes, the record says "
                                              f"{record['len_bytes']:,}")
        if hashlib.sha256(data).digest() != record["sha256"]:
            raise CorruptionError(path, None, f"sha256 mismatch: the blob's content is not {raw_id}'s")
        return data

    def read_span(self, raw_id: str, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes [offset, offset + length) of the decompressed chunk (a raw_ref's text); length None: to the end."""
        record = self._record(raw_id)
        size = record["len_bytes"]
        if length is None:
            if not 0 <= offset <= size:
                raise InputError(f"offset {offset} is outside {raw_id} ({size:,} bytes)")
            length = size - offset
        elif offset < 0 or length < 0 or offset + length > size:
            raise InputError(f"span offset {offset}, length {length} is outside {raw_id} ({size:,} bytes)")
        return self.read_verified(raw_id, record)[offset: offset + length]

    def passages(self):
        """The raw passage index at the store's current state: a PassageSnapshot (engine/raw/passage_kind.py)."""
        return self.store.kind(RAW_KIND)

    def chunk(self, raw_id: str) -> Chunk | None:
        """The stored chunk `raw_id`, or None."""
        return chunk_of(raw_id, self.get(raw_id))

    def chunks(self) -> Iterator[Chunk]:
        """Every stored chunk, in raw_id order."""
        for raw_id, record in self.scan():
            yield chunk_of(raw_id, record)

    def turn_chunks(self) -> list[TurnChunk]:
        """Every chunk stored with turns, in conversation/time order (see iter_turns)."""
        records = sorted(self.store.scan(RAW_TURNS_TABLE), key=lambda item: chunk_order(item[1]))
        return [turn_chunk_of(raw_id, record) for raw_id, record in records]

    def turn_chunks_of(self, raw_ids: list) -> list[TurnChunk | None]:
        """The chunks `raw_ids` as turn_chunks() lists them (None for an id of no chunk stored with turns)."""
        records = self.store.get_many(RAW_TURNS_TABLE, list(raw_ids))
        return [None if record is None else turn_chunk_of(raw_id, record) for raw_id, record in zip(raw_ids, records)]

    def turn_chunks_stored(self) -> int:
        """How many chunks with turns were ever stored: the `seq` the next one gets."""
        return self.store.counter(RAW_SEQUENCE_COUNTER)

    def chunk_turns(self, chunk: TurnChunk) -> list[dict]:
        """The turns of a chunk turn_chunks() listed, as turns() gives them."""
        return decode_turns(chunk.raw_id, chunk._record)

    def turns(self, raw_id: str) -> list[dict]:
        """The turns of one chunk, in chunk order (see decode_turns); [] for a chunk stored without turns."""
        self._record(raw_id)
        record = self.store.get(RAW_TURNS_TABLE, raw_id)
        return decode_turns(raw_id, record) if record is not None else []

    def iter_turns(self, text: bool = False):
        """Every turn of the store, in conversation/time order: conversations by conv_id; inside one, chunks
        by their first turn's time (a naive time compared as if UTC; untimed chunks after timed ones), ties in
        the order they were stored; turns in their order inside the chunk. With `text`, each turn dict also
        has "text", its span decoded (each blob read and verified once)."""
        for chunk in self.turn_chunks():
            turns = self.chunk_turns(chunk)
            if text:
                data = self.read(chunk.raw_id)
                for turn in turns:
                    ref = turn["raw_ref"]
                    turn["text"] = data[ref["offset"]: ref["offset"] + ref["length"]].decode("utf-8")
            yield from turns

    def _record(self, raw_id: str) -> dict:
        record = self.get(raw_id)
        if record is None:
            raise InputError(f"no raw chunk {raw_id}")
        return record

    # --- writing -------------------------------------------------------------------------------------------

    @contextmanager
    def batch(self, owned: bool = False):
        """A store batch whose new blobs are made durable before it commits; released blobs are deleted
        after it commits. Yields a RawWriter; `writer.batch` takes the batch's other records. owned: as
        Store.batch's (the memtable keeps the values put, not copies decoded from the WAL): every value put,
        the `meta` given to put / put_turns included, holds only msgpack's types and is not changed after."""
        from engine.raw.writer import RawWriter  # a reader (a cold `memctl recall`) never loads the writer

        writer = RawWriter(self)
        committing = False
        try:
            with self.store.batch(owned) as batch:
                writer.batch = batch
                yield writer
                writer.publish()
                committing = True
        except BaseException:
            # After a failed commit the WAL record may still be on disk: its blobs must stay (gc decides).
            writer.discard(keep_blobs=committing)
            raise
        writer.remove_released()

    # --- checking and collecting ---------------------------------------------------------------------------

    def verify(self) -> tuple[list[CorruptionError], list[str]]:
        """engine.raw.upkeep.verify of this store."""
        from engine.raw.upkeep import verify

        return verify(self)

    def gc(self) -> list[str]:
        """engine.raw.upkeep.collect_garbage of this store."""
        from engine.raw.upkeep import collect_garbage

        return collect_garbage(self)
