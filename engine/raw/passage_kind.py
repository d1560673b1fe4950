"""The `raw` derived segment kind: the raw passage index, postings over the passages of every stored chunk.

Its source of truth is the raw chunks themselves (the raw.turns records and the blobs they name): it keeps no
record of its own and no token. Owner "raw" (the owner of the raw.* tables); segments of kind "raw.passages"
(MANIFEST.spec §4c): a text.postings segment (§4a's columns: terms, postings, front-coded keys, field lengths,
timestamps, deleted) whose documents are passages (engine/raw/passage_text.py) keyed by their span
`raw_<id>@<offset>+<length>`, plus three columns naming each chunk's run of docnos:

    chunk_ids            uint64  the chunks with passages here, as the numbers their ids spell, ascending
    chunk_first_docnos           the first docno of each one's passages
    chunk_passages               how many (its docnos are consecutive)

A flush handed raw.turns changes reads the bytes of each new chunk (its blob, written and synced before the
batch committed), cuts and analyses its passages a block at a time and writes a segment per SEGMENT_TEXT_BYTES of
chunks: docnos from one above the highest any segment holds, and, in the first one's `deleted` column, the
docnos of older segments' passages of every chunk whose raw.turns record the flush holds (a released chunk, or
one stored again). A reader combines
the segments with an in-memory part built the same way from its snapshot's unflushed raw.turns records (at
most flush_bytes of records), whose chunks' older passages it counts as deleted. Compaction merges the segments
into one without the deleted passages; Store.rebuild (migration, repair) builds that one segment from every
raw.turns record and blob, reading no segment.
"""

from __future__ import annotations

import numpy as np

from engine.arrays import members, sorted_unique
from engine.errors import CorruptionError
from engine.format import RAW_KIND, RAW_PASSAGES_SEGMENT_KIND, RAW_TURNS_TABLE
from engine.heap import release_free_memory
from engine.records import TOMBSTONE

SEGMENT_LABEL = RAW_PASSAGES_SEGMENT_KIND.split(".", 1)[1]
CHUNK_COLUMNS = ("chunk_ids", "chunk_first_docnos", "chunk_passages")
# Chunk bytes per segment a flush or rebuild writes: what one build holds at once. A build's temporaries are
# about 25 times its chunk bytes (engine.text.build): at 2 MiB the flush of a 50 MB line was the ingest's peak
# (4.1 times the input), at 1 MiB parsing is (3.8 times), for twice the segments.
SEGMENT_TEXT_BYTES = 1 << 20


class PassageKind:
    name = RAW_KIND

    def __init__(self, store, owner: str = RAW_KIND):
        self.store = store

    def flush(self, changes: dict, new_segment) -> None:
        turns = changes.get(RAW_TURNS_TABLE, {})
        if not turns:
            return
        readers = _readers(self.store.kind_segments.get(RAW_KIND, []))
        retired = retired_docnos(readers, list(turns))
        new = [(raw_id, record) for raw_id, record in turns.items() if record is not TOMBSTONE]
        _write_built(new_segment, self.store, new, next_docno(readers), retired)

    def compact(self, segments: list, new_segment) -> None:
        self._merge(segments, new_segment, below=False)

    def merge_newest(self, segments: list, new_segment) -> None:
        """One segment answering as `segments` do, the newest with older ones below them (a tier merge): the
        passages of older segments they retire stay retired, and each chunk's live passages stay one run."""
        self._merge(segments, new_segment, below=True)

    def _merge(self, segments: list, new_segment, below: bool) -> None:
        from functools import partial

        from engine.raw.passage_text import PassageAnalyzer
        from engine.text.merge import merge
        from engine.text.kind import retirements

        readers = _readers(segments)
        deleted, deleted_below = retirements(readers, below)
        columns, meta = _guarded(partial(merge, deleted_below=deleted_below), readers, deleted,
                                 PassageAnalyzer().signature())
        if meta["documents"]:
            merged_keys = _merged_keys(readers, deleted)
            columns.update(chunk_columns(keys_chunks(merged_keys), _merged_docnos(readers, deleted)))
        if meta["documents"] or len(deleted_below):
            _write(new_segment(SEGMENT_LABEL), columns, meta)

    def rebuild(self, rows: dict, new_segment) -> None:
        """One segment of the passages of every chunk of `rows` (every live raw.* record), built from the
        chunks alone (Store.rebuild)."""
        turns = rows.get(RAW_TURNS_TABLE, {})
        _write_built(new_segment, self.store, sorted(turns.items()), 0, ())

    def check(self, segments: list):
        """CorruptionError for every inconsistency of every segment (used by `memctl check`)."""
        from engine.text.reader import verify

        for segment, reader in zip(segments, _readers(segments)):
            reasons = verify(reader)
            if not reasons:
                reasons = chunk_problems(reader)
            for reason in reasons:
                yield CorruptionError(segment.path, None, reason)

    def open(self, segments: list) -> "PassageSnapshot":
        from engine.raw.passage_build import build_passages
        from engine.raw.passage_text import PassageAnalyzer

        parts = _readers(segments)
        analyzer = PassageAnalyzer()
        pending = self.store.memtable(RAW_TURNS_TABLE)
        deleted = retired_docnos(parts, list(pending)) if pending else np.zeros(0, np.int64)
        new = [(raw_id, record) for raw_id, record in pending.items() if record is not TOMBSTONE]
        if new:
            from engine.text.build import build_memory

            for built in build_passages(self.store, new, next_docno(parts), analyzer):
                parts.append(_guarded(build_memory, built.sources, (), analyzer.signature()))
        return PassageSnapshot(parts, deleted)


