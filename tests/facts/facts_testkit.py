"""Helpers of the fact chain tests: claims built by hand for timeline.build, and stores filled through the real
ingest + r2g path, read back as chains."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path

from engine.graph.api import GraphStore
from memctl.facts.tables import CHAIN_TABLE
from memctl.facts.versions import Version
from memctl.memory import Memory
from memctl.settings import defaults

TENANT = "default"
FACTS = defaults().facts


def seconds(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=timezone.utc).timestamp()


def claim(key: str, value: str, day: str, *, polarity="stated", kind="set", source="r2g", later=(),
          frequency=1, recorded=0.0) -> Version:
    return Version(key, value, value.casefold(), polarity, kind, seconds(day), tuple(seconds(d) for d in later),
                   source, frequency, 0.8, recorded)


def open_memory(home, writable: bool = True) -> Memory:
    return Memory.open(home=str(home), tenant=TENANT, writable=writable, holder="test")


def write_jsonl(path: Path, turns: list[dict]) -> Path:
    path.write_text("".join(json.dumps(turn, ensure_ascii=False) + "\n" for turn in turns), encoding="utf-8")
    return path


def conversation(path: Path, conv_id: str, turns: list[tuple[str, str]], speaker: str = "用户") -> Path:
    """turns: (ts, text) of one speaker."""
    return write_jsonl(path, [{"id": f"{conv_id}-{index}", "conv_id": conv_id, "speaker": speaker, "ts": ts,
                               "text": text} for index, (ts, text) in enumerate(turns)])


def remember_files(home, *paths) -> None:
    with open_memory(home) as memory:
        memory.ingest([str(path) for path in paths])
        memory.r2g()


def chains(home) -> dict:
    """chain key → [(value, state, valid_since, valid_until)] in chain order, one row per period."""
    with open_memory(home, writable=False) as memory:
        graph = GraphStore(memory.store)
        found = {}
        for chain, record in memory.store.scan(CHAIN_TABLE):
            rows = []
            for key, since in record["entries"]:
                attributes = graph.node(key).props["attributes"]
                rows.append((attributes["value"], attributes["state"], since))
            found[chain.rsplit("|", 1)[1]] = rows
        return found


def chain_edges(home) -> set:
    """(source value or subject, type, target value, properties) of every chain edge."""
    with open_memory(home, writable=False) as memory:
        graph = GraphStore(memory.store)
        snapshot = graph.snapshot()
        found = set()
        for edge in graph.iter_edges():
            if edge.type in ("ACTIVE_OF", "VERSION_NEXT", "CONTRADICTS"):
                source, target = graph.nodes(snapshot.node_keys([edge.source_id, edge.target_id]))
                found.add((_name(source), edge.type, _name(target), json.dumps(edge.props, sort_keys=True)))
        return found


def _name(node) -> str:
    attributes = node.props.get("attributes", {})
    return attributes.get("value") if "slot" in attributes else node.props.get("title")


def tree_digest(directory) -> dict:
    """relative path → sha256 of every file under `directory`, LOCK files aside (a writer leaves its name in
    them)."""
    found = {}
    for root, _, files in os.walk(directory):
        for name in files:
            if name.startswith("LOCK"):
                continue
            path = os.path.join(root, name)
            found[os.path.relpath(path, directory)] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return found
