"""The `text` derived segment kind: postings segments built from the records of a text index's tables.

A store may hold several text indexes, the instances of this kind: the unnamed one, owner "text", keeps the
tables `text.*`, a named one, owner "text:<instance>", the tables `text:<instance>.*` (engine.text.tables).
Records of an instance (the source of truth, written by engine.text.index.TextIndex), by table suffix:
    doc        external key → {"docno", "fields": {name: text}, "tokens": {name: terms},
                               "positions": {name: positions}, "type", "ts", "tags"} (type, ts and tags
                               only when given); the tokens (encoded as engine.text.stored says, without
                               the maps for a document of the default field alone) are stored so that
                               neither a flush nor a reader's in-memory part needs the tokenizer (jieba)
                               again
    dead       docno as 16 hex digits → 1: a document number that a delete or an update retired
    meta       "tokenizer" → the analysis signature of the documents (Tokenizer.signature())

A flush writes one `text.postings` segment holding the flushed documents and, in its `deleted` column, the
docnos retired in that flush (they may live in older segments). A reader combines every segment with an
in-memory part built from its snapshot's unflushed records. Compaction merges all segments into one and
drops every retired document and every term only they held; a rebuild makes that one segment from the
records instead.
"""

from __future__ import annotations

import operator
from itertools import compress

import numpy as np

from engine.arrays import members, sorted_unique
from engine.collector import paused
from engine.errors import CorruptionError
from engine.format import TEXT_KIND, TEXT_SEGMENT_KIND
from engine.records import TOMBSTONE
from engine.text.reader import TextSegment, verify
from engine.text.tables import text_tables

SIGNATURE_KEY = "tokenizer"
SEGMENT_LABEL = TEXT_SEGMENT_KIND.split(".", 1)[1]  # the store names segments "<kind>.<label>"


def dead_key(docno: int) -> str:
    return f"{docno:016x}"


class TextKind:
    def __init__(self, store, owner: str = TEXT_KIND):
        self.store = store
        self.tables = text_tables(owner)

    def _signature(self) -> dict:
        return self.store.get(self.tables.meta, SIGNATURE_KEY) or {}

    def stored_signature(self, segments: list) -> dict:
        """The signature as `_signature`, without reading the records segments when it can: a changed one is
        in the memtable, else the newest text segment carries the one it was built with (its record lies in
        the oldest records segment, in a compaction's block of 2 MiB, which a cold search or write would
        decompress for it). segments: the instance's text segments, oldest first."""
        pending = self.store.memtable(self.tables.meta).get(SIGNATURE_KEY)
        if pending is not None and pending is not TOMBSTONE:
            return pending
        if segments and segments[-1].meta.get("tokenizer"):
            return segments[-1].meta["tokenizer"]
        return self._signature()

    def flush(self, changes: dict, new_segment) -> None:
        _write_built(self._build(changes, self._signature()), new_segment)

    def start_flush(self, changes: dict):
        """`flush` in two steps: the segment is built on a thread of its own (its numba kernels and most of
        its numpy work run without the GIL) while the store writes its records segment; the function returned
        waits for it and writes it. The signature is read here, before the records change hands."""
        from engine.background import Background

        building = Background(self._build, changes, self._signature(), name="memctl-text-flush")
        return lambda new_segment: _write_built(building.result(), new_segment)

    def _build(self, changes: dict, signature: dict):
        """(columns, meta) of the segment of `changes`, or None when they hold no document and no deletion."""
        from engine.text import pieces
        from engine.text.build import build_sources

        with paused():
            tables = self.tables
            dead = _dead_docnos(changes.get(tables.dead, {}), tables.dead)
            sources = _sources(changes.get(tables.documents, {}), dead, pieces.take(self.store, tables.owner),
                               tables.documents)
            if not sources.docnos and not dead:
                return None
            return _guarded(build_sources, sources, sorted(dead), signature, tables.documents)

    def compact(self, segments: list, new_segment) -> None:
        self._merge(segments, new_segment, below=False)

    def merge_newest(self, segments: list, new_segment) -> None:
        """One segment answering as `segments` do, the newest of this instance's with older ones below them
        (a tier merge): what they retire of the older segments stays retired."""
        self._merge(segments, new_segment, below=True)

    def _merge(self, segments: list, new_segment, below: bool) -> None:
        from functools import partial

        from engine.text.merge import merge

        readers = [TextSegment.from_segment(segment) for segment in segments]
        deleted, deleted_below = retirements(readers, below)
        with paused():
            columns, meta = _guarded(partial(merge, deleted_below=deleted_below), readers, deleted,
                                     self._signature(), self.tables.documents)
        if meta["documents"] or len(deleted_below):
            _write(new_segment(SEGMENT_LABEL), columns, meta)

    def rebuild(self, rows: dict, new_segment) -> None:
        """One segment of every live document of `rows` ({table: {key: value}}: every live record of this
        instance's tables), built from the stored tokens alone, with no `deleted` column: what a compaction
        leaves, without reading a segment (Store.rebuild)."""
        from engine.text.build import build_sources

        tables = self.tables
        with paused():
            dead = _dead_docnos(rows.get(tables.dead, {}), tables.dead)
            sources = _sources(rows.get(tables.documents, {}), dead, None, tables.documents)
            if sources.docnos:
                _write(new_segment(SEGMENT_LABEL),
                       *_guarded(build_sources, sources, (), self._signature(), tables.documents))

    def check(self, segments: list):
        """CorruptionError for every inconsistency of every segment (used by `memctl check`)."""
        for segment in segments:
            for reason in verify(TextSegment.from_segment(segment)):
                yield CorruptionError(segment.path, None, reason)

    def open(self, segments: list) -> "TextSnapshot":
        parts = [TextSegment.from_segment(segment) for segment in segments]
        signature = self.stored_signature(segments)
        with paused():
            tables = self.tables
            dead = _dead_docnos(self.store.memtable(tables.dead), tables.dead)
            rows = self.store.memtable(tables.documents)
            if rows:  # else the cold path of a search imports nothing of the build
                from engine.text import pieces
                from engine.text.build import build_memory

                sources = _sources(rows, dead, pieces.peek(self.store, tables.owner), tables.documents)
                if sources.docnos:
                    parts.append(_guarded(build_memory, sources, (), signature, tables.documents))
        return TextSnapshot(parts, sorted(dead), signature)


