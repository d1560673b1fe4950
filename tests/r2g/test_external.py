"""`memctl r2g --from jsonl`: nodes and edges from an external summariser/linker, validated before writing."""

from __future__ import annotations

import io
import json

import pytest

from engine.errors import InputError
from engine.raw import RawStore
from memctl.model import entity_id
from r2g_testkit import TENANT, convert, dump, ingest, node, nodes_of_type, open_memory, out_edges, write_jsonl


def _import(home, lines: list, name: str = "agent.jsonl") -> dict:
    data = "".join((line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n" for line in lines)
    with open_memory(home) as memory:
        return memory.r2g("jsonl", "-", stdin=io.BytesIO(data.encode("utf-8")))


def _refused(home, lines: list) -> InputError:
    before = dump(home)
    with pytest.raises(InputError) as caught:
        _import(home, lines)
    assert dump(home) == before
    return caught.value


SEED_000 = [
    {"name": "create_memory", "ts": "2025-11-05T20:00:00",
     "arguments": {"subject": "我", "memory_type": "事实", "topic": "情绪", "object": "不开心", "attributes": {"时间": "今天"}}},
    {"name": "create_memory", "ts": "2025-11-05T20:00:00",
     "arguments": {"subject": "我", "memory_type": "事件", "topic": "摔东西", "attributes": {"时间": "今天"}}},
    {"name": "link_memories", "arguments": {"source_memory_description": "我今天不开心",
                                            "target_memory_description": "我摔东西", "relation_type": "导致"}},
    {"tool": "create_memory", "arguments": json.dumps(
        {"subject": "我", "memory_type": "事件", "topic": "购物", "object": "水果",
         "attributes": {"时间": "2025-11-04", "地点": "超市", "物品": "苹果,香蕉"}, "importance": 0.4},
        ensure_ascii=False)},
]


def test_seed_000_tool_calls_become_facts_roles_and_a_causal_link(isolated_home):
    summary = _import(isolated_home, SEED_000)
    assert summary["nodes"] >= 3 and summary["edges"] >= 6
    facts = {fact["props"]["attributes"]["topic"]: fact for fact in nodes_of_type(isolated_home, "Fact").values()}
    upset, smash, shopping = facts["情绪"], facts["摔东西"], facts["购物"]
    user = entity_id(TENANT, "用户", "Person")
    assert ("AGENT", user) in out_edges(isolated_home, upset["key"])
    assert ("CAUSES", smash["key"]) in out_edges(isolated_home, upset["key"])
    assert upset["props"]["attributes"]["time"]["value"] == "2025-11-05"
    shop_edges = out_edges(isolated_home, shopping["key"])
    assert ("LOCATION", entity_id(TENANT, "超市", "Location")) in shop_edges
    assert {("PATIENT", entity_id(TENANT, name, "Object")) for name in ("水果", "苹果", "香蕉")} <= set(shop_edges)
    assert ("TIME", entity_id(TENANT, "2025-11-04", "Time")) in shop_edges
    documents = dump(isolated_home)["documents"]
    assert documents[shopping["key"]][0] == "Fact"


def test_node_and_edge_lines_of_seed_001_with_raw_refs(isolated_home, tmp_path):
    ingest(isolated_home, write_jsonl(tmp_path / "c.jsonl", [
        {"id": "m1", "speaker": "用户", "ts": "2025-09-15T10:35:00", "text": "我的电脑升级到Win11之后蓝牙打不开了"}]))
    with open_memory(isolated_home, writable=False) as memory:
        [(raw_id, record)] = list(RawStore(memory.store).scan())
    lines = [
        {"tenant_id": TENANT, "ref": "ep", "node": {"type": "Episode", "text": "Win11 升级后蓝牙失效",
                                                   "keywords": ["蓝牙", "Win11"], "importance": 0.6,
                                                   "raw_refs": [{"source_id": "m1"}]}},
        {"ref": "bt", "node": {"type": "Concept", "title": "蓝牙故障", "attributes": {"key": "bt_failure"}}},
        {"edge": {"src": "ep", "dst": "bt", "type": "ABOUT", "weight": 0.7}},
        {"node": {"type": "Entity", "title": "Windows 11", "attributes": {"entity_type": "Product"},
                  "raw_refs": [{"raw_id": raw_id, "offset": 0, "length": 3}]}},
    ]
    _import(isolated_home, lines)
    [episode] = [item for item in nodes_of_type(isolated_home, "Episode").values()]
    assert episode["props"]["raw_refs"][0]["source_id"] == "m1"
    edges = out_edges(isolated_home, episode["key"])
    assert ("DERIVED_FROM", raw_id) in edges
    assert node(isolated_home, raw_id)["type"] == "RawChunk"
    about = [edge for edge in dump(isolated_home)["edges"].values() if edge[1] == "ABOUT"]
    assert about[0][3] == pytest.approx(0.7)
    # The agent's Entity is R2G's: converting the chunk later merges into it.
    convert(isolated_home)
    windows = node(isolated_home, entity_id(TENANT, "Windows 11", "Product"))
    assert windows["props"]["frequency"] == 2
    with open_memory(isolated_home, writable=False) as memory:
        from memctl.r2g.nodeindex import open_index

        hits = open_index(memory.store, memory.config).search("蓝牙失效", top=3, types=["Episode"])
        assert episode["key"] in [hit.key for hit in hits]


@pytest.mark.parametrize("lines, line_number, message", [
    (['{"node": {"type": "Fact", "text": "ok"}}', "{not json"], 2, "invalid JSON"),
    ([{"node": {"type": "Thought", "text": "x"}}], 1, "node type must be one of"),
    ([{"node": {"type": "Fact"}}], 1, "title or a text"),
    ([{"node": {"type": "Fact", "text": "x", "importance": 2}}], 1, "importance"),
    ([{"node": {"type": "Fact", "text": "x", "colour": "red"}}], 1, "unknown node field"),
    ([{"node": {"type": "Fact", "text": "x"}}, {"edge": {"src": "a", "dst": "b", "type": "ABOUT"}}], 2,
     "neither a node of this file nor a stored node"),
    ([{"node": {"type": "Fact", "text": "x", "raw_refs": [{"raw_id": "raw_0000000000000000"}]}}], 1,
     "no stored raw chunk"),
    ([{"node": {"type": "Fact", "text": "x", "raw_refs": [{"source_id": "nowhere"}]}}], 1, "no stored turn"),
    ([{"tenant_id": "t1", "node": {"type": "Fact", "text": "x"}}], 1, "not this store's tenant"),
    ([{"name": "create_memory", "arguments": {"subject": "我", "memory_type": "梦想", "topic": "飞"}}], 1,
     "memory_type"),
    ([{"name": "create_memory", "arguments": {"memory_type": "事件", "topic": "飞"}}], 1, "subject is required"),
    ([{"name": "link_memories", "arguments": {"source": "x", "target": "y", "relation_type": "因为"}}], 1,
     "no memory matches"),
    ([{"name": "forget_memory", "arguments": {}}], 1, "unknown tool"),
    ([], None, "no node or edge"),
])
def test_bad_lines_are_refused_with_their_number_and_nothing_is_stored(isolated_home, lines, line_number, message):
    ingest(isolated_home, texts=["小明在公园里踢足球"])
    convert(isolated_home)
    error = _refused(isolated_home, lines)
    assert message in str(error)
    if line_number is not None:
        assert error.where == f"<stdin>:{line_number}"


def test_a_span_outside_its_chunk_is_refused(isolated_home):
    ingest(isolated_home, texts=["小明在公园里踢足球"])
    with open_memory(isolated_home, writable=False) as memory:
        [(raw_id, record)] = list(RawStore(memory.store).scan())
    error = _refused(isolated_home, [{"node": {"type": "Fact", "text": "x", "raw_refs": [
        {"raw_id": raw_id, "offset": record["len_bytes"] - 2, "length": 10}]}}])
    assert "outside" in str(error) and error.where == "<stdin>:1"


def test_importing_the_same_file_twice_changes_nothing_and_rebuild_replays_it(isolated_home):
    ingest(isolated_home, texts=["小明在公园里踢足球"])
    convert(isolated_home)
    assert not _import(isolated_home, SEED_000)["already_imported"]
    before = dump(isolated_home)
    assert _import(isolated_home, SEED_000)["already_imported"]
    assert dump(isolated_home) == before
    summary = convert(isolated_home, rebuild=True)
    assert summary["imports_replayed"] == 1
    assert dump(isolated_home) == before
