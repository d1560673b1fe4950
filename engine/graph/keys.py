"""The keys graph records are stored under, beyond the callers' own node keys: an edge's default key, and the
graph.dead key of an internal id deleted for good."""

from __future__ import annotations

import json


def dead_key(prefix: str, internal_id: int) -> str:
    return f"{prefix}:{internal_id:016x}"


def edge_key(source: str, edge_type: str, target: str) -> str:
    """The default key of an edge: one edge per (source, type, target), readable and unambiguous.

    It is the compact JSON array of the three; the fast path builds the same text when nothing needs escaping.
    Segments store no bytes for default keys: they are rebuilt from the edge's ends and type when asked for.
    """
    if source.isprintable() and target.isprintable() and '"' not in source + target and "\\" not in source + target:
        return f'["{source}","{edge_type}","{target}"]'
    return json.dumps([source, edge_type, target], ensure_ascii=False, separators=(",", ":"))
