"""The version-switch workload of tools/crash/failpoint_sweep.py (tests and tools/crash only).

A store whose residence chain holds 北京 then 上海 (上海 in force) gets `memctl fact add 我 residence 杭州 --since
2024-09-01`: the claim, its chain attributes, ACTIVE_OF moving from 上海 to 杭州, VERSION_NEXT, the chain record
and the audit trail, all in one batch. However the command is interrupted, the store must hold the chain as it
was (and nothing of 杭州) or as an uninterrupted switch leaves it, with check_store clean.
"""

from __future__ import annotations

import os
from functools import lru_cache

TURNS = [("2024-01-10T09:00:00", "我的住址是北京。"), ("2024-06-10T09:00:00", "我的住址是上海。")]
ARGUMENTS = ("fact", "add", "我", "residence", "杭州", "--since", "2024-09-01")
CHAIN_EDGES = ("ACTIVE_OF", "VERSION_NEXT", "CONTRADICTS")


def build(path: str) -> None:
    """The store before the switch, at `path` (<home>/tenants/default)."""
    import json

    from memctl.memory import Memory

    home = _home(path)
    os.makedirs(home, exist_ok=True)
    turns = os.path.join(home, "turns.jsonl")
    with open(turns, "w", encoding="utf-8") as handle:
        for index, (ts, text) in enumerate(TURNS):
            handle.write(json.dumps({"id": str(index), "conv_id": "c", "speaker": "用户", "ts": ts, "text": text},
                                    ensure_ascii=False) + "\n")
    with Memory.open(home=home, writable=True, holder="fact_switch") as memory:
        memory.ingest([turns])
        memory.r2g()


def switch(path: str) -> dict:
    """The workload in-process: `memctl fact add` of ARGUMENTS on the store at `path`."""
    from memctl.memory import Memory

    subject, slot, value, _, since = ARGUMENTS[2:]
    with Memory.open(home=_home(path), writable=True, holder="memctl fact add") as memory:
        return memory.facts.add(subject, slot, value, since)


def content(path: str) -> dict:
    """What a reader sees of the chains (store times aside): each chain record, the chain attributes and
    superseded_by of every claim, the chain edges, the review queue and the states the audit trail records."""
    from engine.graph.api import GraphStore
    from engine.store import Store
    from memctl.facts.tables import AUDIT_TABLE, CHAIN_TABLE, REVIEW_TABLE

    with Store.open(path, writable=False) as store:
        graph = GraphStore(store)
        claims = {}
        for node in graph.iter_nodes():
            attributes = (node.props or {}).get("attributes", {})
            if "slot" in attributes:
                claims[node.key] = ({name: attributes.get(name) for name in ("value", "state", "valid_since",
                                                                              "valid_until", "periods", "chain")},
                                    node.props.get("superseded_by"))
        snapshot = graph.snapshot()
        edges = sorted((*snapshot.node_keys([edge.source_id, edge.target_id]), edge.type, repr(edge.props))
                       for edge in graph.iter_edges() if edge.type in CHAIN_EDGES)
        audit = {chain: [(change["fact"], change["from"], change["to"]) for change in changes]
                 for chain, changes in store.scan(AUDIT_TABLE)}
        return {"chains": dict(store.scan(CHAIN_TABLE)), "claims": claims, "edges": edges,
                "reviews": dict(store.scan(REVIEW_TABLE)), "audit": audit}


@lru_cache(maxsize=1)
def reference_contents() -> tuple:
    """`content` before the switch and after an uninterrupted one."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memctl-fact-switch-") as scratch:
        path = os.path.join(scratch, "home", "tenants", "default")
        build(path)
        before = content(path)
        switch(path)
        return before, content(path)


def outcome_problems(path: str) -> list:
    """[] when the store at `path` holds the chain before the switch or after it, and check_store is clean."""
    from engine.check import check_store

    problems = [f"check: {problem}" for problem in check_store(path).problems]
    if not problems and content(path) not in reference_contents():
        problems.append("its chains are neither those before the switch nor those after it")
    return problems


def finished_problems(path: str) -> list:
    """Why the store at `path`, after the last (unarmed) switch, is not the switched store ([] when it is)."""
    from engine.check import check_store

    problems = [f"check: {problem}" for problem in check_store(path).problems]
    if not problems and content(path) != reference_contents()[1]:
        problems.append("after the last switch its chains are not those an uninterrupted switch leaves")
    return problems


def _home(path: str) -> str:
    return os.path.dirname(os.path.dirname(path))
