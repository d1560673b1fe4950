"""Tokens of many documents as arrays (a TokenPiece), and the pieces a writer keeps for its next flush.

A piece codes its terms against its own vocabulary and keeps one run of tokens per (document, field): what
a build needs, with no Python object per token. add_many makes one per batch while it analyses (the string
of every term exists then anyway); records read back (WAL replay, another writer's batches) are decoded
into one. Mapping 1.4M term strings to numbers is most of a 100k-document build's cost, and the strings
split back out of the records cost as much again: a flush that finds the batch's piece pays neither.

PendingTokens holds the pieces of a writer's unflushed batches, keyed by the store (weakly: a closed
store's pieces go with it). A flush uses a document's piece only when the record's tokens are the very
value (or an equal one) the piece was made from, so a replaced, replayed or foreign record is decoded from
the record as before: the records stay the source of truth, and the pieces a shortcut to the same arrays.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from itertools import count, repeat

import numpy as np

from engine.text import stored


class Vocabulary:
    """Terms coded by the number of the token that first used them (counted over every piece coded here):
    one dict operation per token at C speed; a build ranks the terms it keeps once, per vocabulary."""

    def __init__(self):
        self.codes: dict = {}  # term → its code; insertion order is code order
        self.tokens = 0

    def code(self, terms: list) -> np.ndarray:
        codes = np.fromiter(map(self.codes.setdefault, terms, count(self.tokens)), dtype=np.int64, count=len(terms))
        self.tokens += len(terms)
        return codes


@dataclass
class TokenPiece:
    vocabulary: Vocabulary  # may be shared with other pieces
    token_terms: np.ndarray  # the vocabulary's code of each token
    positions: np.ndarray  # int64 per token
    run_lengths: np.ndarray  # tokens of each run; a run is one field of one document, runs in token order
    run_documents: np.ndarray  # the piece's number of each run's document
    run_fields: np.ndarray  # index into field_names of each run's field
    field_names: list
    document_count: int


def make_piece(vocabulary: Vocabulary, terms: list, positions: np.ndarray, run_lengths: list, run_documents: list,
               run_fields: list, field_names: list, document_count: int) -> TokenPiece:
    return TokenPiece(vocabulary, vocabulary.code(terms), positions, np.asarray(run_lengths, dtype=np.int64),
                      np.asarray(run_documents, dtype=np.int64), np.asarray(run_fields, dtype=np.int64),
                      field_names, document_count)


def decode_piece(documents_fields: list) -> TokenPiece:
    """The piece of documents given as their records' token maps ({field: stored tokens}); ValueError when
    stored tokens are malformed."""
    field_numbers: dict = {}
    stored_fields, run_documents, run_fields = [], [], []
    for local, fields in enumerate(documents_fields):
        for name, tokens in fields.items():
            stored_fields.append(tokens)
            run_documents.append(local)
            run_fields.append(field_numbers.setdefault(name, len(field_numbers)))
    all_terms, positions, run_lengths = stored.decode_all(stored_fields)
    return make_piece(Vocabulary(), all_terms, positions, run_lengths, run_documents, run_fields, list(field_numbers),
                      len(documents_fields))


class PendingTokens:
    """The pieces of one writer's batches since its last flush."""

    def __init__(self):
        self.vocabulary = Vocabulary()
        self.pieces: list = []
        self.lookup: dict = {}  # docno → (the record's tokens value, piece index, document in the piece)

    def add(self, piece: TokenPiece, docnos: list, tokens_values: list) -> None:
        number = len(self.pieces)
        self.pieces.append(piece)
        self.lookup.update(zip(docnos, zip(tokens_values, repeat(number), range(len(docnos)))))

    def find(self, docno, tokens):
        """(piece index, document in the piece) holding these tokens of `docno`, or None."""
        found = self.lookup.get(docno)
        if found is None or (found[0] is not tokens and found[0] != tokens):
            return None
        return found[1], found[2]


_PENDING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def pending_of(store) -> PendingTokens:
    found = _PENDING.get(store)
    if found is None:
        found = _PENDING[store] = PendingTokens()
    return found


def peek(store) -> PendingTokens | None:
    return _PENDING.get(store)


def take(store) -> PendingTokens | None:
    """The store's pieces, forgotten here: a flush empties the memtable they stand for."""
    return _PENDING.pop(store, None)
