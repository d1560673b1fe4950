"""Raw storage: immutable raw chunks, stored once by content as zstd blobs, and the turns that cite them.

    paths.py         a chunk's id (from its sha256) and its blob file's path
    spans.py         a span of a chunk as one string (a citation; the key of a raw passage)
    passage_text.py  what a raw passage is, and its tokens (numpy over code points)
    passage_build.py the passages of chunks, a block at a time, as the sources of a postings segment
    passage_kind.py  the `raw` derived kind: the raw passage index's segments, built at flush from new chunks
    decompress.py    bounded zstd: never more output than the limit, whatever a frame claims
    turn_time.py     turn times as stored (naive whole seconds as ints) and the order they sort in
    turn_columns.py  the raw.turns record: a chunk's turns as compressed columns
    chunks.py        the typed chunk listings RawStore gives, the meta turns imply, the order chunks are read in
    store.py         RawStore: reading chunks, spans and turns; opening a batch that writes them
    writer.py        RawWriter: one batch's puts and releases, and the blobs made durable before it commits
    upkeep.py        `check`'s verification and `raw gc`'s collection of files no record names

`from engine.raw import RawStore` (and the other names below) imports only the module that defines the name.
"""

import importlib

_HOMES = {
    "RawStore": "store",
    "Chunk": "chunks",
    "TurnChunk": "chunks",
    "RawWriter": "writer",
    "PutResult": "writer",
    "TurnColumns": "turn_columns",
    "decode_turns": "turn_columns",
    "encode_turns": "turn_columns",
    "split_source_id": "turn_columns",
    "encode_ts": "turn_time",
    "encode_ts_column": "turn_time",
    "decode_ts": "turn_time",
    "ts_order": "turn_time",
    "raw_id_for": "paths",
    "blob_path": "paths",
    "record_blob_path": "paths",
    "span_key": "spans",
    "parse_span_key": "spans",
    "decompress_bounded": "decompress",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
