"""Plain documents in their keyword index (`memctl index`, `memctl search`): BM25+ over engine/text, with the
tokenizer and BM25 parameters of the tenant's `index` settings. Reached through `Memory.documents`.

INDEX names the one text index these documents live in; nothing else here says which.
"""

from __future__ import annotations

from memctl.indexes import DOCUMENTS as INDEX


class Documents:
    def __init__(self, memory):
        self._memory = memory

    def add_files(self, paths, type: str | None = None, tags=(), errors: str = "strict", stdin=None) -> dict:
        """Index files, directories (read recursively) and "-" (`stdin`) as documents keyed by file name (see
        memctl/document_files.py), as one atomic batch; every file is checked before the store is touched."""
        from memctl.document_files import read_documents

        documents = read_documents(paths, type, tags, errors, self._memory.config.get("ingest.max_file_bytes"),
                                   stdin)
        return self.add(documents)

    def add(self, documents: list[dict]) -> dict:
        """Index documents ({"key", "fields": {name: text}, "type", "timestamp", "tags"}) as one atomic batch;
        a key indexed before is replaced: {"indexed", "replaced", "keys"}."""
        index = self._index()
        replaced = sum(index.get(document["key"]) is not None for document in documents)
        index.add_many(documents)
        return {"indexed": len(documents), "replaced": replaced, "keys": [document["key"] for document in documents]}

    def delete(self, keys) -> list[str]:
        """Remove the documents `keys` as one atomic batch; an unknown key removes nothing (InputError)."""
        from engine.errors import InputError

        index = self._index()
        unique = list(dict.fromkeys(keys))
        missing = [key for key in unique if index.get(key) is None]
        if missing:
            raise InputError("no indexed document has this key; nothing was deleted", where=missing[0])
        with self._memory.store.batch() as batch:
            for key in unique:
                index.delete(key, batch=batch)
        return unique

    def search(self, query: str, top: int = 10, types=None, since: float | None = None, until: float | None = None,
               tags=None) -> list[dict]:
        """The best `top` documents for `query` by BM25+, filtered by type, tag and time (epoch seconds):
        [{"rank", "key", "score", "terms" (matched), "type", "timestamp"}]. Chinese is segmented against the
        index's own terms, so a search never loads jieba."""
        tokenizer, parameters = self._settings()
        searcher = self._memory.store.kind(INDEX).searcher(tokenizer, parameters)
        hits = searcher.search(query, top, types=types or None, since=since, until=until, tags=tags or None)
        return [{"rank": rank, "key": hit.key, "score": hit.score, "terms": hit.terms, "type": hit.type,
                 "timestamp": hit.timestamp} for rank, hit in enumerate(hits, start=1)]

    def _index(self):
        from engine.text.index import TextIndex

        return TextIndex(self._memory.store, *self._settings(), owner=INDEX)

    def _settings(self):
        from memctl.settings.text_index import text_settings

        return text_settings(self._memory.config)
