"""The stored raw chunks (`memctl raw`): the immutable, content-addressed evidence every memory cites. List
them, read a chunk or the span a raw_ref names (verified against its sha256), remove orphan blob files.
Reached through `Memory.raw`.
"""

from __future__ import annotations

import re

SHA256_HEX_DIGITS = 64

class RawChunks:
    def __init__(self, memory):
        self._memory = memory

    def _raw(self):
        from engine.raw import RawStore

        return RawStore(self._memory.store, limit=self._memory.config.get("ingest.max_blob_bytes"))

    def read(self, reference: str, offset: int | None = None, length: int | None = None) -> bytes:
        """The chunk's bytes exactly as ingested, or bytes [offset, offset + length) of it (length None: to the
        end); the blob is checked against its length and sha256 first (CorruptionError otherwise).

        reference: a raw_id (raw_<16 hex digits>), the span form recall prints (raw_…@OFFSET+LENGTH, which
        takes no offset or length besides), or the chunk's full sha256 (64 hex digits, raw_ before it or not)."""
        from engine.errors import InputError

        raw_id, span, sha256 = parse_reference(reference)
        if span is not None:
            if offset is not None or length is not None:
                raise InputError(f"{reference} names its span already: leave out --offset and --length")
            offset, length = span
        raw = self._raw()
        if sha256 is not None:
            record = raw.get(raw_id)
            if record is None or raw.describe(raw_id, record)["sha256"] != sha256:
                raise InputError(f"no raw chunk has sha256 {sha256}")
        if offset is None and length is None:
            return raw.read(raw_id)
        return raw.read_span(raw_id, offset or 0, length)

    def list(self) -> list[dict]:
        """Every chunk in raw_id order: {"raw_id", "len_bytes", "stored_bytes", "refcount", "sha256" (hex),
        "created_at" (ISO 8601), "path", "meta": {"conv_id", "source_id", "ts", "lang", …}, …}."""
        raw = self._raw()
        return [raw.describe(raw_id, record) for raw_id, record in raw.scan()]

    def gc(self) -> list[str]:
        """Remove blob files no record names (left by a crash mid-ingest or mid-delete): their paths, relative
        to the store. Needs a writable Memory."""
        return self._raw().gc()


_SPAN = re.compile(r"(?P<id>[^@]+)@(?P<offset>\d+)\+(?P<length>\d+)")
_HEX = re.compile(r"[0-9a-f]+")


def parse_reference(reference: str) -> tuple[str, tuple | None, str | None]:
    """(raw_id, (offset, length) or None, full sha256 in hex or None) of a `memctl raw cat` argument."""
    from engine.errors import InputError
    from engine.format import RAW_ID_HEX_DIGITS, RAW_ID_PREFIX

    text = reference.strip()
    span = None
    spanned = _SPAN.fullmatch(text)
    if spanned:
        text, span = spanned.group("id"), (int(spanned.group("offset")), int(spanned.group("length")))
    digits = text.lower().removeprefix(RAW_ID_PREFIX)
    if _HEX.fullmatch(digits) and len(digits) in (RAW_ID_HEX_DIGITS, SHA256_HEX_DIGITS):
        full = digits if len(digits) == SHA256_HEX_DIGITS else None
        return RAW_ID_PREFIX + digits[:RAW_ID_HEX_DIGITS], span, full
    raise InputError(f"{reference!r} is not a raw chunk reference: give {RAW_ID_PREFIX}<{RAW_ID_HEX_DIGITS} hex "
                     f"digits>, {RAW_ID_PREFIX}…@OFFSET+LENGTH as recall prints it, or the chunk's sha256 "
                     f"({SHA256_HEX_DIGITS} hex digits)")
