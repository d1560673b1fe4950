"""Stored Entities the query names (seed 001 §5.1, entity set E), found without scanning the graph.

Entity keys are deterministic (memctl.model.entity_id: normalised name, type, tenant), so every word n-gram of
the query (Latin: 1–3 words; CJK: substrings of 2–6 characters) is probed under each entity type; a surface
form the alias lexicon knows ("Win11", "蓝牙") is probed under its canonical name too ("Windows 11",
"Bluetooth"), as R2G stored it. Each probe is one point read.
"""

from __future__ import annotations

import re

_LATIN_WORD = re.compile(r"[A-Za-z0-9][\w\-.']*")
_POSSESSIVE = re.compile(r"'s$", re.IGNORECASE)
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
MAX_WORDS = 3
MAX_CJK = 6


def ngrams(text: str) -> list:
    # "Julia's diet" names Julia
    words = [_POSSESSIVE.sub("", match.group()).strip(".'-") for match in _LATIN_WORD.finditer(text)]
    found = []
    for size in range(1, MAX_WORDS + 1):
        for start in range(len(words) - size + 1):
            found.append(" ".join(words[start: start + size]))
    for run in _CJK_RUN.findall(text):
        for size in range(2, min(MAX_CJK, len(run)) + 1):
            for start in range(len(run) - size + 1):
                found.append(run[start: start + size])
    return [gram for gram in dict.fromkeys(found) if gram]


def match(text: str, tenant: str, nodes, aliases=None) -> list:
    """[{id, name, type, surface}] of stored Entities named in `text`, longest surface forms first."""
    from memctl.model import ENTITY_TYPES, entity_id

    found = {}
    for gram in sorted(ngrams(text), key=len, reverse=True):
        names = [(gram, None)]
        entry = aliases.lookup(gram) if aliases is not None else None
        if entry is not None:
            names.insert(0, (entry.canonical, entry.entity_type))
        for name, known_type in names:
            for entity_type in ([known_type] if known_type else ENTITY_TYPES):
                key = entity_id(tenant, name, entity_type)
                if key in found or not nodes.exists(key):
                    continue
                attributes = nodes.props(key).get("attributes") or {}
                found[key] = {"id": key, "name": attributes.get("canonical") or name, "type": entity_type,
                              "surface": gram}
    return list(found.values())
