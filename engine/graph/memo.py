"""ImportMemo: what a bulk import's earlier batches wrote, so that later lines need no store lookup.

The protocol GraphBatch reads a memo through (ImportMemo is one; a caller that knows more brings its own):
    nodes, edges                  key → (id, created_at) / (id, source id, target id, created_at) of what the
                                  memo knows is live, None once deleted; the bulk writes read and add to them
    node(key), edge(key)          (known, entry): known is False when only the store can tell
    all_absent(known, keys)       whether none of `keys` is live in `known` (nodes or edges) nor in the store
    remember_node(key, entry), remember_edge(key, entry)
                                  a record written now (entry None: deleted); False when the memo does not keep
                                  it, and the batch's own table of pending writes does
"""

from __future__ import annotations


class ImportMemo:
    """What a bulk import's earlier batches wrote, reduced to the fields add_node and add_edge read back.

    When the graph was empty before the import began, a key the memo lacks is known to be absent, which
    saves a store lookup per line."""

    def __init__(self, store_is_empty: bool):
        self.store_is_empty = store_is_empty
        self.nodes: dict = {}  # key -> (id, created_at), or None once deleted
        self.edges: dict = {}  # key -> (id, src, dst, created_at), or None once deleted

    def node(self, key: str) -> tuple[bool, tuple | None]:
        return self._lookup(self.nodes, key)

    def edge(self, key: str) -> tuple[bool, tuple | None]:
        return self._lookup(self.edges, key)

    def _lookup(self, known: dict, key: str) -> tuple[bool, tuple | None]:
        found = known.get(key, _ABSENT)
        if found is _ABSENT or found is None:
            return found is None or self.store_is_empty, None
        return True, found

    def all_absent(self, known: dict, keys) -> bool:
        """Whether none of `keys` has a live record in `known` (self.nodes or self.edges) nor, as far as the
        memo can tell, in the store."""
        if self.store_is_empty:
            return not any(map(known.get, keys))
        return all(known.get(key, _ABSENT) is None for key in keys)

    def remember_node(self, key: str, entry: tuple | None) -> bool:
        self.nodes[key] = entry
        return True

    def remember_edge(self, key: str, entry: tuple | None) -> bool:
        self.edges[key] = entry
        return True


_ABSENT = object()
