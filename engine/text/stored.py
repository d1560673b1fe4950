"""How a `text.doc` record keeps a field's tokens: a string and a byte string, not two lists.

    record["tokens"][field]      str: the field's terms in text order, joined by single spaces (a term never
                                 holds whitespace: the tokenizer splits text at it)
    record["positions"][field]   bytes: one little-endian u16 per term when every position is below 65,536,
                                 else one u32 per term

A document whose only field is DEFAULT_FIELD (text given alone, the common case) keeps that field's terms
and positions as record["tokens"] and record["positions"] themselves, without the maps, and its text, when
kept, as record["fields"] itself (else a map {field: text}).

A list of 20 short strings and 20 integers costs msgpack, the WAL and every flush 40 objects per field; one
string and one byte string pack, unpack and split at C speed. Without the maps, a record of the default
field holds no container at all, so Python's cyclic collector never tracks it, and each map left out is one
object less to make, pack and free per document. Records of format 2 hold [terms, positions] pairs under
"tokens" and no "positions"; `record_fields` reads every layout.

A stored field, as the functions here take and give it, is the pair (terms, positions)."""

from __future__ import annotations

import sys
from array import array

import numpy as np

from engine.errors import CorruptionError

SEPARATOR = " "
DEFAULT_FIELD = "text"  # the field of a document given as text alone
_WIDTHS = {2: "H", 4: "I"}


def encode(terms: list, positions: list) -> tuple[str, bytes]:
    return join_terms(terms, positions), positions_bytes(positions_array(positions), [len(positions)])[0]


def record_fields(record: dict) -> dict:
    """field → stored field of a text.doc record of format 3 or 2; ValueError when it is malformed."""
    tokens, positions = record["tokens"], record.get("positions")
    if positions is None:
        return tokens  # format 2: the pairs themselves
    if type(tokens) is str:  # a document of the default field alone
        return {DEFAULT_FIELD: (tokens, positions)}
    if not isinstance(tokens, dict) or not isinstance(positions, dict) or tokens.keys() != positions.keys():
        raise ValueError("a text document's tokens and positions name different fields")
    return {name: (terms, positions[name]) for name, terms in tokens.items()}


def record_texts(record: dict) -> dict | None:
    """field → text of a text.doc record that keeps its text, else None."""
    texts = record.get("fields")
    return {DEFAULT_FIELD: texts} if type(texts) is str else texts


def join_terms(terms: list, positions: list) -> str:
    """The terms of a field as stored; ValueError when a term is empty or holds a space, or the positions
    are not one per term."""
    joined = SEPARATOR.join(terms)
    if joined.count(SEPARATOR) != max(len(terms) - 1, 0) or "" in terms or len(positions) != len(terms):
        raise ValueError("index terms must be non-empty, hold no spaces and have one position each")
    return joined


def positions_array(positions) -> np.ndarray:
    """uint32 array of integer positions in [0, 2**32) (any iterable, read at C speed); ValueError otherwise."""
    try:
        values = array("I", positions)  # 32-bit unsigned: the range check comes with the conversion
    except (TypeError, OverflowError):
        raise ValueError("token positions must be integers in [0, 2**32)") from None
    return np.frombuffer(values, dtype=np.uint32) if values else np.zeros(0, np.uint32)


def positions_bytes(positions: np.ndarray, run_lengths) -> list:
    """The stored positions of many fields at once: field i holds the next run_lengths[i] positions (checked by
    positions_array), as u16 when all of its positions are below 65,536, else as u32."""
    run_lengths = np.asarray(run_lengths, dtype=np.int64)
    ends = np.cumsum(run_lengths)
    starts = ends - run_lengths
    narrow = positions.astype("<u2").tobytes()  # the runs holding a wider position are redone below
    found = [narrow[2 * start: 2 * end] for start, end in zip(starts.tolist(), ends.tolist())]
    if positions.size and positions.max() >= 1 << 16:
        nonempty = np.flatnonzero(run_lengths)
        widest = np.maximum.reduceat(positions, starts[nonempty])
        for run in nonempty[widest >= 1 << 16].tolist():
            found[run] = positions[starts[run]:ends[run]].astype("<u4").tobytes()
    return found


def decode(stored, where: str) -> tuple[list, list]:
    """(terms, positions) of a stored field; CorruptionError naming `where` when the two do not match."""
    try:
        joined, data = stored
        terms = joined.split(SEPARATOR) if joined else []
        width = len(data) // len(terms) if terms else 2
        positions = array(_WIDTHS[width], data)
    except (TypeError, ValueError, KeyError):
        raise CorruptionError(where, None, "stored tokens are malformed") from None
    if len(positions) != len(terms):
        raise CorruptionError(where, None, "stored tokens and positions differ in number")
    if sys.byteorder == "big":
        positions.byteswap()
    return terms, positions.tolist()


def decode_all(stored_fields: list) -> tuple[list, list, np.ndarray, list]:
    """The stored terms of the fields that have any, every term, every position (int64) and the term count of
    each of many stored fields, in order.

    One join and one split for all the terms, one buffer for all the positions: a flush decodes a million
    tokens without a Python step per token. ValueError when a field's positions do not match its terms."""
    joined, data, counts = [], [], []
    wide = False
    for terms, positions in stored_fields:
        count = terms.count(SEPARATOR) + 1 if terms else 0
        counts.append(count)
        if count:
            joined.append(terms)
            data.append(positions)
            if len(positions) != 2 * count:
                if len(positions) != 4 * count:
                    raise ValueError("stored tokens and positions differ in number")
                wide = True
    all_terms = SEPARATOR.join(joined).split(SEPARATOR) if joined else []
    if not wide:
        positions = np.frombuffer(b"".join(data), dtype="<u2")
    else:
        positions = np.concatenate([np.frombuffer(chunk, dtype="<u2" if len(chunk) == 2 * count else "<u4")
                                    for chunk, count in zip(data, (count for count in counts if count))])
    return joined, all_terms, positions.astype(np.int64), counts
