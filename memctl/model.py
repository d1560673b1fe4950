"""The memory model of seed 001 §2: node and edge types, their records, and deterministic ids.

Ids are derived from content (type, tenant and a natural key), never from a counter or a clock, so that
`memctl r2g --rebuild` regenerates the same graph with the same ids and re-running a conversion is idempotent.
Records convert to plain dicts (msgpack-able) with `to_dict` and back with `from_dict`; `from_dict` also accepts
the seed's external JSON shapes (`tenant_id`, `raw_refs` with `source_id` and an `[start, end]` offset) so
summariser/linker agents can hand us nodes in the shape the seed documents.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from functools import lru_cache


class NodeType(str, Enum):
    EPISODE = "Episode"
    FACT = "Fact"
    PREFERENCE = "Preference"
    CONCEPT = "Concept"
    ENTITY = "Entity"
    TASK = "Task"
    META = "Meta"


class EdgeType(str, Enum):
    TEMPORAL_NEXT = "TEMPORAL_NEXT"
    ABOUT = "ABOUT"
    MENTIONS = "MENTIONS"
    CAUSES = "CAUSES"
    CAUSED_BY = "CAUSED_BY"
    SUPPORTS = "SUPPORTS"
    CONTRADICTS = "CONTRADICTS"
    DERIVED_FROM = "DERIVED_FROM"
    REFERS_TO = "REFERS_TO"
    SIMILAR_TO = "SIMILAR_TO"
    SAME_AS = "SAME_AS"
    VERSION_NEXT = "VERSION_NEXT"
    ACTIVE_OF = "ACTIVE_OF"
    AGENT = "AGENT"
    PATIENT = "PATIENT"
    LOCATION = "LOCATION"
    TIME = "TIME"
    MANNER = "MANNER"
    INSTRUMENT = "INSTRUMENT"
    RECIPIENT = "RECIPIENT"
    CAUSE = "CAUSE"
    BENEFICIARY = "BENEFICIARY"
    SUBJECT = "SUBJECT"
    VALUE = "VALUE"


# Semantic-role edges go from a Fact to the Entity (or Time entity) that fills the role (seed R2G-3).
ROLE_EDGES = frozenset(
    {
        EdgeType.AGENT,
        EdgeType.PATIENT,
        EdgeType.LOCATION,
        EdgeType.TIME,
        EdgeType.MANNER,
        EdgeType.INSTRUMENT,
        EdgeType.RECIPIENT,
        EdgeType.CAUSE,
        EdgeType.BENEFICIARY,
    }
)
ROLE_NAMES = tuple(sorted(role.value for role in ROLE_EDGES))
# A slot fact (subject, slot, value) → the Entity that holds the attribute, and the Entity its value names.
SLOT_EDGES = frozenset({EdgeType.SUBJECT, EdgeType.VALUE})

# Entity kinds the extractors produce (seed R2G-1 NER: Person/Org/Location/Object/Time/...).
ENTITY_TYPES = ("Person", "Location", "Organization", "Product", "Object", "Time", "Other")

PRIVACY_SCOPES = ("private", "team", "public")

# Short, readable id prefixes: an id tells its node type at a glance in traces and dumps.
_NODE_PREFIX = {
    NodeType.EPISODE: "ep",
    NodeType.FACT: "fact",
    NodeType.PREFERENCE: "pref",
    NodeType.CONCEPT: "con",
    NodeType.ENTITY: "ent",
    NodeType.TASK: "task",
    NodeType.META: "meta",
}
_ID_DIGEST_BYTES = 12  # 96 bits: collisions are negligible for any one tenant's graph


@lru_cache(maxsize=1 << 16)  # names and words repeat across a conversation
def normalize_text(text: str) -> str:
    """The key form of a name or text: NFKC (full-width → ASCII), case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _digest(*parts: object) -> str:
    # \x1f separates parts so that ("ab", "c") and ("a", "bc") never share a key.
    key = "\x1f".join("" if part is None else str(part) for part in parts)
    return hashlib.blake2b(key.encode("utf-8"), digest_size=_ID_DIGEST_BYTES).hexdigest()


