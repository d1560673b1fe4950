"""A store with version chains for the as-of recall tests: conversations through the real ingest + r2g path, then
chains written by hand as the facts contract fixes them (attributes chain, valid_since/valid_until, state,
recorded_at/expired_at; edges SUBJECT, VERSION_NEXT, ACTIVE_OF), the way the chain builder writes them. A
version that r2g already extracted as a slot fact ("My car is a Honda Civic") keeps its node, so it is in the
NodeIndex as well; the others get a node of their own citing the turn that states them."""

from __future__ import annotations

from dataclasses import dataclass

from engine.graph.api import GraphStore
from engine.graph.keys import edge_key
from memctl.memory import Memory
from memctl.model import NodeType, entity_id, node_id, normalize_text
from recall_testkit import TENANT, build, write_jsonl

TURNS = [
    {"id": "m1", "ts": "2021-03-01T10:00:00", "role": "Maria",
     "content": "I just started a new job at Acme Robotics as a designer."},
    {"id": "m2", "ts": "2021-03-01T10:01:00", "role": "Tom", "content": "Congrats! How is the commute?"},
    {"id": "t1", "ts": "2021-05-01T10:00:00", "role": "Tom", "content": "My car is a Honda Civic."},
    {"id": "m3", "ts": "2022-01-10T10:00:00", "role": "Maria", "content": "I live in Boston now, near the harbour."},
    {"id": "m4", "ts": "2022-01-10T10:01:00", "role": "Tom", "content": "Boston winters are rough."},
    {"id": "m5", "ts": "2022-09-05T10:00:00", "role": "Maria",
     "content": "I quit Acme Robotics and joined Globex last month."},
    {"id": "t2", "ts": "2023-02-01T10:00:00", "role": "Tom", "content": "I sold the Honda Civic, I bike everywhere."},
    {"id": "m6", "ts": "2023-05-08T10:00:00", "role": "Maria",
     "content": "We moved to Denver last weekend, the mountains are great."},
    {"id": "m7", "ts": "2023-06-01T10:00:00", "role": "Tom",
     "content": "Do you still live in Boston? I saw your old house listed."},
    {"id": "m8", "ts": "2023-06-01T10:01:00", "role": "Maria", "content": "No, Boston is behind me, I love Denver."},
    {"id": "z1", "ts": "2022-02-01T09:00:00", "role": "王芳", "content": "我住在上海，离公司很近。"},
    {"id": "z2", "ts": "2023-03-01T09:00:00", "role": "王芳", "content": "我养了一只猫，叫咪咪。"},
    {"id": "z3", "ts": "2023-07-15T09:00:00", "role": "王芳", "content": "我上个月搬到杭州了，房子比上海的大。"},
    {"id": "z4", "ts": "2023-09-01T09:00:00", "role": "王芳", "content": "我们又领养了一只狗，叫乐乐。"},
]
NOW = "2024-01-15T12:00:00"


@dataclass(frozen=True)
class V:
    """One version: its value, evidence turns (ids, space-separated, in stored order), world interval, state,
    and kind (set, change, end, add, stop)."""
    value: str
    turns: str
    since: str
    until: str | None
    state: str
    kind: str = "set"


CHAINS = {
    ("Maria", "residence"): [V("Boston", "m3", "2022-01-10", "2023-05-06", "superseded"),
                             # A restatement stored before the change statement: recall cites the earliest first.
                             V("Denver", "m8 m6", "2023-05-06", None, "active", "change")],
    ("Maria", "employer"): [V("Acme Robotics", "m1", "2021-03-01", "2022-08-15", "superseded"),
                            V("Globex", "m5", "2022-08-15", None, "active", "change")],
    # Conflict resolution kept the older employer in force; the newer claim waits in the review queue.
    ("Tom", "employer"): [V("Initech", "m2", "2022-01-01", None, "active"),
                          V("Hooli", "m4", "2023-01-01", None, "contested", "change")],
    ("Tom", "vehicle"): [V("Honda Civic", "t1", "2021-05-01", "2023-02-01", "ended"),
                         V("Honda Civic", "t2", "2023-02-01", None, "ended", "end")],
    ("王芳", "residence"): [V("上海", "z1", "2022-02-01", "2023-06-15", "superseded"),
                          V("杭州", "z3", "2023-06-15", None, "active", "change")],
    # "分手了": an end that names no value.
    ("王芳", "partner"): [V("李雷", "z1", "2022-02-01", "2023-07-01", "ended"),
                        V("", "z3", "2023-07-01", None, "ended", "end")],
    ("王芳", "pet"): [V("咪咪", "z2", "2023-03-01", None, "active", "add"),
                    V("乐乐", "z4", "2023-09-01", None, "active", "add")],
}


