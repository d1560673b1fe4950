"""A bounded memo for a conversion run: what a run looks up again and again (repeated sentences, hub Entities,
busy SAME_AS keys) stays at hand, while memory stays bounded however long the run."""

from __future__ import annotations

from collections import OrderedDict


class Recent:
    """At most `limit` entries; the least recently used one is forgotten first. None is no value."""

    def __init__(self, limit: int):
        self.limit = limit
        self._entries: OrderedDict = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key):
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key, value) -> None:
        entries = self._entries
        if key in entries:
            entries.move_to_end(key)
        entries[key] = value  # a new key goes last
        if len(entries) > self.limit:
            entries.popitem(last=False)

    def discard(self, key) -> None:
        self._entries.pop(key, None)
