"""Memory: the Python API over one tenant's store. The CLI is a thin layer over it.

    with Memory.open(home="~/mem", tenant="default", writable=True, holder="memctl ingest") as memory:
        ...

Readers (writable=False) take no lock and see a snapshot; a writer holds the tenant's LOCK until close().
"""

from __future__ import annotations

import os

from memctl.paths import CONFIG_FILE, tenant_dir
from memctl.settings import Settings, load


class Memory:
    def __init__(self, store, directory: str, tenant: str, config: Settings):
        self.store = store
        self.directory = directory
        self.tenant = tenant
        self.config = config

    @classmethod
    def open(cls, home: str | None = None, tenant: str = "default", config_file: str | None = None,
             writable: bool = False, wait: float = 0.0, holder: str = "memctl") -> "Memory":
        from engine.store import Store

        directory = tenant_dir(home, tenant)
        config = load(os.path.join(directory, CONFIG_FILE), config_file)
        store = Store.open(directory, writable=writable, wait=wait, holder=holder,
                           flush_bytes=config.get("engine.flush_bytes"))
        return cls(store, directory, tenant, config)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def r2g(self, source: str = "raw", path: str | None = None, rebuild: bool = False, progress=None,
            stdin=None) -> dict:
        """Build the memory graph. source "raw": convert the stored raw chunks not converted yet (all of them
        with `rebuild`, after removing what earlier runs built); progress(done, total) counts chunks.
        source "jsonl": import nodes and edges from an external agent's JSONL file `path` ("-": `stdin`, a
        binary stream, default sys.stdin) after validating all of it. Returns a summary dict.
        See memctl/r2g/builder.py and memctl/r2g/external.py."""
        if source == "raw":
            if path is not None:
                from engine.errors import InputError

                raise InputError("--from raw takes no FILE (it converts the stored raw chunks)")
            from memctl.r2g.builder import Builder

            return Builder(self.store, self.tenant, self.config, progress).run(rebuild=rebuild)
        if source == "jsonl":
            from memctl.r2g.external import import_jsonl, read_input

            data, name = read_input(path, self.config.get("ingest.max_file_bytes"), stdin)
            return import_jsonl(self.store, self.tenant, data, name, self.config)
        from engine.errors import InputError

        raise InputError(f"--from must be raw or jsonl, not {source!r}")

    def recall(self, q: str, **options) -> dict:
        """Recall memories for the query `q` (seed 001 §5, W3–W6): {"query", "results", "trace", "keywords"}.

        options: top, budget (tokens; 0: none), k_hop, types, since/until (epoch seconds), graph_only, allow_raw,
        cite, mvp, now (the reference time for recency and relative dates). The Recaller behind it keeps what it
        read for this snapshot, so many recalls on one Memory read each record once. See memctl/recall/."""
        from memctl.recall.pipeline import Request

        return self.recaller().recall(Request(q=q, **options))

    def recaller(self):
        if getattr(self, "_recaller", None) is None:
            from memctl.recall.pipeline import Recaller

            self._recaller = Recaller(self.store, self.config, self.tenant)
        return self._recaller

    def stats(self) -> dict:
        from memctl.stats import collect

        return collect(self)
