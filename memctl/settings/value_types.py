"""What a setting's value may be. Each type checks a value as YAML gave it and returns it normalised (whole
numbers as int, other numbers as float, lists as tuples), or raises SettingValueError saying what it expected;
`describe()` is that expectation in words, for error messages and the reference.

Names (node types, edge types, pattern kinds) may be given as "module:attribute" and are resolved on first
use, so loading a configuration that does not set such a key imports nothing more.
"""

from __future__ import annotations

import math
from functools import lru_cache


class SettingValueError(ValueError):
    """A value a type refused; the loader adds the key, the file and the line."""


def yaml_scalar(value) -> str:
    """A number, boolean, null or text as YAML writes it (text unquoted)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    return str(value)


def shown(value) -> str:
    """A value read from YAML, for messages: text quoted, so that 'two' is not taken for a setting name."""
    return repr(value) if isinstance(value, str) else yaml_scalar(value)


def _number_text(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) and abs(value) >= 10_000 else f"{value:g}"


class Number:
    """A finite number within [minimum, maximum]; `whole` numbers only if set (2.0 is read as 2)."""

    __slots__ = ("minimum", "maximum", "whole")

    def __init__(self, minimum: float, maximum: float, whole: bool = False):
        self.minimum, self.maximum, self.whole = minimum, maximum, whole

    def check(self, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SettingValueError(f"expected {self.describe()}, got {shown(value)}")
        if not math.isfinite(value):
            raise SettingValueError(f"{shown(value)} is not a finite number: expected {self.describe()}")
        if self.whole:
            if isinstance(value, float) and not value.is_integer():
                raise SettingValueError(f"{shown(value)} is not a whole number: expected {self.describe()}")
            value = int(value)
        else:
            value = float(value)
        if not self.minimum <= value <= self.maximum:
            raise SettingValueError(f"{shown(value)} is out of range: expected {self.describe()}")
        return value

    def describe(self) -> str:
        kind = "a whole number" if self.whole else "a number"
        return f"{kind} from {_number_text(self.minimum)} to {_number_text(self.maximum)}"


class Flag:
    __slots__ = ()

    def check(self, value):
        if not isinstance(value, bool):
            raise SettingValueError(f"expected true or false, got {shown(value)}")
        return value

    def describe(self) -> str:
        return "true or false"


class OptionalPath:
    """A path (read when the setting is used, relative to the working directory), or null."""

    __slots__ = ("what",)

    def __init__(self, what: str):
        self.what = what  # "file" or "directory"

    def check(self, value):
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise SettingValueError(f"expected {self.describe()}, got {shown(value)}")
        return value

    def describe(self) -> str:
        return f"a {self.what} path, or null for the packaged one"


class Name:
    """One of a fixed set of names: a tuple, or "module:attribute" naming an Enum, a dict (its keys) or a tuple."""

    __slots__ = ("names",)

    def __init__(self, names: tuple | str):
        self.names = names

    def allowed(self) -> tuple:
        return self.names if isinstance(self.names, tuple) else _resolve(self.names)

    def check(self, value):
        if not isinstance(value, str) or value not in self.allowed():
            raise SettingValueError(f"expected {self.describe()}, got {shown(value)}")
        return value

    def describe(self) -> str:
        return "one of " + ", ".join(self.allowed())


class ListOf:
    """A list of names, at least `min_items` long."""

    __slots__ = ("element", "min_items")

    def __init__(self, element: Name, min_items: int = 0):
        self.element, self.min_items = element, min_items

    def check(self, value):
        if not isinstance(value, list):
            raise SettingValueError(f"expected {self.describe()}, got {shown(value)}")
        if len(value) < self.min_items:
            raise SettingValueError(f"the list is empty: expected {self.describe()}")
        for item in value:
            try:
                self.element.check(item)
            except SettingValueError:
                raise SettingValueError(f"{shown(item)} is not {self.element.describe()}") from None
        return tuple(value)

    def describe(self) -> str:
        least = "a non-empty list" if self.min_items else "a list"
        return f"{least} of {self.element.describe()}"


class MapOf:
    """A mapping from names to values. A file sets entries: those it does not name keep their value."""

    __slots__ = ("keys", "values")

    def __init__(self, keys: Name, values: Number):
        self.keys, self.values = keys, values

    def check_entry(self, name, value):
        self.keys.check(name)
        return self.values.check(value)

    def describe(self) -> str:
        return f"a mapping of {self.keys.describe()} to {self.values.describe()}"


@lru_cache(maxsize=None)
def _resolve(reference: str) -> tuple:
    from enum import Enum
    from importlib import import_module

    module, _, attribute = reference.partition(":")
    found = getattr(import_module(module), attribute)
    if isinstance(found, type) and issubclass(found, Enum):
        return tuple(member.value for member in found)
    return tuple(found)
