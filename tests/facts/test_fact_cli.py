"""`memctl fact …` and `memctl audit --fact`: what they print and write, and bad input (exit 2, the store byte for
byte as before)."""

from __future__ import annotations

import json

import pytest

from facts_testkit import conversation, remember_files, tree_digest

MARCH = ["--since", "2024-03-01"]


def _json(result) -> dict | list:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def home(isolated_home, tmp_path):
    remember_files(isolated_home, conversation(tmp_path / "c.jsonl", "c", [
        ("2024-01-10T09:00:00", "我的住址是北京。"), ("2024-06-10T09:00:00", "我的住址是上海。")]))
    return isolated_home


def test_fact_add_supersedes_the_value_in_force_and_history_lists_the_chain(cli, home):
    added = _json(cli("fact", "add", "我", "residence", "杭州", "--since", "2024-09-01", "--json"))
    assert (added["value"], added["state"], added["valid_since"], added["source"]) == \
        ("杭州", "active", "2024-09-01", "user")
    assert [event[0] for event in added["events"]] == ["FactPromoted", "FactDemoted"]
    history = _json(cli("fact", "history", "I", "residence", "--json"))
    assert [(row["value"], row["state"], row["valid_until"]) for row in history["versions"]] == [
        ("北京", "superseded", "2024-06-10T09:00:00"), ("上海", "superseded", "2024-09-01"), ("杭州", "active", None)]
    assert history["in_force"] == [added["fact"]]
    assert [row["value"] for row in _json(cli("fact", "list", "--json"))] == ["杭州"]
    assert [row["value"] for row in _json(cli("fact", "list", "--as-of", "2024-07-01", "--json"))] == ["上海"]
    assert [row["value"] for row in _json(cli("fact", "list", "--slot", "residence", "--all-versions", "--json"))] \
        == ["北京", "上海", "杭州"]
    assert _json(cli("fact", "list", "--subject", "Alice", "--json")) == []


def test_the_seed_alias_asserts_a_contradicting_claim_and_resolve_settles_it(cli, home):
    shanghai = _json(cli("fact", "list", "--json"))[0]["fact"]
    contested = _json(cli("fact", "--add", "我", "residence", "南京", "--since", "2024-06-10T10:00:00",
                          "--source", "r2g", "--conflicts", shanghai, "--json"))
    assert contested["state"] == "contested" and contested["contradicts"] == [{"fact": shanghai,
                                                                                "dimension": "value"}]
    queue = _json(cli("fact", "review", "--json"))
    assert [sorted(row["value"] for row in item["versions"]) for item in queue] == [["上海", "南京"]]
    assert queue[0]["margin"] < 0.05 and set(queue[0]["terms"]) == {shanghai, contested["fact"]}
    kept = _json(cli("fact", "resolve", shanghai, "--keep", "--json"))
    assert kept["state"] == "active"
    assert _json(cli("fact", "show", contested["fact"], "--json"))["state"] == "superseded"
    assert _json(cli("fact", "review", "--json")) == []
    rejected = _json(cli("fact", "resolve", contested["fact"], "--reject", "--json"))
    assert rejected["state"] == "rejected"


def test_audit_shows_the_chain_with_verified_citations_prio_terms_and_who_changed_what(cli, home):
    beijing = _json(cli("fact", "list", "--all-versions", "--json"))[0]["fact"]
    cli("fact", "add", "我", "residence", "杭州", *MARCH)
    report = _json(cli("audit", "--fact", beijing, "--history", "--json"))
    assert [row["value"] for row in report["versions"]] == ["北京", "杭州", "上海"]
    beijing_row = report["versions"][0]
    assert [citation["snippet"] for citation in beijing_row["evidence"]] == ["我的住址是北京。"]
    assert set(beijing_row["prio"]) == {"source_trust", "recency", "evidence_support", "consistency", "prio"}
    # 杭州 since March is a change after 北京; 上海, said in June with no change statement, still holds
    assert [(row["value"], row["state"]) for row in report["versions"]][1:] == [("杭州", "superseded"),
                                                                                ("上海", "active")]
    assert (report["changes"][-1]["by"], report["changes"][-1]["to"]) == ("fact add", "superseded")
    alone = _json(cli("audit", "--fact", beijing, "--json"))
    assert [row["value"] for row in alone["versions"]] == ["北京"]
    printed = cli("audit", "--fact", beijing, "--history").stdout
    assert "我的住址是北京。" in printed and "fact add: " in printed


@pytest.mark.parametrize("arguments, message", [
    (["fact", "add", "我", "residense", "杭州"], "did you mean residence"),
    (["fact", "add", "我", "residence", "杭州", "--since", "2024-13-01"], "not an ISO date"),
    (["fact", "add", "我", "residence", "杭州", "--source", "rumour"], "unknown source"),
    (["fact", "add", "我", "residence", "杭州", "--evidence", "raw_0000000000000000"], "no raw chunk"),
    (["fact", "add", "我", "residence", "杭州", "--conflicts", "fact_000"], "no fact"),
    (["fact", "add", "我", "pet", "猫", "--conflicts", "SHANGHAI"], "another subject or slot"),
    (["fact", "--add", "我", "residence"], "--add takes SUBJECT SLOT VALUE"),
    (["fact", "show", "fact_000"], "no fact"),
    (["fact", "history", "Alice", "residence"], "no facts about"),
    (["fact", "resolve", "SHANGHAI"], "exactly one of --keep and --reject"),
    (["fact", "resolve", "fact_000", "--keep"], "no fact"),
    (["fact", "list", "--as-of", "yesterday"], "not an ISO date"),
    (["audit", "--fact", "fact_000"], "no fact"),
])
def test_bad_input_exits_2_with_a_message_and_changes_nothing(cli, home, arguments, message):
    shanghai = _json(cli("fact", "list", "--json"))[0]["fact"]
    arguments = [shanghai if word == "SHANGHAI" else word for word in arguments]
    before = tree_digest(home)
    result = cli(*arguments)
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert tree_digest(home) == before


@pytest.mark.parametrize("arguments", [("fact", "list"), ("fact", "history", "I", "residence"), ("fact", "review")])
def test_a_cold_fact_read_loads_neither_numba_jieba_nor_the_writers(home, arguments):
    from cli_testkit import COLD_NEVER, cold_modules, loaded

    modules = cold_modules(home, *arguments)
    assert "memctl.cli.fact_cmd" in modules and loaded(modules, COLD_NEVER) == []
