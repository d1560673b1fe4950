"""`memctl r2g --from raw --to graph`: stored RawChunks → the memory graph and the NodeIndex (seed R2G-8, W2).

Incremental and idempotent. `r2g.done/<raw_id>` records the chunks already converted; a run converts only the
others, so a second run finds "0 new chunks" and changes nothing. A conversation that gains chunks is walked in
its stored order (rawturns.walk) decoding only the new chunks and their neighbours:
- each new turn becomes an Episode with its sentences' Entities, Facts, Preferences and Concepts (emit.py);
- TEMPORAL_NEXT joins consecutive turns; when new turns land between two converted ones, the edge that
  joined those two is replaced;
- a converted turn next to a new one is indexed again, since its reply context changed.

Batches. Work is committed in batches of whole chunks, each ONE store batch (graph records, index documents,
`r2g.done` marks and SAME_AS candidates together: one WAL record, one fsync), cut before a new chunk once the
batch holds `r2g.batch_turns` turns. Only one batch of turns, analyses and pending records is in memory; what
spans batches is kept in the store (r2g.event for SAME_AS) or recomputed from chunk records.
A batch's graph equals the conversion of the chunks it marks done, so a crash between batches loses nothing
and the next run continues where the last commit left off.

Tails. Each run records the last chunks of every conversation it converts (`r2g.conv`) and, once every stored
chunk is converted, how many there were (`r2g.meta/converted_through`): `remember`'s run (chunks=…) then reads
only its new chunks and the tails before them instead of listing the store (memctl/r2g/tails.py).

SIMILAR_TO (R2G-6: keyword co-occurrence): between Episodes of one conversation within a batch, when the Jaccard
overlap of their keywords reaches `r2g.similar_threshold`, at most `r2g.similar_cap` per node, one edge per pair
(read it both ways). Pairs across batches or conversations are left to consolidation (R2G-3 allows it offline).
Facts get none: what makes two facts alike (a shared entity, the same event) their role, MENTIONS and SAME_AS
edges already say, and keyword overlap between facts of one sentence is total.

`--rebuild` converts every chunk again: it forgets which chunks were converted (r2g.done) and the SAME_AS
candidates (r2g.event), then writes each node and edge anew, replacing the stored version instead of merging
with it (draft.Rewritten), replays the recorded JSONL imports, and finally removes what r2g made before and did
not make again (nodes of its creators and RawChunk nodes, edges touching them, their index documents). Keys are
content-derived, so the regenerated graph has the same keys, props and even internal ids. A marker
`r2g.meta/rebuild` makes an interrupted rebuild start over on the next run.
"""

from __future__ import annotations

import gc
import time
from collections import Counter

from engine.collector import paused
from engine.heap import release_free_memory
from memctl.facts.known_chains import KnownChains
from memctl.r2g.analysis_pool import MEMO_ENTRIES, turn_analyses
from memctl.r2g.draft import GraphDraft, RecentNodes
from memctl.r2g.emit import CREATOR, EXTERNAL_CREATOR, RAW_CHUNK, VERSION, TurnEmitter
from memctl.r2g.events import EVENT_TABLE, EventIndex
from memctl.language.lexicon import use_directory
from memctl.node_documents import INDEXED_TYPES
from memctl.r2g.rawturns import ChunkStart, conversations, walk, with_neighbors
from memctl.r2g.tails import CONVERTED_KEY, TAIL_TABLE, after_tails, tail_of
from memctl.r2g.recent import Recent
from memctl.r2g.seen import SeenKeys
from memctl.settings import resolve

DONE_TABLE = "r2g.done"
META_TABLE = "r2g.meta"
REBUILD_KEY = "rebuild"
# Episodes are indexed as their turn is converted (with its neighbours' words); these once merged.
MERGED_INDEXED = frozenset(INDEXED_TYPES) - {"Episode"}
CLEAR_EDGES_PER_BATCH = 5000
CLEAR_NODES_PER_BATCH = 1000
CHAINS_PER_BATCH = 1000
NODE_RECORDS_REMEMBERED = 8192
NODE_IDS_REMEMBERED = 65536
# A run flushes a records segment every batch or so; merged 8 at a time (engine.records.tiers) a 32 MiB
# transcript's 250 flushes leave about a dozen, and each row is rewritten about twice.
RECORDS_TIER_FANOUT = 8
# A derived merge holds some 30× its input (a graph merge decodes every edge): at most 4 MiB of input keeps r2g's
# peak bounded whatever it converts; the bigger segments wait for `memctl compact` (engine.records.tiers).
DERIVED_MERGE_MAX_BYTES = 4 << 20


