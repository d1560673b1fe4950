"""The stored raw chunks (`memctl raw`): the immutable, content-addressed evidence every memory cites. List
them, read a chunk or the span a raw_ref names (verified against its sha256), remove orphan blob files.
Reached through `Memory.raw`.
"""

from __future__ import annotations


class RawChunks:
    def __init__(self, memory):
        self._memory = memory

    def _raw(self):
        from engine.raw import RawStore

        return RawStore(self._memory.store, limit=self._memory.config.get("ingest.max_blob_bytes"))

    def read(self, raw_id: str, offset: int | None = None, length: int | None = None) -> bytes:
        """The chunk's bytes exactly as ingested, or bytes [offset, offset + length) of it (length None: to the
        end); the blob is checked against its length and sha256 first (CorruptionError otherwise)."""
        if offset is None and length is None:
            return self._raw().read(raw_id)
        return self._raw().read_span(raw_id, offset or 0, length)

    def list(self) -> list[dict]:
        """Every chunk in raw_id order: {"raw_id", "len_bytes", "stored_bytes", "refcount", "sha256" (hex),
        "created_at" (ISO 8601), "path", "meta": {"conv_id", "source_id", "ts", "lang", …}, …}."""
        raw = self._raw()
        return [raw.describe(raw_id, record) for raw_id, record in raw.scan()]

    def gc(self) -> list[str]:
        """Remove blob files no record names (left by a crash mid-ingest or mid-delete): their paths, relative
        to the store. Needs a writable Memory."""
        return self._raw().gc()
