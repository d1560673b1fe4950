"""The memory model: types, deterministic ids, record round trips and validation of external records."""

import pytest

from memctl.model import (ROLE_EDGES, SLOT_EDGES, Edge, EdgeType, Node, NodeType, RawRef, concept_id, edge_id, edge_weight,
                          entity_id, episode_id, fingerprint, make_edge, node_id, normalize_text)


def test_types_cover_the_seed_and_the_slot_facts():
    assert {item.value for item in NodeType} == {"Episode", "Fact", "Preference", "Concept", "Entity", "Task", "Meta"}
    expected_edges = {"TEMPORAL_NEXT", "ABOUT", "MENTIONS", "CAUSES", "CAUSED_BY", "SUPPORTS", "CONTRADICTS",
                      "DERIVED_FROM", "REFERS_TO", "SIMILAR_TO", "SAME_AS", "VERSION_NEXT", "ACTIVE_OF", "AGENT",
                      "PATIENT", "LOCATION", "TIME", "MANNER", "INSTRUMENT", "RECIPIENT", "CAUSE", "BENEFICIARY"}
    slot_edges = {"SUBJECT", "VALUE"}  # issue 18: a slot fact → its holder and the entity its value names
    assert {item.value for item in EdgeType} == expected_edges | slot_edges
    assert {edge.value for edge in SLOT_EDGES} == slot_edges
    assert {role.value for role in ROLE_EDGES} == {"AGENT", "PATIENT", "LOCATION", "TIME", "MANNER", "INSTRUMENT",
                                                   "RECIPIENT", "CAUSE", "BENEFICIARY"}


def test_ids_are_stable_and_content_derived():
    assert entity_id("t1", "Windows 11", "Product") == entity_id("t1", "  windows   11 ", "Product")
    assert entity_id("t1", "Ｗｉｎｄｏｗｓ 11", "Product") == entity_id("t1", "Windows 11", "Product")
    assert entity_id("t1", "Windows 11", "Product") != entity_id("t2", "Windows 11", "Product")
    assert entity_id("t1", "Apple", "Organization") != entity_id("t1", "Apple", "Object")
    assert episode_id("t1", "raw_ab", 0, 10).startswith("ep_")
    assert concept_id("t1", "ball_sports") == concept_id("t1", "ball_sports") != concept_id("t2", "ball_sports")
    assert node_id(NodeType.FACT, "t1", "ab", "c") != node_id(NodeType.FACT, "t1", "a", "bc")
    assert edge_id("a", EdgeType.ABOUT, "b") == edge_id("a", "ABOUT", "b") != edge_id("b", "ABOUT", "a")
    assert fingerprint("Tom plays soccer", "Fact", "2023-W19") == fingerprint("tom  plays SOCCER", NodeType.FACT, "2023-W19")


def test_edge_weight_formula():
    assert edge_weight(1.0, 0.0, 0.0) == pytest.approx(0.5)
    assert edge_weight(0.8, 0.5, 1.0) == pytest.approx(0.5 * 0.8 + 0.3 * 0.5 + 0.2)
    with pytest.raises(ValueError):
        edge_weight(1.5, 0, 0)


def test_node_round_trip():
    node = Node(id=node_id("Episode", "t1", "x"), type=NodeType.EPISODE, tenant="t1", title="t", text="summary",
                raw_refs=[RawRef("raw_1", 3, 10)], keywords=["蓝牙"], importance=0.7)
    data = node.to_dict()
    assert data["type"] == "Episode" and data["raw_refs"] == [{"raw_id": "raw_1", "offset": 3, "length": 10}]
    assert Node.from_dict(data) == node


def test_node_from_the_seed_json_shape():
    node = Node.from_dict({
        "id": "n1", "type": "Fact", "tenant_id": "t1", "text": "BTHUSB EventID=17",
        "raw_refs": [{"source_id": "conv_2025-09-15#34", "offset": [102, 215]}],
        "embeddings": [{"name": "text", "model": "m", "vector_id": "v", "dim": 3}],
        "keywords": ["蓝牙"], "importance": 0.85, "confidence": 0.9,
    })
    assert node.tenant == "t1" and node.raw_refs == [RawRef("conv_2025-09-15#34", 102, 113)]


@pytest.mark.parametrize("record, message", [
    ({"id": "n", "type": "Thing", "tenant": "t"}, "node type"),
    ({"id": "n", "type": "Fact", "tenant": "t", "importance": 2}, "importance"),
    ({"id": "n", "type": "Fact", "tenant": "t", "keywords": "x"}, "keywords"),
    ({"id": "n", "type": "Fact", "tenant": "t", "colour": "red"}, "unknown"),
    ({"type": "Fact", "tenant": "t"}, "id"),
    ({"id": "n", "type": "Fact", "tenant": "t", "raw_refs": [{"raw_id": "r", "offset": -1}]}, "offset"),
    ({"id": "n", "type": "Fact", "tenant": "t", "privacy": {"scope": "world"}}, "privacy"),
])
def test_invalid_nodes_are_refused_with_the_field_named(record, message):
    with pytest.raises(ValueError, match=message):
        Node.from_dict(record)


def test_edges():
    edge = make_edge("a", "SUPPORTS", "b", "t1", weight=0.7)
    assert Edge.from_dict(edge.to_dict()) == edge
    external = Edge.from_dict({"tenant_id": "t1", "src": "idA", "dst": "idB", "type": "ABOUT", "weight": 0.7})
    assert external.id == edge_id("idA", "ABOUT", "idB")
    with pytest.raises(ValueError, match="edge type"):
        Edge.from_dict({"tenant": "t1", "src": "a", "dst": "b", "type": "LIKES"})
    with pytest.raises(ValueError, match=r"unknown edge field\(s\): colour, embeddings"):
        Edge.from_dict({"tenant": "t1", "src": "a", "dst": "b", "type": "ABOUT", "colour": 1, "embeddings": []})


@pytest.mark.parametrize("model, message", [(Node, "a node must be a JSON object"),
                                            (Edge, "an edge must be a JSON object")])
def test_records_that_are_not_objects_are_refused(model, message):
    with pytest.raises(ValueError, match=message):
        model.from_dict(["not", "an", "object"])


def test_a_node_may_carry_embeddings_an_edge_may_not():
    node = Node.from_dict({"id": "n", "type": "Fact", "tenant_id": "t", "embeddings": {"text": [0.1]}})
    assert node.tenant == "t"


def test_normalize_text():
    assert normalize_text("  Ｗｉｎ１１  蓝牙 ") == "win11 蓝牙"
