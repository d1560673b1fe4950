"""The import's bulk path (GraphBatch.add_new_nodes / add_new_edges, commit of owned operations) writes the
same records as add_node / add_edge line by line, and hands every line it cannot take to that path."""

import io
import json

import pytest

from engine.errors import InputError
from engine.graph.api import GraphStore
from engine.graph.memo import ImportMemo
from engine.graph.transfer import _edge_arguments, _node_arguments, import_jsonl
from engine.store import Store

CLOCK = 1_700_000_000.0


def lines_of(items) -> bytes:
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items).encode("utf-8")


def node(key, node_type="Concept", **fields):
    return {"kind": "node", "id": key, "type": node_type, **fields}


def edge(source, edge_type, target, **fields):
    return {"kind": "edge", "src": source, "type": edge_type, "dst": target, **fields}


PLAIN = [node("a", created_at=5), node("b", "Episode", title="标题", props={"importance": 0.5}), node("c"),
         edge("a", "ABOUT", "b", weight=0.5, confidence=1, ts=7.5), edge("b", "SUPPORTS", "c"),
         edge("c", "ABOUT", "a", props={"by": "x"}, note=[1, {"k": None}]), edge("a", "SUPPORTS", "c")]
# Lines the bulk path must leave to add_node / add_edge: updates, custom keys, ISO times, temporal bounds,
# repeated keys within one run.
IRREGULAR = [node("d"), node("a", "Fact"), edge("d", "ABOUT", "a", ts="2025-09-15T10:35:10Z"),
             edge("a", "ABOUT", "b", weight=2.0), edge("d", "SIMILAR_TO", "c", id="custom-1"),
             edge("c", "TEMPORAL_NEXT", "d", temporal={"since": 3.0, "until": None}),
             node("e"), node("e", "Episode"), edge("e", "ABOUT", "a"), edge("e", "ABOUT", "a", weight=0.25)]


def records(store) -> dict:
    return {table: dict(store.scan(table)) for table in ("graph.node", "graph.edge", "graph.type")}


def line_by_line(path, items) -> dict:
    """The reference: every line through add_node / add_edge, one batch per line."""
    with Store.open(str(path)) as store:
        graph = GraphStore(store, clock=lambda: CLOCK)
        for item in items:
            with graph.batch() as writer:
                if item["kind"] == "node":
                    writer.add_node(*_node_arguments(item))
                else:
                    writer.add_edge(*_edge_arguments(item))
        return records(store), dict(store.counters)


@pytest.mark.parametrize("items", [PLAIN, PLAIN + IRREGULAR], ids=["plain", "irregular"])
@pytest.mark.parametrize("batch_lines", [2, 1000])
def test_bulk_import_writes_what_line_by_line_writes(tmp_path, items, batch_lines):
    expected = line_by_line(tmp_path / "reference", items)
    path = str(tmp_path / "bulk")
    with Store.open(path) as store:
        import_jsonl(GraphStore(store, clock=lambda: CLOCK), io.BytesIO(lines_of(items)), batch_lines=batch_lines)
        assert (records(store), dict(store.counters)) == expected
        store.flush()
    with Store.open(path, writable=False) as reopened:
        assert (records(reopened), dict(reopened.counters)) == expected


def test_bulk_nodes_decline_without_writing(tmp_path):
    with Store.open(str(tmp_path / "store")) as store:
        graph = GraphStore(store, clock=lambda: CLOCK)
        with graph.batch(ImportMemo(store_is_empty=True)) as writer:
            for rows in ([("x", "Concept", None, None), ("x", "Concept", None, None)],  # repeated key
                         [("y", "Concept", None, "2025-01-01")],  # an ISO time: add_node parses it
                         [("z", "not a type!", None, None)], [("w", "Concept", [], None)], [("", "Concept", None, None)]):
                assert writer.add_new_nodes(rows) is False
            assert writer.batch.operations == []
            with pytest.raises(InputError, match="type"):
                writer.add_node("z", "not a type!")


def test_bulk_edges_share_ends(tmp_path):
    with Store.open(str(tmp_path / "store")) as store:
        graph = GraphStore(store, clock=lambda: CLOCK)
        with graph.batch(ImportMemo(store_is_empty=True)) as writer:
            assert writer.add_new_nodes([("a", "Concept", None, None), ("b", "Concept", {"p": 1}, 2.0)])
            rows = [("a", name, "b", 0.5, 1.0, None, None, None, {}, None) for name in ("ABOUT", "SUPPORTS")]
            assert writer.add_new_edges(rows + [("b", "ABOUT", "a", 1, 0, 3, None, None, None, None)])
        assert graph.get_edge('["a","SUPPORTS","b"]')["weight"] == 0.5
        assert graph.get_node("b")["props"] == {"p": 1}


def test_bulk_edges_need_known_live_ends(tmp_path):
    path = str(tmp_path / "store")
    with Store.open(path) as store:
        graph = GraphStore(store, clock=lambda: CLOCK)
        graph.add_node("a", "Concept")
        graph.add_node("b", "Concept")
        with graph.batch(ImportMemo(store_is_empty=False)) as writer:
            row = ("a", "ABOUT", "b", 1.0, 1.0, None, None, None, {}, None)
            assert writer.add_new_edges([row]) is False  # only the store knows a and b
            writer.add_edge(*row)
        assert graph.get_edge('["a","ABOUT","b"]')["weight"] == 1.0


def test_edge_ends_of_a_few_rows_match_the_inverse_permutation(tmp_path):
    with Store.open(str(tmp_path / "store")) as store:
        graph = GraphStore(store, clock=lambda: CLOCK)
        with graph.batch() as writer:
            for index in range(40):
                writer.add_node(f"n{index}", "Concept")
            for index in range(200):
                writer.add_edge(f"n{index * 7 % 40}", "ABOUT" if index % 3 else "SUPPORTS", f"n{index * 11 % 39}",
                                weight=index / 10)
        store.compact()
        part = graph.snapshot().parts[0]
        rows = [5, 3, 199, 3, 0]
        few = part.edge_ends(rows)  # before the whole inverse permutation is built
        assert "_out_position" not in part.__dict__
        every = part.edge_ends(list(range(200)))
        for column, expected in zip(few, every):
            assert column.tolist() == expected[rows].tolist()
