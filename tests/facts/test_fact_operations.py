"""Seed 002's ADD / UPDATE / DELETE on facts in `memctl r2g --from jsonl`: the same chains as r2g's claims."""

from __future__ import annotations

import json

import pytest

from facts_testkit import chain_edges, chains, conversation, open_memory, remember_files, tree_digest, write_jsonl

OPERATIONS = [
    {"op": "ADD", "fact": {"subject": "我", "slot": "employer", "value": "Acme", "since": "2024-02-01"}, "ref": "job"},
    {"op": "UPDATE", "id": "job", "fact": {"value": "Globex", "since": "2024-08-01"}, "ref": "next"},
    {"op": "DELETE", "id": "next", "since": "2024-10-01"},
]


@pytest.fixture
def home(isolated_home, tmp_path):
    remember_files(isolated_home, conversation(tmp_path / "c.jsonl", "c", [("2024-01-10T09:00:00", "我的住址是北京。")]))
    return isolated_home


def test_add_update_delete_make_a_chain_that_ends_and_touch_no_other_slot(cli, home, tmp_path):
    result = cli("r2g", "--from", "jsonl", str(write_jsonl(tmp_path / "ops.jsonl", OPERATIONS)))
    assert result.exit_code == 0, result.stderr
    found = chains(home)
    assert found["employer"] == [("Acme", "superseded", "2024-02-01"), ("Globex", "ended", "2024-08-01"),
                                 ("Globex", "ended", "2024-10-01")]
    assert found["residence"] == [("北京", "active", "2024-01-10T09:00:00")]
    history = json.loads(cli("fact", "history", "我", "employer", "--json").stdout)
    assert [(row["value"], row["polarity"], row["valid_until"]) for row in history["versions"]] == [
        ("Acme", "stated", "2024-08-01"), ("Globex", "stated", "2024-10-01"), ("Globex", "ended", "2024-10-01")]
    assert history["in_force"] == []
    edges = chain_edges(home)
    with open_memory(home) as memory:
        memory.r2g(rebuild=True)  # the recorded import is replayed: the same chains
    assert chain_edges(home) == edges and chains(home) == found


@pytest.mark.parametrize("line, message", [
    ({"op": "BOOST", "id": "x"}, "BOOST is `memctl feedback ID --up`"),
    ({"op": "ADD", "fact": {"subject": "我", "slot": "employr", "value": "Acme"}}, "did you mean employer"),
    ({"op": "UPDATE", "id": "fact_000", "fact": {"value": "Acme"}}, "neither a node of this file nor a stored"),
    ({"op": "DELETE", "id": "job", "since": "soon"}, "not an ISO date"),
    ({"op": "ADD", "fact": {"subject": "我", "slot": "employer", "value": "Acme"}, "when": 1}, "unknown field"),
])
def test_a_bad_operation_exits_2_naming_the_line_and_changes_nothing(cli, home, tmp_path, line, message):
    before = tree_digest(home)
    result = cli("r2g", "--from", "jsonl", str(write_jsonl(tmp_path / "ops.jsonl", [OPERATIONS[0], line])))
    assert result.exit_code == 2 and "ops.jsonl:2" in result.stderr and message in result.stderr, result.stderr
    assert tree_digest(home) == before
