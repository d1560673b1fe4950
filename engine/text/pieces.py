"""Tokens of many documents as arrays (a TokenPiece), and the pieces a writer keeps for its next flush.

A piece codes its terms against its own vocabulary and keeps one run of tokens per (document, field): what
a build needs, with no Python object per token. add_many makes one per batch while it analyses (the string
of every term exists then anyway); records read back (WAL replay, another writer's batches) are decoded
into one. Mapping 1.4M term strings to numbers is most of a 100k-document build's cost, and the strings
split back out of the records cost as much again: a flush that finds the batch's piece pays neither.

PendingTokens holds the pieces of a writer's unflushed batches to one text index, keyed by the store
(weakly: a closed store's pieces go with it) and the index's owner ("text:nodes"…). A flush uses a
document's piece only when the memtable holds the very record (or an equal one) the piece was made from, so
a replaced, replayed or foreign record is decoded from the record as before: the records stay the source of
truth, and the pieces a shortcut to the same arrays.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, count

import numpy as np

from engine.text import stored, wants_numba


class Vocabulary:
    """Terms coded by the number of the token that first used them (counted over every piece coded here):
    one dict operation per token at C speed; a build ranks the terms it keeps once, per vocabulary.
    engine.text.term_table.TermTable is the same with numba kernels."""

    def __init__(self):
        self.codes: dict = {}  # term → its code; insertion order is code order
        self.tokens = 0

    @property
    def code_space(self) -> int:
        """Every code is below this."""
        return self.tokens

    def code(self, runs: "TermRuns", total: int) -> np.ndarray:
        """The codes of the `total` terms of `runs`; ValueError for an empty term or one holding the stored
        separator (engine.text.stored), which no text holds: a bad term is new to the vocabulary, so only the
        new terms are checked."""
        dtype = np.int32 if self.tokens + total < 1 << 31 else np.int64
        known = len(self.codes)
        codes = np.fromiter(map(self.codes.setdefault, runs.terms(), count(self.tokens)), dtype=dtype, count=total)
        self.tokens += total
        if len(self.codes) > known:
            new_terms = list(self.codes)[known:]
            if "" in new_terms or stored.SEPARATOR in "".join(new_terms):
                for term in new_terms:
                    del self.codes[term]
                raise ValueError("index terms must be non-empty, hold no spaces and have one position each")
        return codes

    def entries(self) -> tuple[np.ndarray, list]:
        """Every code and its term, in code order."""
        return np.fromiter(self.codes.values(), dtype=np.int64, count=len(self.codes)), list(self.codes)

    def wait(self) -> None:
        """Codes are ready when code() returns (a TermTable's may still be being filled)."""


@dataclass
class TermRuns:
    """Every token's term, run by run: term_lists[i] holds the terms of run i, joined[i] the same terms joined
    by the stored separator (a vocabulary takes whichever it codes faster)."""

    term_lists: Sequence
    joined: Sequence

    def terms(self):
        return chain.from_iterable(self.term_lists)

    def all_joined(self) -> str:
        return stored.SEPARATOR.join(filter(None, self.joined))


@dataclass
class TokenPiece:
    vocabulary: Vocabulary  # may be shared with other pieces
    codes: np.ndarray  # the vocabulary's code of each token, once vocabulary.wait() returns: see token_terms
    positions: np.ndarray  # per token
    run_lengths: np.ndarray  # tokens of each run; a run is one field of one document, runs in token order
    run_documents: np.ndarray  # the piece's number of each run's document
    run_fields: np.ndarray  # index into field_names of each run's field
    field_names: list
    document_count: int
    attributes: bool = True  # False: no document of the piece has a type, a timestamp or tags

    @property
    def token_terms(self) -> np.ndarray:
        self.vocabulary.wait()
        return self.codes


def make_piece(vocabulary, runs: TermRuns, positions: np.ndarray, run_lengths: list, run_documents, run_fields: list,
               field_names: list, document_count: int, attributes: bool = True) -> TokenPiece:
    """runs: every token's term, in run order (len(positions) of them)."""
    if positions.size and positions.max() < 1 << 31:
        positions = positions.astype(np.int32)  # a build refuses larger ones; 32 bits halve what a flush touches
    return TokenPiece(vocabulary, vocabulary.code(runs, positions.size), positions,
                      np.asarray(run_lengths, dtype=np.int64),
                      np.asarray(run_documents, dtype=np.int64), np.asarray(run_fields, dtype=np.int64),
                      field_names, document_count, attributes)


def decode_piece(documents_fields: list) -> TokenPiece:
    """The piece of documents given as {field: stored field} maps (engine.text.stored); ValueError when
    stored fields are malformed."""
    field_numbers: dict = {}
    stored_fields, run_documents, run_fields = [], [], []
    for local, fields in enumerate(documents_fields):
        for name, tokens in fields.items():
            stored_fields.append(tokens)
            run_documents.append(local)
            run_fields.append(field_numbers.setdefault(name, len(field_numbers)))
    joined, all_terms, positions, run_lengths = stored.decode_all(stored_fields)
    return make_piece(Vocabulary(), TermRuns([all_terms], joined), positions, run_lengths, run_documents, run_fields,
                      list(field_numbers), len(documents_fields))


class PendingTokens:
    """The pieces of one writer's batches since its last flush; a piece's documents have consecutive docnos."""

    def __init__(self):
        self._vocabularies: dict = {}  # numba or not → the vocabulary of the batches coded so
        self.pieces: list = []
        self._firsts: list = []  # first docno of each piece, ascending
        self._keys: list = []  # per piece: the keys of its documents
        self._records: list = []  # per piece: the records its documents were analysed into

    def vocabulary(self, kernels: str):
        """The vocabulary of the batches coded by `kernels`: a TermTable (engine.text.term_table) for numba."""
        numba = wants_numba(kernels)
        found = self._vocabularies.get(numba)
        if found is None:
            if numba:
                from engine.text.term_table import TermTable

                found = TermTable()
            else:
                found = Vocabulary()
            self._vocabularies[numba] = found
        return found

    def add(self, piece: TokenPiece, first_docno: int, keys: list, records: list) -> None:
        # A batch that was never committed hands its docnos out again: pieces reaching them are stale.
        kept = [number for number, (first, records_of) in enumerate(zip(self._firsts, self._records))
                if first + len(records_of) <= first_docno]
        if len(kept) < len(self.pieces):
            self.pieces, self._firsts, self._keys, self._records = (
                [column[number] for number in kept] for column in (self.pieces, self._firsts, self._keys, self._records))
        self.pieces.append(piece)
        self._firsts.append(first_docno)
        self._keys.append(keys)
        self._records.append(records)

    def held(self, rows: dict):
        """Per piece: (its number, first docno, keys, records, held), where held (bool array) says of each
        document whether `rows` (text.doc records) still hold the very record it was analysed into, or an
        equal one of the same docno (a batch committed without handing its values over)."""
        for number, (first, keys, records) in enumerate(zip(self._firsts, self._keys, self._records)):
            current = list(map(rows.get, keys))
            held = np.fromiter(map(operator.is_, current, records), dtype=bool, count=len(keys))
            for local in np.flatnonzero(~held).tolist():
                held[local] = _same_analysis(current[local], records[local])
            yield number, first, keys, records, held


def _same_analysis(row, record: dict) -> bool:
    return (isinstance(row, dict) and row.get("docno") == record["docno"] and row.get("tokens") == record["tokens"]
            and row.get("positions") == record["positions"])


_PENDING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # store → {owner: PendingTokens}


def pending_of(store, owner: str) -> PendingTokens:
    of_store = _PENDING.setdefault(store, {})
    found = of_store.get(owner)
    if found is None:
        found = of_store[owner] = PendingTokens()
    return found


def peek(store, owner: str) -> PendingTokens | None:
    return _PENDING.get(store, {}).get(owner)


def take(store, owner: str) -> PendingTokens | None:
    """The pieces of text index `owner`, forgotten here: a flush empties the memtable they stand for."""
    return _PENDING.get(store, {}).pop(owner, None)
