"""The nodes, edges and index documents of one R2G batch, merged in memory and written as ONE store batch
(one WAL record, one fsync) together with the batch's bookkeeping records.

During `--rebuild` a draft is given the Rewritten sets of the run: a stored node or edge that this run has not
written yet is an old version, replaced instead of merged (its internal id is kept)."""

from __future__ import annotations

from collections import Counter
from itertools import groupby

from engine.graph.keys import edge_key
from memctl import event_log
from memctl.feedback import USER_PROPS
from memctl.r2g.merge import merge
from memctl.r2g.recent import Recent

# Nodes that later turns mention again (Facts rarely: only the same event on the same day).
REMEMBERED_TYPES = frozenset({"Entity", "Concept", "Preference"})


class Rewritten:
    """Keys of the nodes and edges a rebuild has written so far."""

    def __init__(self):
        self.nodes: set = set()
        self.edges: set = set()


class RecentNodes:
    """What the run's earlier batches wrote, kept at hand (a store read probes one segment per flushed batch):
    the records of the merged types' nodes, for the turns that mention them again, and the (id, created_at) of
    any node, for edges into it (SAME_AS to an earlier Fact)."""

    def __init__(self, records: int, ids: int):
        self.records = Recent(records)  # key → (id, created_at, props), props as a store read gives them back
        self.ids = Recent(ids)  # key → (id, created_at)


class GraphDraft:
    """run_nodes: the keys of the nodes the run has written so far (a SeenKeys), when the graph was empty as it
    began (None otherwise): a key not among them needs no lookup to be known absent. owned: the props and properties the
    caller hands over are made for the draft and never changed afterwards (no tuples either), so the store
    keeps them as they are (Store.commit's owned). recent: RecentNodes of the run, which the commit adds to."""

    def __init__(self, graph, index, rewritten: Rewritten | None = None, run_nodes=None,
                 owned: bool = False, recent: RecentNodes | None = None):
        self.graph = graph
        self.index = index
        self.rewritten = rewritten
        self.run_nodes = run_nodes
        self.owned = owned
        self.recent = recent
        self.nodes: dict = {}  # key → [node type, [stored props and/or mentions, merged on use]]
        self.edges: dict = {}  # key → {source, type, target, weight, confidence, ts, properties}
        self.removed_edges: set = set()
        self.fresh_edges: set = set()  # keys of the edges that fresh() holds for (set by the commit)
        self.documents: dict = {}  # key → TextIndex document
        self.records: list = []  # (table, key, value or None to delete) of the caller's own tables
        self.events: list = []  # (type, payload) for the event log, written with the batch
        self.created: set = set()  # keys of nodes that did not exist before this batch
        self.stored: dict = {}  # key → (id, created_at) of the existing nodes this batch read
        self.kept: dict = {}  # key → the stored node's feedback props (memctl.feedback.USER_PROPS)
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
        kept = {name: stored[name] for name in USER_PROPS if name in stored} if stored else None
        if kept:
            self.kept[key] = kept
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

    def replace(self, key: str, node_type: str, props: dict) -> None:
        """Write `props` as the node's whole props (no merge): a stored node's recomputed attributes."""
        if key not in self.nodes and self.stored_props(key) is None:
            self.created.add(key)
            self.nodes_created[node_type] += 1
        self.nodes[key] = [node_type, [props]]

    def props(self, key: str) -> dict | None:
        """A node's props as this batch will write them, else as stored."""
        entry = self.nodes.get(key)
        return self.merged(key) if entry is not None else self.stored_props(key)

    def merged(self, key: str) -> dict:
        entry = self.nodes[key]
        if len(entry[1]) > 1:
            entry[1] = [merge(entry[0], entry[1])]
        kept = self.kept.get(key)
        if kept and any(entry[1][0].get(name) != value for name, value in kept.items()):
            entry[1] = [{**entry[1][0], **kept}]  # what the user gave survives a merge and a rebuild
        return entry[1][0]

    def stored_props(self, key: str) -> dict | None:
        if self.run_nodes is not None and key not in self.run_nodes:
            return None
        found = self.recent.records.get(key) if self.recent is not None else None
        if found is None:
            node = self.graph.node(key)
            if node is None:
                return None
            found = (node.id, node.created_at, node.props)
        self.stored[key] = found[:2]
        return found[2]

    def edge(self, source: str, edge_type: str, target: str, weight: float, confidence: float,
             ts: float | None = None, properties: dict | None = None) -> None:
        key = edge_key(source, edge_type, target)
        if self.removed_edges:
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

    def document_nodes(self, types) -> None:
        """The index documents of this batch's nodes of `types`, as the batch writes them."""
        from memctl.node_documents import node_document

        for key, (node_type, _) in self.nodes.items():
            if node_type in types:
                self.document(node_document(key, node_type, self.merged(key)))

    def record(self, table: str, key: str, value) -> None:
        self.records.append((table, key, value))

    # --- writing -------------------------------------------------------------------------------------

    def commit(self) -> None:
        self._write_through(lambda known: self.graph.batch(known, owned=self.owned))

    def stage(self, batch) -> None:
        """Write the draft into `batch`, a store Batch its caller commits or stages (`memctl migrate`)."""
        self._write_through(lambda known: self.graph.staged(batch, known))

    def _write_through(self, open_writer) -> None:
        known = _KnownRecords(self)
        self._find_fresh_edges(known.nodes)
        with open_writer(known) as writer:
            self._write(writer, known)
        self._committed(known)

    def _write(self, writer, known) -> None:
        for new, run in groupby(self.nodes.items(), key=lambda item: item[0] in self.created):
            rows = [(key, node_type, self.merged(key), None) for key, (node_type, _) in run]
            if not (new and writer.add_new_nodes(rows)):
                for row in rows:
                    writer.add_node(*row)
        for key in sorted(self.removed_edges):
            if writer.edge(key) is not None:
                writer.delete_edge(key, purge=True)
        # Runs in the draft's order, so ids are allocated as one by one would.
        for new, run in groupby(self.edges.items(), key=lambda item: self._new_between(known.nodes, *item)):
            self._write_edges(writer, new, list(run))
        if self.documents:
            self.index.add_many(list(self.documents.values()), batch=writer.batch)
        for table, key, value in self.records:
            if value is None:
                writer.batch.delete(table, key)
            else:
                writer.batch.put(table, key, value)
        event_log.append_created(writer)
        if self.events:
            from memctl.facts.events import publish

            publish(writer.batch, self.events)

    def _committed(self, known) -> None:
        if self.rewritten is not None:
            self.rewritten.nodes.update(self.nodes)
            self.rewritten.edges.update(self.edges)
        if self.run_nodes is not None:
            self.run_nodes.add_all(self.nodes)
        if self.recent is not None:
            self._remember(known.nodes)

    def _remember(self, written: dict) -> None:
        """Keep this batch's nodes at hand (the merged types' whole, as a store read would give them back: the
        store keeps owned props as they are)."""
        for key, (node_type, _) in self.nodes.items():
            node_id, created_at = written[key]
            self.recent.ids.put(key, (node_id, created_at))
            if node_type in REMEMBERED_TYPES:
                self.recent.records.put(key, (node_id, created_at, self.merged(key)))

    def _find_fresh_edges(self, known_nodes: dict) -> None:
        """Set fresh_edges; add to `known_nodes` the ids of the nodes that earlier batches of the run wrote and
        a fresh edge points at (a SAME_AS to an earlier Fact): such an edge then joins the bulk writes instead of
        going one by one, which also cut the run of bulk edges around it."""
        fresh = [(key, spec) for key, spec in self.edges.items() if self.fresh(spec)]
        self.fresh_edges = {key for key, _ in fresh}
        if self.recent is None:
            return
        for _, spec in fresh:
            for end in (spec["source"], spec["target"]):
                if end not in self.created and end not in known_nodes:
                    found = self.recent.ids.get(end)
                    if found is not None:
                        known_nodes[end] = found

    def _new_between(self, known_nodes: dict, key: str, spec: dict) -> bool:
        return key in self.fresh_edges and spec["source"] in known_nodes and spec["target"] in known_nodes

    def _write_edges(self, writer, new: bool, items: list) -> None:
        """Edges touching a node this batch creates are new: written at once when the ids of both ends are
        known; the others may merge with a stored edge or need a lookup, one by one."""
        if new and writer.add_new_edges([(spec["source"], spec["type"], spec["target"], round(spec["weight"], 6),
                                            round(spec["confidence"], 6), spec["ts"], None, None,
                                            spec["properties"], None) for _, spec in items]):
            self.edges_written.update(spec["type"] for _, spec in items)
            return
        for key, spec in items:
            self._write_edge(writer, key, spec)

    def _write_edge(self, writer, key: str, spec: dict) -> None:
        weight, confidence = spec["weight"], spec["confidence"]
        existing = None if key in self.fresh_edges else writer.edge(key)
        if existing is not None and (self.rewritten is None or key in self.rewritten.edges):
            # Another mention of the same relation: the strongest evidence wins, whatever the order.
            weight, confidence = max(weight, existing["weight"]), max(confidence, existing["confidence"])
        writer.add_edge(spec["source"], spec["type"], spec["target"], weight=round(weight, 6),
                        confidence=round(confidence, 6), ts=spec["ts"], properties=spec["properties"], key=key)
        self.edges_written[spec["type"]] += 1


