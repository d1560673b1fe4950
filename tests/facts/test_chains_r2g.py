"""Chains maintained by `r2g` and `remember`, in the batch that writes the claims: out-of-order ingestion, no
cross-slot invalidation, multi-valued slots, idempotence, rebuild."""

from __future__ import annotations

from facts_testkit import chain_edges, chains, conversation, open_memory, remember_files, tree_digest

JANUARY = [("2024-01-10T09:00:00", "我的住址是北京。")]
JUNE = [("2024-06-10T09:00:00", "我的住址是上海。")]


def test_an_older_conversation_converted_after_a_newer_one_never_becomes_active(tmp_path):
    newer, older = conversation(tmp_path / "june.jsonl", "june", JUNE), \
        conversation(tmp_path / "january.jsonl", "january", JANUARY)
    out_of_order, in_order = tmp_path / "a", tmp_path / "b"
    remember_files(out_of_order, newer)
    assert chains(out_of_order)["residence"] == [("上海", "active", "2024-06-10T09:00:00")]
    remember_files(out_of_order, older)
    expected = [("北京", "superseded", "2024-01-10T09:00:00"), ("上海", "active", "2024-06-10T09:00:00")]
    assert chains(out_of_order)["residence"] == expected
    remember_files(in_order, older, newer)
    assert chains(in_order)["residence"] == expected
    assert chain_edges(out_of_order) == chain_edges(in_order) == {
        ("用户", "ACTIVE_OF", "上海", '{"slot": "residence"}'), ("北京", "VERSION_NEXT", "上海", "{}"),
        ("北京", "CONTRADICTS", "上海", '{"dimension": "time"}'), ("上海", "CONTRADICTS", "北京", '{"dimension": "time"}')}


def test_a_value_that_comes_back_is_in_force_again_with_two_periods(tmp_path):
    path = conversation(tmp_path / "c.jsonl", "c", JANUARY + JUNE + [("2024-12-01T09:00:00", "我的住址是北京。")])
    remember_files(tmp_path / "home", path)
    assert chains(tmp_path / "home")["residence"] == [
        ("北京", "active", "2024-01-10T09:00:00"), ("上海", "superseded", "2024-06-10T09:00:00"),
        ("北京", "active", "2024-12-01T09:00:00")]
    with open_memory(tmp_path / "home", writable=False) as memory:
        beijing = next(row for row in memory.facts.list() if row["value"] == "北京")
    assert beijing["periods"] == [["2024-01-10T09:00:00", "2024-06-10T09:00:00"], ["2024-12-01T09:00:00", None]]
    assert {edge[:3] for edge in chain_edges(tmp_path / "home")} >= {
        ("用户", "ACTIVE_OF", "北京"), ("北京", "VERSION_NEXT", "上海"), ("上海", "VERSION_NEXT", "北京")}


def test_a_new_employer_does_not_end_the_residence(tmp_path):
    path = conversation(tmp_path / "c.jsonl", "c", JANUARY + [("2024-02-01T09:00:00", "我的公司是阿里巴巴。"),
                                                              ("2024-08-01T09:00:00", "我的公司是腾讯。")])
    remember_files(tmp_path / "home", path)
    found = chains(tmp_path / "home")
    assert found["residence"] == [("北京", "active", "2024-01-10T09:00:00")]
    assert [(value, state) for value, state, _ in found["employer"]] == [("阿里巴巴", "superseded"), ("腾讯", "active")]


def test_values_of_a_multi_valued_slot_accumulate(tmp_path):
    path = conversation(tmp_path / "c.jsonl", "c", [("2024-01-01T09:00:00", "我的宠物是猫。"),
                                                    ("2024-03-01T09:00:00", "我的宠物是狗。")])
    remember_files(tmp_path / "home", path)
    assert chains(tmp_path / "home")["pet"] == [("猫", "active", "2024-01-01T09:00:00"),
                                                ("狗", "active", "2024-03-01T09:00:00")]
    assert {edge[:3] for edge in chain_edges(tmp_path / "home")} == {
        ("用户", "ACTIVE_OF", "猫"), ("用户", "ACTIVE_OF", "狗"), ("猫", "VERSION_NEXT", "狗")}


