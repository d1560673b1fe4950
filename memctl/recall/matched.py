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
_FIELD_RANKS = {name: rank for rank, name in enumerate(FIELD_ORDER)}
_CHUNK = re.compile(r"\S+")
_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


class Matches:
    """What the cards of one recall matched: built once for the candidates that become cards, so a NodeIndex
    term's postings are read once for all of them."""

    def __init__(self, query: str, search, candidates: list):
        """`search`: the NodeSearch, or None."""
        self.words = QueryWords(query, search.tokenizer.tokenizer if search is not None else _plain_tokenizer())
        indexed = [candidate for candidate in candidates if candidate.docno is not None and candidate.fields is None]
        self._index_fields = search.searcher.matched_fields(
            [candidate.docno for candidate in indexed],
            sorted({term for candidate in indexed for term in candidate.terms})) if search and indexed else {}

    def describe(self, candidate) -> dict:
        """{"matched": the index terms (as stage A used them), "words": the query words they came from, in query
        order, "fields": {field: [words]} (empty when unknown)} of a candidate found by stage A or the raw
        fallback."""
        from memctl.recall.pipeline import RAW_PASSAGE

        raw_hit = candidate.raw_hit
        terms = list(raw_hit.terms if raw_hit is not None and candidate.type == RAW_PASSAGE else candidate.terms)
        if candidate.fields is not None:
            places = candidate.fields
        elif candidate.docno is not None:
            places = self._index_fields.get(candidate.docno, {})
        elif raw_hit is not None:
            places = {term: [RAW_TURN_FIELD] for term in terms}
        else:
            places = {}
        word_of = self.words
        words = [word_of(term) for term in terms]
        fields: dict = {}
        for term, word in zip(terms, words):
            for name in places.get(term, ()):
                fields.setdefault(name, []).append(word)
        return {"matched": terms, "words": word_of.in_query_order(words),
                "fields": {name: word_of.in_query_order(fields[name]) for name in sorted(fields, key=_field_rank)}}


class QueryWords:
    """Maps an index term back to the word of the query that produced it: the query's whitespace-separated
    words (punctuation at their ends left out), each tokenized as the index tokenizes; a CJK term is a piece of
    the query as it stands. A term no query word produced stays as it is."""

    def __init__(self, query: str, tokenizer):
        self.tokenizer = tokenizer
        self.words: dict = {}
        self._folded = query.casefold()
        self._places: dict = {}  # word → its sort key
        for match in _CHUNK.finditer(query):
            word = _EDGE_PUNCTUATION.sub("", match.group())
            for term in self._terms(word):
                self.words.setdefault(term, word)

    def _terms(self, text: str) -> list:
        return [term for term in self.tokenizer.query_tokens(text, None, "bigram")[0] if not _CJK.search(term)]

    def __call__(self, term: str) -> str:
        found = self.words.get(term)
        if found is None:  # a graph-filter word ("drivers") whose stem the query holds ("driver")
            found = self.words[term] = next((self.words[part] for part in self._terms(term) if part in self.words),
                                            term)
        return found

    def in_query_order(self, words) -> list:
        """`words` each once, in the order the query holds them (any it does not hold last); a CJK word inside
        another of them is left out (the index also holds the pieces of a long CJK word: 打不开, 不开)."""
        unique = set(words)
        if len(unique) > 1 and any(_CJK.search(word) for word in unique):
            unique = {word for word in unique if not (_CJK.search(word) and any(word != other and word in other
                                                                                for other in unique))}
        return sorted(unique, key=self._place)

    def _place(self, word: str) -> tuple:
        place = self._places.get(word)
        if place is None:
            found = self._folded.find(word.casefold())
            place = self._places[word] = (found if found >= 0 else len(self._folded), word)
        return place


def _field_rank(name: str) -> tuple:
    return (_FIELD_RANKS.get(name, len(FIELD_ORDER)), name)


def _plain_tokenizer():
    from engine.text.tokenizer import Tokenizer

    return Tokenizer(cjk="bigram")