class TextSnapshot:
    """The text index at one store snapshot: segment readers, the in-memory part, retired docnos."""

    def __init__(self, parts: list, deleted: list, signature: dict):
        self.parts = parts
        self.deleted = deleted
        self.signature = signature
        self._searchers: dict = {}

    def stats(self) -> dict:
        """What `memctl stats` shows of the text index (the figures over live documents, as search sees them)."""
        from engine.text.search import Searcher
        from engine.text.tokenizer import CJK_MODE_BIGRAM

        figures = Searcher(self.parts, tokenizer=None, deleted=self.deleted).statistics()
        cjk = self.signature.get("cjk")
        if cjk == CJK_MODE_BIGRAM:
            cjk = "bigram (jieba could not be imported when indexing: CJK text is indexed as character pairs)"
        return {
            "documents": figures["documents"],
            "retired_documents_in_segments": figures["deleted"],
            "segments": sum(1 for part in self.parts if part.path != "<memory>"),
            "unflushed_documents": sum(part.document_count for part in self.parts if part.path == "<memory>"),
            "terms": sum(part.term_count for part in self.parts),  # summed over parts: exact once compacted
            "average_field_tokens": {name: round(length, 2) for name, length in figures["average_lengths"].items()},
            "cjk_mode": cjk,
            "stemmer": self.signature.get("stemmer"),
            "user_dictionary": self.signature.get("user_dictionary"),
        }

    def searcher(self, tokenizer, parameters=None, kernels: str = "numpy"):
        from engine.text.search import Searcher

        cache_key = (id(tokenizer), id(parameters), kernels)
        searcher = self._searchers.get(cache_key)
        if searcher is None:
            searcher = self._searchers[cache_key] = Searcher(self.parts, tokenizer, parameters, self.deleted,
                                                             kernels)
        return searcher


def retirements(readers: list, below: bool) -> tuple[np.ndarray, np.ndarray]:
    """(every docno the `deleted` columns of `readers` name, those of them no reader holds): a merge drops the
    documents of the first and, when older segments stay below the merged one (`below`), keeps the second in
    its `deleted` column, since they retire documents of those segments (whose docnos are all below the
    merged segments' own)."""
    deleted = sorted_unique(np.concatenate([reader.deleted for reader in readers] or [np.zeros(0, np.int64)]))
    if not below:
        return deleted, deleted[:0]
    held = sorted_unique(np.concatenate([reader.docnos for reader in readers] or [np.zeros(0, np.int64)]))
    return deleted, deleted[~members(held, deleted)]


