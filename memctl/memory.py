"""Memory: the Python API over one tenant's store, and the one entry point of the CLI.

    with Memory.open(home="~/mem", tenant="default", writable=True, holder="memctl ingest") as memory:
        memory.ingest(["chat.txt"])
        memory.r2g()
        memory.recall("Win11 蓝牙 打不开", budget=1500)

Readers (writable=False) take no lock and see a snapshot of a store that exists (engine.errors.NoStore, exit 2
on the command line, when none was created); a writer creates the store if need be and holds the tenant's
LOCK until close().
Capabilities apart from the memory lifecycle hang off three attributes: `memory.graph` (the graph, directly),
`memory.documents` (plain documents and their keyword index) and `memory.raw` (the stored raw chunks).
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from functools import cached_property

from memctl.paths import CONFIG_FILE, check_creatable, tenant_dir
from memctl.settings import Settings, load


class Memory:
    def __init__(self, store, directory: str, tenant: str, config: Settings, opener=None):
        self._store = store
        self._opener = opener
        self.directory = directory
        self.tenant = tenant
        self.config = config

    @classmethod
    def open(cls, home: str | None = None, tenant: str = "default", config_file: str | None = None,
             writable: bool = False, wait: float = 0.0, holder: str = "memctl", lazy: bool = False) -> "Memory":
        """Open a tenant's memory. lazy=True loads the settings now but opens the store (creating it, taking
        the writer lock) at its first use, so a command that checks its input first leaves no trace on bad
        input; a busy or damaged store is then reported at that first use."""
        directory = tenant_dir(home, tenant)
        if writable:
            check_creatable(directory)
        config = load(os.path.join(directory, CONFIG_FILE), config_file)

        def opener():
            from engine.store import Store

            return Store.open(directory, writable=writable, wait=wait, holder=holder,
                              flush_bytes=config.get("engine.flush_bytes"), must_exist=not writable)

        memory = cls(None, directory, tenant, config, opener)
        if not lazy:
            memory.store  # noqa: B018 - opens it
        return memory

    @property
    def store(self):
        """The engine store, opened on first use by a lazy Memory."""
        if self._store is None:
            self._store = self._opener()
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- capabilities ---------------------------------------------------------------------------------------

    @cached_property
    def graph(self):
        """The memory graph, directly: see memctl/graph.py."""
        from memctl.graph import Graph

        return Graph(self)

    @cached_property
    def documents(self):
        """Plain documents and their keyword index: see memctl/documents.py."""
        from memctl.documents import Documents

        return Documents(self)

    @cached_property
    def facts(self):
        """Version chains of slot facts: see memctl/facts/api.py."""
        from memctl.facts.api import Facts

        return Facts(self)

    @cached_property
    def raw(self):
        """The stored raw chunks: see memctl/raw_chunks.py."""
        from memctl.raw_chunks import RawChunks

        return RawChunks(self)

    # --- store ----------------------------------------------------------------------------------------------

    def ingest(self, paths=(), texts=(), format: str = "auto", errors: str = "strict", progress=None,
               stdin=None) -> dict:
        """Store raw conversations from files, directories, globs and "-" (`stdin`, a binary stream) in `paths`
        and literal `texts`, as one atomic batch. Every input is read and checked before the store is touched.
        progress(stage, done, total): stage "parse" (bytes), then "store" (chunks). See memctl/ingest/api.py."""
        from memctl.ingest.api import ingest_paths

        return ingest_paths(lambda: nullcontext(self.store), paths, texts, format, errors, self.config, progress,
                            stdin)

    # --- remember -------------------------------------------------------------------------------------------

    def remember(self, paths=(), texts=(), format: str = "auto", errors: str = "strict", stdin=None) -> dict:
        """Ingest and convert to the memory graph in one commit (the inputs as for ingest): what an agent does
        after every exchange. Returns the raw ids and node keys created. See memctl/remember.py."""
        from memctl.remember import remember

        return remember(self, paths, texts, format, errors, stdin)

    def r2g(self, source: str = "raw", path: str | None = None, rebuild: bool = False, progress=None,
            stdin=None, jobs: int = 1) -> dict:
        """Build the memory graph. source "raw": convert the stored raw chunks not converted yet (all of them
        with `rebuild`, after removing what earlier runs built); progress(done, total) counts chunks; `jobs`
        processes analyse turns (memctl/r2g/analysis_pool.py; they are spawned, so a script that asks for
        jobs runs from a file, under `if __name__ == "__main__":`).
        source "jsonl": import nodes and edges from an external agent's JSONL file `path` ("-": `stdin`, a
        binary stream, default sys.stdin) after validating all of it. Returns a summary dict.
        See memctl/r2g/builder.py and memctl/r2g/external.py."""
        if source == "raw":
            if path is not None:
                from engine.errors import InputError

                raise InputError("--from raw takes no FILE (it converts the stored raw chunks)")
            from memctl.r2g.builder import Builder

            return Builder(self.store, self.tenant, self.config, progress, jobs).run(rebuild=rebuild)
        if source == "jsonl":
            from memctl.r2g.external import import_jsonl, read_input

            data, name = read_input(path, self.config.get("ingest.max_file_bytes"), stdin)
            return import_jsonl(self.store, self.tenant, data, name, self.config)
        from engine.errors import InputError

        raise InputError(f"--from must be raw or jsonl, not {source!r}")

    # --- recall ---------------------------------------------------------------------------------------------

    def recall(self, q: str, **options) -> dict:
        """Recall memories for the query `q` (seed 001 §5, W3–W6): {"query", "results", "trace", "keywords"}.

        options: top, budget (tokens; 0: none), k_hop, types, since/until (epoch seconds), graph_only, allow_raw,
        cite, mvp, now (the reference time for recency and relative dates), as_of (epoch seconds or ISO text:
        answer as of that time, see memctl/recall/pipeline.py), explain (gather what only the trace shows). The
        Recaller behind it keeps what it read for this snapshot, so many recalls on one Memory read each record
        once. See memctl/recall/."""
        from memctl.recall.pipeline import Request

        return self.recaller().recall(Request(q=q, **options))

    def explain(self, key: str, q: str | None = None, **options) -> dict:
        """One node: what it is, its weight, neighbours and citations; with a query `q`, where it ranks for it
        (options as for recall)."""
        from memctl.recall.pipeline import Request

        return self.recaller().explain(key, Request(q=q, **options) if q else None)

    def keywords(self, q: str, **options) -> dict:
        """Only query building (W3): the keywords stage A would search, entities, times, pattern tokens and
        clauses of `q` (options as for recall; `now` dates relative times)."""
        from memctl.recall.pipeline import Request

        return self.recaller().extract(Request(q=q, **options))

    def recaller(self):
        if getattr(self, "_recaller", None) is None:
            from memctl.recall.pipeline import Recaller

            self._recaller = Recaller(self.store, self.config, self.tenant)
        return self._recaller

    # --- feedback and events --------------------------------------------------------------------------------

    def feedback(self, key: str, action: str, now: float | None = None) -> dict:
        """Pin, unpin, upvote or downvote (action "pin", "unpin", "up", "down") the memory `key`, under seed
        002's BOOST rules at time `now` (default: the clock), with its WeightUpdated event in the same batch. A
        refused --up changes nothing and says why and when it is allowed. See memctl/feedback.py."""
        import time

        from engine.graph.api import GraphStore
        from memctl.feedback import give_feedback

        return give_feedback(GraphStore(self.store), self.config, key, action, time.time() if now is None else now)

    def events(self, after: int = 0, since: float | None = None, types=None, keys: bool = False) -> list:
        """The event log's events numbered above `after`, recorded at `since` (epoch seconds) or later, of
        `types` (None: all), in order, as dicts; keys: NodeCreated / EdgeCreated name their keys too. See
        memctl/event_log.py."""
        from memctl import event_log

        event_log.check_types(types)
        return [event.as_dict() for event in event_log.read(self.store, after, since, types, keys)]

    def follow_events(self, after: int = 0, since: float | None = None, types=None, keys: bool = False,
                      interval: float = 0.5):
        """events(), then every event committed later, as it comes: a reader snapshot taken every `interval`
        seconds, which never blocks the writer. Never ends; the caller stops iterating."""
        from memctl import event_log

        event_log.check_types(types)
        from engine.store import Store

        def open_reader():
            return Store.open(self.directory, writable=False, must_exist=True)

        for event in event_log.follow(open_reader, after, since, types, keys, interval):
            yield event.as_dict()

    # --- maintain and inspect -------------------------------------------------------------------------------

    @classmethod
    def check(cls, home: str | None = None, tenant: str = "default") -> dict:
        """fsck of a tenant's store: every checksum, MANIFEST reference and id counter. Opens nothing (and
        reads no settings), so it runs on a damaged store and beside a writer: {"path", "clean", "problems":
        [{"file", "offset", "message"}], "notes": [{"file", "message"}], "checked": {what: count}}."""
        from engine.check import check_store

        return check_store(tenant_dir(home, tenant)).as_dict()

    @classmethod
    def migrate(cls, home: str | None = None, tenant: str = "default", dry_run: bool = False, wait: float = 0.0,
                holder: str = "memctl migrate") -> dict:
        """Upgrade a tenant's store of an older format to the one this memctl writes, in place and atomically
        (a crash leaves the old store or the new one; MANIFEST.spec §14); a store of this format is left as it
        is. dry_run: report what would change and write nothing. Opens no Memory (this code refuses an older
        store) and reads no settings: {"path", "from_version", "to_version", "dry_run", "migrated",
        "wal_batches", "steps": [{"name", "to_version", "counts"}]}. The ingest adapters say what a version-3
        turn's input keys mean (memctl.ingest.format3), which the engine's turn_fields step cannot know."""
        from engine.migration import migrate_store

        return migrate_store(tenant_dir(home, tenant), wait=wait, holder=holder, dry_run=dry_run,
                             hooks=migration_hooks())

    @classmethod
    def repair(cls, home: str | None = None, tenant: str = "default", dry_run: bool = False, wait: float = 0.0,
               holder: str = "memctl repair") -> dict:
        """Salvage a damaged tenant store: every record, WAL batch and raw chunk that still reads back is kept,
        the indexes are built again from the records, and the result is published atomically (a crash leaves
        the damaged store or the repaired one; MANIFEST.spec §15). A store `check` finds sound is left as it
        is, its DAMAGE marker deleted. dry_run: report what would be lost and write nothing. Opens no Memory
        (writers refuse a damaged store) and reads no settings: {"path", "dry_run", "format", "marker":
        [finding], "found": [problem], "repaired", "marker_cleared", and when damage was found "lost":
        {"records", "wal_batches", "raw_chunks"}, "kept", "rebuilt", "migration_steps"}. A store of an older
        format is migrated on the way, with the hooks `migrate` hands its steps."""
        from engine.repair import repair_store

        return repair_store(tenant_dir(home, tenant), wait=wait, holder=holder, dry_run=dry_run,
                            hooks=migration_hooks())

    def compact(self) -> dict:
        """Flush unwritten records and merge every kind's segments into one, dropping deleted data."""
        before = self._segment_bytes()
        self.store.compact()
        return {"segment_bytes_before": before, "segment_bytes_after": self._segment_bytes()}

    def _segment_bytes(self) -> int:
        return sum(entry["size"] for entry in self.store.manifest.segments)

    def stats(self) -> dict:
        from memctl.stats import collect

        return collect(self)


def migration_hooks() -> dict:
    """What `migrate` and `repair` hand the engine's migration steps: how a version-3 turn's input keys map
    onto the generic turn fields (memctl.ingest.format3), and how the chains of a version-4 store's slot facts
    are built (memctl.facts.migration)."""
    from memctl.facts.migration import build_chains
    from memctl.ingest.format3 import migration_hooks as turn_field_hooks

    return {**turn_field_hooks(), "fact_chains": build_chains}