def chain_store(tmp_path, chains: dict = CHAINS):
    """(home, {(subject, slot): [version keys]}) of a store of TURNS with `chains` written."""
    home = tmp_path / "home"
    build(home, write_jsonl(tmp_path / "turns.jsonl", TURNS))
    with Memory.open(home=str(home), tenant=TENANT, writable=True, holder="asof test") as memory:
        graph = GraphStore(memory.store)
        refs = _turn_refs(graph)
        with graph.batch() as writer:
            keys = {chain: _write_chain(graph, writer, *chain, versions, refs) for chain, versions in chains.items()}
    return home, keys


def _turn_refs(graph) -> dict:
    refs = {}
    for key in graph.nodes_of_type("Episode"):
        props = graph.get_node(key)["props"]
        refs[props["attributes"]["source_id"]] = props["raw_refs"][0]
    return refs


def _write_chain(graph, writer, subject: str, slot: str, versions: list, refs: dict) -> list:
    holder = entity_id(TENANT, subject, "Person")
    chain = f"{holder}|{slot}"
    if graph.get_node(holder) is None:
        writer.add_node(holder, "Entity", {"title": subject, "attributes": {"canonical": subject}})
    else:
        _forget_built_chain(graph, writer, holder, chain)
    keys = []
    for version in versions:
        polarity = "ended" if version.kind in ("end", "stop") else "stated"
        key = node_id(NodeType.FACT, TENANT, "slot", holder, slot, normalize_text(version.value), polarity)
        existing = graph.get_node(key)
        evidence = [refs[turn] for turn in version.turns.split()]
        # r2g's own claim keeps its node and gains the hand-written evidence (a restatement it did not link).
        props = {**existing["props"], "raw_refs": _union(existing["props"]["raw_refs"], evidence)} if existing else {
            "title": f"{subject} {slot}: {version.value}", "text": version.value, "raw_refs": evidence,
            "keywords": [slot, version.value], "recency": evidence[-1]["ts"],
            "attributes": {"subject": subject, "subject_type": "Person", "slot": slot, "value": version.value,
                           "polarity": polarity}}
        attributes = {**props["attributes"], "kind": version.kind, "chain": chain, "valid_since": version.since,
                      "valid_until": version.until, "recorded_at": "2024-01-01T00:00:00",
                      "expired_at": None if version.state == "active" else "2024-01-01T00:00:00",
                      "state": version.state}
        writer.add_node(key, "Fact", {**props, "attributes": attributes})
        writer.add_edge(key, "SUBJECT", holder)
        if version.state == "active":
            writer.add_edge(holder, "ACTIVE_OF", key, properties={"slot": slot})
        if keys:
            writer.add_edge(keys[-1], "VERSION_NEXT", key)
        keys.append(key)
    for older, newer, version in zip(keys, keys[1:], versions):
        if version.state == "superseded":
            writer.update_node(older, properties={"superseded_by": newer})
    return keys


def _forget_built_chain(graph, writer, holder: str, chain: str) -> None:
    """The chain r2g built for these turns (memctl/facts) gives way to the hand-written one: its claims lose
    their chain attributes and its ACTIVE_OF / VERSION_NEXT edges go, so each test controls every version."""
    from memctl.facts.maintain import CHAIN_FIELDS

    edges = set()
    for row in graph.neighbors(holder, "in", ["SUBJECT"]).rows():
        claim = graph.get_node(row["key"])
        attributes = claim["props"].get("attributes", {})
        if attributes.get("chain") != chain:
            continue
        kept = {name: value for name, value in attributes.items() if name not in CHAIN_FIELDS}
        writer.update_node(row["key"], properties={"attributes": kept, "superseded_by": None})
        for edge_type, direction in (("ACTIVE_OF", "in"), ("VERSION_NEXT", "in"), ("VERSION_NEXT", "out")):
            for edge in graph.neighbors(row["key"], direction, [edge_type]).rows():
                source, target = (edge["key"], row["key"]) if direction == "in" else (row["key"], edge["key"])
                edges.add(edge_key(source, edge_type, target))
    for key in sorted(edges):
        writer.delete_edge(key)


def _union(refs: list, more: list) -> list:
    seen = {(ref["raw_id"], ref["offset"]) for ref in refs}
    return refs + [ref for ref in more if (ref["raw_id"], ref["offset"]) not in seen]
