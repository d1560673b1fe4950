"""Build one text segment's columns (named numpy arrays) and meta: from tokenized documents (flush, and the
in-memory part of a snapshot); engine.text.merge merges segments with the same document columns.

The same columns serve a published segment file (engine.segment) and the in-memory part, so one reader
(engine.text.reader) and one search path handle both.

Columns (unsigned integer columns take the smallest dtype that holds them; optional ones are left out
when they would say nothing)
    term_blocks, term_block_offsets, term_first, term_first_offsets      term dictionary (termdict.py)
    postings, postings_offsets, skip_documents, skip_bytes, skip_detail_bytes
    positions, position_offsets, entry_counts                            postings (postings.py)
    document_frequencies  [terms]    optional: absent when the segment has one field (df = entry count)
    docnos            [n]            global document numbers, ascending (local document i ↔ docnos[i]);
                                     absent when they are consecutive from meta["first_docno"]
    key_blocks, key_block_offsets    external keys, front-coded in document order (keys.py)
    field_lengths     [n, F]         tokens per field (fields as meta["fields"], sorted names)
    document_types    [n]            optional: 0 = none, else 1 + index in meta["types"]
    timestamps        float64[n]     optional: seconds since the epoch, NaN = none
    tag_bytes, tag_offsets           optional: tag names (sorted); document_tag_offsets [n + 1], document_tags
    deleted           uint64         optional: document numbers of older segments that this segment deletes
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.arrays import sorted_unique
from engine.format import TEXT_BLOCK_ENTRIES, TEXT_SEGMENT_VERSION, TEXT_TERMS_PER_BLOCK
from engine.text import chosen_build_kernels, keys, pieces, postings, termdict
from engine.text.postings import narrow


@dataclass
class Document:
    """A tokenized document: fields map a name to its tokens as engine.text.stored.encode keeps them."""

    docno: int
    key: str
    fields: dict
    type: str | None = None
    timestamp: float | None = None
    tags: tuple = field(default_factory=tuple)


@dataclass
class Sources:
    """The documents of a segment to build, in any order: their columns, and where their tokens are.
    Document i's tokens are document piece_documents[i] of pieces[piece_of[i]] (engine.text.pieces), or,
    when piece_of[i] is -1, the map {field: stored field} (engine.text.stored) undecoded[piece_documents[i]]."""

    docnos: list
    keys: list
    types: list
    timestamps: list  # float or None
    tags: list
    piece_of: list
    piece_documents: list
    pieces: list = field(default_factory=list)
    undecoded: list = field(default_factory=list)

    @classmethod
    def of_documents(cls, documents) -> "Sources":
        documents = list(documents)
        return cls([document.docno for document in documents], [document.key for document in documents],
                   [document.type for document in documents], [document.timestamp for document in documents],
                   [tuple(document.tags) for document in documents], [-1] * len(documents),
                   list(range(len(documents))), undecoded=[document.fields for document in documents])


@dataclass
class _Entries:
    """Postings of a whole segment: entries sorted by (term, document, field), positions entry by entry."""

    terms: list  # sorted term strings; entry_terms index it
    entry_terms: np.ndarray
    documents: np.ndarray
    fields: np.ndarray
    frequencies: np.ndarray
    positions: np.ndarray


@dataclass
class DocumentTable:
    docnos: np.ndarray
    keys: list
    types: list
    timestamps: np.ndarray
    tags: list  # per document, a sequence of tag names
    lengths: np.ndarray  # int[documents, fields]


def build(documents, deleted=(), signature: dict | None = None) -> tuple[dict, dict]:
    """Columns and meta for `documents` (Document objects in any order; docnos unique) and the `deleted`
    docnos."""
    return build_sources(Sources.of_documents(documents), deleted, signature)


def build_sources(sources: Sources, deleted=(), signature: dict | None = None) -> tuple[dict, dict]:
    entries, table, field_names = _from_sources(sources)
    return _assemble(entries, table, field_names, deleted, signature)


def build_memory(documents, deleted=(), signature: dict | None = None):
    """A TextSegment over `documents` (Document objects or Sources) that stays decoded: no varints, no front
    coding. A snapshot's unflushed documents become one of these on every open, so it must cost little more
    than sorting."""
    from engine.text.keys import KeyList
    from engine.text.memory import MemoryDictionary, MemoryPostings
    from engine.text.reader import TextSegment

    sources = documents if isinstance(documents, Sources) else Sources.of_documents(documents)
    entries, table, field_names = _from_sources(sources)
    # The search decodes a segment's postings into int64 arrays; the decoded part must look the same.
    entries = _Entries(entries.terms, *(np.asarray(column, dtype=np.int64) for column in (
        entries.entry_terms, entries.documents, entries.fields, entries.frequencies, entries.positions)))
    columns, meta = document_columns(table, field_names, deleted, signature)
    counts = np.bincount(entries.entry_terms, minlength=len(entries.terms))
    columns["entry_counts"] = counts
    first_of_document = postings._run_starts(entries.documents) | postings._run_starts(entries.entry_terms)
    columns["document_frequencies"] = np.bincount(entries.entry_terms[first_of_document], minlength=len(entries.terms))
    meta["terms"] = len(entries.terms)
    return TextSegment(columns.__getitem__, meta, names=columns, dictionary=MemoryDictionary(entries.terms),
                       postings=MemoryPostings(entries, counts, table.docnos.size), keys=KeyList(table.keys))


def _from_sources(sources: Sources) -> tuple:
    docnos = np.array(sources.docnos, dtype=np.int64)
    order = np.argsort(docnos, kind="stable")
    docnos = docnos[order]
    local = np.empty(order.size, dtype=np.int64)
    local[order] = np.arange(order.size)
    token_pieces = list(sources.pieces)
    piece_of = np.array(sources.piece_of, dtype=np.int64)
    if sources.undecoded:
        token_pieces.append(pieces.decode_piece(sources.undecoded))
        piece_of[piece_of < 0] = len(token_pieces) - 1
    piece_documents = np.array(sources.piece_documents, dtype=np.int64)
    placements = []
    for number, piece in enumerate(token_pieces):
        chosen = piece_of == number
        placement = np.full(piece.document_count, -1, dtype=np.int64)
        placement[piece_documents[chosen]] = local[chosen]
        placements.append(placement)
    entries, lengths, field_names = _tokens_to_entries(token_pieces, placements, order.size)
    in_order = _in_order(order)
    timestamps = sources.timestamps if sources.timestamps.count(None) < len(sources.timestamps) else ()
    table = DocumentTable(
        docnos=docnos,
        keys=in_order(sources.keys),
        types=in_order(sources.types),
        timestamps=np.array([np.nan if timestamp is None else float(timestamp) for timestamp in in_order(timestamps)],
                            dtype=np.float64) if timestamps else np.full(order.size, np.nan),
        tags=in_order(sources.tags),
        lengths=lengths,
    )
    return entries, table, field_names


def _in_order(order: np.ndarray):
    """A function giving a list's items in `order` (the list itself when that changes nothing)."""
    if not order.size or (np.diff(order) == 1).all():
        return lambda items: items
    ordered = order.tolist()
    return lambda items: [items[index] for index in ordered]


