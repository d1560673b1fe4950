"""Helpers of the R2G builder tests: stores filled through the real ingest path, and graph dumps."""

from __future__ import annotations

import json
from pathlib import Path

from engine.format import GRAPH_EDGE_TABLE, GRAPH_NODE_TABLE
from engine.graph.api import GraphStore
from engine.text.tables import text_tables
from memctl.indexes import NODES
from memctl.ingest.api import ingest_paths
from memctl.memory import Memory

TENANT = "default"


def open_memory(home, writable: bool = True) -> Memory:
    return Memory.open(home=str(home), tenant=TENANT, writable=writable, holder="test")


def write_jsonl(path: Path, turns: list[dict]) -> Path:
    path.write_text("".join(json.dumps(turn, ensure_ascii=False) + "\n" for turn in turns), encoding="utf-8")
    return path


def ingest(home, *paths, texts=()) -> dict:
    with open_memory(home) as memory:
        return ingest_paths(memory.store, [str(path) for path in paths], list(texts))


def convert(home, rebuild: bool = False, config_values: dict | None = None) -> dict:
    with open_memory(home) as memory:
        if config_values:
            memory.config = memory.config.with_values(config_values, "test")
        return memory.r2g(rebuild=rebuild)


def node(home, key: str) -> dict | None:
    with open_memory(home, writable=False) as memory:
        return GraphStore(memory.store).get_node(key)


def out_edges(home, key: str, types=None) -> list[tuple]:
    """(edge type, target key) of a node's outgoing edges."""
    with open_memory(home, writable=False) as memory:
        graph = GraphStore(memory.store)
        return sorted((row["type"], row["key"]) for row in graph.neighbors(key, "out", types).rows())


def nodes_of_type(home, node_type: str) -> dict:
    with open_memory(home, writable=False) as memory:
        graph = GraphStore(memory.store)
        return {key: graph.get_node(key) for key in graph.nodes_of_type(node_type)}


def dump(home) -> dict:
    """Everything R2G wrote, independent of internal ids and clocks: nodes (type, props), edges (endpoint
    keys, type, weight, confidence, props) and index documents (type, tokens)."""
    with open_memory(home, writable=False) as memory:
        store = memory.store
        graph = GraphStore(store)
        node_types, edge_types = graph.type_names("node"), graph.type_names("edge")
        keys_by_id, nodes = {}, {}
        for key, record in store.scan(GRAPH_NODE_TABLE):
            if not record.get("deleted"):
                keys_by_id[record["id"]] = key
                nodes[key] = (node_types[record["type"]], record.get("props"))
        edges = {}
        for key, record in store.scan(GRAPH_EDGE_TABLE):
            if not record.get("deleted"):
                edges[key] = (keys_by_id[record["src"]], edge_types[record["type"]], keys_by_id[record["dst"]],
                              record["weight"], record["confidence"], record.get("props"))
        documents = {key: (record["type"], record["tokens"])
                     for key, record in store.scan(text_tables(NODES).documents)}
        return {"nodes": nodes, "edges": edges, "documents": documents}


def statement_facts(text: str, speaker: str = "Jon", ref_time: str = "2024-04-10") -> list[tuple]:
    """(subject, slot, value, kind) of every slot fact R2G extracts from one turn."""
    from memctl.r2g.extract import extract

    result = extract(text, speaker=speaker, ref_time=ref_time)
    return [(slot.subject, slot.slot, slot.value, slot.kind) for slot in result.slots]
