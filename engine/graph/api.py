"""GraphStore: the property graph's Python API over one store.

Writes go through a GraphBatch (engine.graph.batch: one store batch, one WAL record, one fsync);
`GraphStore.add_node` and the other single-operation methods open their own. Nodes and edges are addressed by
external keys; internal ids are dense integers allocated from store counters and never reused, so a deleted id
stays deleted.

Reads take the store's `graph` kind snapshot (segments + unflushed records) and answer with numpy arrays
(engine.graph.results); keys are decoded only for the rows a caller asks for. The query modules (results,
pagerank) are imported by the queries: a process that only writes (a `memctl remember`) does not load them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import repeat
from typing import TYPE_CHECKING

import numpy as np

from engine.errors import InputError
from engine.format import GRAPH_EDGE_TABLE, GRAPH_NODE_COUNTER, GRAPH_NODE_TABLE
from engine.graph import traverse
from engine.graph.kind import KIND_NAME, GraphSnapshot, registered_types
from engine.graph.model import Edge, Node, edge_of, node_of
from engine.graph.traverse import DegreeCap
from engine.graph.validate import check_direction, check_key

if TYPE_CHECKING:
    from engine.graph.memo import ImportMemo
    from engine.graph.results import KHop, Neighbors

_RECORDS = {"node": (GRAPH_NODE_TABLE, node_of), "edge": (GRAPH_EDGE_TABLE, edge_of)}  # kind → table, row


class GraphStore:
    def __init__(self, store, clock=time.time):
        self.store = store
        self.clock = clock
        self._types_generation = None
        self._types: tuple = ({}, {})

    @contextmanager
    def batch(self, memo: ImportMemo | None = None, owned: bool = False):
        """`with graph.batch() as writer:` several writes, one WAL record and one fsync. owned=True: every
        property value comes from a JSON decoder (no tuples, nothing the caller keeps), see Store.commit."""
        from engine.graph.batch import GraphBatch  # a reader (a cold `memctl recall`) never loads the writer

        with self.store.batch(owned) as batch:
            writer = GraphBatch(self, batch, memo)
            yield writer
            writer.finish()

    @contextmanager
    def staged(self, batch, memo: ImportMemo | None = None):
        """`with graph.staged(batch) as writer:` writes into `batch`, a store Batch its caller commits or stages
        (a migration step's changes, Store.stage)."""
        from engine.graph.batch import GraphBatch

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
        return self._registered_types()[0].get(kind, {})

    def type_names(self, kind: str) -> dict:
        """{type id: name} of node or edge types."""
        return self._registered_types()[1].get(kind, {})

    def _registered_types(self) -> tuple[dict, dict]:
        """({kind: {name: id}}, {kind: {id: name}}), read again only after the store changed."""
        if self._types_generation != self.store.generation:
            ids: dict = {"node": {}, "edge": {}}
            for key, type_id in registered_types(self.store).items():
                kind_name, _, name = key.partition(":")
                ids.setdefault(kind_name, {})[name] = type_id
            names = {kind: {type_id: name for name, type_id in known.items()} for kind, known in ids.items()}
            self._types, self._types_generation = (ids, names), self.store.generation
        return self._types

    def _type_filter(self, types):
        """Edge type names → ids; an unknown name matches nothing rather than everything."""
        if types is None:
            return None
        if isinstance(types, str):
            types = [types]
        known = self.type_ids("edge")
        return [known[name] for name in types if name in known]

    # records, as typed rows (engine.graph.model): a caller never sees their stored form
    def node(self, key: str) -> Node | None:
        """The live node `key`, or None."""
        return node_of(key, self.store.get(GRAPH_NODE_TABLE, key), self.type_names("node"))

    def nodes(self, keys) -> list[Node | None]:
        """node() of each key, in order, looked up together."""
        return self._rows("node", keys)

    def nodes_by_id(self, ids) -> list[Node | None]:
        """The live node of each internal id, in order (None for a deleted or unknown id)."""
        return _by_key(self.snapshot().node_keys(ids), self.nodes)

    def iter_nodes(self) -> Iterator[Node]:
        """Every live node, in key order."""
        return self._scan("node")

    def edge(self, key: str) -> Edge | None:
        """The live edge `key`, or None."""
        return edge_of(key, self.store.get(GRAPH_EDGE_TABLE, key), self.type_names("edge"))

    def edges(self, keys) -> list[Edge | None]:
        """edge() of each key, in order, looked up together."""
        return self._rows("edge", keys)

    def edges_by_id(self, ids) -> list[Edge | None]:
        """The live edge of each internal id, in order (None for a deleted or unknown id)."""
        return _by_key(self.snapshot().edge_keys(ids), self.edges)

    def iter_edges(self) -> Iterator[Edge]:
        """Every live edge, in key order."""
        return self._scan("edge")

    def _rows(self, kind: str, keys) -> list:
        table, row_of = _RECORDS[kind]
        keys = list(keys)
        return list(map(row_of, keys, self.store.get_many(table, keys), repeat(self.type_names(kind))))

    def _scan(self, kind: str) -> Iterator:
        table, row_of = _RECORDS[kind]
        names = self.type_names(kind)
        for key, record in self.store.scan(table):
            row = row_of(key, record, names)
            if row is not None:
                yield row

    def node_ids_allocated(self) -> int:
        """How many node ids were ever allocated, deleted nodes' included: 0 means no node was ever written."""
        return self.store.counter(GRAPH_NODE_COUNTER)

    def get_node(self, key: str) -> dict | None:
        """node() as a plain mapping (for JSON)."""
        node = self.node(key)
        return None if node is None else node._asdict()

    def get_edge(self, key: str) -> dict | None:
        """edge() as a plain mapping (for JSON), with its ends' keys and its validity under "temporal"."""
        edge = self.edge(key)
        if edge is None:
            return None
        source, target = self.snapshot().node_keys([edge.source_id, edge.target_id])
        return {"key": key, "id": edge.id, "src": source, "dst": target, "type": edge.type,
                "weight": edge.weight, "confidence": edge.confidence, "ts": edge.ts,
                "temporal": {"since": edge.since, "until": edge.until}, "props": edge.props,
                "created_at": edge.created_at, "updated_at": edge.updated_at}

    # reads over the adjacency
    def snapshot(self) -> GraphSnapshot:
        """The graph at the store's current state (engine.graph.kind.GraphSnapshot: ids, keys, types, edges)."""
        return self.store.kind(KIND_NAME)

    def node_id(self, key: str, snapshot: GraphSnapshot | None = None) -> int:
        check_key(key, "node key")
        found = (snapshot or self.snapshot()).node_id(key)
        if found is None:
            raise InputError(f"no node {key!r}")
        return found

    def neighbors(self, key: str, direction: str = "out", types=None, limit: int | None = None,
                  cap: DegreeCap | None = None) -> Neighbors:
        from engine.graph.results import Neighbors

        snapshot = self.snapshot()
        check_direction(direction)
        edges = traverse.neighbors(snapshot.view, self.node_id(key, snapshot), direction,
                                   self._type_filter(types), limit, self._cap(cap))
        return Neighbors(self, snapshot, edges)

    def khop(self, keys, k: int = 2, types=None, direction: str = "out", max_nodes: int | None = None,
             cap: DegreeCap | None = None) -> KHop:
        from engine.graph.results import KHop

        snapshot = self.snapshot()
        check_direction(direction)
        if not isinstance(k, int) or k < 0:
            raise InputError(f"k must be a non-negative integer, not {k!r}")
        seeds = [self.node_id(key, snapshot) for key in ([keys] if isinstance(keys, str) else keys)]
        reached = traverse.khop(snapshot.view, seeds, k, self._type_filter(types), direction, max_nodes,
                                self._cap(cap))
        return KHop(snapshot, reached)

    def personalized_pagerank(self, seeds, k: int | None = 2, types=None, direction: str = "out",
                              weights: dict | None = None, damping: float | None = None,
                              iterations: int = 100, tolerance: float = 1e-6, max_nodes: int | None = None,
                              top: int | None = 20) -> list[tuple[str, float]]:
        """PPR from `seeds` (keys, or {key: weight}) over their k-hop subgraph (k=None: the whole graph).

        weights: {edge type name: weight}; seed 001 appendix A by default, 0.5 for any other type. damping:
        engine.graph.pagerank.DAMPING by default."""
        from engine.graph import pagerank

        snapshot = self.snapshot()
        check_direction(direction)
        seed_map = {seeds: 1.0} if isinstance(seeds, str) else dict(seeds) if isinstance(seeds, dict) else \
            {key: 1.0 for key in seeds}
        seed_ids = [self.node_id(key, snapshot) for key in seed_map]
        type_ids = self._type_filter(types)
        nodes = None
        if k is not None:
            nodes = traverse.khop(snapshot.view, seed_ids, k, type_ids, direction, max_nodes).node
        if damping is None:
            damping = pagerank.DAMPING
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


def _by_key(keys: list, rows_of) -> list:
    """rows_of(the keys that are not None), placed back among the Nones of `keys`."""
    present = [key for key in keys if key is not None]
    rows = iter(rows_of(present))
    return [None if key is None else next(rows) for key in keys]
