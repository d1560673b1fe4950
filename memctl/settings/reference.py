"""The settings reference, generated from the schema: `memctl config doc` prints it, memctl/settings/REFERENCE.md
holds a copy (a test keeps the two equal), and `memctl config show` writes values the same way."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

from memctl.settings.schema import KEYS, SECTIONS
from memctl.settings.value_types import yaml_scalar

REFERENCE_FILE = "memctl/settings/REFERENCE.md"
WIDTH = 110

INTRODUCTION = """\
# memctl settings

Generated from `memctl/settings/schema.py` by `memctl config doc`: do not edit by hand.

A tenant's `memctl.yaml` (in its store directory), then `--config FILE`, override these defaults. Keys nest
(`recall: {raw: {enabled: false}}`) or are written dotted (`recall.raw.enabled: false`,
`graph.edge_weights.ABOUT: 2`). A key not listed here, a value of the wrong type, out of its range or not
finite is refused (exit 2) with the file, the line and the key. `memctl config show` prints the values in
effect and where each came from.

Each key: its type and range, its default, what it does, where the default comes from (seed 001's section;
"measured" where ours differs from the seed on purpose; "ours" where the seed gives no value) and the module
that reads it."""


def yaml_text(value) -> str:
    """A value as one line of YAML flow style."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(yaml_text, value)) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{name}: {yaml_text(item)}" for name, item in value.items()) + "}"
    return yaml_scalar(value)


def markdown() -> str:
    parts = [INTRODUCTION]
    for section, description in SECTIONS.items():
        parts.append(f"## {section}\n\n{description}")
        parts.append("\n".join(_entry(key) for key in KEYS if key.section == section))
    return "\n\n".join(parts) + "\n"


def records() -> list:
    """Every key as a plain mapping, for `memctl config doc --json`."""
    return [{"key": key.name, "type": key.type.describe(), "default": _plain(key.default), "doc": key.doc,
             "source": key.source, "readers": list(key.readers)} for key in KEYS]


def _entry(key) -> str:
    readers = ", ".join(f"`{reader}`" for reader in key.readers)
    text = (f"**`{key.name}`** ({key.type.describe()}; default `{yaml_text(key.default)}`): {key.doc} "
            f"Default: {key.source}. Read by {readers}.")
    return textwrap.fill(text, WIDTH, initial_indent="- ", subsequent_indent="  ", break_on_hyphens=False)


def _plain(value):
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple):
        return list(value)
    return value
