"""Helpers for the text index tests (a uniquely named module, not conftest)."""

from __future__ import annotations

import math
from collections import Counter

from engine.text import stored
from engine.text.build import Document, build
from engine.text.reader import TextSegment


def document(tokenizer, docno, key, fields, **extra) -> Document:
    if isinstance(fields, str):
        fields = {"text": fields}
    return Document(docno, key, {name: stored.encode(*tokenizer.index_tokens(text)) for name, text in fields.items()},
                    **extra)


def tokens_of(doc: Document) -> dict:
    """field → terms of a test document."""
    return {name: stored.decode(tokens, doc.key)[0] for name, tokens in doc.fields.items()}


def segment(documents, deleted=()) -> TextSegment:
    return TextSegment.from_columns(*build(documents, deleted))


def reference_bm25(documents, query_terms, k1=1.2, b=0.75, delta=1.0, weights=None):
    """Textbook BM25F + BM25+ over live tokenized documents: {key: score} of the documents matching a term."""
    weights = weights or {}
    fields = sorted({name for doc in documents for name in doc.fields})
    count = len(documents)
    tokens = {doc.key: tokens_of(doc) for doc in documents}
    average = {name: sum(len(tokens[doc.key].get(name, [])) for doc in documents) / count for name in fields}
    frequency = Counter(term for doc in documents for term in {t for terms in tokens[doc.key].values() for t in terms})
    scores = {}
    for doc in documents:
        total = 0.0
        matched = False
        for term, query_frequency in Counter(query_terms).items():
            pseudo = 0.0
            for name in fields:
                terms = tokens[doc.key].get(name, [])
                occurrences = terms.count(term)
                if occurrences:
                    norm = (1 - b) + b * len(terms) / average[name]
                    pseudo += weights.get(name, 1.0) * occurrences / norm
            if pseudo:
                matched = True
                idf = math.log((count + 1) / frequency[term])
                total += query_frequency * idf * ((k1 + 1) * pseudo / (k1 + pseudo) + delta)
        if matched:
            scores[doc.key] = total
    return scores
