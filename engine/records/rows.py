"""What every records segment layout shares: rows under composite keys (table NUL key, UTF-8) in key order, their
BLAKE2b-64 hashes (layout 1 indexes them, layout 2 filters by them), the tombstone a deleted record reads as until
compaction drops it, and memoryview reads of index columns."""

from __future__ import annotations

import functools
import hashlib
import heapq
import operator

import numpy as np


class Tombstone:
    """The value of a deleted record until compaction drops it."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "TOMBSTONE"


TOMBSTONE = Tombstone()


def composite_key(table: str, key: str) -> bytes:
    return f"{table}\0{key}".encode("utf-8")


def composite_keys(table: str, keys: list) -> list:
    """composite_key(table, key) of every key: one encode of them all when they are ASCII (then a key's
    bytes are its characters), else one per key."""
    prefix = f"{table}\0"
    joined = prefix.join(keys)
    if not joined.isascii():
        return [composite_key(table, key) for key in keys]
    data = (prefix + joined).encode("ascii")
    ends = np.cumsum(np.fromiter(map(len, keys), dtype=np.int64, count=len(keys)) + len(prefix)).tolist()
    return list(map(data.__getitem__, map(slice, [0] + ends[:-1], ends)))


def newest_versions(sources: list):
    """(key, value) of each key's newest version across `sources`, iterators of (key, rank, value) in key order
    where a lower rank is newer: what a scan serves and a compaction keeps (tombstones included)."""
    previous = _MISSING
    for key, _rank, value in heapq.merge(*sources):
        if key != previous:  # else an older version of a key already taken
            previous = key
            yield key, value


_MISSING = object()


def table_of(composite: bytes) -> str:
    return composite[: composite.index(b"\0")].decode("utf-8")


def native_view(array: np.ndarray) -> memoryview:
    """A flat memoryview in native byte order (a copy only on a big-endian host): indexing it and `bisect` over
    it cost a fraction of numpy's per-call overhead, which dominates a single point read."""
    native = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))
    return memoryview(native.reshape(-1)).cast("B").cast(native.dtype.char) if native.size else memoryview(b"")


def key_hash(composite: bytes) -> int:
    """BLAKE2b-64 (MANIFEST.spec, Conventions) of a composite key: BLAKE2b with an 8-byte output (digest_size=8,
    not a prefix of BLAKE2b-512) read as a little-endian u64."""
    return int.from_bytes(hashlib.blake2b(composite, digest_size=8).digest(), "little")


def key_hashes(composites: list) -> np.ndarray:
    """key_hash of every composite key, as uint64: the digests are made and read by C-level maps."""
    digests = map(_DIGEST, map(_HASHER, composites))
    return np.frombuffer(b"".join(digests), dtype="<u8").astype(np.uint64) if composites else np.zeros(0, np.uint64)


_HASHER = functools.partial(hashlib.blake2b, digest_size=8)
_DIGEST = operator.methodcaller("digest")