def _tokens_to_entries(token_pieces: list, placements: list, document_count: int) -> tuple:
    """Entries, field lengths [documents, fields] and field names of the placed documents of the pieces
    (placements[p][d]: the segment's document of document d of piece p, -1 for none)."""
    chosen = []  # per piece: its placed runs and their segment documents
    names: set = set()
    for piece, placement in zip(token_pieces, placements):
        run_documents = placement[piece.run_documents]
        kept = run_documents >= 0
        chosen.append((kept, run_documents[kept]))
        # Field numbers present, by counting (np.unique would import numpy.ma: opening a store whose documents are
        # still in the WAL builds them here, in every cold process).
        names.update(piece.field_names[number] for number in np.flatnonzero(np.bincount(piece.run_fields[kept])))
    field_names = sorted(names)
    slots = max(1, len(field_names))
    field_numbers = {name: number for number, name in enumerate(field_names)}
    lengths = np.zeros((document_count, slots), dtype=np.uint32)
    # Token arrays in 32 bits: a flush's temporaries are tens of MB, and fresh memory costs page faults.
    place_type = np.int32 if document_count * slots < 1 << 31 else np.int64
    codes, places, positions = [], [], []  # of the placed tokens, piece after piece
    for piece, (kept, run_documents) in zip(token_pieces, chosen):
        field_map = np.array([field_numbers.get(name, 0) for name in piece.field_names] or [0], dtype=np.int64)
        run_places = run_documents * slots + field_map[piece.run_fields[kept]]
        run_lengths = piece.run_lengths[kept]
        lengths.flat[run_places] = run_lengths
        token_kept = slice(None) if kept.all() else np.repeat(kept, piece.run_lengths)
        codes.append(piece.token_terms[token_kept])
        places.append(np.repeat(run_places.astype(place_type), run_lengths))
        positions.append(piece.positions[token_kept])
    terms, token_terms = _ranked_terms([piece.vocabulary for piece in token_pieces], codes)
    places = np.concatenate(places) if places else np.zeros(0, place_type)
    positions = np.concatenate(positions) if positions else np.zeros(0, np.int32)
    if positions.size and (positions.max() >= 1 << 31 or positions.min() < 0):
        raise ValueError("token positions must lie in [0, 2**31)")
    kernels = chosen_build_kernels()
    entry_terms, entry_places, frequencies, positions = (
        kernels.sorted_entries(token_terms, places, positions, len(terms), document_count * slots) if kernels
        else _sorted_entries(token_terms, places, positions, len(terms)))
    if slots == 1:  # np.zeros, not zeros_like: fresh zero pages cost nothing until written, and these are only read
        entry_documents, entry_fields = entry_places, np.zeros(entry_places.shape, entry_places.dtype)
    else:
        entry_documents, entry_fields = entry_places // slots, entry_places % slots
    return _Entries(terms, entry_terms, entry_documents, entry_fields, frequencies, positions), lengths, field_names


