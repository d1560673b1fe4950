"""The phrasings of the knowledge-update set (tools/ku/phrases/en.yaml, zh.yaml) and how a template is filled.

A phrase file holds names, relatives (the people of a speaker's life: "my sister", 我姐), reactions, greetings,
farewells, small_talk (pairs: a line and its answer) and `slots`: slot name → `multi` (values accumulate),
`values` (relationship_status: `chains`, lists of statuses in the order a life goes through them) and templates
per statement kind:

    set        the first value, stated as a state         {v}
    change     a new value (single-valued: it replaces     {v}, {old}, {t}/{T} or {s}
               the one in force; multi-valued: it is added)
    end        single-valued: the value in force ends;     {old} / multi-valued: {v}, {t}
               multi-valued: a value stops
    restate    the value in force mentioned again          {v}
    passing    a former value mentioned in passing         {old}
    plan       a value that is not taken: plans, wishes    {x}
    other      someone else's value                        {who}/{Who}, {x}, {t}
    ask        the other speaker asks about the value      {v}
    current, past, when, when_stop: the questions          {name}, {v}, {month}

Placeholders: {v} the value, {old} the former one, {x} a value outside the timeline, {t} when it happened as a
sentence says it ("last weekend", 上周末), {s} the same after "since" / 从…起 ("March", 三月), {name} the person,
{other} the other speaker, {who} one of the relatives, {month} a month as a question names it. In English a
capital first letter capitalises the filling ({V}, {T}, {Who}, {Old}, {X}) and `a_` puts the indefinite article
before it ({a_v}, {a_old}, {a_x}; {A_x} capitalised).

dev2: `phrasebook(language, dev2=True)` is the phrase file with `<language>.dev2.yaml` laid over it (mappings
merged, a list or value of the overlay replacing the file's): the dev2 conversations' own names, values and
templates, written after the rules were tuned on dev, with lists it leaves out shared with dev.

Held out: an entry that starts with "(h) " belongs to the held-out conversations; dev conversations never use
it, and held-out conversations use only such entries of a list that has them. Values, chains, relatives and
small talk are the exception: held-out conversations draw from all of them (a timeline needs more distinct
values than a list reserves, and sessions would repeat the same two lines), dev ones never from the reserved.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

HELD_OUT = "(h) "
PHRASES = Path(__file__).resolve().parent / "phrases"
PLACEHOLDER = re.compile(r"\{(\w+)\}")
VOWELS = "aeiouAEIOU"


@cache
def phrasebook(language: str, dev2: bool = False) -> dict:
    book = _load(PHRASES / f"{language}.yaml")
    return _overlaid(book, _load(PHRASES / f"{language}.dev2.yaml")) if dev2 else book


def _load(path: Path) -> dict:
    import yaml

    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _overlaid(base: dict, overlay: dict) -> dict:
    merged = dict(base)
    for key, value in overlay.items():
        both_mappings = isinstance(value, dict) and isinstance(base.get(key), dict)
        merged[key] = _overlaid(base[key], value) if both_mappings else value
    return merged


def entries(items: list, held_out: bool) -> list:
    """The entries of a list a conversation of this split may use, without their held-out mark."""
    reserved = [item for item in items if _reserved(item)]
    chosen = reserved if held_out and reserved else [item for item in items if not _reserved(item)]
    return [_unmarked(item) for item in chosen]


def values(items: list, held_out: bool) -> list:
    """The values (or chains) a conversation of this split may draw from."""
    return [_text(_unmarked(item)) for item in items if held_out or not _reserved(item)]


def _text(item):
    """YAML reads an unquoted phone number as an int: every value is text."""
    return [_text(part) for part in item] if isinstance(item, list) else str(item)


def _reserved(item) -> bool:
    first = item[0] if isinstance(item, list) else item
    return isinstance(first, str) and first.startswith(HELD_OUT)


def _unmarked(item):
    if isinstance(item, list):
        return [_unmarked(part) for part in item]
    return item[len(HELD_OUT):] if isinstance(item, str) and item.startswith(HELD_OUT) else item


def fill(template: str, language: str, fields: dict) -> str:
    """The template with its placeholders filled from `fields` (lower-case names: v, old, x, t, s, name, …)."""

    def replace(match: re.Match) -> str:
        name = match[1]
        article = name[:2].lower() == "a_"
        base = name[2:] if article else name
        key = base.lower()
        if key not in fields:
            raise KeyError(f"template {template!r} needs {{{name}}}, which this statement does not give")
        text = str(fields[key])
        if article and language == "en":
            text = ("an " if text[:1] in VOWELS else "a ") + text
        if language == "en" and (name[0].isupper()):
            text = text[:1].upper() + text[1:]
        return text

    return PLACEHOLDER.sub(replace, template)


def placeholders(template: str) -> set:
    """The fields a template needs, by their lower-case names ({T} → t, {a_v} → v)."""
    return {(name[2:] if name[:2].lower() == "a_" else name).lower() for name in PLACEHOLDER.findall(template)}
