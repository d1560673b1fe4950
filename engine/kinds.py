"""Registry of derived segment kinds: kind name → "module:Class", imported only when a kind is used.

A derived kind owns record tables: its unnamed instance (owner "<kind>") the tables `<kind>.*`, a named
instance (owner "<kind>:<instance>", for kinds registered with named instances) the tables
`<kind>:<instance>.*`. The store routes a table's changes to the owner before the table name's first ".", and
builds the kind object of an owner as `Class(store, owner)`. At flush it hands that object the owner's tables'
changes and a factory for new segments (`flush(changes, new_segment)`; a kind that can build its segments on a
thread also has `start_flush(changes)`, which the store calls before writing the records segment and whose
returned function it calls with the factory afterwards); at compaction, the owner's segments; at read time
the object builds the owner's query object over its segments plus the memtable. Every instance has segments,
statistics and compactions of its own: two instances share nothing but their code. See MANIFEST.spec §4a-§4c.
"""

from __future__ import annotations

import importlib
import re

from engine.format import INSTANCE_NAME_PATTERN, INSTANCE_SEPARATOR

_REGISTRY: dict[str, str] = {
    "text": "engine.text.kind:TextKind",
    "graph": "engine.graph.kind:GraphKind",
    "raw": "engine.raw.passage_kind:PassageKind",
}
_NAMED_INSTANCES = {"text"}  # kinds whose instances may be named (the graph has one, its tables fixed by name)


def register(name: str, target: str, named_instances: bool = False) -> None:
    _REGISTRY[name] = target
    if named_instances:
        _NAMED_INSTANCES.add(name)


def owner_of(table: str) -> str:
    """The owner a record table or counter belongs to (whether or not it names a derived kind)."""
    return table.split(".", 1)[0]


def kind_of(owner: str) -> str:
    return owner.split(INSTANCE_SEPARATOR, 1)[0]


def owner_problem(owner: str) -> str | None:
    """Why `owner` names no derived kind instance, or None when it names one."""
    kind, separator, instance = owner.partition(INSTANCE_SEPARATOR)
    if kind not in _REGISTRY:
        return f"no derived segment kind named {kind!r}"
    if not separator:
        return None
    if kind not in _NAMED_INSTANCES:
        return f"the {kind!r} kind has no named instances (owner {owner!r})"
    if not re.fullmatch(INSTANCE_NAME_PATTERN, instance):  # compiled on first use (re caches it), not at import
        return f"instance name {instance!r} of owner {owner!r} does not match {INSTANCE_NAME_PATTERN}"
    return None


def ownership_problem(segment_kind: str, owner: str) -> str | None:
    """Why a MANIFEST entry cannot name `owner` as the owner of a segment of `segment_kind`, or None: an owner
    owns the segments of its kind ("text:nodes" those of kind "text.postings", "records" the records segments)."""
    if kind_of(owner) != segment_kind.split(".", 1)[0]:
        return f"the MANIFEST names {owner!r} as the owner of a {segment_kind!r} segment"
    return None


def is_registered(owner: str) -> bool:
    return owner_problem(owner) is None


def load(owner: str):
    """The kind class of `owner` (an instance of it is built as `Class(store, owner)`)."""
    problem = owner_problem(owner)
    if problem is not None:
        raise KeyError(problem)
    module_name, class_name = _REGISTRY[kind_of(owner)].split(":")
    return getattr(importlib.import_module(module_name), class_name)


def open_kind(store, owner: str):
    """The kind object of `owner` over `store`."""
    return load(owner)(store, owner)
