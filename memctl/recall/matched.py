"""What a recall result matched, as its card's path shows it: the query's own words, and the field of the node
each matched in.

Stage A matches index terms, which are stems ("favourit") and code parts ("win", "11"): a card names the query
words that produced them instead ("favourite", "Win11"). A NodeIndex hit says which of its document's fields
held each term (memctl.node_documents: an Episode's `turn`, `speaker`, `date`, `caption`, `context`, or a
node's `title`, `text`, `keywords`, `entities`), so a word that only the reply context holds is not shown as
if the turn said it. A raw passage matched the raw turn's text (`turn`); a graph-filter seed, the node
properties holding the word (`keywords`, `tags`, `entities`, `title`, `aliases`).
"""

from __future__ import annotations

import re

RAW_TURN_FIELD = "turn"
# A card lists the fields a turn's own words are in first, the summaries after.
FIELD_ORDER = ("turn", "caption", "speaker", "date", "context", "title", "text", "keywords", "entities", "tags",
               "aliases")
_CHUNK = re.compile(r"\S+")
_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def describe(candidate, query: str, search) -> dict:
    """{"matched": the index terms (as stage A used them), "words": the query words they came from, in query
    order, "fields": {field: [words]} (empty when unknown)} of a seed candidate; `search`: the NodeSearch, or
    None."""
    from memctl.recall.pipeline import RAW_PASSAGE

    raw_hit = candidate.raw_hit
    terms = list(raw_hit.terms if raw_hit is not None and candidate.type == RAW_PASSAGE else candidate.terms)
    if candidate.fields is not None:
        places = candidate.fields
    elif candidate.docno is not None and search is not None:
        places = search.searcher.matched_fields(candidate.docno, terms)
    elif raw_hit is not None:
        places = {term: [RAW_TURN_FIELD] for term in terms}
    else:
        places = {}
    tokenizer = search.tokenizer.tokenizer if search is not None else _plain_tokenizer()
    word_of = QueryWords(query, tokenizer)
    fields: dict = {}
    for term in terms:
        for name in places.get(term, ()):
            words = fields.setdefault(name, [])
            if word_of(term) not in words:
                words.append(word_of(term))
    ordered = sorted(fields, key=lambda name: (FIELD_ORDER.index(name) if name in FIELD_ORDER else len(FIELD_ORDER),
                                                name))
    return {"matched": terms, "words": word_of.in_query_order(map(word_of, terms)),
            "fields": {name: word_of.in_query_order(fields[name]) for name in ordered}}


class QueryWords:
    """Maps an index term back to the word of the query that produced it: the query's whitespace-separated
    words (punctuation at their ends left out), each tokenized as the index tokenizes; a CJK term is a piece of
    the query as it stands. A term no query word produced stays as it is."""

    def __init__(self, query: str, tokenizer):
        self.query = query
        self.tokenizer = tokenizer
        self.words: dict = {}
        for match in _CHUNK.finditer(query):
            word = _EDGE_PUNCTUATION.sub("", match.group())
            for term in self._terms(word):
                self.words.setdefault(term, word)

    def _terms(self, text: str) -> list:
        return [term for term in self.tokenizer.query_tokens(text, None, "bigram")[0] if not _CJK.search(term)]

    def __call__(self, term: str) -> str:
        found = self.words.get(term)
        if found is None:  # a graph-filter word ("drivers") whose stem the query holds ("driver")
            found = next((self.words[part] for part in self._terms(term) if part in self.words), term)
        return found

    def in_query_order(self, words) -> list:
        """`words` each once, in the order the query holds them (any it does not hold last); a CJK word inside
        another of them is left out (the index also holds the pieces of a long CJK word: 打不开, 不开)."""
        folded = self.query.casefold()
        words = list(dict.fromkeys(words))
        words = [word for word in words if not (_CJK.search(word) and any(word != other and word in other
                                                                          for other in words))]

        def place(word: str) -> tuple:
            found = folded.find(word.casefold())
            return (found if found >= 0 else len(folded), word)

        return sorted(words, key=place)


def _plain_tokenizer():
    from engine.text.tokenizer import Tokenizer

    return Tokenizer(cjk="bigram")