class Builder:
    """progress(done_chunks, total_chunks) is called as chunks are converted."""

    def __init__(self, store, tenant: str, config=None, progress=None, jobs: int = 1):
        from engine.graph.api import GraphStore
        from engine.raw import RawStore
        from memctl.r2g.nodeindex import open_index

        self.store = store
        self.tenant = tenant
        self.raw = RawStore(store)
        self.graph = GraphStore(store)
        self.index = open_index(store, config)
        self.config = config
        self.settings = resolve(config).r2g
        self.fact_settings = resolve(config).facts
        use_directory(self.settings.lexicon_directory)
        self.progress = progress
        self.jobs = jobs
        self.events = EventIndex(store, self.settings.same_event_days, empty=self.graph.node_ids_allocated() == 0)
        self.totals = {"nodes": Counter(), "edges": Counter(), "documents": 0, "batches": 0, "turns": 0}
        self.extractions = Recent(MEMO_ENTRIES)  # extract's memo, when the turns are analysed here
        self.rewritten = None
        self.created: list | None = None  # [key, type] of the nodes created, when the run lists them
        self.recent_nodes = RecentNodes(NODE_RECORDS_REMEMBERED, NODE_IDS_REMEMBERED)
        # A first conversion (the common bulk case) knows every node it did not write yet is absent.
        self.run_nodes = SeenKeys() if self.graph.node_ids_allocated() == 0 else None
        self.known_chains = KnownChains()  # the run holds the lock: what it wrote of a chain stays so
        self._new_draft()

    def _new_draft(self) -> None:
        # owned: emit makes the props it hands over for the draft, and nothing changes them later.
        self.draft = GraphDraft(self.graph, self.index, self.rewritten, self.run_nodes, owned=True,
                                recent=self.recent_nodes)
        self.emitter = TurnEmitter(self.draft, self.tenant, self.settings, self.events)
        self.batch_turns = 0
        self.similar: dict = {}  # conv_id → {episode key: keyword set}
        self.untimed: set = set()

    # --- the run ---------------------------------------------------------------------------------------

    def run(self, rebuild: bool = False, chunks: list | None = None) -> dict:
        """chunks: the raw ids `remember` just stored. The run then lists the nodes it created in the summary
        ("created": [[key, type]]) and, when the conversations' tails tell it which chunks are new and where
        they go (memctl/r2g/tails.py), reads only those and the chunks next to them."""
        with paused():  # 30% of the CPU time on LoCoMo dev went to rescanning the memtable
            try:
                return self._run(rebuild, chunks)
            finally:
                _age_survivors()

    def _run(self, rebuild: bool, only: list | None) -> dict:
        started = time.perf_counter()
        rebuild = rebuild or self.store.get(META_TABLE, REBUILD_KEY) is not None
        if rebuild:
            self._start_rebuild()
        if only is not None:
            self.created = []
        stored = self.raw.turn_chunks_stored()
        by_conversation = None if rebuild or only is None else after_tails(self.store, self.raw, META_TABLE, only)
        if by_conversation is None:  # every conversation, as r2g converts them
            by_conversation = conversations(self.raw)
            done = {raw_id for raw_id, _ in self.store.scan(DONE_TABLE)}
        else:
            raw_ids = [info.raw_id for chunks in by_conversation.values() for info in chunks]
            done = {raw_id for raw_id, mark in zip(raw_ids, self.store.get_many(DONE_TABLE, raw_ids)) if mark}
        work = {conv_id: chunks for conv_id, chunks in by_conversation.items()
                if any(info.raw_id not in done for info in chunks)}
        total = sum(info.raw_id not in done for chunks in work.values() for info in chunks)
        converted = 0
        with turn_analyses(self.jobs if work else 1, self.extractions, self.settings.lexicon_directory) as analyses:
            for conv_id in sorted(work):
                chunks = work[conv_id]
                new_ids = {info.raw_id for info in chunks if info.raw_id not in done}
                converted = self._conversation(analyses, chunks, new_ids, converted, total)
                self.draft.record(TAIL_TABLE, conv_id, tail_of(chunks))  # with the batch marking its last chunk
        self._record_tails({conv_id: chunks for conv_id, chunks in by_conversation.items() if conv_id not in work})
        if self.store.get(META_TABLE, CONVERTED_KEY) != stored:
            self.draft.record(META_TABLE, CONVERTED_KEY, stored)
        self._commit()
        replayed = removed = 0
        if rebuild:
            from memctl.r2g.external import replay_imports

            replayed = replay_imports(self.store, self.tenant, self.config, self.rewritten)
            self._rewrite_chains()
            removed = self._finish_rebuild()
        chunks_total = sum(len(chunks) for chunks in by_conversation.values())
        summary = {"chunks_new": total, "chunks_total": chunks_total, "conversations": len(work),
                   "turns": self.totals["turns"], "batches": self.totals["batches"],
                   "nodes_created": dict(sorted(self.totals["nodes"].items())),
                   "edges_written": dict(sorted(self.totals["edges"].items())),
                   "documents": self.totals["documents"], "rebuild": bool(rebuild), "nodes_removed": removed,
                   "imports_replayed": replayed,
                   "seconds": round(time.perf_counter() - started, 3)}
        if self.created is not None:
            summary["created"] = self.created
        from engine.text.chinese import notes

        if notes():  # the compiled Chinese dictionary could not be used (or not all of it): say why
            summary["notes"] = notes()
        return summary

    def _conversation(self, analyses, chunks: list, new_ids: set, converted: int, total: int) -> int:
        last_old = None
        for item, analysis in analyses.analyzed(with_neighbors(walk(self.raw, chunks, new_ids))):
            if isinstance(item, ChunkStart):
                if item.new:
                    if self.batch_turns >= self.settings.batch_turns:
                        self._commit()
                    self._start_chunk(item)
                    converted += 1
                    if self.progress is not None:
                        self.progress(converted, total)
                continue
            previous, turn, following = item
            if turn.new:
                result = self.emitter.turn(turn, analysis, previous, following)
                self._remember_similar(turn.meta["conv_id"], result.episode, result.keywords, result.timed)
                if previous is not None:
                    self.emitter.temporal(previous, turn)
                self.batch_turns += 1
                self.totals["turns"] += 1
                continue
            if previous is not None and previous.new:
                # New turns now sit between last_old and this turn: their edge is replaced by the new chain.
                self.emitter.temporal(previous, turn, remove_from=last_old)
            if (previous is not None and previous.new) or (following is not None and following.new):
                self.emitter.reindex(turn, previous, following)
            last_old = turn
        return converted

    def _record_tails(self, unchanged: dict) -> None:
        """Record the tails of converted conversations that lack theirs (a store converted before tails were)."""
        conv_ids = sorted(unchanged)
        for conv_id, recorded in zip(conv_ids, self.store.get_many(TAIL_TABLE, conv_ids)):
            tail = tail_of(unchanged[conv_id])
            if recorded != tail:
                self.draft.record(TAIL_TABLE, conv_id, tail)

    def _start_chunk(self, start: ChunkStart) -> None:
        info = start.info
        self.emitter.chunk(info.raw_id, info.conv_id, start.turns, info.ts)
        self.draft.record(DONE_TABLE, info.raw_id, {"conv_id": info.conv_id, "turns": start.turns,
                                                    "version": VERSION})

    def _remember_similar(self, conv_id: str, episode: str, keywords: set, timed: bool) -> None:
        if keywords:
            self.similar.setdefault(conv_id, {})[episode] = keywords
            if not timed:
                self.untimed.add(episode)

    def _similar_edges(self) -> None:
        from memctl.r2g.linking import similar_pairs

        for _conv_id, keywords in sorted(self.similar.items()):
            for first, second, score in similar_pairs(keywords, self.settings.similar_threshold,
                                                      self.settings.similar_cap):
                timed = first not in self.untimed and second not in self.untimed
                self.draft.edge(first, "SIMILAR_TO", second, self.emitter.weight(score, timed), round(score, 4),
                                properties={"score": round(score, 4)})

    def _commit(self) -> None:
        from memctl.facts.maintain import update_chains

        self._similar_edges()
        self.events.flush(self.draft)
        # The chains of the slot Facts this batch wrote, recomputed into the same batch (memctl/facts).
        self.draft.events += update_chains(self.draft, self.tenant, self.fact_settings, CREATOR, self.graph.clock(),
                                           known=self.known_chains)
        self.draft.document_nodes(MERGED_INDEXED)
        if self.draft.nodes or self.draft.edges or self.draft.removed_edges or self.draft.documents or \
                self.draft.records:
            self.draft.commit()
            if self.store.merge_tiers(RECORDS_TIER_FANOUT, DERIVED_MERGE_MAX_BYTES):
                # The readers of the segments a merge replaced hold themselves in cycles (a text segment's
                # dictionary and postings readers point back at it), which only the collector frees, paused for
                # the run: each kept its mapped file and decompressed columns until the run ended (92 deleted
                # segment files still mapped late in a 32 MiB transcript). A merge follows a flush: the collection
                # walks little more than the run's bounded caches.
                gc.collect()
            self.store.release_mapped_pages()  # the next batch maps again what it reads: a few MB, not the store
            # The batch's objects are freed among the run's long-lived ones (caches, memtable): glibc keeps their
            # pages, 50 MB by the 28th batch of a 6 MiB transcript, unless given back.
            release_free_memory()
            self.totals["batches"] += 1
            if self.created is not None:
                self.created += [[key, node_type] for key, (node_type, _) in self.draft.nodes.items()
                                 if key in self.draft.created]
        self.known_chains.committed()
        self.totals["nodes"].update(self.draft.nodes_created)
        self.totals["edges"].update(self.draft.edges_written)
        self.totals["documents"] += len(self.draft.documents)
        self.index.tokenizer.forget()
        self._new_draft()

    # --- rebuild ---------------------------------------------------------------------------------------

    def _start_rebuild(self) -> None:
        from memctl.r2g.draft import Rewritten

        self.rewritten = Rewritten()
        self._new_draft()
        with self.store.batch() as batch:
            batch.put(META_TABLE, REBUILD_KEY, 1)
            batch.delete(META_TABLE, CONVERTED_KEY)
            for table in (DONE_TABLE, EVENT_TABLE):
                for key, _ in self.store.scan(table):
                    batch.delete(table, key)

    def _rewrite_chains(self) -> None:
        """Write every chain again (a chain of claims r2g did not make, `fact add`'s, still has edges from an
        Entity r2g made, which the rebuild replaces), CHAINS_PER_BATCH chains a batch."""
        from memctl.facts.maintain import update_chains
        from memctl.facts.tables import CHAIN_TABLE

        chains = [key for key, _ in self.store.scan(CHAIN_TABLE)]
        for start in range(0, len(chains), CHAINS_PER_BATCH):
            self._new_draft()
            self.draft.events += update_chains(self.draft, self.tenant, self.fact_settings, CREATOR,
                                               self.graph.clock(),
                                               {key: () for key in chains[start: start + CHAINS_PER_BATCH]})
            self.draft.document_nodes(MERGED_INDEXED)
            self.draft.commit()

    def _finish_rebuild(self) -> int:
        """Remove what earlier runs made and this one did not (nodes r2g owns, edges touching them, their
        index documents); returns the number of nodes removed."""
        stale, owned = [], set()
        for node in self.graph.iter_nodes():
            if _owned(node.type, node.props or {}):
                owned.add(node.id)
                if node.key not in self.rewritten.nodes:
                    stale.append(node.key)
        edges = [edge.key for edge in self.graph.iter_edges()
                 if edge.key not in self.rewritten.edges and (edge.source_id in owned or edge.target_id in owned)]
        for start in range(0, len(edges), CLEAR_EDGES_PER_BATCH):
            with self.graph.batch() as writer:
                for key in edges[start: start + CLEAR_EDGES_PER_BATCH]:
                    writer.delete_edge(key, purge=True)
        for start in range(0, len(stale), CLEAR_NODES_PER_BATCH):
            part = stale[start: start + CLEAR_NODES_PER_BATCH]
            with self.graph.batch() as writer:
                for key in part:
                    writer.delete_node(key, purge=True)
            with self.store.batch() as batch:
                for key in part:
                    self.index.delete(key, batch=batch)
        with self.store.batch() as batch:
            batch.delete(META_TABLE, REBUILD_KEY)
        return len(stale)


def _age_survivors() -> None:
    """Move every object the run left alive (memtable, caches) to the collector's oldest generation without
    scanning it: with the collector paused they all sat in the youngest one, and the first collection after the
    pause walked them all (0.3 s at the end of converting LoCoMo dev). Reference counting still frees them."""
    gc.freeze()
    gc.unfreeze()


def _owned(type_name: str | None, props: dict) -> bool:
    if type_name == RAW_CHUNK:
        return True
    creator = (props.get("provenance") or {}).get("creator")
    return creator in (CREATOR, EXTERNAL_CREATOR)
