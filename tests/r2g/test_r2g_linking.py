"""SAME_AS (R2G-5) and SIMILAR_TO (R2G-6) decisions."""

from datetime import date

import pytest

from memctl.r2g.events import MAX_ENTRIES, EventIndex
from memctl.r2g.extract import extract
from memctl.r2g.linking import EventSignature, keyword_similarity, same_event, signature, similar_pairs


def _signature(sentence, turn_time):
    result = extract(sentence, ref_time=turn_time)
    return signature(result.facts[0], result, turn_time)


def test_the_same_event_told_twice_is_merged():
    first = _signature("Tom played soccer in the park yesterday.", "2023-05-10")
    second = _signature("Tom played soccer with friends.", "2023-05-09")
    assert same_event(first, second)


def test_different_days_roles_or_polarity_are_not_merged():
    told = _signature("Tom played soccer yesterday.", "2023-05-10")
    assert not same_event(told, _signature("Tom played soccer yesterday.", "2023-05-20"))
    assert not same_event(told, _signature("Jake played soccer yesterday.", "2023-05-10"))
    assert not same_event(told, _signature("Tom didn't play soccer yesterday.", "2023-05-10"))


def test_chinese_events_with_relative_times():
    first = _signature("小明昨天在公园里踢足球。", "2023-05-10")
    second = _signature("小明在公园踢足球。", "2023-05-09")
    assert same_event(first, second)


def test_similar_pairs_are_thresholded_and_capped():
    keywords = {
        "a": {"蓝牙", "win11", "驱动"},
        "b": {"蓝牙", "win11", "耳机"},
        "c": {"蓝牙", "win11", "驱动", "报错"},
        "d": {"足球", "公园"},
    }
    pairs = similar_pairs(keywords, threshold=0.3, cap=1)
    assert pairs[0] == ("a", "c", 0.75)
    linked = [node for pair in pairs for node in pair[:2]]
    assert all(linked.count(node) <= 1 for node in keywords)
    assert keyword_similarity({"x"}, set()) == 0.0
    assert all(score >= 0.3 for _, _, score in similar_pairs(keywords, threshold=0.3, cap=8))


# --- the SAME_AS candidates a run keeps (memctl.r2g.events) -----------------------------------------------


class _Batch:
    """What EventIndex.flush hands its entries to (a GraphDraft's record)."""

    def __init__(self):
        self.records = {}

    def record(self, table, key, value):
        self.records[key] = value


def _event(day: int, agent: str = "tom"):
    return EventSignature("play_soccer", False, frozenset({agent}), frozenset(), date(2023, 5, day),
                          date(2023, 5, day))


@pytest.fixture
def events(tmp_path):
    from engine.store import Store

    store = Store.open(str(tmp_path / "store"))
    yield EventIndex(store, tolerance_days=1)
    store.close()


def test_event_candidates_are_found_across_batches_without_changing_a_written_list(events):
    assert events.same_events("fact_a", _event(1)) == []
    first = _Batch()
    events.flush(first)
    (written,) = first.records.values()
    as_written = [list(entry) for entry in written]
    assert events.same_events("fact_b", _event(2)) == ["fact_a"]
    assert events.same_events("fact_b", _event(2)) == ["fact_a"]  # told twice in a batch: recorded once
    assert events.same_events("fact_c", _event(9)) == []  # outside the ±1 day window
    second = _Batch()
    events.flush(second)
    assert written == as_written  # the first batch's value is its own, whatever later batches add
    assert [entry[0] for entry in second.records["play_soccer\x1f0\x1ftom"]] == ["fact_a", "fact_b", "fact_c"]


def test_event_candidates_keep_the_latest_entries_per_key(events):
    for day in range(1, 31):
        for hour in range(3):
            events.same_events(f"fact_{day}_{hour}", _event(day))
    batch = _Batch()
    events.flush(batch)
    entries = batch.records["play_soccer\x1f0\x1ftom"]
    assert len(entries) == MAX_ENTRIES
    assert [entry[0] for entry in entries[-3:]] == ["fact_30_0", "fact_30_1", "fact_30_2"]
    assert all(entry[2] >= date(2023, 5, 9).toordinal() for entry in entries)
    # A dropped fact told again is older than every kept entry: it matches none and stays out.
    assert events.same_events("fact_1_0", _event(1)) == []
    assert events.same_events("fact_9_2", _event(9)) == ["fact_10_0", "fact_10_1", "fact_10_2"]
    events.flush(batch)
    assert [entry[0] for entry in batch.records["play_soccer\x1f0\x1ftom"]] == [entry[0] for entry in entries]
