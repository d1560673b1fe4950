"""The nodes, edges and index documents of one R2G batch, merged in memory and written as ONE store batch
(one WAL record, one fsync) together with the batch's bookkeeping records.

During `--rebuild` a draft is given the Rewritten sets of the run: a stored node or edge that this run has not
written yet is an old version, replaced instead of merged (its internal id is kept)."""

from __future__ import annotations

from collections import Counter

from engine.format import GRAPH_EDGE_TABLE, GRAPH_NODE_TABLE
from engine.graph.api import edge_key
from memctl.r2g.merge import merge


class Rewritten:
    """Keys of the nodes and edges a rebuild has written so far."""

    def __init__(self):
        self.nodes: set = set()
        self.edges: set = set()


class GraphDraft:
    def __init__(self, graph, index, rewritten: Rewritten | None = None):
        self.graph = graph
        self.index = index
        self.rewritten = rewritten
        self.nodes: dict = {}  # key → [node type, [stored props and/or mentions, merged on use]]
        self.edges: dict = {}  # key → {source, type, target, weight, confidence, ts, properties}
        self.removed_edges: set = set()
        self.documents: dict = {}  # key → TextIndex document
        self.records: list = []  # (table, key, value or None to delete) of the caller's own tables
        self.created: set = set()  # keys of nodes that did not exist before this batch
        self.stored: dict = {}  # key → stored record of the existing nodes this batch read
        self.nodes_created: Counter = Counter()
        self.edges_written: Counter = Counter()

    def __len__(self) -> int:
        return len(self.nodes) + len(self.edges)

    # --- collecting ----------------------------------------------------------------------------------

    def node(self, key: str, node_type: str, props: dict) -> bool:
        """Add or merge a node; True when no node of that key existed before. Mentions are merged once, when
        the node is read or written."""
        entry = self.nodes.get(key)
        if entry is not None:
            entry[1].append(props)
            return False
        stored = self.stored_props(key)
        if stored is not None and self.rewritten is not None and key not in self.rewritten.nodes:
            stored = None  # a rebuild's old version: replaced
        elif stored is None:
            self.created.add(key)
        if stored is None:
            self.nodes_created[node_type] += 1
            self.nodes[key] = [node_type, [props]]
            return True
        self.nodes[key] = [node_type, [stored, props]]
        return False

    def props(self, key: str) -> dict | None:
        """A node's props as this batch will write them, else as stored."""
        entry = self.nodes.get(key)
        return self.merged(key) if entry is not None else self.stored_props(key)

    def merged(self, key: str) -> dict:
        entry = self.nodes[key]
        if len(entry[1]) > 1:
            entry[1] = [merge(entry[0], entry[1])]
        return entry[1][0]

    def stored_props(self, key: str) -> dict | None:
        record = self.graph.store.get(GRAPH_NODE_TABLE, key)
        if record is None or record.get("deleted"):
            return None
        self.stored[key] = record
        return record.get("props", {})

    def edge(self, source: str, edge_type: str, target: str, weight: float, confidence: float,
             ts: float | None = None, properties: dict | None = None) -> None:
        key = edge_key(source, edge_type, target)
        self.removed_edges.discard(key)
        existing = self.edges.get(key)
        if existing is not None:
            existing["weight"] = max(existing["weight"], weight)
            existing["confidence"] = max(existing["confidence"], confidence)
            if properties:
                existing["properties"] = {**(existing["properties"] or {}), **properties}
            return
        self.edges[key] = {"source": source, "type": edge_type, "target": target, "weight": weight,
                           "confidence": confidence, "ts": ts, "properties": properties}

    def remove_edge(self, source: str, edge_type: str, target: str) -> None:
        key = edge_key(source, edge_type, target)
        self.edges.pop(key, None)
        self.removed_edges.add(key)

    def fresh(self, spec: dict) -> bool:
        """An edge touching a node this batch creates cannot be stored yet."""
        return spec["source"] in self.created or spec["target"] in self.created

    def document(self, document: dict) -> None:
        self.documents[document["key"]] = document

    def record(self, table: str, key: str, value) -> None:
        self.records.append((table, key, value))

    # --- writing -------------------------------------------------------------------------------------

    def commit(self) -> None:
        with self.graph.batch(_KnownRecords(self)) as writer:
            for key, (node_type, _) in self.nodes.items():
                writer.add_node(key, node_type, self.merged(key))
            for key in sorted(self.removed_edges):
                if writer.edge(key) is not None:
                    writer.delete_edge(key, purge=True)
            for key, spec in self.edges.items():
                self._write_edge(writer, key, spec)
            if self.documents:
                self.index.add_many(list(self.documents.values()), batch=writer.batch)
            for table, key, value in self.records:
                if value is None:
                    writer.batch.delete(table, key)
                else:
                    writer.batch.put(table, key, value)
        if self.rewritten is not None:
            self.rewritten.nodes.update(self.nodes)
            self.rewritten.edges.update(self.edges)

    def _write_edge(self, writer, key: str, spec: dict) -> None:
        weight, confidence = spec["weight"], spec["confidence"]
        existing = None if self.fresh(spec) else writer.edge(key)
        if existing is not None and (self.rewritten is None or key in self.rewritten.edges):
            # Another mention of the same relation: the strongest evidence wins, whatever the order.
            weight, confidence = max(weight, existing["weight"]), max(confidence, existing["confidence"])
        writer.add_edge(spec["source"], spec["type"], spec["target"], weight=round(weight, 6),
                        confidence=round(confidence, 6), ts=spec["ts"], properties=spec["properties"], key=key)
        self.edges_written[spec["type"]] += 1


class _KnownRecords:
    """What the draft already knows about the graph, handed to GraphBatch as its memo (engine.graph.api's
    ImportMemo protocol) so that writing does not look up again: nodes this batch creates and edges touching
    them are absent until written, existing nodes are the records the draft read. Writes stay in the batch's
    own pending table (remember → False), which answers for a key once it is written: the memo may be asked
    before the pending table."""

    def __init__(self, draft: GraphDraft):
        self.draft = draft
        self.written: set = set()  # (table, key) of the records this batch wrote

    def get(self, table: str, key: str) -> tuple[bool, dict | None]:
        if (table, key) in self.written:
            return False, None
        if table == GRAPH_NODE_TABLE:
            if key in self.draft.created:
                return True, None
            record = self.draft.stored.get(key)
            return record is not None, record
        if table == GRAPH_EDGE_TABLE:
            spec = self.draft.edges.get(key)
            if spec is not None and self.draft.fresh(spec):
                return True, None
        return False, None

    def remember(self, table: str, key: str, value) -> bool:
        self.written.add((table, key))
        return False
