"""Node records of one store snapshot, read once each: a recall touches a few hundred nodes, a batch of
recalls many of the same ones again."""

from __future__ import annotations

from engine.format import GRAPH_NODE_TABLE

CACHE_LIMIT = 200_000


class Nodes:
    def __init__(self, store, graph):
        self.store = store
        self.graph = graph
        self._records: dict = {}
        self._type_names = None

    def record(self, key: str) -> dict | None:
        found = self._records.get(key, False)
        if found is False:
            found = self.store.get(GRAPH_NODE_TABLE, key)
            if found is not None and found.get("deleted"):
                found = None
            if len(self._records) >= CACHE_LIMIT:
                self._records.clear()
            self._records[key] = found
        return found

    def props(self, key: str) -> dict:
        record = self.record(key)
        return (record or {}).get("props") or {}

    def attribute(self, key: str, name: str):
        return (self.props(key).get("attributes") or {}).get(name)

    def type(self, key: str) -> str | None:
        record = self.record(key)
        if record is None:
            return None
        if self._type_names is None:
            self._type_names = self.graph.type_names("node")
        return self._type_names.get(record["type"])

    def exists(self, key: str) -> bool:
        return self.record(key) is not None
