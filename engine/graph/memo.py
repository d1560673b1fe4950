"""ImportMemo: what a bulk import's earlier batches wrote, so that later lines need no store lookup."""

from __future__ import annotations

from engine.format import GRAPH_EDGE_TABLE, GRAPH_NODE_TABLE


class ImportMemo:
    """What a bulk import's earlier batches wrote, reduced to the fields add_node and add_edge read back.

    When the graph was empty before the import began, a key the memo lacks is known to be absent, which
    saves a store lookup per line."""

    def __init__(self, store_is_empty: bool):
        self.store_is_empty = store_is_empty
        self.nodes: dict = {}  # key -> (id, created_at), or None once deleted
        self.edges: dict = {}  # key -> (id, src, dst, created_at), or None once deleted

    def get(self, table: str, key: str) -> tuple[bool, dict | None]:
        """(known, record): known is False when only the store can tell."""
        if table == GRAPH_NODE_TABLE:
            found = self.nodes.get(key, _ABSENT)
            if found is _ABSENT or found is None:
                return found is None or self.store_is_empty, None
            return True, {"id": found[0], "created_at": found[1], "deleted": False}
        if table == GRAPH_EDGE_TABLE:
            found = self.edges.get(key, _ABSENT)
            if found is _ABSENT or found is None:
                return found is None or self.store_is_empty, None
            return True, {"id": found[0], "src": found[1], "dst": found[2], "created_at": found[3], "deleted": False}
        return False, None

    def all_absent(self, known: dict, keys) -> bool:
        """Whether none of `keys` has a live record in `known` (self.nodes or self.edges) nor, as far as the
        memo can tell, in the store."""
        if self.store_is_empty:
            return not any(map(known.get, keys))
        return all(known.get(key, _ABSENT) is None for key in keys)

    def remember(self, table: str, key: str, value) -> bool:
        """Keep what a record written now means for later lines; False for tables the memo does not keep."""
        if table == GRAPH_NODE_TABLE:
            live = value is not None and not value.get("deleted")
            self.nodes[key] = (value["id"], value["created_at"]) if live else None
        elif table == GRAPH_EDGE_TABLE:
            live = value is not None and not value.get("deleted")
            self.edges[key] = (value["id"], value["src"], value["dst"], value["created_at"]) if live else None
        else:
            return False
        return True


_ABSENT = object()
