"""TextIndex: add, update, delete and search documents of one of a store's text indexes.

A store holds any number of text indexes, one per owner: "text" (the unnamed one) or "text:<instance>"
(engine.text.tables). Every change is one store batch (one WAL record, one fsync): the document record with
its tokens, the retirement of the document number it replaces, and a new document number from the index's
docno counter. Searching reads the store's view of the owner (segments + unflushed records) and never loads
jieba.
The modules only writing needs (engine.text.pieces, engine.text.stored) are imported by the methods that
write: a process that only searches (a cold `memctl recall`) does not load them.
"""

from __future__ import annotations

import math
from itertools import chain

from engine.errors import InputError
from engine.format import OP_DELETE, OP_PUT, TEXT_KIND
from engine.codec import pack, unpack
from engine.collector import paused
from engine.text.kind import SIGNATURE_KEY, TextKind, dead_key
from engine.text.tables import text_tables


class TextIndex:
    """owner: which of the store's text indexes ("text", "text:nodes"…; ValueError for a name that is none);
    tokenizer: engine.text.tokenizer.Tokenizer (default configuration when None); parameters:
    engine.text.bm25.BM25Parameters; store_text: keep each field's text in its record (for snippets and
    re-tokenizing), or only the tokens; kernels: see engine.text.search.Searcher ("numpy" for the CLI), and
    with numba, batches code their terms by engine.text.term_table.TermTable (the same segments, built faster)."""

    def __init__(self, store, tokenizer=None, parameters=None, store_text: bool = True, kernels: str = "numpy",
                 owner: str = TEXT_KIND):
        self.tables = text_tables(owner)
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
        from engine.text import pieces

        with paused():
            vocabulary = pieces.pending_of(self.store, self.tables.owner).vocabulary(self.kernels)
            analysis = _Analysis(self.tokenizer, self.store_text, vocabulary)
            analysis.add(documents)
            return self._add_prepared(analysis.keys, analysis.records, analysis.finish(), batch)

    def _add_prepared(self, keys: list, records: list, piece, batch) -> list:
        if not records:
            return []
        from engine.text import pieces

        tables = self.tables
        with _BatchScope(self.store, batch) as active:
            self._write_signature(active)
            first = active.allocate(tables.docno, len(records))
            docnos = range(first, first + len(records))
            for record, docno in zip(records, docnos):
                record["docno"] = docno
            retired = self._retired(keys, docnos, _pending_documents(active, tables.documents))
            active.put_many(tables.dead, retired, [1] * len(retired))
            active.put_many(tables.documents, keys, records)
            # Before the commit: a commit may flush, and the flush takes the piece.
            pieces.pending_of(self.store, tables.owner).add(piece, first, keys, records)
        return list(docnos)

    def _retired(self, keys: list, docnos, pending: dict) -> list:
        """Dead-table keys of the documents that `keys` replace (in the store, the batch, or earlier in keys)."""
        current = self.store.get_many(self.tables.documents, keys)
        if not pending and current.count(None) == len(current) and len(set(keys)) == len(keys):
            return []  # all new (a bulk load): no step per document
        retired = []
        for key, docno, record in zip(keys, docnos, current):
            replaced = pending[key] if key in pending else None if record is None else record["docno"]
            if replaced is not None:
                retired.append(dead_key(replaced))
            pending[key] = docno
        return retired

    def delete(self, key: str, batch=None) -> bool:
        """Remove document `key`; False when there was none."""
        _check_key(key, "delete")
        docno = self._current_docno(key, _pending_documents(batch, self.tables.documents))
        if docno is None:
            return False
        with _BatchScope(self.store, batch) as active:
            active.put(self.tables.dead, dead_key(docno), 1)
            active.delete(self.tables.documents, _plain(key))
        return True

    def _current_docno(self, key: str, pending: dict):
        if key in pending:
            return pending[key]
        record = self.store.get(self.tables.documents, key)
        return None if record is None else record["docno"]

    def _write_signature(self, batch) -> None:
        if self._signature is None:
            # As the store gives it back (lists, not tuples): our batches hand their values over as they are.
            self._signature = unpack(pack(self.tokenizer.signature()))
        owner = self.tables.owner
        if TextKind(self.store, owner).stored_signature(self.store.kind_segments.get(owner, [])) != self._signature:
            batch.put(self.tables.meta, SIGNATURE_KEY, self._signature)

    # --- reading -------------------------------------------------------------------------------------

    def snapshot(self):
        return self.store.kind(self.tables.owner)

    def searcher(self):
        """The engine.text.search.Searcher of the store's current state with this index's tokenizer and
        parameters (the snapshot keeps it for the next call until the store changes)."""
        return self.snapshot().searcher(self.tokenizer, self.parameters, self.kernels)

    def search(self, query: str, top: int = 10, **filters) -> list:
        """engine.text.search.Searcher.search over the store's current state."""
        return self.searcher().search(query, top, **filters)

    def statistics(self) -> dict:
        statistics = self.searcher().statistics()
        statistics["tokenizer"] = self.snapshot().signature
        return statistics

    def get(self, key: str) -> dict | None:
        """The document's record; its text, when kept, as a map {field: text} (engine.text.stored.record_texts)."""
        record = self.store.get(self.tables.documents, key)
        if record is None or type(record.get("fields")) is not str:
            return record
        from engine.text import stored

        return {**record, "fields": stored.record_texts(record)}


