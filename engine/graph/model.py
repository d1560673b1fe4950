"""Nodes and edges: the graph.node and graph.edge records (their fields are listed in engine.graph.kind;
GraphBatch writes them through node_record and edge_record), and the typed rows reads give.

Node and Edge have their type names resolved, and a deleted record reads as no row at all. Callers of
GraphStore read only these, so the stored form can change behind them. `props` is the stored mapping itself,
not a copy: a reader must not change it.
"""

from __future__ import annotations

from typing import NamedTuple


class Node(NamedTuple):
    key: str
    id: int  # internal id: dense, never reused
    type: str | None  # type name (None only for a type id no segment or record registers)
    props: dict
    created_at: float  # seconds since the epoch
    updated_at: float


class Edge(NamedTuple):
    key: str
    id: int
    source_id: int  # internal ids of its ends (GraphStore.node_keys gives their keys)
    target_id: int
    type: str | None
    weight: float
    confidence: float
    ts: float | None
    since: float | None
    until: float | None
    props: dict
    created_at: float
    updated_at: float


def node_record(node_id: int, type_id: int, created_at, now: float, properties) -> dict:
    record = {"id": node_id, "type": type_id, "created_at": created_at, "updated_at": now}
    if properties:
        record["props"] = properties
    return record


def edge_record(edge_id: int, source: int, target: int, type_id: int, weight: float, confidence: float, ts,
                created_at, now: float, since, until, properties, custom: bool) -> dict:
    record = {"id": edge_id, "src": source, "dst": target, "type": type_id, "weight": weight,
              "confidence": confidence, "ts": ts, "created_at": created_at, "updated_at": now}
    # Absent rather than null or empty: every byte of a record is written twice (WAL, then segment). A time of
    # 0.0 (the epoch) is a time like any other.
    if since is not None:
        record["since"] = since
    if until is not None:
        record["until"] = until
    if properties:
        record["props"] = properties
    if custom:
        record["custom"] = custom
    return record


def node_of(key: str, record: dict | None, type_names: dict) -> Node | None:
    """The Node a graph.node record describes; None for no record or a deleted one."""
    if record is None or record.get("deleted"):
        return None
    return Node(key, record["id"], type_names.get(record["type"]), record.get("props", {}), record["created_at"],
                record["updated_at"])


def edge_of(key: str, record: dict | None, type_names: dict) -> Edge | None:
    """The Edge a graph.edge record describes; None for no record or a deleted one."""
    if record is None or record.get("deleted"):
        return None
    return Edge(key, record["id"], record["src"], record["dst"], type_names.get(record["type"]), record["weight"],
                record["confidence"], record["ts"], record.get("since"), record.get("until"),
                record.get("props", {}), record["created_at"], record["updated_at"])
