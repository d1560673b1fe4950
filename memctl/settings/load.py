"""Layering: the defaults, then the tenant's memctl.yaml (if there is one), then --config FILE.

A file is a YAML mapping of sections to settings, nested (`recall: {raw: {enabled: false}}`) or dotted
(`recall.raw.enabled: false`, `graph.edge_weights.ABOUT: 2`), in any mix. Each value is checked against its
key's type and range; anything wrong (an unknown or misspelt key, a value out of range or not finite, a key
set twice, a file that cannot be read) is an InputError naming the file, the line and the key, so a typo never
silently falls back to a default. A map keyed by names (graph.edge_weights…) is updated entry by entry; every
other value replaces the one before.
"""

from __future__ import annotations

import os
from types import MappingProxyType

from engine.errors import InputError
from memctl.settings.effective import Origin, Settings, SourceFile, defaults
from memctl.settings.schema import BY_NAME
from memctl.settings.value_types import MapOf, SettingValueError, shown

GROUPS = frozenset(name.rsplit(".", part)[0] for name in BY_NAME for part in range(1, name.count(".") + 1))


class Located:
    """A YAML mapping whose entries keep the line they were written on: [(key, value, line or None)]."""

    def __init__(self, entries: list):
        self.entries = entries


def load(tenant_file: str | None = None, user_file: str | None = None) -> Settings:
    """The effective settings: defaults, the tenant's file when it exists, then `user_file` (--config)."""
    settings, files = defaults(), []
    if tenant_file is not None:
        found = os.path.lexists(tenant_file)
        files.append(SourceFile("tenant", tenant_file, found))
        if found:
            settings = _apply_file(settings, tenant_file, "tenant", where=tenant_file)
    if user_file is not None:
        files.append(SourceFile("--config", user_file, True))
        settings = _apply_file(settings, user_file, "--config", where="--config")
    return Settings(settings.values, settings.origins, tuple(files))


def apply(settings: Settings, values: dict, origin: Origin) -> Settings:
    """`settings` with `values` (a plain mapping, nested or dotted) applied as one more layer."""
    layer = _Layer(settings, origin)
    layer.mapping(_located(values), "")
    return Settings(layer.values, layer.origins, settings.files)


def _apply_file(settings: Settings, path: str, layer_name: str, where: str) -> Settings:
    data = _parse(_read_text(path, where), path)
    if data is None:
        return settings
    layer = _Layer(settings, Origin(layer_name, path))
    layer.mapping(data, "")
    return Settings(layer.values, layer.origins, settings.files)


class _Layer:
    """One file's (or caller's) settings applied on top of the values so far."""

    def __init__(self, settings: Settings, origin: Origin):
        self.values = dict(settings.values)
        self.origins = dict(settings.origins)
        self.origin = origin
        self.lines: dict = {}  # name → line, of what this layer set

    def where(self, line: int | None) -> str:
        if self.origin.path is None:
            return self.origin.layer
        return f"{self.origin.path}:{line}" if line else self.origin.path

    def mapping(self, data: Located, prefix: str) -> None:
        for name, value, line in data.entries:
            if not isinstance(name, str) or not name:
                raise InputError(f"setting names are text, got {shown(name)}", where=self.where(line))
            dotted = prefix + name
            if dotted in BY_NAME:
                self.key(BY_NAME[dotted], value, line)
            elif dotted in GROUPS:
                if not isinstance(value, Located):
                    raise InputError(f"{dotted!r} is a group of settings: expected a mapping of them, got "
                                     f"{shown(value)}", where=self.where(line))
                self.mapping(value, dotted + ".")
            elif _map_entry(dotted):
                parent, entry = dotted.rsplit(".", 1)
                self.entries(BY_NAME[parent], Located([(entry, value, line)]), line)
            else:
                raise InputError(unknown_message(dotted), where=self.where(line))

    def key(self, key, value, line: int | None) -> None:
        if isinstance(key.type, MapOf):
            self.entries(key, value, line)
            return
        if isinstance(value, Located):
            raise InputError(f"setting {key.name!r}: expected {key.type.describe()}, got a mapping",
                             where=self.where(line))
        try:
            self.values[key.name] = key.type.check(value)
        except SettingValueError as problem:
            raise InputError(f"setting {key.name!r}: {problem}", where=self.where(line)) from None
        self.mark(key.name, line)

    def entries(self, key, value, line: int | None) -> None:
        if not isinstance(value, Located):
            raise InputError(f"setting {key.name!r}: expected {key.type.describe()}, got {shown(value)}",
                             where=self.where(line))
        merged = dict(self.values[key.name])
        for entry, entry_value, entry_line in value.entries:
            name = f"{key.name}.{entry}"
            try:
                merged[entry] = key.type.check_entry(entry, entry_value)
            except SettingValueError as problem:
                raise InputError(f"setting {name!r}: {problem}", where=self.where(entry_line)) from None
            self.mark(name, entry_line)
        self.values[key.name] = MappingProxyType(merged)

    def mark(self, name: str, line: int | None) -> None:
        if name in self.lines:
            first = self.lines[name]
            lines = f" (lines {first} and {line})" if first and line else ""
            raise InputError(f"setting {name!r} is set twice{lines}", where=self.where(line))
        self.lines[name] = line
        self.origins[name] = self.origin.at(line)


def _map_entry(name: str) -> bool:
    parent = name.rpartition(".")[0]
    return parent in BY_NAME and isinstance(BY_NAME[parent].type, MapOf)


def unknown_message(name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(BY_NAME) + sorted(GROUPS), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown setting {name!r}{hint} (`memctl config doc` lists every setting)"


def _read_text(path: str, where: str) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise InputError(f"{path}: no such settings file", where=where) from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a YAML settings file", where=where) from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}", where=where) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 (byte offset {error.start})", where=path) from None


def _parse(text: str, path: str) -> Located | None:
    """The file's top-level mapping with the line of every key, or None for an empty file."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if not isinstance(node, yaml.MappingNode):
            raise InputError("expected a mapping of settings at the top level", where=path)
        return _located_node(loader, node)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
        raise InputError(f"invalid YAML: {getattr(error, 'problem', None) or error}", where=where) from None
    finally:
        loader.dispose()


def _located_node(loader, node):
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return loader.construct_object(node, deep=True)
    loader.flatten_mapping(node)  # YAML merge keys (<<)
    return Located([(loader.construct_object(key, deep=True), _located_node(loader, value), key.start_mark.line + 1)
                    for key, value in node.value])


def _located(values: dict) -> Located:
    return Located([(name, _located(value) if isinstance(value, dict) else value, None)
                    for name, value in values.items()])