class _Analysis:
    """The records of one add_many call, checked and analysed, and their tokens as one TokenPiece
    (engine.text.pieces) for the flush. Every value a record holds is a plain str, list, dict, bytes, float
    or None, as the store would read it back (our batches hand their values over).

    A document's steps are few and run in one loop (checks, its record, its fields as runs); the analysis,
    joining and encoding of every run's tokens then run as C-level maps over all runs at once."""

    def __init__(self, tokenizer, store_text: bool, vocabulary):
        self.index_tokens = tokenizer.index_tokens
        self.store_text = store_text
        self.vocabulary = vocabulary
        self.keys: list = []
        self.records: list = []
        self.attributes = False  # whether a document has a type, a timestamp or tags
        # Per run (one field of one document): its document, field name, text, and where its record keeps it:
        # (map and key of its terms, map and key of its positions, map (None: no text kept) and key of its text).
        self.run_documents: list = []
        self.run_names: list = []
        self.run_texts: list = []
        self.run_places: list = []

    def add(self, documents) -> None:
        """Check every document and lay out its record and runs (cheap checks before any analysis)."""
        from engine.text.stored import DEFAULT_FIELD

        keys, records, store_text = self.keys, self.records, self.store_text
        run_documents, run_names, run_texts, run_places = self.run_documents, self.run_names, self.run_texts, \
            self.run_places
        for index, document in enumerate(documents):
            if not isinstance(document, dict):
                raise InputError("a document must be a mapping with 'key' and 'fields'", _where(index))
            key = document.get("key")
            if type(key) is not str or not key or "\0" in key:
                _check_key(key, index)
                key = _plain(key)
            fields = document.get("fields")
            if type(fields) is not str:
                if not isinstance(fields, dict):
                    _bad_fields(index)
                if len(fields) == 1 and type(fields.get(DEFAULT_FIELD)) is str:
                    fields = fields[DEFAULT_FIELD]
            if type(fields) is str:  # the default field alone: the record keeps its tokens and text itself
                record = {"tokens": None, "positions": None}
                run_documents.append(index)
                run_names.append(DEFAULT_FIELD)
                run_texts.append(fields)
                run_places.append((record, "tokens", record, "positions", record if store_text else None, "fields"))
            else:
                record = self._add_fields(index, fields)
            if len(document) > 2:  # more than key and fields
                self.attributes = _add_attributes(record, document, index) or self.attributes
            keys.append(key)
            records.append(record)

    def _add_fields(self, index: int, fields: dict) -> dict:
        """The record of a document of several fields (or another than the default), its runs laid out."""
        texts = {} if self.store_text else None
        record = {"tokens": {}, "positions": {}}
        if texts is not None:
            record["fields"] = texts
        for name, text in fields.items():
            if type(name) is not str or type(text) is not str or not name:
                name, text = _checked_field(name, text, index)
            self.run_documents.append(index)
            self.run_names.append(name)
            self.run_texts.append(text)
            self.run_places.append((record["tokens"], name, record["positions"], name, texts, name))
        return record

    def finish(self):
        """Analyse every run into its record's maps; the piece of the analysed documents."""
        from engine.text import pieces, stored

        names = self.run_names
        analysed = list(map(self.index_tokens, self.run_texts))
        term_lists, position_lists = zip(*analysed) if analysed else ((), ())
        run_lengths = list(map(len, term_lists))
        joined = list(map(stored.SEPARATOR.join, term_lists))
        if list(map(len, position_lists)) != run_lengths:
            _raise_for_bad_run(term_lists, position_lists)
        positions = stored.positions_array(chain.from_iterable(position_lists))
        encoded = stored.positions_bytes(positions, run_lengths)
        for (tokens, tokens_key, stored_positions, positions_key, texts, text_key), terms, data, text in zip(
                self.run_places, joined, encoded, self.run_texts):
            tokens[tokens_key] = terms
            stored_positions[positions_key] = data
            if texts is not None:
                texts[text_key] = text
        field_names = list(dict.fromkeys(names))
        run_fields = list(map(dict(zip(field_names, range(len(field_names)))).__getitem__, names))
        return pieces.make_piece(self.vocabulary, pieces.TermRuns(term_lists, joined), positions, run_lengths,
                                 self.run_documents, run_fields, field_names, len(self.records), self.attributes)


