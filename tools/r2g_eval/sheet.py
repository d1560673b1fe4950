"""A judging sheet: a seeded random sample of the Facts, Entities and Preferences R2G built from a conversation
file, each with everything a judge needs beside it (its arguments and the entities they point to, the whole
source turn, its speaker, conversation and session) and an empty verdict.

The graph is built the way a user builds it (`memctl ingest`, then `memctl r2g`, in a temporary store), so the
sample sees what the store holds: nodes merged across turns and conversations included. Each type is sampled
apart, from its nodes in key order with random.Random(f"{seed}:{type}"): the same input, code and seed give the
same sheet, and asking for fewer types does not change the rows of the others.
"""

from __future__ import annotations

import random
import subprocess
from collections import defaultdict
from pathlib import Path

from memctl.model import ROLE_EDGES, SLOT_EDGES

JUDGED_TYPES = ("Fact", "Entity", "Preference")
SHEET_FORMAT = "memctl r2g judging sheet 1"
VERDICTS = ("correct", "partial", "wrong")
# Fact → Entity edges that say what an argument is: the semantic roles and the slot facts' SUBJECT and VALUE.
ARGUMENT_EDGES = frozenset(edge.value for edge in ROLE_EDGES | SLOT_EDGES)
ROOT = Path(__file__).resolve().parents[2]


def build_graph(paths: list, home: str) -> None:
    """Ingest `paths` into a new store under `home` and convert it, as `memctl ingest` + `memctl r2g` do."""
    from memctl.memory import Memory

    with Memory.open(home=home, writable=True, holder="eval_r2g") as memory:
        memory.ingest(paths)
        memory.r2g()


def draw(home: str, counts: dict, seed: int) -> tuple[list, dict]:
    """(rows, population by type): up to counts[type] nodes of each type, sampled as the module says."""
    from engine.graph.api import GraphStore
    from engine.raw import RawStore
    from memctl.memory import Memory

    with Memory.open(home=home) as memory:
        graph, raw = GraphStore(memory.store), RawStore(memory.store)
        by_type = defaultdict(list)
        for node in graph.iter_nodes():
            if node.type in counts:
                by_type[node.type].append(node)
        chosen = []
        for node_type in JUDGED_TYPES:
            if node_type in counts:
                nodes = sorted(by_type[node_type], key=lambda node: node.key)
                generator = random.Random(f"{seed}:{node_type}")
                chosen.extend(generator.sample(nodes, min(counts[node_type], len(nodes))))
        sources = _Sources(raw)
        arguments = _arguments(graph, {node.id for node in chosen if node.type == "Fact"})
        rows = [_row(node, sources, arguments.get(node.id, [])) for node in chosen]
        return rows, {node_type: len(by_type[node_type]) for node_type in counts}


def header(arguments: dict, population: dict, rows: list) -> dict:
    drawn = defaultdict(int)
    for row in rows:
        drawn[row["type"]] += 1
    return {"sheet": SHEET_FORMAT, **arguments, "code": code_version(), "population": population,
            "drawn": dict(drawn),
            "rules": "python tools/eval_r2g.py --help; verdict: correct | partial | wrong, note: why"}


def code_version() -> str:
    """The commit of the repository R2G ran from, "-dirty" when memctl/ differs from it."""
    def git(*arguments):
        return subprocess.run(["git", "-C", str(ROOT), *arguments], capture_output=True, text=True)

    commit = git("rev-parse", "--short", "HEAD")
    if commit.returncode != 0:
        return "unknown"
    dirty = git("status", "--porcelain", "--", "memctl").stdout.strip()
    return commit.stdout.strip() + ("-dirty" if dirty else "")


def write(path, head: dict, rows: list) -> None:
    import yaml

    text = yaml.safe_dump({**head, "items": rows}, allow_unicode=True, sort_keys=False, width=120)
    if path in (None, "-"):
        print(text, end="")
    else:
        Path(path).write_text(text, encoding="utf-8")


