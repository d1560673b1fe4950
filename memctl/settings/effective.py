"""The effective settings: every key's value and where it came from, read through views shaped like the keys.

    settings.recall.raw.top               a value, by attribute
    settings.recall["lambda"]             a group, by item (also for names that are Python keywords)
    settings.get("graph.degree_cap")      by dotted name
    settings.origin("recall.k_hop")       Origin(layer="--config", path=…, line=…)

Values are frozen: numbers, booleans, strings or None, tuples for lists, read-only mappings for maps keyed by
names (graph.edge_weights…). A map's entries have origins of their own ("graph.edge_weights.ABOUT").
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from memctl.settings.schema import BY_NAME, KEYS
from memctl.settings.value_types import MapOf


class Origin:
    """Where a value came from: layer "default", "tenant" (its memctl.yaml), "--config", or a caller's label."""

    __slots__ = ("layer", "path", "line")

    def __init__(self, layer: str, path: str | None = None, line: int | None = None):
        self.layer, self.path, self.line = layer, path, line

    def at(self, line: int | None) -> "Origin":
        return Origin(self.layer, self.path, line)

    def __eq__(self, other) -> bool:
        return isinstance(other, Origin) and (self.layer, self.path, self.line) == (other.layer, other.path,
                                                                                   other.line)

    def __hash__(self) -> int:
        return hash((self.layer, self.path, self.line))

    def __repr__(self) -> str:
        return f"Origin({self.layer!r}, {self.path!r}, {self.line!r})"

    def __str__(self) -> str:
        if self.path is None:
            return self.layer
        return f"{self.layer} {self.path}" + (f":{self.line}" if self.line else "")


DEFAULT = Origin("default")


class SourceFile:
    """A settings file that was consulted: the tenant's memctl.yaml is optional, --config is not."""

    __slots__ = ("layer", "path", "found")

    def __init__(self, layer: str, path: str, found: bool):
        self.layer, self.path, self.found = layer, path, found


class View(Mapping):
    """A group of settings (a section, or a group inside one such as recall.raw): its members by attribute or
    by item. Read-only."""

    __slots__ = ("_name", "_members")

    def __init__(self, name: str, members: dict):
        self._name = name
        self._members = members

    def __getitem__(self, member: str):
        return self._members[member]

    def __getattr__(self, member: str):
        try:
            return self._members[member]
        except KeyError:
            raise AttributeError(f"no setting {self._name}.{member}") from None

    def __iter__(self):
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)

    def __repr__(self) -> str:
        return f"View({self._name!r}, {dict(self._members)!r})"


class Settings:
    def __init__(self, values: dict, origins: dict, files: tuple = ()):
        self.values = values  # key name → value
        self.origins = origins  # key name (a map entry: key name + "." + entry) → Origin
        self.files = files  # SourceFile, in the order they were applied
        self._root = _tree(values)

    def __getattr__(self, section: str) -> View:
        root = self.__dict__.get("_root")
        if root is None or section not in root:
            raise AttributeError(f"no settings section {section!r}")
        return root[section]

    def get(self, name: str):
        """The value of a key, or the View of a group, by dotted name."""
        if name in self.values:
            return self.values[name]
        node = self._root
        for part in name.split("."):
            node = node[part]
        return node

    def origin(self, name: str) -> Origin:
        return self.origins[name]

    def entries(self) -> list:
        """[(name, value, Origin)] of every key in schema order, a map's entries one by one (name.entry)."""
        found = []
        for key in KEYS:
            value = self.values[key.name]
            if isinstance(key.type, MapOf):
                found += [(f"{key.name}.{entry}", item, self.origins[f"{key.name}.{entry}"])
                          for entry, item in value.items()]
            else:
                found.append((key.name, value, self.origins[key.name]))
        return found

    def with_values(self, values: dict, layer: str = "override") -> "Settings":
        """A copy with `values` ({"recall.k_hop": 3} or nested mappings) checked and applied as one more layer."""
        from memctl.settings.load import apply

        return apply(self, values, Origin(layer))


@lru_cache(maxsize=1)
def defaults() -> Settings:
    values = {key.name: freeze(key.type, key.default) for key in KEYS}
    origins = {}
    for key in KEYS:
        origins[key.name] = DEFAULT
        if isinstance(key.type, MapOf):
            origins.update({f"{key.name}.{entry}": DEFAULT for entry in key.default})
    return Settings(values, origins)


def resolve(config: Settings | None) -> Settings:
    """`config`, or the defaults when a caller passed none."""
    return defaults() if config is None else config


def freeze(value_type, value):
    if isinstance(value_type, MapOf):
        return MappingProxyType(dict(value))
    if isinstance(value, list):
        return tuple(value)
    return value


def _tree(values: dict) -> dict:
    nested: dict = {}
    for name, value in values.items():
        node = nested
        *groups, last = name.split(".")
        for part in groups:
            node = node.setdefault(part, {})
        node[last] = value
    return {section: _view(section, members) for section, members in nested.items()}


def _view(name: str, members: dict) -> View:
    return View(name, {member: _view(f"{name}.{member}", value) if f"{name}.{member}" not in BY_NAME else value
                       for member, value in members.items()})
