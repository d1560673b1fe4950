"""timeline.build: a chain recomputed from its claims alone (seed 001 §7.1, §7.2)."""

from __future__ import annotations

from itertools import permutations

from facts_testkit import FACTS, claim, seconds
from memctl.facts.timeline import build


def _summary(timeline) -> tuple:
    return ([(entry.key, entry.since, entry.until, entry.role) for entry in timeline.entries], timeline.in_force,
            dict(timeline.states), dict(timeline.contradicts), sorted(timeline.reviews))


def test_a_change_supersedes_and_the_order_of_the_claims_does_not_matter():
    claims = [claim("boston", "Boston", "2024-01-05"), claim("denver", "Denver", "2024-06-01", kind="change"),
              claim("austin", "Austin", "2025-02-01", kind="change")]
    results = {repr(_summary(build(list(order), False, {}, FACTS))) for order in permutations(claims)}
    assert len(results) == 1
    timeline = build(claims, False, {}, FACTS)
    assert timeline.in_force == ["austin"]
    assert timeline.states == {"boston": "superseded", "denver": "superseded", "austin": "active"}
    assert [(entry.key, entry.until, entry.successor) for entry in timeline.entries] == [
        ("boston", seconds("2024-06-01"), "denver"), ("denver", seconds("2025-02-01"), "austin"),
        ("austin", None, None)]
    assert timeline.contradicts == {} and timeline.reviews == {}


def test_an_older_claim_recorded_later_takes_its_place_in_the_past():
    newer = claim("denver", "Denver", "2024-06-01", kind="change", recorded=1.0)
    older = claim("boston", "Boston", "2024-01-05", recorded=2.0)  # converted after the newer conversation
    timeline = build([newer, older], False, {}, FACTS)
    assert timeline.in_force == ["denver"] and timeline.states["boston"] == "superseded"


def test_a_value_that_comes_back_holds_twice():
    boston = claim("boston", "Boston", "2023-01-01", later=["2023-03-01", "2024-09-01"])
    denver = claim("denver", "Denver", "2024-01-01", kind="change")
    timeline = build([boston, denver], False, {}, FACTS)
    assert [(entry.key, entry.since, entry.until) for entry in timeline.entries] == [
        ("boston", seconds("2023-01-01"), seconds("2024-01-01")),  # said again in March while it held: no period
        ("denver", seconds("2024-01-01"), seconds("2024-09-01")),
        ("boston", seconds("2024-09-01"), None)]
    assert timeline.in_force == ["boston"] and timeline.states == {"boston": "active", "denver": "superseded"}


def test_an_end_ends_the_value_in_force_and_a_negation_of_another_value_is_no_version():
    job = claim("acme", "Acme", "2023-01-01")
    other_negated = claim("not-globex", "Globex", "2023-05-01", polarity="negated")
    quit_job = claim("quit-acme", "Acme", "2024-02-01", polarity="ended", kind="end")
    timeline = build([job, other_negated, quit_job], False, {}, FACTS)
    assert timeline.in_force == []
    assert timeline.states == {"acme": "ended", "quit-acme": "ended"}
    assert "not-globex" not in timeline.states
    assert [(entry.key, entry.until) for entry in timeline.entries] == [
        ("acme", seconds("2024-02-01")), ("quit-acme", seconds("2024-02-01"))]


def test_a_negation_of_the_value_in_force_ends_it():
    timeline = build([claim("car", "Tesla", "2023-01-01"),
                      claim("no-car", "Tesla", "2023-08-01", polarity="negated")], False, {}, FACTS)
    assert timeline.in_force == [] and timeline.states["car"] == "ended"


def test_multi_valued_values_accumulate_until_a_stop_of_that_value():
    tennis = claim("tennis", "tennis", "2023-01-01", kind="add")
    golf = claim("golf", "golf", "2023-06-01", kind="add")
    stop_tennis = claim("stop-tennis", "tennis", "2024-01-01", polarity="ended", kind="stop")
    stop_chess = claim("stop-chess", "chess", "2024-02-01", polarity="negated", kind="stop")
    timeline = build([tennis, golf, stop_tennis, stop_chess], True, {}, FACTS)
    assert timeline.in_force == ["golf"]
    assert timeline.states == {"tennis": "ended", "golf": "active", "stop-tennis": "ended"}
    assert timeline.contradicts == {}


def test_a_change_of_a_multi_valued_slot_replaces_the_one_value_in_force_and_joins_several():
    old_phone = claim("iphone", "iPhone", "2023-01-01")
    new_phone = claim("pixel", "Pixel", "2024-01-01", kind="change")
    replaced = build([old_phone, new_phone], True, {}, FACTS)
    assert replaced.in_force == ["pixel"] and replaced.states["iphone"] == "superseded"
    laptop = claim("laptop", "ThinkPad", "2023-06-01")
    joined = build([old_phone, laptop, new_phone], True, {}, FACTS)
    assert joined.in_force == ["iphone", "laptop", "pixel"]


def test_a_claim_with_no_change_months_later_wins_with_a_time_contradiction():
    timeline = build([claim("boston", "Boston", "2024-01-01"), claim("denver", "Denver", "2024-06-01")], False, {},
                     FACTS)
    assert timeline.in_force == ["denver"]
    assert timeline.contradicts == {("boston", "denver"): "time"}
    assert timeline.reviews == {} and timeline.states["boston"] == "superseded"


def test_two_claims_too_close_to_call_are_contested_and_the_higher_prio_holds():
    boston = claim("boston", "Boston", "2024-06-01T09:00:00")
    denver = claim("denver", "Denver", "2024-06-01T12:00:00", source="external")
    timeline = build([boston, denver], False, {}, FACTS)
    # external's trust 0.6 against r2g's 0.8, weighed 0.3: Boston holds by 0.06, above the review margin 0.05
    assert timeline.contradicts == {("boston", "denver"): "source"}
    assert timeline.in_force == ["boston"] and timeline.reviews == {}
    assert timeline.states == {"boston": "active", "denver": "superseded"}
    same_source = build([boston, claim("denver", "Denver", "2024-06-01T12:00:00")], False, {}, FACTS)
    review = same_source.reviews[("boston", "denver")]
    assert review.dimension == "value" and review.margin < FACTS.review_margin
    assert same_source.in_force == ["denver"]  # the newer by three hours: prio higher by a hair
    assert same_source.states == {"boston": "contested", "denver": "contested"}


def test_decisions_settle_a_contest():
    boston = claim("boston", "Boston", "2024-06-01T09:00:00")
    denver = claim("denver", "Denver", "2024-06-01T12:00:00")
    kept = build([boston, denver], False, {"boston": "keep"}, FACTS)
    assert kept.in_force == ["boston"] and kept.reviews == {}
    assert kept.states == {"boston": "active", "denver": "superseded"}
    rejected = build([boston, denver], False, {"denver": "reject"}, FACTS)
    assert rejected.in_force == ["boston"] and rejected.reviews == {}
    assert rejected.states == {"boston": "active", "denver": "rejected"}


def test_chains_never_cross_slots_each_chain_is_built_from_its_own_claims():
    residence = build([claim("boston", "Boston", "2024-01-01")], False, {}, FACTS)
    employer = build([claim("acme", "Acme", "2024-01-01"), claim("globex", "Globex", "2024-05-01", kind="change")],
                     False, {}, FACTS)
    assert residence.in_force == ["boston"] and employer.in_force == ["globex"]
