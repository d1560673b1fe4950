"""`memctl feedback`: pins and votes, seed 002's BOOST rules with an injected clock, persistence, refusals."""

from __future__ import annotations

import json

import pytest
from events_testkit import FIRST, SECOND, entity, memctl, node_props, open_memory, remember, store_files

HOUR = 3600.0
T0 = 1_900_000_000.0


@pytest.fixture
def alice(isolated_home) -> str:
    remember(isolated_home, FIRST)
    return entity(isolated_home, "Alice")


def feedback(home, key: str, action: str, now: float) -> dict:
    with open_memory(home) as memory:
        return memory.feedback(key, action, now=now)


def test_an_up_within_the_cooldown_is_refused_and_changes_nothing(isolated_home, alice):
    assert feedback(isolated_home, alice, "up", T0)["change"] == pytest.approx(0.3)
    before = store_files(isolated_home)
    refused = feedback(isolated_home, alice, "up", T0 + 2 * HOUR - 1)
    assert refused["applied"] is False and refused["change"] == 0.0 and refused["sequence"] is None
    assert refused["refused"]["rule"] == "cooldown"
    assert refused["refused"]["allowed_at"] == "2030-03-17T19:46:40Z"  # T0 + 2 h
    assert refused["feedback"] == pytest.approx(0.3)
    assert store_files(isolated_home) == before
    allowed = feedback(isolated_home, alice, "up", T0 + 2 * HOUR)
    assert allowed["applied"] and allowed["feedback"] == pytest.approx(0.6)


def test_the_ups_of_24_hours_add_at_most_the_daily_cap(isolated_home, alice):
    changes = [feedback(isolated_home, alice, "up", T0 + hours * HOUR)["change"] for hours in (0, 2, 4, 6)]
    assert changes == pytest.approx([0.3, 0.3, 0.3, 0.1])
    refused = feedback(isolated_home, alice, "up", T0 + 8 * HOUR)
    assert refused["refused"]["rule"] == "daily_cap"
    assert refused["refused"]["allowed_at"] == "2030-03-18T17:46:40Z"  # T0 + 24 h: the first up leaves the window
    assert feedback(isolated_home, alice, "up", T0 + 24 * HOUR - 1)["applied"] is False
    again = feedback(isolated_home, alice, "up", T0 + 24 * HOUR)
    assert again["change"] == pytest.approx(0.3) and again["feedback"] == pytest.approx(1.3)
    assert node_props(isolated_home, alice)["feedback"] == pytest.approx(1.3)


def test_down_takes_a_boost_away_without_a_cooldown(isolated_home, alice):
    feedback(isolated_home, alice, "up", T0)
    assert feedback(isolated_home, alice, "down", T0 + 1)["feedback"] == pytest.approx(0.0)
    assert feedback(isolated_home, alice, "down", T0 + 2)["feedback"] == pytest.approx(-0.3)


def test_a_pin_counts_as_full_feedback_in_the_weight(isolated_home, alice):
    before = feedback(isolated_home, alice, "down", T0)["weight"]
    pinned = feedback(isolated_home, alice, "pin", T0)["weight"]
    assert (before["terms"]["feedback"], pinned["terms"]["feedback"]) == (0.0, 1.0)
    with open_memory(isolated_home, writable=False) as memory:
        epsilon = memory.config.get("weights.epsilon")
    assert pinned["value"] - before["value"] == pytest.approx(epsilon)


def test_pin_persists_across_processes_and_conversions(isolated_home):
    remember(isolated_home, FIRST)
    denver = entity(isolated_home, "Denver")
    result = memctl(isolated_home, "feedback", denver, "--pin", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["pinned"] is True
    assert node_props(isolated_home, denver)["pinned"] is True
    remember(isolated_home, SECOND)  # mentions Denver twice: R2G merges the node
    props = node_props(isolated_home, denver)
    assert props["pinned"] is True and props["frequency"] == 3
    with open_memory(isolated_home) as memory:
        memory.r2g(rebuild=True)  # writes every node again
    assert node_props(isolated_home, denver)["pinned"] is True
    assert memctl(isolated_home, "feedback", denver, "--unpin").returncode == 0
    assert node_props(isolated_home, denver)["pinned"] is False


def test_a_second_pin_changes_nothing_and_logs_nothing(isolated_home, alice):
    assert feedback(isolated_home, alice, "pin", T0)["sequence"] == 5  # after r2g's four events
    before = store_files(isolated_home)
    again = feedback(isolated_home, alice, "pin", T0 + 1)
    assert again["applied"] and again["sequence"] is None
    assert store_files(isolated_home) == before


def test_a_refused_up_exits_1_and_says_when_the_next_counts(isolated_home, alice, cli):
    assert cli("feedback", alice, "--up").exit_code == 0
    result = cli("feedback", alice, "--up")
    assert result.exit_code == 1
    assert f"--up on {alice} not counted" in result.stderr and "one --up counts per 2 h" in result.stderr
    assert "the next one counts from 20" in result.stderr


@pytest.mark.parametrize("arguments, message", [
    (["ent_0123456789abcdef01234567", "--pin"], "no memory 'ent_0123456789abcdef01234567'"),
    (["ALICE", "--pin", "--up"], "exactly one of"),
    (["ALICE"], "exactly one of"),
])
def test_bad_input_exits_2_and_leaves_the_store_unchanged(isolated_home, alice, cli, arguments, message):
    before = store_files(isolated_home)
    result = cli("feedback", *[alice if argument == "ALICE" else argument for argument in arguments])
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert store_files(isolated_home) == before


def test_feedback_on_a_store_never_created_exits_2_and_creates_nothing(isolated_home, cli):
    result = cli("feedback", "ent_0123456789abcdef01234567", "--pin")
    assert result.exit_code == 2
    assert not isolated_home.exists()


def test_graph_show_prints_the_weight_and_its_terms(isolated_home, alice, cli):
    feedback(isolated_home, alice, "up", T0)
    shown = json.loads(cli("graph", "show", alice, "--now", "2030-03-17", "--json").stdout)
    assert shown["type"] == "Entity" and shown["props"]["feedback"] == pytest.approx(0.3)
    weight = shown["weight"]
    assert weight["terms"]["feedback"] == pytest.approx(0.3) and weight["coefficients"]["stale"] == -0.1
    assert weight["value"] == pytest.approx(sum(weight["coefficients"][name] * value
                                                for name, value in weight["terms"].items()), abs=1e-5)
    text = cli("graph", "show", alice).stdout
    assert "+ 0.1·feedback 0.300" in text and "- 0.1·stale 0.000" in text
    assert cli("graph", "show", "ent_0123456789abcdef01234567").exit_code == 2
