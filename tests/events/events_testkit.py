"""Helpers of the event log and feedback tests: a small store converted by R2G, and `memctl` in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Two slot facts, a residence and an employer (change detection reads "with my dog Rex" as a pet and "as an
# engineer" as a job title since kugeneral: the sentences say neither, so that the logs below count two)
FIRST = ("Alice: I moved to Denver last weekend with Rex.\n"
         "Bob: Nice! Do you still work at Acme?\n"
         "Alice: Yes, I still work at Acme.\n")
SECOND = ("Alice: My sister Carol visited Denver yesterday.\n"
          "Bob: Did Carol like Denver?\n")


def open_memory(home: Path, writable: bool = True):
    from memctl.memory import Memory

    return Memory.open(home=str(home), writable=writable, holder="events test")


def remember(home: Path, text: str) -> dict:
    """Ingest `text` and convert it: two commits (ingest, then r2g's batch)."""
    with open_memory(home) as memory:
        memory.ingest(texts=[text])
        return memory.r2g()


def node_keys(home: Path) -> set:
    with open_memory(home, writable=False) as memory:
        from engine.graph.api import GraphStore

        return {node.key for node in GraphStore(memory.store).iter_nodes()}


def node_props(home: Path, key: str) -> dict:
    with open_memory(home, writable=False) as memory:
        return memory.graph._graph().node(key).props


def entity(home: Path, name: str) -> str:
    """The key of the Entity node titled `name`."""
    with open_memory(home, writable=False) as memory:
        from engine.graph.api import GraphStore

        found = [node.key for node in GraphStore(memory.store).iter_nodes()
                 if node.type == "Entity" and (node.props or {}).get("title") == name]
    assert len(found) == 1, found
    return found[0]


def memctl(home: Path, *arguments: str, failpoint: str | None = None, **options) -> subprocess.CompletedProcess:
    """`memctl --home HOME ARGUMENTS…` in a fresh interpreter (a process of its own, as a user runs it)."""
    environment = {**os.environ, "MEMCTL_FAILPOINT": failpoint or ""}
    return subprocess.run([sys.executable, "-m", "memctl", "--home", str(home), *arguments], capture_output=True,
                          text=True, env=environment, **options)


def store_files(home: Path) -> dict:
    """{relative path: bytes} of every file under the home but LOCK (which names the last writer): what "the
    store unchanged" compares."""
    return {str(path.relative_to(home)): path.read_bytes() for path in sorted(home.rglob("*"))
            if path.is_file() and path.name != "LOCK"}