def node_id(node_type: NodeType | str, tenant: str, *natural_key: object) -> str:
    """A stable node id: the same (type, tenant, natural key) always gives the same id."""
    if not isinstance(node_type, NodeType):
        node_type = NodeType(node_type)
    return f"{_NODE_PREFIX[node_type]}_{_digest(node_type.value, tenant, *natural_key)}"


@lru_cache(maxsize=1 << 16)  # a conversation names the same people and things again and again
def entity_id(tenant: str, name: str, entity_type: str) -> str:
    """Entities are deduplicated by (normalised name, type, tenant) (seed R2G-2)."""
    return node_id(NodeType.ENTITY, tenant, normalize_text(name), entity_type)


@lru_cache(maxsize=1 << 12)  # a turn's id is asked for again by its TEMPORAL_NEXT edges to both neighbours
def episode_id(tenant: str, raw_id: str, start: int, end: int) -> str:
    """One Episode per turn: the turn's raw chunk and character span identify it."""
    return node_id(NodeType.EPISODE, tenant, raw_id, start, end)


def concept_id(tenant: str, concept_key: str) -> str:
    return node_id(NodeType.CONCEPT, tenant, concept_key)


def edge_id(src: str, edge_type: EdgeType | str, dst: str) -> str:
    """At most one edge of a type between two nodes: a repeated link updates the edge rather than adding one."""
    return f"edge_{_digest(src, EdgeType(edge_type).value, dst)}"


def fingerprint(normalized_text: str, node_type: NodeType | str, time_bucket: str | None) -> str:
    """R2G-4 duplicate key: (normalised text, type, time bucket). A hit raises `frequency` instead of adding a node."""
    return _digest("fp", normalize_text(normalized_text), NodeType(node_type).value, time_bucket or "")