class _KnownRecords:
    """What the draft already knows about the graph, handed to GraphBatch as its memo (engine.graph.memo's
    protocol, bulk writes included) so that writing does not look up again: nodes this batch creates and edges
    touching them are absent until written, existing nodes are the ones the draft read. `nodes` and `edges`
    hold what this batch wrote (add_new_* fill them; row writes through remember_node/remember_edge, which
    leave them in the batch's pending table as well)."""

    def __init__(self, draft: GraphDraft):
        self.draft = draft
        self.nodes: dict = {key: entry for key, entry in draft.stored.items()
                            if key not in draft.created}  # key → (id, created_at)
        self.edges: dict = {}  # key → (id, src, dst, created_at)

    def node(self, key: str) -> tuple[bool, tuple | None]:
        known = self.nodes.get(key)
        if known is None and self.draft.recent is not None:
            known = self.draft.recent.ids.get(key)
        if known is not None:
            return True, known
        return key in self.draft.created, None

    def edge(self, key: str) -> tuple[bool, tuple | None]:
        known = self.edges.get(key)
        if known is not None:
            return True, known
        return key in self.draft.fresh_edges, None

    def all_absent(self, known: dict, keys) -> bool:
        absent = self.draft.created if known is self.nodes else self.draft.fresh_edges
        return absent.issuperset(keys) and known.keys().isdisjoint(keys)

    def remember_node(self, key: str, entry: tuple | None) -> bool:
        self.nodes.pop(key, None)
        if entry is not None:
            self.nodes[key] = entry
        return False

    def remember_edge(self, key: str, entry: tuple | None) -> bool:
        self.edges.pop(key, None)
        if entry is not None:
            self.edges[key] = entry
        return False
