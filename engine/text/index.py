"""TextIndex: add, update, delete and search documents of one store's text index.

Every change is one store batch (one WAL record, one fsync): the document record with its tokens, the
retirement of the document number it replaces, and a new document number from the `text.docno` counter.
Searching reads the store's `text` kind view (segments + unflushed records) and never loads jieba.
"""

from __future__ import annotations

import math

from engine.errors import InputError
from engine.format import OP_DELETE, OP_PUT, TEXT_DEAD_TABLE, TEXT_DOCNO_COUNTER, TEXT_DOCUMENT_TABLE, TEXT_META_TABLE
from engine.text import stored
from engine.text.kind import SIGNATURE_KEY, collector_paused, dead_key

DEFAULT_FIELD = "text"


class TextIndex:
    """tokenizer: engine.text.tokenizer.Tokenizer (default configuration when None); parameters:
    engine.text.bm25.BM25Parameters; store_text: keep each field's text in its record (for snippets and
    re-tokenizing), or only the tokens; kernels: see engine.text.search.Searcher ("numpy" for the CLI)."""

    def __init__(self, store, tokenizer=None, parameters=None, store_text: bool = True, kernels: str = "numpy"):
        if tokenizer is None:
            from engine.text.tokenizer import Tokenizer

            tokenizer = Tokenizer()
        self.store = store
        self.tokenizer = tokenizer
        self.parameters = parameters
        self.store_text = store_text
        self.kernels = kernels
        self._signature = None

    # --- writing -------------------------------------------------------------------------------------

    def add(self, key: str, fields, *, type: str | None = None, timestamp: float | None = None, tags=(),
            batch=None) -> int:
        """Index (or replace) the document `key`; returns its new document number."""
        return self.add_many([{"key": key, "fields": fields, "type": type, "timestamp": timestamp, "tags": tags}],
                             batch=batch)[0]

    def add_many(self, documents, batch=None) -> list:
        """Index several documents (dicts with key, fields, and optionally type, timestamp, tags) in one
        batch; a key given twice keeps its last version. Nothing is written if any document is invalid."""
        with collector_paused():
            return self._add_prepared([self._record(index, document) for index, document in enumerate(documents)],
                                      batch)

    def _add_prepared(self, prepared: list, batch) -> list:
        if not prepared:
            return []
        with _BatchScope(self.store, batch) as active:
            self._write_signature(active)
            first = active.allocate(TEXT_DOCNO_COUNTER, len(prepared))
            pending = _pending_documents(active)
            # Nothing was ever indexed: a first bulk load skips a store lookup per document.
            stored_before = self.store.counter(TEXT_DOCNO_COUNTER) > 0
            numbers = []
            for offset, (key, record) in enumerate(prepared):
                record["docno"] = first + offset
                self._retire(active, key, pending, stored_before)
                active.put(TEXT_DOCUMENT_TABLE, key, record)
                pending[key] = record["docno"]
                numbers.append(record["docno"])
        return numbers

    def delete(self, key: str, batch=None) -> bool:
        """Remove document `key`; False when there was none."""
        _check_key(key, "delete")
        pending = _pending_documents(batch)
        if self._current_docno(key, pending) is None:
            return False
        with _BatchScope(self.store, batch) as active:
            self._retire(active, key, pending)
            active.delete(TEXT_DOCUMENT_TABLE, key)
        return True

    def _retire(self, batch, key: str, pending: dict, stored_before: bool = True) -> None:
        docno = self._current_docno(key, pending, stored_before)
        if docno is not None:
            batch.put(TEXT_DEAD_TABLE, dead_key(docno), 1)

    def _current_docno(self, key: str, pending: dict, stored_before: bool = True):
        if key in pending:
            return pending[key]
        if not stored_before:
            return None
        record = self.store.get(TEXT_DOCUMENT_TABLE, key)
        return None if record is None else record["docno"]

    def _write_signature(self, batch) -> None:
        if self._signature is None:
            self._signature = self.tokenizer.signature()
        if self.store.get(TEXT_META_TABLE, SIGNATURE_KEY) != self._signature:
            batch.put(TEXT_META_TABLE, SIGNATURE_KEY, self._signature)

    def _record(self, index: int, document) -> tuple[str, dict]:
        """(key, record) of a document, checked before anything is written (cheap checks before analysis)."""
        if not isinstance(document, dict):
            raise InputError("a document must be a mapping with 'key' and 'fields'", _where(index))
        key = document.get("key")
        _check_key(key, index)
        fields = document.get("fields")
        if isinstance(fields, str):
            fields = {DEFAULT_FIELD: fields}
        elif not isinstance(fields, dict):
            raise InputError("fields must be text or a mapping of field names to text", _where(index))
        timestamp = document.get("timestamp")
        if timestamp is not None and (isinstance(timestamp, bool) or not isinstance(timestamp, (int, float))
                                      or not math.isfinite(timestamp)):
            raise InputError("timestamp must be a finite number of seconds since the epoch", _where(index))
        kind = document.get("type")
        tags = document.get("tags") or ()
        if (kind is not None and not isinstance(kind, str)) or isinstance(tags, str) or \
                not all(isinstance(tag, str) for tag in tags):
            raise InputError("type must be text and tags a list of text", _where(index))
        tokens = {}
        for name, text in fields.items():
            if not (isinstance(name, str) and name and isinstance(text, str)):
                raise InputError("fields must be text or a mapping of field names to text", _where(index))
            tokens[name] = stored.encode(*self.tokenizer.index_tokens(text))
        record = {"tokens": tokens, "type": kind, "ts": None if timestamp is None else float(timestamp),
                  "tags": sorted(set(tags))}
        if self.store_text:
            record["fields"] = dict(fields)
        return key, record

    # --- reading -------------------------------------------------------------------------------------

    def snapshot(self):
        return self.store.kind("text")

    def search(self, query: str, top: int = 10, **filters) -> list:
        """engine.text.search.Searcher.search over the store's current state."""
        return self.snapshot().searcher(self.tokenizer, self.parameters, self.kernels).search(query, top, **filters)

    def statistics(self) -> dict:
        snapshot = self.snapshot()
        statistics = snapshot.searcher(self.tokenizer, self.parameters, self.kernels).statistics()
        statistics["tokenizer"] = snapshot.signature
        return statistics

    def get(self, key: str) -> dict | None:
        return self.store.get(TEXT_DOCUMENT_TABLE, key)


def _pending_documents(batch) -> dict:
    """key → docno (None when deleted) of the text documents a not yet committed batch already holds."""
    pending: dict = {}
    for operation in batch.operations if batch is not None else ():
        if operation[0] in (OP_PUT, OP_DELETE) and operation[1] == TEXT_DOCUMENT_TABLE:
            pending[operation[2]] = operation[3]["docno"] if operation[0] == OP_PUT else None
    return pending


def _where(index: int) -> str:
    return f"document {index + 1}"


def _check_key(key, index) -> None:
    """index: the document's place in its batch, or the text naming where the key came from."""
    if not isinstance(key, str) or not key or "\0" in key:
        raise InputError("a document key must be non-empty text without NUL",
                         _where(index) if isinstance(index, int) else index)


class _BatchScope:
    """The caller's batch when given (the caller commits), else a new one committed on exit."""

    def __init__(self, store, batch):
        self._given = batch
        self._own = None if batch is not None else store.batch()

    def __enter__(self):
        return self._given if self._given is not None else self._own.__enter__()

    def __exit__(self, *exc):
        if self._own is not None:
            return self._own.__exit__(*exc)
        return None