class PassageSnapshot:
    """The raw passage index at one store snapshot: segment readers, the in-memory part, retired docnos."""

    def __init__(self, parts: list, deleted: np.ndarray):
        self.parts = parts
        self.deleted = deleted
        self._searcher = None

    def searcher(self):
        """A Searcher over the live passages, with the analysis they were indexed with."""
        if self._searcher is None:
            from engine.raw.passage_text import PassageAnalyzer
            from engine.text.search import Searcher

            self._searcher = Searcher(self.parts, PassageAnalyzer().tokenizer, deleted=self.deleted)
        return self._searcher

    def stats(self) -> dict:
        from engine.text.search import Searcher

        figures = Searcher(self.parts, tokenizer=None, deleted=self.deleted).statistics()
        return {
            "passages": figures["documents"],
            "retired_passages_in_segments": figures["deleted"],
            "segments": sum(1 for part in self.parts if part.path != "<memory>"),
            "unflushed_passages": sum(part.document_count for part in self.parts if part.path == "<memory>"),
            "terms": sum(part.term_count for part in self.parts),
        }


def next_docno(readers: list) -> int:
    """One above the highest docno any segment holds (every retired one is below it too: a segment retires
    only docnos of older segments, and compaction drops a retired docno together with the passage)."""
    return max((int(reader.docnos[-1]) + 1 for reader in readers if reader.document_count), default=0)


def retired_docnos(readers: list, raw_ids: list) -> np.ndarray:
    """The docnos of the passages of chunks `raw_ids` in the segments (by their chunk columns)."""
    from engine.raw.passage_build import chunk_number

    wanted = sorted_unique(np.fromiter(map(chunk_number, raw_ids), dtype=np.uint64, count=len(raw_ids)))
    found = [np.zeros(0, np.int64)]
    for reader in readers:
        if not reader.document_count:
            continue
        ids = reader.extra_column("chunk_ids")
        places = np.searchsorted(ids, wanted)
        hit = places[(places < ids.size) & (ids[np.minimum(places, ids.size - 1)] == wanted)]
        firsts = reader.extra_column("chunk_first_docnos").astype(np.int64)[hit]
        counts = reader.extra_column("chunk_passages").astype(np.int64)[hit]
        found.append(np.repeat(firsts, counts) + np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts,
                                                                                         counts))
    return sorted_unique(np.concatenate(found))


def keys_chunks(keys: list) -> np.ndarray:
    """The chunk number of each span key."""
    from engine.raw import parse_span_key
    from engine.raw.passage_build import chunk_number

    chunks = []
    for key in keys:
        parsed = parse_span_key(key)
        if parsed is None:
            raise ValueError(f"passage key {key!r} is not a span")
        chunks.append(chunk_number(parsed[0]))
    return np.array(chunks, dtype=np.uint64)


