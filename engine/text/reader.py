"""Read one text segment: a published segment file, built columns, or an in-memory part (build_memory)."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from engine.errors import CorruptionError, UnsupportedVersion
from engine.format import TEXT_BLOCK_ENTRIES, TEXT_SEGMENT_VERSION, TEXT_TERMS_PER_BLOCK
from engine.text.keys import KeyReader
from engine.text.postings import PostingsReader
from engine.text.termdict import TermDictionary


class TextSegment:
    """`column(name)` returns a numpy array; `meta` is the dict written by build(); `items(name, start, stop)`,
    when given, a checked range of a column (engine.segment.Segment.items)."""

    def __init__(self, column, meta: dict, path: str = "<memory>", names=None, dictionary=None, postings=None,
                 keys=None, items=None):
        self._source = column
        self._names = None if names is None else set(names)
        self._columns: dict = {}
        self.meta = meta
        self.path = path
        self._check_meta()
        self.fields = list(meta["fields"])
        self.field_slots = int(meta["field_slots"])
        self.document_count = int(meta["documents"])
        self.term_count = int(meta["terms"])
        self.dictionary = dictionary or TermDictionary(self._column, self.term_count, path)
        self.postings = postings or PostingsReader(self._column, self.field_slots, self.document_count, path,
                                                   int(meta.get("plain_field", 0)), items)
        self._keys = keys or KeyReader(self._column, self.document_count, path, items)
        first = meta.get("first_docno")
        self._first_docno = int(first) if first is not None and not self.has("docnos") else None

    def _column(self, name: str) -> np.ndarray:
        """A column, fetched (and CRC-checked by the container) once per reader."""
        array = self._columns.get(name)
        if array is None:
            array = self._columns[name] = self._source(name)
        return array

    def extra_column(self, name: str) -> np.ndarray:
        """A column a derived kind adds to the text.postings layout (engine/raw/passage_kind.py's chunk columns)."""
        return self._column(name)

    def has(self, name: str) -> bool:
        return self._names is None or name in self._names

    @classmethod
    def from_columns(cls, columns: dict, meta: dict) -> "TextSegment":
        return cls(columns.__getitem__, meta, names=columns)

    @classmethod
    def from_segment(cls, segment) -> "TextSegment":
        """From an engine.segment.Segment: whole columns are checked on first use; the postings, positions
        and key streams a block at a time, as far as a query reads them."""
        return cls(segment.column, segment.meta, segment.path, segment.names(), items=segment.items)

    def _check_meta(self) -> None:
        meta = self.meta
        required = ("version", "documents", "terms", "fields", "field_slots", "length_sums", "types")
        if not isinstance(meta, dict) or any(name not in meta for name in required):
            raise CorruptionError(self.path, None, "text segment meta is incomplete")
        if meta["version"] != TEXT_SEGMENT_VERSION:
            if isinstance(meta["version"], int) and meta["version"] > TEXT_SEGMENT_VERSION:
                raise UnsupportedVersion(self.path, meta["version"], TEXT_SEGMENT_VERSION)
            raise CorruptionError(self.path, None, f"text segment version {meta['version']!r} is unknown")
        if (meta.get("block_entries", TEXT_BLOCK_ENTRIES) != TEXT_BLOCK_ENTRIES
                or meta.get("terms_per_block", TEXT_TERMS_PER_BLOCK) != TEXT_TERMS_PER_BLOCK):
            raise CorruptionError(self.path, None, "text segment block sizes differ from this memctl's")
        if meta["field_slots"] < max(1, len(meta["fields"])) or len(meta["length_sums"]) != len(meta["fields"]):
            raise CorruptionError(self.path, None, "text segment fields are inconsistent")

    # --- documents -----------------------------------------------------------------------------------

    @cached_property
    def docnos(self) -> np.ndarray:
        first = self.meta.get("first_docno")
        if first is not None and not self.has("docnos"):
            return np.arange(int(first), int(first) + self.document_count, dtype=np.int64)
        docnos = self._column("docnos").astype(np.int64)
        if docnos.size != self.document_count:
            raise CorruptionError(self.path, None, "text segment document count disagrees with its docnos")
        return docnos

    @cached_property
    def deleted(self) -> np.ndarray:
        return self._column("deleted").astype(np.int64) if self.has("deleted") else np.zeros(0, np.int64)

    @cached_property
    def field_lengths(self) -> np.ndarray:
        lengths = self._column("field_lengths")
        if lengths.shape[0] != self.document_count:
            raise CorruptionError(self.path, None, "text segment field lengths disagree with its documents")
        return lengths

    @cached_property
    def timestamps(self) -> np.ndarray:
        if not self.has("timestamps"):
            return np.full(self.document_count, np.nan)
        return self._column("timestamps")

    @cached_property
    def document_types(self) -> np.ndarray:
        if not self.has("document_types"):
            return np.zeros(self.document_count, dtype=np.uint8)
        return self._column("document_types")

    @property
    def cjk_mode(self) -> str | None:
        return (self.meta.get("tokenizer") or {}).get("cjk")

    def docno(self, local: int) -> int:
        if self._first_docno is not None:
            return self._first_docno + local
        return int(self.docnos[local])

    def key(self, local: int) -> str:
        return self._keys.key(local)

    def keys(self) -> list:
        """Every document's key, in local order."""
        return self._keys.keys()

    def document_type(self, local: int) -> str | None:
        if not self.meta["types"]:
            return None
        code = int(self.document_types[local])
        return self.meta["types"][code - 1] if code else None

    def timestamp(self, local: int) -> float | None:
        if not self.has("timestamps"):
            return None
        value = float(self.timestamps[local])
        return None if value != value else value

    def tag_names(self) -> list:
        if not self.has("tag_offsets"):
            return []
        offsets = self._column("tag_offsets")
        return [_string(self._column("tag_bytes"), offsets, index, self.path) for index in range(offsets.size - 1)]

    def tags(self, local: int) -> list:
        names = self.tag_names()
        if not names:
            return []
        offsets = self._column("document_tag_offsets")
        return [names[tag] for tag in self._column("document_tags")[int(offsets[local]): int(offsets[local + 1])]]

    def documents_with_tag(self, name: str) -> np.ndarray:
        """Boolean mask of the documents carrying tag `name`."""
        names = self.tag_names()
        mask = np.zeros(self.document_count, dtype=bool)
        if name not in names:
            return mask
        offsets = self._column("document_tag_offsets").astype(np.int64)
        owners = np.repeat(np.arange(self.document_count), np.diff(offsets))
        mask[owners[self._column("document_tags") == names.index(name)]] = True
        return mask

    # --- terms ---------------------------------------------------------------------------------------

    def document_frequency(self, ordinal: int) -> int:
        if not self.has("document_frequencies"):
            return self.entry_count(ordinal)
        return int(self._column("document_frequencies")[ordinal])

    def entry_count(self, ordinal: int) -> int:
        return int(self._column("entry_counts")[ordinal])


def verify(segment: TextSegment) -> list:
    """Reasons the segment is inconsistent (empty when sound): decodes every term, entry and position."""
    try:
        return _problems(segment)
    except CorruptionError as error:
        return [error.reason]


def _problems(segment: TextSegment) -> list:
    problems = []
    column = segment._column
    terms = segment.dictionary.terms()
    if len(terms) != segment.term_count or any(left >= right for left, right in zip(terms, terms[1:])):
        problems.append("term dictionary is not strictly sorted or has the wrong count")
    counts = column("entry_counts").astype(np.int64)
    for name, stream in (("postings_offsets", "postings"), ("position_offsets", "positions")):
        offsets = column(name).astype(np.int64)
        if offsets.size != segment.term_count + 1 or (np.diff(offsets) < 0).any() or \
                (offsets.size and (offsets[0] != 0 or offsets[-1] != column(stream).size)):
            problems.append(f"{name} do not partition the {stream} stream")
    if counts.size != segment.term_count or (counts <= 0).any():
        return problems + ["entry counts disagree with the term dictionary"]
    term, document, field, frequency, _positions = segment.postings.all_entries()
    order = (term * segment.document_count + document) * segment.field_slots + field
    if (np.diff(order) <= 0).any():
        problems.append("postings are not sorted by term, document and field")
    firsts = np.r_[True, (term[1:] != term[:-1]) | (document[1:] != document[:-1])] if term.size else term
    stored_frequencies = [segment.document_frequency(ordinal) for ordinal in range(segment.term_count)]
    if not np.array_equal(np.bincount(term[firsts.astype(bool)], minlength=segment.term_count) if term.size else
                          np.zeros(segment.term_count, np.int64), np.asarray(stored_frequencies, dtype=np.int64)):
        problems.append("document frequencies disagree with the postings")
    lengths = np.bincount(document * segment.field_slots + field, weights=frequency,
                          minlength=segment.document_count * segment.field_slots)
    stored = np.zeros((segment.document_count, segment.field_slots))
    stored[:, :len(segment.fields)] = segment.field_lengths[:, :len(segment.fields)]
    if not np.array_equal(lengths, stored.ravel()):
        problems.append("field lengths disagree with the postings")
    if (np.diff(segment.docnos) <= 0).any():
        problems.append("document numbers are not strictly ascending")
    segment.keys()
    return problems


def _string(data: np.ndarray, offsets: np.ndarray, index: int, path: str) -> str:
    start, end = int(offsets[index]), int(offsets[index + 1])
    if not 0 <= start <= end <= data.size:
        raise CorruptionError(path, None, "string offsets out of range")
    try:
        return data[start:end].tobytes().decode("utf-8")
    except UnicodeDecodeError:
        raise CorruptionError(path, start, "string is not UTF-8") from None
