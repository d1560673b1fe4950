"""Nodes of one store snapshot, read once each: a recall touches a few hundred nodes, a batch of recalls many
of the same ones again."""

from __future__ import annotations

CACHE_LIMIT = 200_000


class Nodes:
    def __init__(self, graph):
        self.graph = graph
        self._nodes: dict = {}  # key → engine.graph.model.Node, or None for no live node

    def record(self, key: str):
        """The live node `key` (engine.graph.model.Node: id, type name, props…), or None."""
        found = self._nodes.get(key, False)
        if found is False:
            found = self.graph.node(key)
            if len(self._nodes) >= CACHE_LIMIT:
                self._nodes.clear()
            self._nodes[key] = found
        return found

    def props(self, key: str) -> dict:
        node = self.record(key)
        return (node.props if node is not None else None) or {}

    def attribute(self, key: str, name: str):
        return (self.props(key).get("attributes") or {}).get(name)

    def type(self, key: str) -> str | None:
        node = self.record(key)
        return None if node is None else node.type

    def exists(self, key: str) -> bool:
        return self.record(key) is not None