def _raise_for_bad_run(term_lists, position_lists) -> None:
    """ValueError naming what is wrong with the first run whose positions are not one per term."""
    from engine.text import stored

    for terms, positions in zip(term_lists, position_lists):
        stored.join_terms(terms, positions)


def _add_attributes(record: dict, document: dict, index: int) -> bool:
    """A document's optional type, timestamp and tags, checked, into its record (absent ones are left out);
    whether it has any."""
    kind, timestamp, tags = document.get("type"), document.get("timestamp"), document.get("tags")
    if kind is not None:
        record["type"] = _checked_type(kind, index)
    if timestamp is not None:
        record["ts"] = _checked_timestamp(timestamp, index)
    if tags:
        record["tags"] = _checked_tags(tags, index)
    return kind is not None or timestamp is not None or bool(tags)


def _bad_fields(index: int):
    raise InputError("fields must be text or a mapping of field names to text", _where(index))


def _checked_field(name, text, index: int) -> tuple[str, str]:
    if not (isinstance(name, str) and name and isinstance(text, str)):
        _bad_fields(index)
    return _plain(name), _plain(text)


def _checked_type(kind, index: int) -> str:
    if not isinstance(kind, str):
        raise InputError("type must be text and tags a list of text", _where(index))
    return _plain(kind)


def _checked_tags(tags, index: int) -> list:
    try:
        if not isinstance(tags, str) and all(isinstance(tag, str) for tag in tags):
            return sorted({_plain(tag) for tag in tags})
    except TypeError:
        pass  # not iterable
    raise InputError("type must be text and tags a list of text", _where(index))


def _checked_timestamp(timestamp, index: int) -> float:
    if isinstance(timestamp, bool) or not isinstance(timestamp, (int, float)) or not math.isfinite(timestamp):
        raise InputError("timestamp must be a finite number of seconds since the epoch", _where(index))
    return float(timestamp)


def _plain(text: str) -> str:
    """A str subclass as a plain str (what the store gives back)."""
    return text if type(text) is str else str.__str__(text)


def _pending_documents(batch, documents_table: str) -> dict:
    """key → docno (None when deleted) of the documents of `documents_table` a not yet committed batch already
    holds."""
    pending: dict = {}
    for code, table, keys, values in batch.runs if batch is not None else ():
        if table == documents_table and code in (OP_PUT, OP_DELETE):
            pending.update(zip(keys, [value["docno"] for value in values] if code == OP_PUT else [None] * len(keys)))
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
        # Our batches hold only values made for them (plain msgpack types): the store may keep them as given.
        self._own = None if batch is not None else store.batch(owned=True)

    def __enter__(self):
        return self._given if self._given is not None else self._own.__enter__()

    def __exit__(self, *exc):
        if self._own is not None:
            return self._own.__exit__(*exc)
        return None
