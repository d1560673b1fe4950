"""`memctl r2g` through the store: seed 001 R2G-7 end to end, Episodes, index documents, weights, TEMPORAL_NEXT."""

from __future__ import annotations

import pytest

from engine.raw import RawStore
from memctl.model import concept_id, edge_weight, entity_id, episode_id
from r2g_testkit import TENANT, convert, dump, ingest, node, nodes_of_type, open_memory, out_edges, write_jsonl


def _episodes_by_source(home) -> dict:
    return {episode["props"]["attributes"]["source_id"]: episode for episode in nodes_of_type(home, "Episode").values()}


def _fact(home, predicate: str) -> dict:
    [fact] = [fact for fact in nodes_of_type(home, "Fact").values()
              if fact["props"]["attributes"]["predicate"]["normalized"] == predicate]
    return fact


def test_r2g7_chinese_sentence_becomes_entities_fact_and_episode(isolated_home):
    ingest(isolated_home, texts=["小明在公园里踢足球"])
    summary = convert(isolated_home)
    assert summary["chunks_new"] == 1 and summary["turns"] == 1
    xiaoming = entity_id(TENANT, "小明", "Person")
    entity = node(isolated_home, xiaoming)
    assert entity["type"] == "Entity"
    assert (entity["props"]["title"], entity["props"]["attributes"]["entity_type"]) == ("小明", "Person")
    # issue 18: the common nouns are words of the fact (its title and roles), with no Entity node and no edge
    assert node(isolated_home, entity_id(TENANT, "公园", "Location")) is None
    assert node(isolated_home, entity_id(TENANT, "足球", "Object")) is None
    fact = _fact(isolated_home, "play_soccer")
    assert fact["props"]["attributes"]["negation"] is False
    assert fact["props"]["attributes"]["roles"] == {"AGENT": ["小明"], "PATIENT": ["足球"], "LOCATION": ["公园"]}
    assert fact["props"]["title"] == "play_soccer(agent 小明; patient 足球; location 公园)"
    roles = {edge for edge in out_edges(isolated_home, fact["key"]) if edge[0] in ("AGENT", "PATIENT", "LOCATION")}
    assert roles == {("AGENT", xiaoming)}
    home = isolated_home
    [episode] = nodes_of_type(home, "Episode").values()
    with open_memory(home, writable=False) as memory:
        [(raw_id, _)] = list(RawStore(memory.store).scan())
    assert ("DERIVED_FROM", raw_id) in out_edges(home, episode["key"])
    assert node(home, raw_id)["type"] == "RawChunk"
    assert ("DERIVED_FROM", episode["key"]) in out_edges(home, fact["key"])
    assert ("ABOUT", concept_id(TENANT, "ball_sports")) in out_edges(home, episode["key"])
    ref = episode["props"]["raw_refs"][0]
    assert (ref["raw_id"], ref["offset"], ref["length"]) == (raw_id, 0, len("小明在公园里踢足球".encode()))
    assert episode["key"] == episode_id(TENANT, raw_id, 0, ref["length"])


def test_r2g7_english_sentence_with_a_time(isolated_home, tmp_path):
    path = write_jsonl(tmp_path / "tom.jsonl", [
        {"id": "t1", "speaker": "Ann", "ts": "2023-05-10T14:00:00",
         "text": "Tom played soccer in the park yesterday."}])
    ingest(isolated_home, path)
    convert(isolated_home)
    fact = _fact(isolated_home, "play_soccer")
    edges = dict(out_edges(isolated_home, fact["key"], ["AGENT", "PATIENT", "LOCATION", "TIME"]))
    assert edges["AGENT"] == entity_id(TENANT, "Tom", "Person")
    assert edges["TIME"] == entity_id(TENANT, "2023-05-09", "Time")
    # issue 18: soccer and the park are words of the fact (title, roles, keywords), no Entity nodes nor edges
    assert "PATIENT" not in edges and "LOCATION" not in edges
    attributes = fact["props"]["attributes"]
    assert attributes["roles"]["PATIENT"] == ["soccer"] and attributes["roles"]["LOCATION"] == ["park"]
    assert fact["props"]["title"] == "play_soccer(agent Tom; patient soccer; location park; time 2023-05-09)"
    assert {"soccer", "park"} <= set(fact["props"]["keywords"])
    assert {entity["props"]["title"] for entity in nodes_of_type(isolated_home, "Entity").values()} == {"Tom", "2023-05-09"}
    assert fact["props"]["attributes"]["time"]["value"] == "2023-05-09"
    [episode] = nodes_of_type(isolated_home, "Episode").values()
    assert episode["props"]["recency"] == "2023-05-10T14:00:00"
    assert episode["props"]["frequency"] == 1
    assert episode["props"]["raw_refs"][0]["source_id"] == "t1"
    assert episode["props"]["raw_refs"][0]["ts"] == "2023-05-10T14:00:00"


def test_episode_text_is_a_summary_of_a_long_turn(isolated_home, tmp_path):
    long_turn = " ".join(f"Sentence number {index} talks about the garden and my tomatoes." for index in range(20))
    ingest(isolated_home, write_jsonl(tmp_path / "long.jsonl", [{"speaker": "Bo", "text": long_turn}]))
    convert(isolated_home)
    [episode] = nodes_of_type(isolated_home, "Episode").values()
    assert 0 < len(episode["props"]["text"]) < len(long_turn)
    assert episode["props"]["raw_refs"][0]["length"] == len(long_turn.encode())


