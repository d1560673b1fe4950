"""Plain documents read from files, directories (recursively) and stdin, for the document index: a document's
key is its file name ("stdin" for standard input), its title the first non-blank line, its time the file's
modification time (now for stdin). Every input is checked (binary, invalid UTF-8, empty, too big) before any
is returned: InputError names the bad one.
"""

from __future__ import annotations

STDIN_KEY = "stdin"


def read_documents(paths, type_: str | None, tags, errors: str, size_limit: int, stdin=None) -> list[dict]:
    """Documents for TextIndex.add_many from `paths` (files, directories, "-": `stdin`, a binary stream, default
    sys.stdin's)."""
    import os
    import time

    from memctl.ingest import sources
    from memctl.standard_input import binary_stdin

    documents = []
    for path in paths:
        if path == sources.STDIN_ARGUMENT:
            source = sources.read_stream(stdin or binary_stdin(), STDIN_KEY, size_limit)
            documents.append(_document(STDIN_KEY, source.data, time.time(), type_, tags, errors, size_limit))
            continue
        for name in sources.expand(path):
            source = sources.read_file(name, size_limit)
            documents.append(_document(name, source.data, os.path.getmtime(name), type_, tags, errors, size_limit))
    return documents


def _document(key: str, data: bytes, timestamp: float, type_, tags, errors: str, size_limit: int) -> dict:
    from engine.errors import InputError
    from memctl.ingest.decode import decode

    if not data.strip():
        raise InputError("empty document: nothing to index", where=key)
    text = decode(data, key, errors, size_limit)
    title = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return {"key": key, "fields": {"title": title, "text": text}, "type": type_, "timestamp": timestamp,
            "tags": list(tags)}