class _Sources:
    """The turns of the store by chunk, to find the turn a raw_ref's span lies in, and the span's text."""

    def __init__(self, raw):
        self.raw = raw
        self.turns = defaultdict(list)
        for turn in raw.iter_turns(text=True):
            self.turns[turn["raw_ref"]["raw_id"]].append(turn)

    def of(self, ref: dict) -> dict:
        turn = next((turn for turn in self.turns[ref["raw_id"]] if _within(ref["offset"], turn["raw_ref"])), None)
        found = {"span": self.raw.read_span(ref["raw_id"], ref["offset"], ref["length"]).decode("utf-8")}
        if turn is not None:
            found.update({"turn": turn["text"], "speaker": turn["speaker"], "date": turn["ts"],
                          "conversation": turn["conv_id"], "session": turn.get("session"),
                          "source": turn["source_id"]})
        return found


def _within(offset: int, span: dict) -> bool:
    return span["offset"] <= offset < span["offset"] + span["length"]


def _arguments(graph, fact_ids: set) -> dict:
    """Fact id → [(edge type, target id)] of its argument edges, in role order."""
    found = defaultdict(list)
    for edge in graph.iter_edges():
        if edge.source_id in fact_ids and edge.type in ARGUMENT_EDGES:
            found[edge.source_id].append((edge.type, edge.target_id))
    targets = {target for edges in found.values() for _, target in edges}
    nodes = {node.id: node for node in graph.nodes_by_id(sorted(targets)) if node is not None}
    return {fact: [{"role": role, "entity": _entity_label(nodes.get(target))} for role, target in edges]
            for fact, edges in found.items()}


def _entity_label(node) -> str:
    if node is None:
        return "(missing node)"
    attributes = node.props.get("attributes", {})
    return f"{node.props.get('title', node.key)} ({attributes.get('entity_type', node.type)})"


def _row(node, sources: _Sources, arguments: list) -> dict:
    props = node.props
    attributes = props.get("attributes", {})
    refs = props.get("raw_refs") or []
    row = {"id": node.key, "type": node.type, "title": props.get("title", "")}
    if node.type == "Fact":
        row.update(_fact(attributes, arguments))
    elif node.type == "Entity":
        row.update(_entity(attributes))
    else:
        row.update({"holder": attributes.get("holder"), "polarity": attributes.get("polarity"),
                    "object": attributes.get("object"), "kind": attributes.get("kind"),
                    "trigger": attributes.get("trigger")})
    if refs:
        source = sources.of(refs[0])
        row["sentence" if node.type != "Entity" else "mention"] = source.pop("span")
        row.update(source)
    row["evidence"] = props.get("frequency", len(refs))  # how many mentions were merged into the node
    row["verdict"] = ""
    row["note"] = ""
    return row


def _fact(attributes: dict, arguments: list) -> dict:
    arguments = arguments + _words(attributes, arguments)
    if "slot" in attributes:
        return {"slot": {name: attributes.get(name) for name in
                         ("subject", "slot", "slot_surface", "value", "value_entity", "polarity", "time")
                         if attributes.get(name) is not None},
                "arguments": arguments}
    predicate = attributes.get("predicate") or {}
    return {"predicate": predicate.get("normalized"), "verb": predicate.get("raw"),
            "negation": attributes.get("negation", False), "modality": attributes.get("modality"),
            "arguments": arguments}


def _words(attributes: dict, arguments: list) -> list:
    """The fillers that are words of the fact, no entity (memctl/r2g/emit.py): its roles without an edge."""
    linked = {(argument["role"], argument["entity"].rpartition(" (")[0]) for argument in arguments}
    return [{"role": role, "word": name} for role, names in (attributes.get("roles") or {}).items()
            for name in names if (role, name) not in linked]


def _entity(attributes: dict) -> dict:
    found = {"entity_type": attributes.get("entity_type"), "aliases": attributes.get("aliases") or []}
    if attributes.get("entity_type") == "Time":
        found.update({"value": attributes.get("value"), "granularity": attributes.get("granularity")})
    return found
