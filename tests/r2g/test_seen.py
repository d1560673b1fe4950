"""memctl.r2g.seen.SeenKeys: the run's written keys in bounded memory, never missing a key it was given."""

from __future__ import annotations

from memctl.r2g.seen import SEEN_BITS, SeenKeys


def test_a_key_added_is_always_seen_and_others_almost_never():
    seen = SeenKeys()
    added = [f"fact_{number:024x}" for number in range(50_000)]
    seen.add_all(added)
    assert all(key in seen for key in added)
    strangers = sum(f"ent_{number:024x}" in seen for number in range(50_000))
    assert strangers <= 1  # about one in a hundred million at this load


def test_memory_is_fixed_and_a_full_filter_errs_only_towards_present():
    seen = SeenKeys(bits=1024)
    assert len(seen._bytes) == 128 and len(SeenKeys()._bytes) == SEEN_BITS // 8
    added = [f"k{number}" for number in range(5000)]
    seen.add_all(added)
    assert len(seen._bytes) == 128
    assert all(key in seen for key in added)
    assert all(f"other{number}" in seen for number in range(100))  # saturated: a store lookup, never a miss


def test_nothing_is_seen_before_it_is_added():
    seen = SeenKeys()
    assert "ep_0123" not in seen and "" not in seen
    seen.add_all(["ep_0123"])
    assert "ep_0123" in seen and "ep_0124" not in seen
