"""Memory: the Python API over one tenant's store. The CLI is a thin layer over it.

    with Memory.open(home="~/mem", tenant="default", writable=True, holder="memctl ingest") as memory:
        ...

Readers (writable=False) take no lock and see a snapshot; a writer holds the tenant's LOCK until close().
"""

from __future__ import annotations

import os

from memctl import config as config_module
from memctl.paths import CONFIG_FILE, tenant_dir


class Memory:
    def __init__(self, store, directory: str, tenant: str, config: config_module.Config):
        self.store = store
        self.directory = directory
        self.tenant = tenant
        self.config = config

    @classmethod
    def open(cls, home: str | None = None, tenant: str = "default", config_file: str | None = None,
             writable: bool = False, wait: float = 0.0, holder: str = "memctl") -> "Memory":
        from engine.store import Store

        directory = tenant_dir(home, tenant)
        config = config_module.load(os.path.join(directory, CONFIG_FILE), config_file)
        store = Store.open(directory, writable=writable, wait=wait, holder=holder,
                           flush_bytes=config.get("engine.flush_bytes"))
        return cls(store, directory, tenant, config)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def stats(self) -> dict:
        from memctl.stats import collect

        return collect(self)