def _sorted_entries(token_terms: np.ndarray, places: np.ndarray, positions: np.ndarray, term_count: int) -> tuple:
    """(entry terms, entry places, frequencies, positions in entry order, int32): entries in (term, place) order,
    each one's positions ascending (engine.text.build_kernels.sorted_entries with numpy)."""
    place_bits = int(places.max()).bit_length() if places.size else 0
    position_bits = int(positions.max()).bit_length() if positions.size else 0
    if (term_count - 1).bit_length() + place_bits + position_bits <= 63:
        return _sorted_packed_entries(token_terms, places, positions, place_bits, position_bits)
    order = _token_order(token_terms, places, positions, term_count)
    token_terms, places, positions = token_terms[order], places[order], positions[order].astype(np.int32, copy=False)
    del order
    boundaries = np.flatnonzero(np.r_[True, (token_terms[1:] != token_terms[:-1]) | (places[1:] != places[:-1])]) \
        if token_terms.size else np.zeros(0, np.int64)
    return token_terms[boundaries], places[boundaries], np.diff(np.append(boundaries, token_terms.size)), positions


def _sorted_packed_entries(token_terms: np.ndarray, places: np.ndarray, positions: np.ndarray, place_bits: int,
                           position_bits: int) -> tuple:
    """_sorted_entries of tokens whose (term, place, position) fit one int64 key, packed in that order: numpy
    sorts such keys in place (a vectorized quicksort, ten times its stable sorts), and equal keys are equal
    tokens, so no order of ties is lost. The columns come back out of the sorted keys by shifts and masks."""
    keys = token_terms.astype(np.int64) << (place_bits + position_bits)
    keys |= places.astype(np.int64) << position_bits
    keys |= positions
    keys.sort()
    entry_keys = keys >> position_bits  # (term, place)
    boundaries = np.flatnonzero(postings._run_starts(entry_keys))
    entry_keys = entry_keys[boundaries]
    keys &= (1 << position_bits) - 1
    return ((entry_keys >> place_bits).astype(np.int32), (entry_keys & ((1 << place_bits) - 1)).astype(places.dtype),
            np.diff(boundaries, append=keys.size), keys.astype(np.int32))


def _ranked_terms(vocabularies: list, codes: list) -> tuple[list, np.ndarray]:
    """The sorted terms the tokens use (tokens of piece i: codes[i] in vocabularies[i]), and every token's
    index among them (int32)."""
    groups: dict = {}  # id of a vocabulary → (vocabulary, numbers of the pieces coded in it)
    for number, vocabulary in enumerate(vocabularies):
        groups.setdefault(id(vocabulary), (vocabulary, []))[1].append(number)
    used = []  # per vocabulary: the codes its tokens use, and their terms
    for vocabulary, numbers in groups.values():
        in_use = np.zeros(vocabulary.code_space, dtype=bool)
        for number in numbers:
            in_use[codes[number]] = True
        all_codes, all_terms = vocabulary.entries()
        kept = np.flatnonzero(in_use[all_codes])
        used.append((all_codes[kept], all_terms if kept.size == len(all_terms) else
                     [all_terms[index] for index in kept.tolist()]))
    terms = sorted(used[0][1]) if len(used) == 1 else sorted(set().union(*(names for _codes, names in used)))
    ranks = dict(zip(terms, range(len(terms))))
    remaps = {}
    for (vocabulary, _numbers), (used_codes, names) in zip(groups.values(), used):
        remap = remaps[id(vocabulary)] = np.zeros(vocabulary.code_space, dtype=np.int32)
        remap[used_codes] = np.fromiter(map(ranks.__getitem__, names), dtype=np.int32, count=len(names))
    coded = [remaps[id(vocabulary)][piece_codes] for vocabulary, piece_codes in zip(vocabularies, codes)]
    return terms, np.concatenate(coded) if coded else np.zeros(0, np.int32)


