"""Answers of graph reads as arrays, with keys decoded only for the rows a caller asks for: a hub's million
edges never become a million Python objects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.graph.kind import GraphSnapshot
from engine.graph.traverse import EdgeSet, Reached

if TYPE_CHECKING:
    from engine.graph.api import GraphStore


@dataclass(frozen=True)
class Neighbors:
    """Edges from one node as arrays (`edges`); `rows()` decodes keys for the first `limit` only."""

    graph: GraphStore
    snapshot: GraphSnapshot
    edges: EdgeSet

    def __len__(self) -> int:
        return len(self.edges)

    def rows(self, limit: int | None = None) -> list[dict]:
        edges = self.edges.take(slice(0, limit))
        names = self.graph.type_names("edge")
        return [{"key": key, "edge": edge, "type": names.get(kind, str(kind)), "weight": round(float(weight), 6)}
                for key, edge, kind, weight in zip(self.snapshot.node_keys(edges.neighbor),
                                                   self.snapshot.edge_keys(edges.edge_id),
                                                   edges.edge_type.tolist(), edges.weight.tolist())]


@dataclass(frozen=True)
class KHop:
    """k-hop result as arrays (`reached`); `rows()` decodes keys."""

    snapshot: GraphSnapshot
    reached: Reached

    def __len__(self) -> int:
        return len(self.reached)

    def rows(self, limit: int | None = None) -> list[dict]:
        reached = self.reached
        count = len(reached) if limit is None else min(limit, len(reached))
        nodes = self.snapshot.node_keys(reached.node[:count])
        parents = self.snapshot.node_keys(reached.parent[:count])
        edges = self.snapshot.edge_keys(reached.edge_id[:count])
        return [{"key": node, "hop": hop, "via": edge if hop else None, "parent": parent if hop else None}
                for node, hop, edge, parent in zip(nodes, reached.hop[:count].tolist(), edges, parents)]
