"""GraphStore: the property graph's Python API over one store.

Writes go through a GraphBatch (engine.graph.batch: one store batch, one WAL record, one fsync);
`GraphStore.add_node` and the other single-operation methods open their own. Nodes and edges are addressed by
external keys; internal ids are dense integers allocated from store counters and never reused, so a deleted id
stays deleted.

Reads take the store's `graph` kind snapshot (segments + unflushed records) and answer with numpy arrays
(engine.graph.results); keys are decoded only for the rows a caller asks for.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from engine.errors import InputError
from engine.format import GRAPH_EDGE_TABLE, GRAPH_NODE_TABLE
from engine.graph import pagerank, traverse
from engine.graph.batch import GraphBatch
from engine.graph.kind import KIND_NAME, GraphSnapshot, registered_types
from engine.graph.results import KHop, Neighbors
from engine.graph.traverse import DegreeCap
from engine.graph.validate import check_direction, check_key

if TYPE_CHECKING:
    from engine.graph.memo import ImportMemo


class GraphStore:
    def __init__(self, store, clock=time.time):
        self.store = store
        self.clock = clock
        self._types_generation = None
        self._types: dict = {}

    @contextmanager
    def batch(self, memo: ImportMemo | None = None, owned: bool = False):
        """`with graph.batch() as writer:` several writes, one WAL record and one fsync. owned=True: every
        property value comes from a JSON decoder (no tuples, nothing the caller keeps), see Store.commit."""
        with self.store.batch(owned) as batch:
            writer = GraphBatch(self, batch, memo)
            yield writer
            writer.finish()

    # one-operation writes
    def add_node(self, key, node_type, properties=None, created_at=None) -> int:
        with self.batch() as writer:
            return writer.add_node(key, node_type, properties, created_at)

    def update_node(self, key, node_type=None, properties=None, merge=True) -> int:
        with self.batch() as writer:
            return writer.update_node(key, node_type, properties, merge)

    def delete_node(self, key, purge=False) -> int:
        with self.batch() as writer:
            return writer.delete_node(key, purge)

    def add_edge(self, source, edge_type, target, **fields) -> str:
        with self.batch() as writer:
            return writer.add_edge(source, edge_type, target, **fields)

    def update_edge(self, key, **fields) -> str:
        with self.batch() as writer:
            return writer.update_edge(key, **fields)

    def delete_edge(self, key, purge=False) -> None:
        with self.batch() as writer:
            writer.delete_edge(key, purge)

    # types
    def type_ids(self, kind: str) -> dict:
        """{type name: id} of node or edge types."""
        if self._types_generation != self.store.generation:
            types = {"node": {}, "edge": {}}
            for key, type_id in registered_types(self.store).items():
                kind_name, _, name = key.partition(":")
                types.setdefault(kind_name, {})[name] = type_id
            self._types, self._types_generation = types, self.store.generation
        return self._types.get(kind, {})

    def type_names(self, kind: str) -> dict:
        return {type_id: name for name, type_id in self.type_ids(kind).items()}

    def _type_filter(self, types):
        """Edge type names → ids; an unknown name matches nothing rather than everything."""
        if types is None:
            return None
        if isinstance(types, str):
            types = [types]
        known = self.type_ids("edge")
        return [known[name] for name in types if name in known]

    # reads
    def snapshot(self) -> GraphSnapshot:
        return self.store.kind(KIND_NAME)

    def get_node(self, key: str) -> dict | None:
        record = self.store.get(GRAPH_NODE_TABLE, key)
        if record is None or record.get("deleted"):
            return None
        return {"key": key, "id": record["id"], "type": self.type_names("node").get(record["type"]),
                "props": record.get("props", {}), "created_at": record["created_at"],
                "updated_at": record["updated_at"]}

    def get_edge(self, key: str) -> dict | None:
        record = self.store.get(GRAPH_EDGE_TABLE, key)
        if record is None or record.get("deleted"):
            return None
        source, target = self.snapshot().node_keys([record["src"], record["dst"]])
        return {"key": key, "id": record["id"], "src": source, "dst": target,
                "type": self.type_names("edge").get(record["type"]), "weight": record["weight"],
                "confidence": record["confidence"], "ts": record["ts"],
                "temporal": {"since": record.get("since"), "until": record.get("until")},
                "props": record.get("props", {}),
                "created_at": record["created_at"], "updated_at": record["updated_at"]}

    def node_id(self, key: str, snapshot: GraphSnapshot | None = None) -> int:
        check_key(key, "node key")
        found = (snapshot or self.snapshot()).node_id(key)
        if found is None:
            raise InputError(f"no node {key!r}")
        return found

    def neighbors(self, key: str, direction: str = "out", types=None, limit: int | None = None,
                  cap: DegreeCap | None = None) -> Neighbors:
        snapshot = self.snapshot()
        check_direction(direction)
        edges = traverse.neighbors(snapshot.view, self.node_id(key, snapshot), direction,
                                   self._type_filter(types), limit, self._cap(cap))
        return Neighbors(self, snapshot, edges)

    def khop(self, keys, k: int = 2, types=None, direction: str = "out", max_nodes: int | None = None,
             cap: DegreeCap | None = None) -> KHop:
        snapshot = self.snapshot()
        check_direction(direction)
        if not isinstance(k, int) or k < 0:
            raise InputError(f"k must be a non-negative integer, not {k!r}")
        seeds = [self.node_id(key, snapshot) for key in ([keys] if isinstance(keys, str) else keys)]
        reached = traverse.khop(snapshot.view, seeds, k, self._type_filter(types), direction, max_nodes,
                                self._cap(cap))
        return KHop(snapshot, reached)

    def personalized_pagerank(self, seeds, k: int | None = 2, types=None, direction: str = "out",
                              weights: dict | None = None, damping: float = pagerank.DAMPING,
                              iterations: int = 100, tolerance: float = 1e-6, max_nodes: int | None = None,
                              top: int | None = 20) -> list[tuple[str, float]]:
        """PPR from `seeds` (keys, or {key: weight}) over their k-hop subgraph (k=None: the whole graph).

        weights: {edge type name: weight}; seed 001 appendix A by default, 0.5 for any other type."""
        snapshot = self.snapshot()
        check_direction(direction)
        seed_map = {seeds: 1.0} if isinstance(seeds, str) else dict(seeds) if isinstance(seeds, dict) else \
            {key: 1.0 for key in seeds}
        seed_ids = [self.node_id(key, snapshot) for key in seed_map]
        type_ids = self._type_filter(types)
        nodes = None
        if k is not None:
            nodes = traverse.khop(snapshot.view, seed_ids, k, type_ids, direction, max_nodes).node
        try:
            ranking = pagerank.personalized_pagerank(
                snapshot.view, seed_ids, list(seed_map.values()), nodes,
                pagerank.type_weights(self.type_ids("edge"), weights), damping, iterations, tolerance, direction,
                type_ids)
        except ValueError as error:
            raise InputError(str(error)) from None
        node_ids, scores = ranking.top(len(ranking.node) if top is None else top)
        return list(zip(snapshot.node_keys(node_ids), scores.tolist()))

    def node_degrees(self, key: str) -> dict:
        """{"out": {type: count}, "in": {type: count}} of one node."""
        snapshot = self.snapshot()
        view, node = snapshot.view, self.node_id(key, snapshot)
        names = self.type_names("edge")
        return {direction: {names.get(kind, str(kind)): count
                            for kind, count in traverse.type_degrees(view, node, direction).items()}
                for direction in ("out", "in")}

    def degree_statistics(self, direction: str = "out") -> dict:
        """Per edge type name: edges, nodes, mean and max degree, and the key of the top node."""
        check_direction(direction)
        snapshot = self.snapshot()
        names = self.type_names("edge")
        statistics = traverse.type_statistics(snapshot.view, direction)
        tops = snapshot.node_keys([entry["max_node"] for entry in statistics.values()])
        return {names.get(kind, str(kind)): {**{name: value for name, value in entry.items() if name != "max_node"},
                                             "max_node": top}
                for (kind, entry), top in zip(statistics.items(), tops)}

    def nodes_of_type(self, node_type: str, limit: int | None = None) -> list[str]:
        type_id = self.type_ids("node").get(node_type)
        if type_id is None:
            return []
        snapshot = self.snapshot()
        return snapshot.node_keys(snapshot.view.nodes_of_type(type_id)[:limit])

    def edges_of(self, edge_type: str, source: str | None = None, target: str | None = None,
                 limit: int | None = None) -> Neighbors:
        """Edges of one type from `source` or into `target`: the (type, src) and (type, dst) indexes."""
        if (source is None) == (target is None):
            raise InputError("give exactly one of source and target")
        return self.neighbors(source if source is not None else target, "out" if source is not None else "in",
                              [edge_type], limit)

    def incident_edge_keys(self, node_id: int, pending: dict | None = None) -> list[str]:
        """Keys of every live edge touching `node_id`, including edges written in a pending batch."""
        snapshot = self.snapshot()
        edges = traverse.gather(snapshot.view, np.array([node_id], np.int64), "both")
        keys = set(snapshot.edge_keys(np.unique(edges.edge_id)))
        for (table, key), value in (pending or {}).items():
            if table == GRAPH_EDGE_TABLE and value and node_id in (value["src"], value["dst"]):
                keys.add(key)
        return sorted(key for key in keys if key is not None)

    def _cap(self, cap):
        """A DegreeCap given with type names becomes one with type ids."""
        if cap is None:
            return None
        known = self.type_ids("edge")
        limits = {known[name] if isinstance(name, str) else name: limit for name, limit in cap.limits.items()
                  if not isinstance(name, str) or name in known}
        return DegreeCap(limits, cap.now, cap.tau_days)
