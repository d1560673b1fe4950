"""The slot lexicon (memctl/data/slots.yaml, its schema in the file's header): what a slot is, whether its values
accumulate, what kind of value it takes, and the words that name it in English and Chinese.

R2G's generic frames (memctl/r2g/slots.py) map the Y of "my X's Y is Z" / "我X的Y是Z" through it; whatever reads
slot facts later (version chains, `memctl fact`) asks it whether a slot is multi-valued. A slots.yaml in the
r2g.lexicon_directory extends the shipped one: its slots are added, a slot of the same name replaced. A file
that does not follow the schema is refused with the file, the slot and what was expected (InputError).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memctl.language.lexicon import lexicon_cache, load_yaml_layers
from memctl.model import normalize_text

LANGUAGES = ("en", "zh")
VALUE_KINDS = ("place", "organisation", "person", "phone", "email", "date", "number", "language", "product",
               "name", "free")
SLOT_NAME = re.compile(r"[a-z][a-z0-9_]*")
SLOT_KEYS = frozenset({"multi_valued", "value", "labels", "nouns", "cues"})


@dataclass(frozen=True, slots=True)
class SlotSpec:
    name: str
    multi_valued: bool
    value_kind: str
    labels: dict  # language → label
    nouns: dict  # language → tuple of the words that name the slot
    cues: dict  # language → tuple of surface cues ("live in …")

    def label(self, lang: str) -> str:
        return self.labels.get(lang) or self.name


@dataclass(frozen=True, slots=True)
class SlotLexicon:
    slots: dict  # name → SlotSpec
    by_noun: dict  # language → {normalised noun: SlotSpec}

    def named_by(self, noun: str, lang: str) -> SlotSpec | None:
        """The slot a noun names in `lang` ("电话号码" → phone, "Phone Number" → phone), None for a free one."""
        return self.by_noun.get(lang, {}).get(normalize_text(noun))

    def person_noun(self, noun: str, lang: str) -> bool:
        """True when `noun` names a person slot (my aunt, 我同事): "my X" is then a person."""
        spec = self.named_by(noun, lang)
        return spec is not None and spec.value_kind == "person"


@lexicon_cache
def slot_lexicon() -> SlotLexicon:
    slots: dict = {}
    for path, data in load_yaml_layers("slots.yaml"):
        if not isinstance(data, dict) or not isinstance(data.get("slots"), dict):
            _refuse(path, None, "a mapping with `slots:`, each slot a mapping (see the shipped file's header)")
        for name, entry in data["slots"].items():
            slots[name] = _spec(path, name, entry)
    by_noun: dict = {lang: {} for lang in LANGUAGES}
    for spec in slots.values():
        for lang in LANGUAGES:
            for noun in spec.nouns.get(lang, ()):
                by_noun[lang].setdefault(normalize_text(noun), spec)
    return SlotLexicon(slots, by_noun)


def _spec(path, name, entry) -> SlotSpec:
    if not isinstance(name, str) or not SLOT_NAME.fullmatch(name):
        _refuse(path, name, "a slot name of lower-case letters, digits and _, starting with a letter")
    if not isinstance(entry, dict) or entry.get("value") not in VALUE_KINDS:
        _refuse(path, name, f"a mapping whose `value` is one of {', '.join(VALUE_KINDS)}")
    unknown = set(entry) - SLOT_KEYS
    if unknown:
        _refuse(path, name, f"only the keys {', '.join(sorted(SLOT_KEYS))} "
                            f"(not {', '.join(sorted(map(str, unknown)))})")
    multi_valued = entry.get("multi_valued", False)
    if not isinstance(multi_valued, bool):
        _refuse(path, name, "multi_valued: true or false")
    labels = _per_language(path, name, entry, "labels", single=True)
    return SlotSpec(name, multi_valued, entry["value"], labels, _per_language(path, name, entry, "nouns"),
                    _per_language(path, name, entry, "cues"))


def _per_language(path, name, entry, key, single=False) -> dict:
    value = entry.get(key) or {}
    expected = "a string" if single else "a list of strings"
    if not isinstance(value, dict) or set(value) - set(LANGUAGES):
        _refuse(path, name, f"{key}: a mapping of {' and '.join(LANGUAGES)} to {expected}")
    found = {}
    for lang, words in value.items():
        if single:
            if not isinstance(words, str):
                _refuse(path, name, f"{key}.{lang}: {expected}")
            found[lang] = words
        else:
            if not isinstance(words, list) or not all(isinstance(word, str) and word for word in words):
                _refuse(path, name, f"{key}.{lang}: {expected}")
            found[lang] = tuple(words)
    return found


def _refuse(path, name, expected: str):
    from engine.errors import InputError

    where = str(path) if name is None else f"{path}: slot {name}"
    raise InputError(f"invalid slot lexicon: expected {expected}", where=where)