def chunk_columns(document_chunks: np.ndarray, docnos: np.ndarray) -> dict:
    """The chunk columns of a segment whose documents (in docno order) come from `document_chunks`; ValueError
    when a chunk's passages are not one run of consecutive docnos."""
    from engine.text.postings import narrow

    starts = np.flatnonzero(np.r_[True, document_chunks[1:] != document_chunks[:-1]]) if document_chunks.size \
        else np.zeros(0, np.int64)
    counts = np.diff(np.r_[starts, document_chunks.size])
    firsts = docnos[starts]
    if (docnos[starts + counts - 1] - firsts != counts - 1).any():
        raise ValueError("a chunk's passages are not consecutive documents")
    ids = document_chunks[starts]
    order = np.argsort(ids, kind="stable")
    if (ids[order][1:] == ids[order][:-1]).any():
        raise ValueError("a chunk's passages are not one run of documents")
    return {"chunk_ids": ids[order], "chunk_first_docnos": narrow(firsts[order]),
            "chunk_passages": narrow(counts[order])}


def chunk_problems(reader) -> list:
    """Why a segment's chunk columns disagree with its keys and docnos (empty when they agree)."""
    if not reader.document_count:
        return []
    try:
        expected = chunk_columns(keys_chunks(reader.keys()), reader.docnos)
    except ValueError as error:
        return [str(error)]
    for name in CHUNK_COLUMNS:
        if not reader.has(name) or not np.array_equal(reader.extra_column(name).astype(np.uint64),
                                                      expected[name].astype(np.uint64)):
            return [f"column {name} disagrees with the passage keys and docnos"]
    return []


def _readers(segments: list) -> list:
    from engine.text.reader import TextSegment

    return [TextSegment.from_segment(segment) for segment in segments]


def _merged_keys(readers: list, deleted: np.ndarray) -> list:
    keys = []
    for reader in sorted(readers, key=_first_docno):
        live = ~members(deleted, reader.docnos)
        reader_keys = reader.keys()
        keys += [reader_keys[local] for local in np.flatnonzero(live).tolist()]
    return keys


def _merged_docnos(readers: list, deleted: np.ndarray) -> np.ndarray:
    docnos = [reader.docnos[~members(deleted, reader.docnos)] for reader in sorted(readers, key=_first_docno)]
    return np.concatenate(docnos) if docnos else np.zeros(0, np.int64)


def _first_docno(reader) -> int:
    return int(reader.docnos[0]) if reader.document_count else -1


def _write_built(new_segment, store, chunks: list, first_docno: int, retired) -> None:
    """Segments of the passages of `chunks`, one per SEGMENT_TEXT_BYTES of chunks (what a build holds in memory
    at once), the first also retiring `retired`."""
    from engine.raw.passage_build import build_passages
    from engine.raw.passage_text import PassageAnalyzer
    from engine.text.build import Sources, build_sources

    analyzer = PassageAnalyzer()
    written = False
    for built in build_passages(store, chunks, first_docno, analyzer, SEGMENT_TEXT_BYTES):
        # The analysis' temporaries and the last build's arrays, freed but kept by the C heap, given back
        # before this build allocates its own (a 50 MB line's flush peaked 20 MB higher without).
        release_free_memory()
        _write_segment(new_segment, built, () if written else retired, analyzer.signature())
        written = True
        del built
        release_free_memory()  # a build's arrays, before the next one's analysis
    if not written and len(retired):
        _write(new_segment(SEGMENT_LABEL), *_guarded(build_sources, Sources([], [], [], [], [], [], []), retired,
                                                    analyzer.signature()))


def _write_segment(new_segment, built, retired, signature: dict) -> None:
    from engine.text.build import build_sources

    columns, meta = _guarded(build_sources, built.sources, retired, signature)
    columns.update(chunk_columns(built.document_chunks, np.asarray(built.sources.docnos, dtype=np.int64)))
    _write(new_segment(SEGMENT_LABEL), columns, meta)


def _guarded(builder, *arguments):
    """Build from chunks or segments; inputs that do not fit together mean damaged records or segments."""
    try:
        return builder(*arguments)
    except (ValueError, TypeError) as error:
        raise CorruptionError(RAW_TURNS_TABLE, None, f"raw passage index inputs are inconsistent ({error})") from None


def _write(writer, columns: dict, meta: dict) -> None:
    for name in sorted(columns):
        writer.add_column(name, columns[name])
    writer.set_meta(meta)
