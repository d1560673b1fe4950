"""`memctl r2g --from jsonl FILE`: nodes and edges from an external summariser/linker agent.

One JSON object per line (blank lines are skipped), in any of these shapes:

    {"node": {...}}   {"edge": {...}}                  seed 001 §9.1 (POST /memory/nodes, /memory/edges);
                                                       an optional "tenant_id" must name this store's tenant,
                                                       an optional "ref" names the node for later lines
    {"name": "create_memory", "arguments": {...}}      seed 000 §4.2/4.3 tool calls ("tool" for "name";
    {"name": "link_memories", "arguments": {...}}      "args"/"parameters"/"input" for "arguments", also as a
    {"type": "function", "function": {...}}            JSON string; OpenAI's function-call wrapper too)
    {"op": "ADD" | "UPDATE" | "DELETE", ...}          seed 002's operations on facts (memctl/facts/operations.py)

Node: type (Episode, Fact, Preference, Concept, Entity, Task, Meta) and the fields of seed 001 §2.3 (title,
text, raw_refs, keywords, entities, sentiment, importance, confidence, recency, frequency, privacy, provenance,
tags, attributes). Without an id it gets the deterministic one R2G would give it (Entity: name + type,
Concept: attributes.key or title, others: fingerprint of text, type and day), so an agent's Entity "Windows 11"
and R2G's are one node. raw_refs: {raw_id, offset, length} (bytes of the chunk) or {source_id, offset: [start,
end]} (a turn's own id, offsets inside the turn, the whole turn without offset); each must lie inside a
stored chunk, and the node gets DERIVED_FROM edges to those chunks.

Edge: src, dst (node ids, refs of earlier lines, or ids of stored nodes), type (an edge type of seed 001 §2.2
or a role), weight, confidence, temporal {since, until}.

create_memory {subject, memory_type 事件|事实|关系|观点 (event|fact|relation|opinion; 偏好|preference makes a
Preference), topic, object?, attributes? {时间/time, 地点/place, 原因/reason, 方式/manner, 物品/items, 对象/
recipient, 工具/tool, …}, importance?} becomes a Fact: predicate.normalized from the predicate lexicon (else the
normalised topic), subject → AGENT, object and items → PATIENT, place → LOCATION, time → TIME (resolved
against the line's optional "ts"), reason → CAUSE, manner → MANNER; first person (我, I, user) is the Person
"用户"/"user". link_memories {source_memory_description, target_memory_description, relation_type
因为|所以|导致|引用|基于|相关 (or an edge type), importance?} finds each description among this file's memories
(the one covering most of its words and character pairs, at least half), else in the NodeIndex, and adds
CAUSES (因为, 所以, 导致: source is the cause, as in seed 000's examples), REFERS_TO (引用), DERIVED_FROM (基于:
source is based on target) or SIMILAR_TO (相关), weighted by importance.

Slot Facts (an agent's claims: attributes subject, subject_type, slot, value, polarity) join their subject's
slot chain in the batch that writes them (memctl/facts/maintain.py), as R2G's do.

Everything is validated before anything is written: the first problem is an InputError naming the line (exit 2)
and the store is left as it was. An accepted file is written in batches of WRITE_BATCH_LINES nodes and edges
(one batch, so all or nothing, for most files) and recorded under its sha256 in `r2g.import` with the resolved
plan, in the last batch: importing it again changes nothing, and `--rebuild` replays it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from datetime import datetime

from engine.errors import InputError
from memctl.model import (
    PRIVACY_SCOPES,
    EdgeType,
    NodeType,
    concept_id,
    edge_weight,
    entity_id,
    fingerprint,
    node_id,
    normalize_text,
)
from memctl.r2g.emit import EXTERNAL_CREATOR as CREATOR
from memctl.r2g.emit import RAW_CHUNK, VERSION, props
from memctl.language.lexicon import use_directory
from memctl.r2g.merge import MERGED_TYPES, evidence_key
from memctl.node_documents import INDEXED_TYPES, date_text, node_document
from memctl.settings import resolve

IMPORT_TABLE = "r2g.import"
EXTERNAL_ACTOR = "r2g --from jsonl"
WRITE_BATCH_LINES = 5000
NODE_FIELDS = {"id", "type", "title", "text", "raw_refs", "keywords", "entities", "sentiment", "importance",
               "confidence", "recency", "frequency", "privacy", "provenance", "tags", "attributes", "tenant",
               "tenant_id", "embeddings", "created_at", "updated_at"}
EDGE_FIELDS = {"id", "src", "dst", "type", "weight", "confidence", "temporal", "provenance", "attributes",
               "tenant", "tenant_id", "created_at", "updated_at"}
MEMORY_TYPES = {"事件": "event", "事实": "fact", "关系": "relation", "观点": "opinion", "偏好": "preference",
                "event": "event", "fact": "fact", "relation": "relation", "opinion": "opinion",
                "preference": "preference"}
RELATIONS = {"因为": "CAUSES", "所以": "CAUSES", "导致": "CAUSES", "引用": "REFERS_TO", "基于": "DERIVED_FROM",
             "相关": "SIMILAR_TO", "支持": "SUPPORTS", "矛盾": "CONTRADICTS", "because": "CAUSES", "so": "CAUSES",
             "causes": "CAUSES", "leads_to": "CAUSES", "refers_to": "REFERS_TO", "based_on": "DERIVED_FROM",
             "related": "SIMILAR_TO", "supports": "SUPPORTS", "contradicts": "CONTRADICTS"}
# create_memory attribute names → the role their value fills (and the entity type it gets).
ATTRIBUTE_ROLES = {"时间": ("TIME", "Time"), "time": ("TIME", "Time"), "when": ("TIME", "Time"),
                   "日期": ("TIME", "Time"), "date": ("TIME", "Time"),
                   "地点": ("LOCATION", "Location"), "place": ("LOCATION", "Location"),
                   "location": ("LOCATION", "Location"), "where": ("LOCATION", "Location"),
                   "原因": ("CAUSE", "Other"), "reason": ("CAUSE", "Other"), "cause": ("CAUSE", "Other"),
                   "方式": ("MANNER", "Other"), "manner": ("MANNER", "Other"), "how": ("MANNER", "Other"),
                   "物品": ("PATIENT", "Object"), "items": ("PATIENT", "Object"), "item": ("PATIENT", "Object"),
                   "对象": ("RECIPIENT", "Person"), "recipient": ("RECIPIENT", "Person"),
                   "工具": ("INSTRUMENT", "Object"), "tool": ("INSTRUMENT", "Object"),
                   "instrument": ("INSTRUMENT", "Object"), "受益人": ("BENEFICIARY", "Person"),
                   "beneficiary": ("BENEFICIARY", "Person")}
FIRST_PERSON = {"我": "用户", "我们": "用户", "用户": "用户", "i": "user", "me": "user", "user": "user"}
ARGUMENT_KEYS = ("arguments", "args", "parameters", "input")
LIST_SPLIT = re.compile(r"[,，、;；]\s*")
_HAN = re.compile(r"[\u3400-\u9fff]")
MATCH_THRESHOLD = 0.5


class Plan:
    """Validated writes: nodes {key: [type, props, document extra fields]}, edges [(src, type, dst, weight,
    confidence, properties)], in line order."""

    def __init__(self):
        self.nodes: dict = {}
        self.edges: list = []
        self.descriptions: list = []  # (key, words) of this file's memories, for link_memories

    def to_record(self) -> list:
        return [["node", key, *entry] for key, entry in self.nodes.items()] + [["edge", *edge] for edge in self.edges]


def read_input(path: str | None, size_limit: int, stdin=None) -> tuple[bytes, str]:
    """The bytes of FILE or of stdin ("-"), refused above `size_limit` (the whole file is validated in memory
    before anything is written)."""
    if not path:
        raise InputError("--from jsonl needs a FILE (or - for stdin)")
    if path == "-":
        from memctl.standard_input import binary_stdin

        stream = stdin if stdin is not None else binary_stdin()
        data, name = stream.read(size_limit + 1), "<stdin>"
    else:
        try:
            with open(path, "rb") as handle:
                data = handle.read(size_limit + 1)
        except FileNotFoundError:
            raise InputError("file not found", where=path) from None
        except IsADirectoryError:
            raise InputError("is a directory, not a JSONL file", where=path) from None
        except PermissionError:
            raise InputError("permission denied", where=path) from None
        name = path
    if len(data) > size_limit:
        raise InputError(f"larger than {size_limit:,} bytes (setting ingest.max_file_bytes)", where=name)
    return data, name


def import_jsonl(store, tenant: str, data: bytes, name: str, config=None) -> dict:
    """Validate the whole file, then write it; a file imported before (same sha256) changes nothing."""
    digest = hashlib.sha256(data).hexdigest()
    if store.get(IMPORT_TABLE, digest) is not None:
        return {"source": name, "sha256": digest, "already_imported": True, "nodes": 0, "edges": 0}
    plan = Validator(store, tenant, config).validate(data, name).to_record()
    # The record goes with the last batch: a file that fits one batch is stored whole or not at all.
    summary = write_plan(store, tenant, plan, config,
                         last_records=[(IMPORT_TABLE, digest, {"name": name, "plan": plan, "version": VERSION})])
    return {"source": name, "sha256": digest, "already_imported": False, **summary}


def replay_imports(store, tenant: str, config=None, rewritten=None) -> int:
    """Write every recorded import again (during `--rebuild`); returns how many."""
    count = 0
    for _digest, record in list(store.scan(IMPORT_TABLE)):
        write_plan(store, tenant, record["plan"], config, rewritten)
        count += 1
    return count


def write_plan(store, tenant: str, plan: list, config=None, rewritten=None, last_records=()) -> dict:
    """Write a validated plan in batches of WRITE_BATCH_LINES entries; `last_records` (table, key, value) join
    the last batch."""
    from engine.graph.api import GraphStore
    from engine.raw import RawStore
    from memctl.facts.maintain import update_chains
    from memctl.r2g.draft import GraphDraft
    from memctl.r2g.nodeindex import open_index

    graph, index, raw = GraphStore(store), open_index(store, config), RawStore(store)
    settings, fact_settings = resolve(config).r2g, resolve(config).facts
    nodes = edges = 0
    starts = range(0, len(plan), WRITE_BATCH_LINES)
    for start in starts:
        draft = GraphDraft(graph, index, rewritten)
        extras: dict = {}  # an Episode's turn fields
        for entry in plan[start: start + WRITE_BATCH_LINES]:
            if entry[0] == "node":
                _, key, node_type, node_props, extra = entry
                _write_node(draft, raw, tenant, key, node_type, node_props, settings)
                if extra:
                    extras[key] = extra
                nodes += 1
            else:
                _, source, edge_type, target, weight, confidence, properties = entry
                draft.edge(source, edge_type, target, weight, confidence, None, properties)
                edges += 1
        # The chains of the slot Facts the batch writes (an agent's claims, seed 002's fact operations).
        draft.events += update_chains(draft, tenant, fact_settings, EXTERNAL_ACTOR, graph.clock())
        for key, (node_type, _) in draft.nodes.items():
            if node_type in INDEXED_TYPES:
                draft.document(node_document(key, node_type, draft.merged(key), extras.get(key)))
        if start == starts[-1]:
            for table, key, value in last_records:
                draft.record(table, key, value)
        draft.commit()
    return {"nodes": nodes, "edges": edges}


def _write_node(draft, raw, tenant, key, node_type, node_props, settings) -> None:
    draft.node(key, node_type, node_props)
    for ref in node_props.get("raw_refs", ()):
        raw_id = ref["raw_id"]
        if draft.props(raw_id) is None:
            turns = raw.turns(raw_id)
            draft.node(raw_id, RAW_CHUNK, {"conv_id": turns[0]["conv_id"] if turns else None, "turns": len(turns),
                                           "ts": turns[0]["ts"] if turns else None, "tenant": tenant})
        draft.edge(key, "DERIVED_FROM", raw_id, edge_weight(1.0, settings.external_trust, 1.0, settings.edge_weight),
                   1.0)


# --- validation --------------------------------------------------------------------------------------------


class Validator:
    def __init__(self, store, tenant: str, config=None):
        from engine.graph.api import GraphStore
        from engine.raw import RawStore

        self.store = store
        self.tenant = tenant
        self.config = config
        self.settings = resolve(config).r2g
        use_directory(self.settings.lexicon_directory)
        self.raw = RawStore(store)
        self.graph = GraphStore(store)
        self.plan = Plan()
        self.refs: dict = {}  # "ref" name → node key
        self._turns_by_source = None
        self._index = None

    def validate(self, data: bytes, name: str) -> Plan:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(f"not UTF-8 (byte offset {error.start})", where=name) from None
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{name}:{number}"
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"invalid JSON: {error.msg} (column {error.colno})", where=where) from None
            try:
                self._line(value)
            except (ValueError, TypeError) as error:
                raise InputError(str(error), where=where) from None
        if not self.plan.nodes and not self.plan.edges:
            raise InputError("no node or edge in the input", where=name)
        return self.plan

    def _line(self, value) -> None:
        if not isinstance(value, dict):
            raise ValueError("a line must be a JSON object")
        self._check_tenant(value.get("tenant_id", value.get("tenant")))
        if "node" in value:
            _only(value, {"node", "tenant_id", "tenant", "ref"}, "line")
            key = self._node(value["node"])
            self._name(value.get("ref"), key)
        elif "edge" in value:
            _only(value, {"edge", "tenant_id", "tenant"}, "line")
            self._edge(value["edge"])
        elif "op" in value:
            from memctl.facts.operations import fact_operation

            self._name(value.get("ref"), fact_operation(self, value))
        else:
            name, arguments = _tool_call(value)
            if name == "create_memory":
                key = self._create_memory(arguments, value.get("ts"))
                self._name(value.get("ref"), key)
            elif name == "link_memories":
                self._link_memories(arguments)
            else:
                raise ValueError(f"unknown tool {name!r} (create_memory or link_memories)")

    def _check_tenant(self, tenant) -> None:
        if tenant is not None and tenant != self.tenant:
            raise ValueError(f"tenant {tenant!r} is not this store's tenant {self.tenant!r} (use --tenant)")

    def _name(self, ref, key: str) -> None:
        if ref is None:
            return
        if not isinstance(ref, str) or not ref:
            raise ValueError("ref must be a non-empty string")
        self.refs[ref] = key

    # --- nodes -------------------------------------------------------------------------------------------

    def _node(self, node) -> str:
        if not isinstance(node, dict):
            raise ValueError("node must be a JSON object")
        _only(node, NODE_FIELDS, "node")
        self._check_tenant(node.get("tenant_id", node.get("tenant")))
        try:
            node_type = NodeType(node.get("type")).value
        except ValueError:
            raise ValueError(f"node type must be one of {', '.join(item.value for item in NodeType)}") from None
        title, text = _text(node, "title"), _text(node, "text")
        if not title and not text:
            raise ValueError("a node needs a title or a text")
        attributes = node.get("attributes", {})
        if not isinstance(attributes, dict):
            raise ValueError("attributes must be a JSON object")
        refs = [self.raw_ref(ref, index) for index, ref in enumerate(_list(node, "raw_refs"))]
        recency = _iso(node.get("recency"), "recency")
        node_props = props(self.tenant, title=title or text[:60], text=text or title, raw_refs=refs,
                           keywords=_strings(node, "keywords"), entities=_strings(node, "entities"),
                           sentiment=_sentiment(node.get("sentiment")),
                           importance_value=_unit(node.get("importance", 0.5), "importance"),
                           confidence=_unit(node.get("confidence", 0.8), "confidence"), recency=recency,
                           tags=_strings(node, "tags"), attributes=dict(attributes), creator=CREATOR)
        frequency = node.get("frequency", 1)
        if isinstance(frequency, bool) or not isinstance(frequency, int) or frequency < 1:
            raise ValueError("frequency must be a positive integer")
        node_props["frequency"] = frequency
        _privacy(node, node_props)
        if isinstance(node.get("provenance"), dict):
            node_props["provenance"] = {**node["provenance"], "creator": node["provenance"].get("creator", CREATOR)}
        elif "provenance" in node:
            raise ValueError("provenance must be a JSON object")
        key = node.get("id") or self._derived_id(node_type, title, text, attributes, recency)
        if not isinstance(key, str) or "\0" in key or len(key.encode("utf-8")) > 1024:
            raise ValueError("id must be text of at most 1024 bytes without NUL")
        if node_type in MERGED_TYPES:
            first = refs[0] if refs else {"raw_id": "", "offset": 0}
            node_props["attributes"].setdefault("first_seen", evidence_key(recency, first["raw_id"], first["offset"]))
        extra = self._episode_fields(node_type, node_props, refs)
        self.plan.nodes[key] = [node_type, node_props, extra]
        self.plan.descriptions.append((key, _words(" ".join([title, text] + [str(value) for value in
                                                                              attributes.values()]))))
        return key

    def _derived_id(self, node_type: str, title: str, text: str, attributes: dict, recency) -> str:
        if node_type == "Entity":
            return entity_id(self.tenant, title or text, str(attributes.get("entity_type") or "Other"))
        if node_type == "Concept":
            return concept_id(self.tenant, str(attributes.get("key") or normalize_text(title or text)))
        return node_id(node_type, self.tenant, fingerprint(text or title, node_type, recency[:10] if recency else None))

    def _episode_fields(self, node_type: str, node_props: dict, refs: list) -> dict | None:
        """An Episode citing raw text is indexed like R2G's: the cited words as its turn field."""
        if node_type != "Episode" or not refs:
            return None
        words = [self.raw.read_span(ref["raw_id"], ref["offset"], ref["length"]).decode("utf-8", "replace")
                 for ref in refs]
        lang = "zh" if _HAN.search(node_props["text"]) else "en"
        return {"turn": "\n".join(words), "speaker": str(node_props["attributes"].get("speaker") or ""),
                "date": date_text(node_props.get("recency"), lang)}

    def raw_ref(self, ref, index: int) -> dict:
        where = f"raw_refs[{index}]"
        if not isinstance(ref, dict):
            raise ValueError(f"{where} must be a JSON object")
        _only(ref, {"raw_id", "source_id", "offset", "length", "ts"}, where)
        if "raw_id" in ref:
            raw_id = ref["raw_id"]
            chunk = self.raw.chunk(raw_id) if isinstance(raw_id, str) else None
            if chunk is None:
                raise ValueError(f"{where}: no stored raw chunk {raw_id!r}")
            offset, length = _span(ref, 0, chunk.length, where)
            turn = self._turn_at(raw_id, offset)
            return {"raw_id": raw_id, "offset": offset, "length": length,
                    "source_id": ref.get("source_id") or (turn["source_id"] if turn else None),
                    "ts": ref.get("ts") or (turn["ts"] if turn else None)}
        turn = self._turn_by_source(ref.get("source_id"), where)
        span = turn["raw_ref"]
        start, length = _span(ref, 0, span["length"], where)
        return {"raw_id": span["raw_id"], "offset": span["offset"] + start, "length": length,
                "source_id": turn["source_id"], "ts": turn["ts"]}

    def _turn_at(self, raw_id: str, offset: int) -> dict | None:
        for turn in self.raw.turns(raw_id):
            ref = turn["raw_ref"]
            if ref["offset"] <= offset < ref["offset"] + ref["length"]:
                return turn
        return None

    def _turn_by_source(self, source_id, where: str) -> dict:
        if not isinstance(source_id, str) or not source_id:
            raise ValueError(f"{where} needs a raw_id or a source_id")
        if self._turns_by_source is None:
            self._turns_by_source = {}
            for turn in self.raw.iter_turns():
                self._turns_by_source.setdefault(turn["source_id"], []).append(turn)
        found = self._turns_by_source.get(source_id, [])
        if len(found) != 1:
            problem = "no stored turn has" if not found else f"{len(found)} stored turns have"
            raise ValueError(f"{where}: {problem} source_id {source_id!r}" + ("; give raw_id" if found else ""))
        return found[0]

    # --- edges -------------------------------------------------------------------------------------------

    def _edge(self, edge) -> None:
        if not isinstance(edge, dict):
            raise ValueError("edge must be a JSON object")
        _only(edge, EDGE_FIELDS, "edge")
        self._check_tenant(edge.get("tenant_id", edge.get("tenant")))
        edge_type = _edge_type(edge.get("type"))
        source, target = self.endpoint(edge.get("src"), "src"), self.endpoint(edge.get("dst"), "dst")
        confidence = _unit(edge.get("confidence", 0.8), "confidence")
        weight = edge.get("weight")
        weight = _weight(weight) if weight is not None else None
        properties = {}
        temporal = edge.get("temporal")
        if temporal is not None:
            if not isinstance(temporal, dict) or set(temporal) - {"since", "until"}:
                raise ValueError("temporal must be {since, until}")
            properties = {name: _iso(temporal.get(name), f"temporal.{name}") for name in ("since", "until")
                          if temporal.get(name) is not None}
        if isinstance(edge.get("attributes"), dict):
            properties.update(edge["attributes"])
        self._add_edge(source, edge_type, target, weight, confidence, properties or None)

    def _add_edge(self, source, edge_type, target, weight, confidence, properties) -> None:
        if weight is None:
            weight = edge_weight(confidence, self.settings.external_trust, 1.0, self.settings.edge_weight)
        self.plan.edges.append((source, edge_type, target, round(weight, 6), confidence, properties))

    def endpoint(self, value, name: str) -> str:
        if not isinstance(value, str) or not value:
            raise ValueError(f"{name} must be a node id")
        if value in self.refs:
            return self.refs[value]
        if value in self.plan.nodes or self._stored(value):
            return value
        raise ValueError(f"{name} {value!r} is neither a node of this file nor a stored node")

    def _stored(self, key: str) -> bool:
        return self.graph.node(key) is not None

    # --- seed 000 tools ----------------------------------------------------------------------------------

    def _create_memory(self, arguments: dict, ts) -> str:
        _only(arguments, {"subject", "memory_type", "topic", "object", "attributes", "importance"}, "create_memory")
        subject, topic = _required(arguments, "subject"), _required(arguments, "topic")
        kind = MEMORY_TYPES.get(str(arguments.get("memory_type", "")).strip().lower())
        if kind is None:
            raise ValueError("memory_type must be one of 事件, 事实, 关系, 观点 (event, fact, relation, opinion)"
                             " or 偏好 (preference)")
        target = arguments.get("object")
        if target is not None and not isinstance(target, str):
            raise ValueError("object must be a string")
        attributes = arguments.get("attributes") or {}
        if not isinstance(attributes, dict) or not all(isinstance(value, (str, int, float)) and
                                                       not isinstance(value, bool) for value in attributes.values()):
            raise ValueError("attributes must map names to strings")
        importance_value = _unit(arguments.get("importance", 0.5), "importance")
        ts = _iso(ts, "ts")
        zh = bool(_HAN.search(subject + topic + (target or "")))
        joiner = "" if zh else " "
        statement = joiner.join(part for part in (subject, topic, target) if part)
        details = "; ".join(f"{name}: {value}" for name, value in attributes.items())
        if kind == "preference":
            node = {"type": "Preference", "title": statement, "text": statement + (f" ({details})" if details else ""),
                    "importance": importance_value, "recency": ts,
                    "attributes": {"polarity": -1 if re.search(r"不|讨厌|hate|dislike|don't", topic) else 1,
                                   "object": target or topic, "kind": "taste", "holder": _person(subject)[0],
                                   "memory_type": arguments["memory_type"]}}
            return self._node(node)
        roles: list = [("AGENT", subject, "Person" if _person(subject)[1] else None)]
        if target:
            roles.append(("PATIENT", target, None))
        fact_time = None
        for name, value in attributes.items():
            role = ATTRIBUTE_ROLES.get(str(name).strip().lower())
            if role is not None and role[0] == "TIME":
                fact_time = _normalise_time(str(value), ts, zh)
            elif role is not None:
                roles += [(role[0], item.strip(), role[1]) for item in LIST_SPLIT.split(str(value)) if item.strip()]
        entities = [self._entity(text, entity_type, ts, "Object" if role == "PATIENT" else "Other")
                    for role, text, entity_type in roles]
        role_names: dict = {}
        for (role, _, _), (_, name) in zip(roles, entities):
            role_names.setdefault(role, []).append(name)
        predicate = _predicate(topic)
        fillers = "; ".join(role.lower() + " " + ", ".join(names) for role, names in role_names.items())
        lexicon = predicate != _fallback(topic)
        key = self._node({
            "type": "Fact", "title": f"{predicate}({fillers})", "text": statement + (f" ({details})" * bool(details)),
            "keywords": [predicate], "entities": [name for _, name in entities], "importance": importance_value,
            "confidence": 0.8, "recency": ts,
            "attributes": {"predicate": {"normalized": predicate, "raw": topic, "lexicon": lexicon},
                           "negation": False, "modality": None, "time": fact_time, "roles": role_names,
                           "memory_type": arguments["memory_type"], "subject": subject, "topic": topic,
                           "object": target, "details": {str(name): str(value) for name, value in attributes.items()}}})
        for (role, _, _), (entity_key, _) in zip(roles, entities):
            self._add_edge(key, role, entity_key, None, 0.8, None)
        if fact_time is not None:
            time_key, _ = self._entity(fact_time["value"] or fact_time["expression"], "Time", ts)
            self._add_edge(key, "TIME", time_key, None, 0.8, None)
        return key

    def _entity(self, text: str, entity_type: str | None, ts, fallback: str = "Other") -> tuple[str, str]:
        name, is_person = _person(text)
        if entity_type is None:
            entity_type = "Person" if is_person else _guess_type(name, fallback)
        node = {"type": "Entity", "title": name, "text": f"{name} ({entity_type})", "keywords": [name],
                "recency": ts, "confidence": 0.8, "attributes": {"entity_type": entity_type, "canonical": name,
                                                                 "aliases": [text] if text != name else []}}
        return self._node(node), name

    def _link_memories(self, arguments: dict) -> None:
        _only(arguments, {"source_memory_description", "target_memory_description", "source", "target",
                          "relation_type", "importance"}, "link_memories")
        source = arguments.get("source_memory_description", arguments.get("source"))
        target = arguments.get("target_memory_description", arguments.get("target"))
        if not isinstance(source, str) or not source.strip() or not isinstance(target, str) or not target.strip():
            raise ValueError("link_memories needs source_memory_description and target_memory_description")
        relation = arguments.get("relation_type")
        edge_type = RELATIONS.get(str(relation).strip().lower()) if isinstance(relation, str) else None
        if edge_type is None:
            edge_type = _edge_type(relation, "relation_type must be one of 因为, 所以, 导致, 引用, 基于, 相关 or an "
                                             "edge type")
        weight = _unit(arguments.get("importance", 0.6), "importance")
        self._add_edge(self._find(source), edge_type, self._find(target), weight, 0.8,
                       {"relation": relation, "source": source, "target": target})

    def _find(self, description: str) -> str:
        """The memory a description means: the best-overlapping memory of this file, else the NodeIndex's top
        Fact, Preference or Episode."""
        words = _words(description)
        best, best_score = None, (0.0, 0.0)
        for key, node_words in self.plan.descriptions:
            if self.plan.nodes[key][0] in ("Entity", "Concept") or not words or not node_words:
                continue
            shared = len(words & node_words)
            # How much of the description the memory covers; ties go to the memory with less else in it.
            score = (shared / len(words), shared / len(words | node_words))
            if score > best_score:
                best, best_score = key, score
        if best is not None and best_score[0] >= MATCH_THRESHOLD:
            return best
        if self._index is None:
            from memctl.r2g.nodeindex import open_index

            self._index = open_index(self.store, self.config)
        hits = self._index.search(description, top=1, types=["Fact", "Preference", "Episode"])
        if hits:
            return hits[0].key
        raise ValueError(f"no memory matches the description {description!r}")