def _token_order(terms: np.ndarray, places: np.ndarray, positions: np.ndarray, term_count: int) -> np.ndarray:
    """Order by (term, place, position). Tokens arrive nearly in (place, position) order (documents in a
    row, positions ascending but for search-mode sub-words), which a stable sort finishes in one pass; then
    stable radix passes over 16-bit digits of the term (numpy radix-sorts 16-bit keys, and its stable sort
    of wider ones is a merge sort ten times slower on a flush's millions of tokens)."""
    if terms.size == 0:
        return np.zeros(0, dtype=np.int64)
    position_bits = int(positions.max()).bit_length()
    key_bits = int(places.max()).bit_length() + position_bits
    if key_bits > 63:
        order = np.lexsort((positions, places))
    else:
        key_type = np.int32 if key_bits <= 31 else np.int64
        order = np.argsort((places.astype(key_type) << position_bits) | positions.astype(key_type), kind="stable")
    for shift in range(0, max(1, (term_count - 1).bit_length()), 16):
        digits = terms[order] if shift == 0 else terms[order] >> shift
        order = order[np.argsort(digits.astype(np.uint16), kind="stable")]  # the low 16 bits: the digit
    return order


def _assemble(entries: _Entries, table: DocumentTable, field_names: list, deleted, signature) -> tuple[dict, dict]:
    columns, meta = document_columns(table, field_names, deleted, signature)
    columns.update(keys.encode(table.keys))
    kernels = chosen_build_kernels()
    encode = kernels.encode_postings if kernels else postings.encode
    encoded = encode(entries.entry_terms, entries.documents, entries.fields, entries.frequencies, entries.positions,
                     len(entries.terms), meta["field_slots"], meta["plain_field"])
    columns.update(termdict.encode(entries.terms))
    columns.update(vars(encoded))
    if meta["field_slots"] == 1:
        del columns["document_frequencies"]  # one field: every entry is its own document
    meta["terms"] = len(entries.terms)
    return columns, meta


def document_columns(table: DocumentTable, field_names: list, deleted, signature) -> tuple[dict, dict]:
    if table.docnos.size and (np.diff(table.docnos) <= 0).any():
        raise ValueError("document numbers must be unique")
    length_sums = [int(total) for total in table.lengths.sum(axis=0, dtype=np.int64)][:len(field_names)]
    columns = {}
    contiguous = bool(table.docnos.size) and int(table.docnos[-1] - table.docnos[0]) == table.docnos.size - 1
    if not contiguous:
        columns["docnos"] = narrow(table.docnos)
    columns["field_lengths"] = narrow(table.lengths)
    if len(deleted):
        columns["deleted"] = sorted_unique(np.asarray(list(deleted), dtype=np.uint64))
    if not np.isnan(table.timestamps).all():
        columns["timestamps"] = table.timestamps.astype(np.float64)
    type_names = sorted({name for name in table.types if name is not None})
    if type_names:
        type_codes = {name: code + 1 for code, name in enumerate(type_names)}
        columns["document_types"] = narrow(np.array([type_codes.get(name, 0) for name in table.types]))
    if any(table.tags):
        columns.update(_tag_columns(table.tags))
    meta = {
        "version": TEXT_SEGMENT_VERSION,
        "documents": int(table.docnos.size),
        "terms": 0,
        "fields": field_names,
        "field_slots": max(1, len(field_names)),
        "plain_field": int(np.argmax(length_sums)) if length_sums else 0,
        "first_docno": int(table.docnos[0]) if contiguous else None,
        "length_sums": length_sums,
        "types": type_names,
        "block_entries": TEXT_BLOCK_ENTRIES,
        "terms_per_block": TEXT_TERMS_PER_BLOCK,
        "tokenizer": signature or {},
    }
    return columns, meta


def _tag_columns(tags_per_document: list) -> dict:
    names = sorted({tag for tags in tags_per_document for tag in tags})
    ids = {name: index for index, name in enumerate(names)}
    per_document = [sorted({ids[tag] for tag in tags}) for tags in tags_per_document]
    columns = {}
    columns["tag_bytes"], columns["tag_offsets"] = encode_strings(names)
    columns["document_tag_offsets"] = narrow(np.cumsum([0] + [len(tags) for tags in per_document]))
    columns["document_tags"] = narrow(np.array([tag for tags in per_document for tag in tags]))
    return columns


def encode_strings(strings: list) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 blob and uint64[n + 1] offsets."""
    encoded = [text.encode("utf-8") for text in strings]
    offsets = narrow(np.cumsum([0] + [len(data) for data in encoded], dtype=np.int64))
    return np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), offsets
