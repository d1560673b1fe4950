"""The one ingest entry point, shared by `memctl ingest` and the Python API."""

from __future__ import annotations

from memctl.ingest.pipeline import ingest
from memctl.ingest.sources import collect


def ingest_paths(store, paths=(), texts=(), format: str = "auto", errors: str = "strict", config=None,
                 progress=None, stdin=None) -> dict:
    """Ingest files, directories (recursively), globs and `-` (stdin) from `paths`, and literal `texts`, as one
    atomic batch. Every input is read, checked and parsed before the store is touched: bad input (InputError,
    exit 2) stores nothing.

    `store`: a writable engine Store, or a function returning a context manager that yields one; the function
    is called only once every input has passed, so bad input neither creates a store nor takes its writer lock.
    `config`: memctl Settings (ingest.max_file_bytes, ingest.max_blob_bytes, ingest.chunk_min_tokens,
    ingest.chunk_max_tokens), None for the defaults. `progress(stage, done, total)`: stage "parse" (bytes), then
    "store" (chunks). Returns {chunks_new, chunks_duplicate, bytes_in, bytes_stored (compressed blob and turn
    row bytes written), conversations, turns}.
    """
    from memctl.settings import resolve

    config = resolve(config)
    size_limit = config.get("ingest.max_file_bytes")
    return ingest(store, collect(paths, texts, size_limit=size_limit, stdin=stdin), format, errors, size_limit,
                  config.get("ingest.max_blob_bytes"), config.get("ingest.chunk_min_tokens"),
                  config.get("ingest.chunk_max_tokens"), progress, consume=True)