# --- helpers -----------------------------------------------------------------------------------------------


def _tool_call(value: dict) -> tuple[str, dict]:
    if isinstance(value.get("function"), dict):
        value = value["function"]
    name = value.get("name", value.get("tool"))
    if not isinstance(name, str):
        raise ValueError('expected {"node": …}, {"edge": …} or a create_memory/link_memories tool call')
    arguments = next((value[key] for key in ARGUMENT_KEYS if key in value), None)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as error:
            raise ValueError(f"{name} arguments are not valid JSON: {error.msg}") from None
    if not isinstance(arguments, dict):
        raise ValueError(f"{name} needs its arguments as a JSON object")
    return name, arguments


def _only(value: dict, allowed: set, what: str) -> None:
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ValueError(f"unknown {what} field(s): {', '.join(unknown)}")


def _text(node: dict, name: str) -> str:
    value = node.get(name, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    return value.strip()


def _required(arguments: dict, name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} is required (a non-empty string)")
    return value.strip()


def _list(node: dict, name: str) -> list:
    value = node.get(name, [])
    if not isinstance(value, list):
        raise ValueError(f"{name} must be a list")
    return value


def _strings(node: dict, name: str) -> list:
    values = _list(node, name)
    if not all(isinstance(item, str) and item for item in values):
        raise ValueError(f"{name} must be a list of non-empty strings")
    return values


def _unit(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a number within [0, 1], not {value!r}")
    return float(value)


def _weight(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"weight must be a finite number >= 0, not {value!r}")
    return float(value)


def _iso(value, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name} must be an ISO 8601 time")
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{name} {value!r} is not an ISO 8601 time") from None
    return value


def _span(ref: dict, base: int, size: int, where: str) -> tuple[int, int]:
    """(offset, length) of a raw_ref inside [0, size): offset+length, or offset [start, end], or the whole."""
    offset = ref.get("offset", 0)
    if isinstance(offset, list):
        if len(offset) != 2 or "length" in ref:
            raise ValueError(f"{where}.offset must be an integer or a [start, end] pair")
        start, end = offset
        length = end - start if all(isinstance(item, int) and not isinstance(item, bool) for item in offset) else -1
    else:
        start = offset
        length = ref.get("length", size - offset if isinstance(offset, int) else -1)
    for value in (start, length):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{where}: offsets and lengths must be non-negative integers")
    if start + length > size:
        raise ValueError(f"{where}: span {start}+{length} lies outside the {size}-byte text it cites")
    return base + start, length


def _sentiment(value):
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) - {"valence", "arousal"}:
        raise ValueError("sentiment must be {valence, arousal}")
    valence, arousal = value.get("valence", 0.0), value.get("arousal", 0.0)
    for name, number, low in (("valence", valence, -1.0), ("arousal", arousal, 0.0)):
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not low <= number <= 1.0:
            raise ValueError(f"sentiment.{name} must be a number within [{low:g}, 1]")
    return {"valence": float(valence), "arousal": float(arousal)}


def _privacy(node: dict, node_props: dict) -> None:
    privacy = node.get("privacy")
    if privacy is None:
        return
    if not isinstance(privacy, dict) or privacy.get("scope", "private") not in PRIVACY_SCOPES or \
            not isinstance(privacy.get("pii", False), bool):
        raise ValueError(f"privacy must be {{pii: true|false, scope: {'|'.join(PRIVACY_SCOPES)}}}")
    node_props["privacy"] = {"pii": privacy.get("pii", False), "scope": privacy.get("scope", "private")}


def _edge_type(value, message: str | None = None) -> str:
    try:
        return EdgeType(value).value
    except ValueError:
        raise ValueError(message or f"edge type must be one of {', '.join(item.value for item in EdgeType)}") from None


def _words(text: str) -> set:
    """Latin words and Chinese character pairs of a text: enough to tell which memory a description means."""
    folded = normalize_text(text)
    words = set(re.findall(r"[a-z0-9]+", folded))
    for run in re.findall(r"[\u3400-\u9fff]+", folded):
        words.update(run[index: index + 2] for index in range(max(1, len(run) - 1)))
    return words


def _person(text: str) -> tuple[str, bool]:
    """(name, is a person known to be one): first person means the user."""
    name = FIRST_PERSON.get(text.strip().lower())
    return (name, True) if name else (text.strip(), False)


def _guess_type(name: str, fallback: str) -> str:
    """The type the extractor gives the name when it reads it as one entity, else `fallback`."""
    from memctl.r2g.extract import extract

    result = extract(name)
    if len(result.entities) == 1 and (result.entities[0].start, result.entities[0].end) == (0, len(name)):
        return result.entities[0].type
    return fallback


def _fallback(topic: str) -> str:
    from memctl.r2g.predicates import fallback_predicate

    return fallback_predicate(topic, None)


def _predicate(topic: str) -> str:
    """predicate.normalized of a tool call's topic: the lexicon's id when the topic is one of its forms."""
    from memctl.r2g.predicates import english_lemmatizer, lexicon

    table = lexicon()
    if _HAN.search(topic):
        match = table.chinese_at(topic, 0)
        if match is not None and match.end == len(topic):
            return match.entry.predicate
    else:
        lemma = english_lemmatizer()
        lemmas = [lemma(word) for word in topic.lower().split()]
        if lemmas:
            found = table.english_at(lemmas, 0, frozenset())
            if found is not None and found[1] == len(lemmas):
                return found[0].predicate
    return _fallback(topic)


def _normalise_time(value: str, ts, zh: bool) -> dict:
    from memctl.language.timenorm import find_times

    try:
        moment = datetime.fromisoformat(value)
        return {"expression": value, "value": moment.date().isoformat(), "granularity": "day"}
    except ValueError:
        pass
    times = find_times(value, ts, "zh" if zh else "en")
    if times:
        return {"expression": value, "value": times[0].value, "granularity": times[0].granularity}
    return {"expression": value, "value": None, "granularity": "unspecified"}