def test_r2g_twice_writes_nothing_and_a_batch_without_claims_leaves_the_chains_alone(tmp_path):
    home = tmp_path / "home"
    remember_files(home, conversation(tmp_path / "a.jsonl", "a", JANUARY + JUNE))
    with open_memory(home) as memory:
        sequence = memory.store.sequence
        before = tree_digest(memory.store.path)
        assert memory.r2g()["chunks_new"] == 0
        assert memory.store.sequence == sequence
    assert tree_digest(home / "tenants" / "default") == before
    with open_memory(home) as memory:
        record = memory.store.get("facts.chain", _residence_chain(memory))
        memory.ingest([str(conversation(tmp_path / "b.jsonl", "b", [("2024-07-01T09:00:00", "今天天气不错。")]))])
        memory.r2g()
        assert memory.store.get("facts.chain", _residence_chain(memory)) == record


def test_a_chain_recomputed_without_a_change_writes_nothing(tmp_path):
    from engine.graph.api import GraphStore
    from facts_testkit import FACTS
    from memctl.facts.maintain import update_chains
    from memctl.r2g.draft import GraphDraft

    home = tmp_path / "home"
    remember_files(home, conversation(tmp_path / "a.jsonl", "a", JANUARY + JUNE))
    with open_memory(home) as memory:
        draft = GraphDraft(GraphStore(memory.store), None)
        events = update_chains(draft, "default", FACTS, "test", 0.0, {_residence_chain(memory): ()})
    assert (events, draft.nodes, draft.edges, draft.removed_edges, draft.records) == ([], {}, {}, set(), [])


def test_rebuild_regenerates_the_same_chains(tmp_path):
    home = tmp_path / "home"
    remember_files(home, conversation(tmp_path / "a.jsonl", "a", JANUARY + JUNE))
    edges, found = chain_edges(home), chains(home)
    with open_memory(home) as memory:
        memory.r2g(rebuild=True)
    assert chain_edges(home) == edges and chains(home) == found


def test_rebuild_keeps_the_chains_of_claims_r2g_did_not_make(tmp_path):
    home = tmp_path / "home"
    remember_files(home, conversation(tmp_path / "a.jsonl", "a", JANUARY))
    with open_memory(home) as memory:
        memory.facts.add("我", "employer", "Acme", "2024-01-01")
    edges, found = chain_edges(home), chains(home)
    assert ("用户", "ACTIVE_OF", "Acme", '{"slot": "employer"}') in edges
    with open_memory(home) as memory:
        memory.r2g(rebuild=True)  # replaces the Entity 用户 the ACTIVE_OF edge leaves
    assert chain_edges(home) == edges and chains(home) == found


def test_remember_writes_the_chain_in_its_one_commit(tmp_path):
    home = tmp_path / "home"
    with open_memory(home) as memory:
        memory.remember([str(conversation(tmp_path / "a.jsonl", "a", JANUARY))])
        sequence = memory.store.sequence
        memory.remember([str(conversation(tmp_path / "b.jsonl", "a", JUNE))])
        assert memory.store.sequence == sequence + 1
    assert [value for value, _, _ in chains(home)["residence"]] == ["北京", "上海"]


def _residence_chain(memory) -> str:
    return next(key for key, _ in memory.store.scan("facts.chain") if key.endswith("|residence"))


def test_a_claim_recorded_just_before_its_commit_is_not_rewritten_later(tmp_path, monkeypatch):
    """The chain write reads the clock a moment before the commit stamps created_at; a claim's recorded time is
    read back from its recorded_at, so a later batch finds nothing to change even when a second boundary fell
    in between (it rewrote such claims, re-indexing them a different number of times in every run)."""
    import itertools

    from engine.graph.api import GraphStore
    from facts_testkit import FACTS
    from memctl.facts.maintain import update_chains
    from memctl.r2g.draft import GraphDraft

    readings = itertools.count()
    monkeypatch.setattr(GraphStore.__init__, "__defaults__", (lambda: 1_790_000_000.8 + 0.3 * next(readings),))
    home = tmp_path / "home"
    remember_files(home, conversation(tmp_path / "a.jsonl", "a", JANUARY + JUNE))
    with open_memory(home) as memory:
        draft = GraphDraft(GraphStore(memory.store), None)
        events = update_chains(draft, "default", FACTS, "test", 1_790_000_100.0, {_residence_chain(memory): ()})
    assert (events, draft.nodes, draft.edges, draft.removed_edges, draft.records) == ([], {}, {}, set(), [])
