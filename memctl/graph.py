"""The memory graph, directly (`memctl graph`): add nodes and edges, neighbours, k-hop expansion, personalized
PageRank, degree statistics, JSONL import and export.

R2G writes the graph and recall reads it through their own code; this is the hand tool over the same records.
The tenant's settings give the defaults: recall.k_hop (hops), graph.degree_cap (edges kept per node and type on
read) and graph.edge_weights (PPR). Reached through `Memory.graph`.
"""

from __future__ import annotations


class Graph:
    def __init__(self, memory):
        self._memory = memory
        self._store = None

    def _graph(self):
        if self._store is None:
            from engine.graph.api import GraphStore

            self._store = GraphStore(self._memory.store)
        return self._store

    # --- writes -----------------------------------------------------------------------------------------------

    def add(self, nodes=(), edges=(), weight: float = 1.0) -> dict:
        """Add nodes keyed TYPE:NAME and edges (source key, edge type, target key) of `weight`, as one atomic
        batch: {"added_nodes": [key], "added_edges": [edge key]}. A bad key, an unknown endpoint or a bad
        weight stores nothing (InputError)."""
        from engine.errors import InputError
        from memctl import event_log

        with self._graph().batch() as writer:
            for key in nodes:
                node_type, separator, name = key.partition(":")
                if not separator or not node_type or not name:
                    raise InputError('a node key is TYPE:NAME, e.g. "Concept:Win11蓝牙故障"', where=key)
                writer.add_node(key, node_type)
            added_edges = [writer.add_edge(source, edge_type, target, weight=weight)
                           for source, edge_type, target in edges]
            event_log.append_created(writer)
        return {"added_nodes": list(nodes), "added_edges": added_edges}

    def import_jsonl(self, source, batch_lines: int = 20_000, progress=None) -> dict:
        """Import nodes and edges from a JSONL path, "-" (stdin) or a binary stream, `batch_lines` lines per
        atomic batch, each with its NodeCreated / EdgeCreated events: {"nodes", "edges", "lines", "batches"}.
        progress(bytes read) after each batch. A bad line stops the import naming the file and line; earlier
        batches stay (keys make a re-run converge)."""
        from engine.graph.transfer import import_jsonl
        from memctl import event_log

        if source == "-":
            from memctl.standard_input import binary_stdin

            source = binary_stdin()
        report = import_jsonl(self._graph(), source, batch_lines,
                              progress=None if progress is None else lambda done: progress(done.bytes),
                              before_commit=event_log.append_created)
        return {"nodes": report.nodes, "edges": report.edges, "lines": report.lines, "batches": report.batches}

    # --- reads ------------------------------------------------------------------------------------------------

    def show(self, key: str, now: float | None = None) -> dict:
        """One node: {"key", "id", "type", "created_at", "updated_at", "props", "weight"}, the weight being
        weight(node) at `now` (default: the clock) with each term and its coefficient (seed 001 §6.1)."""
        import time

        from engine.errors import InputError
        from memctl.recall.weight import explained_weight

        node = self._graph().node(key)
        if node is None:
            raise InputError(f"no node {key!r}", where="ID")
        weight = explained_weight(node.props or {}, node.type, time.time() if now is None else now,
                                  self._memory.config.weights)
        return {"key": key, "id": node.id, "type": node.type, "created_at": node.created_at,
                "updated_at": node.updated_at, "props": node.props or {}, "weight": weight}

    def neighbors(self, key: str, direction: str = "out", types=None, limit: int = 20) -> list[dict]:
        """The edges of node `key` (strongest first, degree-capped): [{"key", "type", "weight", …}]."""
        return self._graph().neighbors(key, direction, types, limit, self._cap()).rows()

    def khop(self, keys, k: int | None = None, types=None, direction: str = "out", limit: int = 20) -> list[dict]:
        """Nodes within `k` hops of `keys` (default recall.k_hop): [{"key", "hop", "via"}], seeds first."""
        return self._graph().khop(keys, self._hops(k), types, direction, cap=self._cap()).rows(limit)

    def ppr(self, keys, k: int | None = None, whole_graph: bool = False, types=None, direction: str = "out",
            top: int = 20) -> list[dict]:
        """Personalized PageRank seeded at `keys` over their k-hop subgraph (or the whole graph), with the
        tenant's edge-type weights: [{"key", "score"}], best first."""
        ranked = self._graph().personalized_pagerank(keys, None if whole_graph else self._hops(k), types, direction,
                                                     self._memory.config.get("graph.edge_weights"), top=top)
        return [{"key": key, "score": score} for key, score in ranked]

    def degree_statistics(self, direction: str = "out") -> dict:
        """Per edge type: edges, nodes, mean and max degree, and the node of the max."""
        return self._graph().degree_statistics(direction)

    def export(self, stream, format: str = "jsonl", around=None, k: int = 1, types=None,
               direction: str = "both") -> dict:
        """Write the graph, or the k-hop subgraph around keys `around`, to a text stream as JSONL (importable
        again), GraphML or Graphviz DOT: {"nodes", "edges"} written."""
        from engine.graph.transfer import export

        return export(self._graph(), stream, format, around or None, k, types, direction)

    def _hops(self, k: int | None) -> int:
        return self._memory.config.get("recall.k_hop") if k is None else k

    def _cap(self):
        limits = self._memory.config.get("graph.degree_cap") or {}
        if not limits:
            return None
        from engine.graph.traverse import DegreeCap

        return DegreeCap(limits, now=self._graph().clock())