def _dead_docnos(rows: dict, table: str) -> set:
    dead = set()
    for key, value in rows.items():
        if value is TOMBSTONE:
            continue
        try:
            dead.add(int(key, 16))
        except ValueError:
            raise CorruptionError(table, None, f"record key {key!r} is not a hex document number") from None
    return dead


def _sources(rows: dict, dead: set, pending, table: str):
    """The live documents of `rows` of the documents table `table`, their tokens from the writer's pieces
    (`pending`, engine.text.pieces.PendingTokens or None) where those hold them, else from the records."""
    from engine.text.build import Sources

    sources = Sources([], [], [], [], [], [], [])
    if not rows:
        return sources
    covered: set = set()
    held_documents = 0
    if pending is not None:
        sources.pieces = pending.pieces
        dead_numbers = np.fromiter(dead, dtype=np.int64, count=len(dead))
        for number, first, keys, records, held in pending.held(rows):
            held_documents += int(np.count_nonzero(held))
            if held_documents < len(rows):
                covered.update(compress(keys, held))
            retired = dead_numbers[(dead_numbers >= first) & (dead_numbers < first + len(keys))] - first
            held[retired] = False
            _add_piece_documents(sources, number, first, keys, records, held)
    # A key is held by one piece at most (by its very record, or an equal one of the same docno), so the
    # count of held documents tells whether any row is left.
    if held_documents < len(rows):
        rest = rows if not covered else {key: rows[key] for key in rows.keys() - covered}
        for key, value in rest.items():
            _add_record(sources, key, value, dead, table)
    return sources


def _add_piece_documents(sources, number: int, first: int, keys: list, records: list, held: np.ndarray) -> None:
    """The held documents of piece `number` (records of our own making: no checks), by C-level maps."""
    chosen = np.flatnonzero(held)
    if chosen.size < len(keys):
        pick = chosen.tolist()
        keys, records = [keys[local] for local in pick], [records[local] for local in pick]
    sources.docnos += (chosen + first).tolist()
    sources.keys += keys
    if sources.pieces[number].attributes:
        sources.types += map(_TYPE, records)
        sources.timestamps += map(_TIMESTAMP, records)
        sources.tags += map(_TAGS, records)
    else:
        sources.types += [None] * chosen.size
        sources.timestamps += [None] * chosen.size
        sources.tags += [()] * chosen.size
    sources.piece_of += [number] * chosen.size
    sources.piece_documents += chosen.tolist()


def _add_record(sources, key: str, value, dead: set, table: str) -> None:
    """A document from its record alone (replayed, or written by another handle); TOMBSTONE and retired
    documents are left out."""
    from engine.text import stored

    if value is TOMBSTONE:
        return
    try:
        docno = value["docno"]
        if docno in dead:
            return
        undecoded = stored.record_fields(value)
        sources.types.append(value.get("type"))
        sources.timestamps.append(value.get("ts"))
        sources.tags.append(value.get("tags") or ())
    except (KeyError, TypeError, AttributeError, ValueError):
        raise CorruptionError(table, None, f"text document record {key!r} is malformed") from None
    sources.docnos.append(docno)
    sources.keys.append(key)
    sources.piece_of.append(-1)
    sources.piece_documents.append(len(sources.undecoded))
    sources.undecoded.append(undecoded)


_TYPE, _TIMESTAMP, _TAGS = (operator.methodcaller("get", name, default) for name, default in
                            (("type", None), ("ts", None), ("tags", ())))


def _guarded(builder, sources: list, deleted, signature, table: str):
    """Build from stored tokens or segments; inputs that do not fit together (token and position counts,
    overlapping docno ranges) mean damaged records (of the documents table `table`) or segments, not a bug to
    show as a traceback."""
    try:
        return builder(sources, deleted, signature)
    except (ValueError, TypeError) as error:
        raise CorruptionError(table, None, f"text index inputs are inconsistent ({error})") from None


def _write_built(built, new_segment) -> None:
    if built is not None:
        _write(new_segment(SEGMENT_LABEL), *built)


def _write(writer, columns: dict, meta: dict) -> None:
    for name in sorted(columns):
        writer.add_column(name, columns[name])
    writer.set_meta(meta)
