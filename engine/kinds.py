"""Registry of derived segment kinds: kind name → "module:Class", imported only when a kind is used.

A derived kind owns the record tables named `<kind>.*`. At flush the store hands it those tables' changes
and a factory for new segments (`flush(changes, new_segment)`; a kind that can build its segments on a thread
also has `start_flush(changes)`, which the store calls before writing the records segment and whose returned
function it calls with the factory afterwards); at compaction, its segments; at read time it builds the kind's
query object over its segments plus the memtable. See DerivedKind in engine/store.py's docstring and MANIFEST.spec.
"""

from __future__ import annotations

import importlib

_REGISTRY: dict[str, str] = {
    "text": "engine.text.kind:TextKind",
    "graph": "engine.graph.kind:GraphKind",
}


def register(name: str, target: str) -> None:
    _REGISTRY[name] = target


def is_registered(name: str) -> bool:
    return name in _REGISTRY


def load(name: str):
    try:
        module_name, class_name = _REGISTRY[name].split(":")
    except KeyError:
        raise KeyError(f"no derived segment kind named {name!r}") from None
    return getattr(importlib.import_module(module_name), class_name)