def edge_weight(confidence: float, source_trust: float, recency_boost: float, weights=None) -> float:
    """R2G-4: edge.weight = 0.5*conf_extract + 0.3*source_trust + 0.2*recency_boost, each input in [0, 1];
    `weights` (a mapping of confidence, source_trust and recency_boost) replaces the three factors (default:
    the r2g.edge_weight settings)."""
    for name, value in (("confidence", confidence), ("source_trust", source_trust), ("recency_boost", recency_boost)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be within [0, 1], got {value!r}")
    if weights is None:
        from memctl.settings import defaults

        weights = defaults().r2g.edge_weight
    return (weights["confidence"] * confidence + weights["source_trust"] * source_trust
            + weights["recency_boost"] * recency_boost)


@dataclass(slots=True)
class RawRef:
    """A character span of one raw chunk (seed §3.0: raw_id, offset, length)."""

    raw_id: str
    offset: int
    length: int

    @classmethod
    def from_dict(cls, data: dict) -> RawRef:
        raw_id = data.get("raw_id", data.get("source_id"))
        offset = data.get("offset", 0)
        if isinstance(offset, (list, tuple)):
            # seed §2.3 form: {"source_id": ..., "offset": [start, end]}
            if len(offset) != 2:
                raise ValueError("raw_refs offset must be an integer or a [start, end] pair")
            start, end = offset
            return cls(_require_str(raw_id, "raw_id"), _require_count(start, "offset"), _require_count(end - start, "length"))
        return cls(
            _require_str(raw_id, "raw_id"),
            _require_count(offset, "offset"),
            _require_count(data.get("length", 0), "length"),
        )


@dataclass(slots=True)
class Node:
    """A memory node (seed §2.3). Type-specific content lives in `attributes`:

    Fact: predicate {normalized, raw}, negation, modality, time {value, granularity, expression}, roles; a slot
    fact instead subject, subject_type, slot, slot_surface, lexicon, value, value_entity, polarity, time.
    Preference: polarity (+1/-1), object, kind. Entity: entity_type, aliases, canonical. Concept: key, labels.
    """

    id: str
    type: NodeType
    tenant: str
    title: str = ""
    text: str = ""
    raw_refs: list[RawRef] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    sentiment: dict = field(default_factory=lambda: {"valence": 0.0, "arousal": 0.0})
    importance: float = 0.5
    confidence: float = 1.0
    recency: str | None = None
    frequency: int = 1
    privacy: dict = field(default_factory=lambda: {"pii": False, "scope": "private"})
    provenance: dict = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    attributes: dict = field(default_factory=dict)
    created_at: str | None = None
    updated_at: str | None = None
    deleted: bool = False

    def to_dict(self) -> dict:
        data = asdict(self)
        data["type"] = self.type.value
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Node:
        """Build a Node from a stored record or an external agent's JSON; ValueError says which field is wrong."""
        values = _known_fields(cls, data, "node", NodeType, ignored={"embeddings"})
        values["raw_refs"] = [RawRef.from_dict(ref) for ref in _require_list(data.get("raw_refs", []), "raw_refs")]
        for name in ("keywords", "entities", "tags"):
            values[name] = [_require_str(item, name) for item in _require_list(data.get(name, []), name)]
        for name in ("importance", "confidence"):
            if name in data:
                values[name] = _require_unit(data[name], name)
        privacy = values.get("privacy", {"scope": "private"})
        if not isinstance(privacy, dict) or privacy.get("scope", "private") not in PRIVACY_SCOPES:
            raise ValueError(f"privacy.scope must be one of {', '.join(PRIVACY_SCOPES)}")
        _require_str(values.get("id"), "id")
        _require_str(values.get("tenant"), "tenant")
        return cls(**values)


@dataclass(slots=True)
class Edge:
    """A typed, weighted, directed relation (seed §2.4)."""

    id: str
    src: str
    dst: str
    type: EdgeType
    tenant: str
    weight: float = 0.5
    confidence: float = 1.0
    temporal: dict = field(default_factory=lambda: {"since": None, "until": None})
    provenance: dict = field(default_factory=dict)
    attributes: dict = field(default_factory=dict)
    created_at: str | None = None
    updated_at: str | None = None
    deleted: bool = False

    def to_dict(self) -> dict:
        data = asdict(self)
        data["type"] = self.type.value
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Edge:
        values = _known_fields(cls, data, "edge", EdgeType)
        for name in ("src", "dst", "tenant"):
            _require_str(values.get(name), name)
        if "id" not in values:
            values["id"] = edge_id(values["src"], values["type"], values["dst"])
        for name in ("weight", "confidence"):
            if name in data:
                values[name] = _require_unit(data[name], name)
        return cls(**values)


def make_edge(src: str, edge_type: EdgeType | str, dst: str, tenant: str, **values) -> Edge:
    """An edge with its deterministic id."""
    edge_type = EdgeType(edge_type)
    return Edge(id=edge_id(src, edge_type, dst), src=src, dst=dst, type=edge_type, tenant=tenant, **values)


def _known_fields(cls, data, noun: str, types, ignored: set = frozenset()) -> dict:
    """The fields of dataclass `cls` that `data` gives, `tenant_id` accepted for `tenant` and `type` parsed into
    the `types` enum; ValueError names fields `cls` does not know (besides `ignored`) or a type it does not."""
    if not isinstance(data, dict):
        raise ValueError(f"{'an' if noun[0] in 'aeiou' else 'a'} {noun} must be a JSON object")
    known = {item.name for item in fields(cls)}
    values = {key: value for key, value in data.items() if key in known}
    if "tenant" not in values and "tenant_id" in data:
        values["tenant"] = data["tenant_id"]
    unknown = set(data) - known - {"tenant_id"} - set(ignored)
    if unknown:
        raise ValueError(f"unknown {noun} field(s): {', '.join(sorted(unknown))}")
    try:
        values["type"] = types(data.get("type"))
    except ValueError:
        raise ValueError(f"{noun} type must be one of {', '.join(item.value for item in types)}") from None
    return values


def _require_str(value, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string")
    return value


def _require_list(value, name: str) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{name} must be a list")
    return value


def _require_count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer")
    return value


def _require_unit(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a number within [0, 1]")
    return float(value)
