"""The record tables and the counter of one text index instance (MANIFEST.spec §4a).

A store holds any number of text indexes: the unnamed one (owner "text") and named ones ("text:nodes",
"text:documents"). Each keeps its documents, retired docnos, analysis signature and docno counter under its
owner's name, so the instances share no record, statistic or segment.
"""

from __future__ import annotations

from functools import lru_cache

from engine import kinds
from engine.format import TEXT_DEAD, TEXT_DOCNO, TEXT_DOCUMENTS, TEXT_KIND, TEXT_META, owned_name


class TextTables:
    """The names of one instance's tables and counter. (A plain class: a dataclass costs a cold `memctl
    search` a millisecond to define.)"""

    __slots__ = ("owner", "documents", "dead", "meta", "docno")

    def __init__(self, owner: str):
        self.owner = owner
        self.documents = owned_name(owner, TEXT_DOCUMENTS)  # external key → document
        self.dead = owned_name(owner, TEXT_DEAD)  # docno as 16 hex digits → 1
        self.meta = owned_name(owner, TEXT_META)  # "tokenizer" → the analysis signature
        self.docno = owned_name(owner, TEXT_DOCNO)  # counter


@lru_cache(maxsize=None)
def text_tables(owner: str) -> TextTables:
    """The tables of text index `owner`; ValueError when `owner` names no text index."""
    problem = kinds.owner_problem(owner)
    if problem is None and kinds.kind_of(owner) != TEXT_KIND:
        problem = f"{owner!r} is not a text index"
    if problem is not None:
        raise ValueError(problem)
    return TextTables(owner)