def test_edge_weight_follows_r2g4(isolated_home, tmp_path):
    ingest(isolated_home, write_jsonl(tmp_path / "a.jsonl", [
        {"speaker": "Ann", "ts": "2023-05-10T14:00:00", "text": "Tom played soccer in the park."}]))
    convert(isolated_home)
    fact = _fact(isolated_home, "play_soccer")
    edges = dump(isolated_home)["edges"]
    [agent] = [edge for edge in edges.values() if edge[0] == fact["key"] and edge[1] == "AGENT"]
    confidence = fact["props"]["confidence"]
    assert agent[4] == pytest.approx(confidence)
    assert agent[3] == pytest.approx(edge_weight(confidence, 0.8, 1.0), abs=1e-6)


def _conversation(turns):
    return [{"conv_id": "c1", "id": f"D{session}:{number}", "speaker": speaker, "ts": ts, "text": text}
            for session, number, speaker, ts, text in turns]


CONVERSATION = _conversation([
    (1, 1, "Ann", "2023-05-01T10:00:00", "I adopted a puppy named Biscuit."),
    (1, 2, "Ben", "2023-05-01T10:00:00", "Congrats! What breed is Biscuit?"),
    (1, 3, "Ben", "2023-05-01T10:00:00", "I love corgis."),
    (2, 1, "Ann", "2023-05-08T09:00:00", "Biscuit is a corgi and he loves the beach."),
])


def test_temporal_next_chains_a_conversation_with_session_and_speaker_flags(isolated_home, tmp_path):
    ingest(isolated_home, write_jsonl(tmp_path / "c.jsonl", CONVERSATION))
    convert(isolated_home)
    episodes = _episodes_by_source(isolated_home)
    edges = {(edge[0], edge[2]): edge[5] for edge in dump(isolated_home)["edges"].values()
             if edge[1] == "TEMPORAL_NEXT"}
    key = {source: episode["key"] for source, episode in episodes.items()}
    assert edges == {
        (key["D1:1"], key["D1:2"]): {"same_session": True, "speaker_change": True},
        (key["D1:2"], key["D1:3"]): {"same_session": True, "speaker_change": False},
        (key["D1:3"], key["D2:1"]): {"same_session": False, "speaker_change": True},
    }


def test_episode_documents_have_turn_speaker_date_and_reply_context(isolated_home, tmp_path):
    ingest(isolated_home, write_jsonl(tmp_path / "c.jsonl", CONVERSATION))
    convert(isolated_home)
    documents = dump(isolated_home)["documents"]
    episodes = _episodes_by_source(isolated_home)
    first = documents[episodes["D1:1"]["key"]]
    assert first[0] == "Episode"
    assert set(first[1]) >= {"turn", "speaker", "date", "title", "text", "keywords", "entities", "context"}
    # D1:3 (Ben) follows Ben's own turn and ends the session: no context.
    assert "context" not in documents[episodes["D1:3"]["key"]][1]
    with open_memory(isolated_home, writable=False) as memory:
        from memctl.r2g.nodeindex import open_index

        index = open_index(memory.store, memory.config)
        # "breed" is only in D1:2, the reply that D1:1 got: D1:1 is found through its context field.
        found = [hit.key for hit in index.search("breed", top=5, types=["Episode"])]
        assert found[0] == episodes["D1:2"]["key"] and episodes["D1:1"]["key"] in found
        assert episodes["D1:3"]["key"] not in found
        assert [hit.key for hit in index.search("May 2023 Biscuit corgi", top=1, types=["Episode"])] == \
            [episodes["D2:1"]["key"]]


def test_facts_preferences_and_concepts_are_indexed(isolated_home, tmp_path):
    ingest(isolated_home, write_jsonl(tmp_path / "c.jsonl", CONVERSATION))
    convert(isolated_home)
    types = {document[0] for document in dump(isolated_home)["documents"].values()}
    assert types == {"Episode", "Fact", "Preference", "Concept"}
    [preference] = nodes_of_type(isolated_home, "Preference").values()
    assert preference["props"]["attributes"]["holder"] == "Ben"
    assert preference["props"]["attributes"]["polarity"] == 1


def test_entities_are_deduplicated_with_aliases_and_frequency(isolated_home, tmp_path):
    ingest(isolated_home, write_jsonl(tmp_path / "w.jsonl", [
        {"speaker": "用户", "ts": "2025-09-15T10:00:00", "text": "我的电脑升级到Win11之后蓝牙打不开了。"},
        {"speaker": "用户", "ts": "2025-09-16T10:00:00", "text": "Windows 11 的蓝牙还是不行。"}]))
    convert(isolated_home)
    windows = node(isolated_home, entity_id(TENANT, "Windows 11", "Product"))
    assert windows["props"]["frequency"] == 2
    assert "Win11" in windows["props"]["attributes"]["aliases"]
    assert len(windows["props"]["raw_refs"]) == 2


def test_assistant_turns_state_no_preferences(isolated_home, tmp_path):
    ingest(isolated_home, write_jsonl(tmp_path / "p.jsonl", [
        {"role": "user", "text": "以后优先中文回答。"},
        {"role": "assistant", "text": "好的，以后优先用中文回答你。"}]))
    convert(isolated_home)
    [preference] = nodes_of_type(isolated_home, "Preference").values()
    assert preference["props"]["title"] == "以后优先中文回答"
    assert preference["props"]["attributes"]["holder"] == "user"
