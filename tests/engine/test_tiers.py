"""Tier merges of records segments (engine.records.tiers, Store.merge_tiers): a long run of flushes keeps a
bounded number of records segments, every read answers as before, and a crash leaves the merged segments or the
merge of them."""

from __future__ import annotations

import os
import random
import tracemalloc

import numpy as np
import pytest

from engine import fs
from engine.check import check_store
from engine.records import tiers
from engine.records.filter import build_filter, may_contain
from engine.records.tiers import TIER_BASE_BYTES, newest_to_merge, tier
from engine.store import Store
from engine_testkit import SimulatedCrash, crash_at, mapped_resident_bytes

T = "test.item"
SMALL = 100  # bytes: tier 0 whatever the fanout


def put(store: Store, *items) -> None:
    with store.batch() as batch:
        for key, value in items:
            batch.put(T, key, value)


def delete(store: Store, *keys) -> None:
    with store.batch() as batch:
        for key in keys:
            batch.delete(T, key)


def assert_reads(store: Store, expected: dict, absent: tuple = ()) -> None:
    assert list(store.scan(T)) == sorted(expected.items())
    assert [store.get(T, key) for key in expected] == list(expected.values())
    keys = [*expected, *absent]
    assert store.get_many(T, keys) == [expected.get(key) for key in keys]


def test_a_segment_tier_counts_the_fanouts_above_the_base_size():
    assert [tier(size, 4) for size in (0, 4 * TIER_BASE_BYTES - 1, 4 * TIER_BASE_BYTES, 16 * TIER_BASE_BYTES)] == \
        [0, 0, 1, 2]


def test_the_newest_run_in_the_newest_tier_or_below_is_merged_once_it_holds_fanout_segments():
    big, bigger = 4 * TIER_BASE_BYTES, 16 * TIER_BASE_BYTES
    assert newest_to_merge([], 4) == 0
    assert newest_to_merge([SMALL] * 3, 4) == 0
    assert newest_to_merge([SMALL] * 4, 4) == 4
    assert newest_to_merge([big, SMALL, SMALL, SMALL], 4) == 0  # an older, bigger segment stays
    assert newest_to_merge([big] * 3 + [SMALL] * 4, 4) == 4
    assert newest_to_merge([SMALL, SMALL, SMALL, big], 4) == 4  # a big flush takes the small ones before it
    assert newest_to_merge([bigger, big, big, big, SMALL, SMALL, SMALL, SMALL], 4) == 4
    assert newest_to_merge([bigger, big, big, big, big], 4) == 4


def test_a_capped_merge_takes_the_newest_segments_that_fit_under_the_cap_together():
    unit = TIER_BASE_BYTES // 4
    assert newest_to_merge([unit] * 4, 4, max_bytes=4 * unit) == 4
    assert newest_to_merge([unit] * 4, 4, max_bytes=3 * unit) == 3  # the oldest of the run waits
    assert newest_to_merge([3 * unit] + [unit] * 3, 4, max_bytes=4 * unit) == 3
    assert newest_to_merge([3 * unit] * 4, 4, max_bytes=4 * unit) == 0  # never one segment alone


def test_segments_past_a_cap_stay_while_the_small_ones_after_them_merge():
    """A run of flushes under a cap: no merge ever takes more than the cap, and the count stays bounded by the
    bytes over half the cap plus one tier's run (what r2g relies on for derived segments)."""
    fanout, cap, flush = 4, 8 * SMALL, SMALL
    sizes: list[int] = []
    for _ in range(400):
        sizes.append(flush)
        while count := newest_to_merge(sizes, fanout, max_bytes=cap):
            assert 2 <= count and sum(sizes[-count:]) <= cap
            sizes[-count:] = [sum(sizes[-count:])]
    assert sum(sizes) == 400 * flush
    assert len(sizes) <= sum(sizes) // (cap // 2) + fanout


def test_flushes_with_tier_merges_keep_few_records_segments_and_every_answer(tmp_path):
    rng = random.Random(17)
    expected: dict = {}
    store = Store.open(str(tmp_path / "store"), holder="pytest")
    try:
        for number in range(60):
            put(store, *((f"k{rng.randrange(50):02d}", number) for _ in range(5)))
            expected.update(store.scan(T))
            doomed = f"k{rng.randrange(50):02d}"
            delete(store, doomed)
            expected.pop(doomed, None)
            store.flush()
            store.merge_tiers(4)
            assert len(store.records) < 4
        merges_before_the_end = store.merge_tiers(4)
        put(store, ("unflushed", 1))  # a batch only the WAL holds: a merge must not make recovery skip it
        expected["unflushed"] = 1
        assert merges_before_the_end == 0
        assert_reads(store, expected, absent=("never",))
    finally:
        store.close()
    with Store.open(str(tmp_path / "store"), holder="pytest") as reopened:
        assert_reads(reopened, expected, absent=("never",))
    assert check_store(str(tmp_path / "store")).clean


def test_a_tier_merge_keeps_the_deletes_that_hide_an_older_segment(tmp_path, monkeypatch):
    monkeypatch.setattr(tiers, "TIER_BASE_BYTES", 4096)
    rng = random.Random(3)
    store = Store.open(str(tmp_path / "store"), holder="pytest")
    try:
        put(store, *((f"big{index}", rng.randbytes(4096)) for index in range(8)), ("doomed", "old"), ("kept", "old"))
        store.flush()
        delete(store, "doomed")
        store.flush()
        put(store, ("kept", "new"))
        store.flush()
        assert store.merge_tiers(2) == 1
        assert len(store.records) == 2  # the big segment stays; the two small ones are one
        assert store.get(T, "doomed") is None and store.get(T, "kept") == "new"
        assert [key for key, _ in store.scan(T)] == [*(f"big{index}" for index in range(8)), "kept"]
        store.compact()
        assert store.get(T, "doomed") is None and store.get(T, "kept") == "new"
    finally:
        store.close()


MERGE_POINTS = ["merge.start", "segment.before_rename", "merge.after_segment", "manifest.before_current",
                "compact.after_manifest.before_unlink"]


@pytest.mark.parametrize("failpoint", MERGE_POINTS)
def test_a_crash_during_a_tier_merge_loses_nothing(tmp_path, failpoint):
    path = str(tmp_path / "store")
    expected: dict = {}
    store = Store.open(path, holder="pytest")
    for number in range(8):
        if number:
            store.merge_tiers(2)
        put(store, (f"k{number}", number), ("shared", number))
        delete(store, f"k{number - 1}")
        expected.pop(f"k{number - 1}", None)
        expected.update({f"k{number}": number, "shared": number})
        store.flush()
    put(store, ("unflushed", 1))  # only in the WAL while the two newest segments are merged
    expected["unflushed"] = 1
    crash_at(failpoint)
    with pytest.raises(SimulatedCrash):
        store.merge_tiers(2)
    fs.disarm_all()
    store.close()
    with Store.open(path, holder="pytest") as reopened:
        assert_reads(reopened, expected, absent=("k0", "k6"))
        assert not reopened.obsolete_files(), "the next writer removes what the crash left"
        reopened.merge_tiers(2)
        assert len(reopened.records) == 1
        assert_reads(reopened, expected, absent=("k0", "k6"))
    assert check_store(path).clean


def test_a_filter_of_a_million_keys_is_built_in_a_few_times_its_bytes():
    """A tier merge's segment has a filter of all its rows: built at once, a million keys took 150 MiB."""
    hashes = np.random.default_rng(5).integers(0, 2**63, 1_000_000, dtype=np.uint64)
    tracemalloc.start()
    try:
        built = build_filter([hashes[:300_000], hashes[300_000:]])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(built) == 1_250_000
    assert peak < 4 * len(built) + (16 << 20)
    assert may_contain(np.frombuffer(built, np.uint8), hashes).all()


def _resident_peak_above(action) -> int:
    """Bytes by which the process's peak resident memory (VmHWM, reset first) rose above its resident memory
    before `action`."""
    def status(field: str) -> int:
        with open("/proc/self/status") as handle:
            return next(int(line.split()[1]) * 1024 for line in handle if line.startswith(field + ":"))

    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
    before = status("VmRSS")
    action()
    return status("VmHWM") - before


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="VmHWM reset is Linux-only")
def test_a_merge_gives_back_the_pages_of_the_segments_it_read(tmp_path):
    """The segments a merge reads are mapped: without giving their pages back as it goes, every byte it read
    stayed resident until they were closed (a 32 MiB transcript's r2g: merges of 150 MB)."""
    rng = random.Random(9)
    store = Store.open(str(tmp_path / "store"), holder="pytest")
    try:
        for number in range(4):
            put(store, *((f"k{number}-{index:03d}", rng.randbytes(64 << 10)) for index in range(128)))
            store.flush()  # 8 MiB of incompressible values each
        rise = _resident_peak_above(lambda: store.merge_tiers(4))
        assert len(store.records) == 1
        assert rise < 16 << 20, f"the merge of 32 MiB of segments rose the peak by {rise >> 20} MiB"
    finally:
        store.close()


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="smaps is Linux-only")
def test_released_segments_keep_no_resident_pages_and_read_the_same(tmp_path):
    """A long writer's reads all over its older segments each left their pages resident until the segment was
    closed; release_mapped_pages gives them back, and a later read maps them again from the file."""
    rng = random.Random(11)
    path = str(tmp_path / "store")
    store = Store.open(path, holder="pytest")
    try:
        expected = {}
        for number in range(2):
            items = {f"k{number}-{index:03d}": rng.randbytes(16 << 10) for index in range(128)}
            put(store, *items.items())
            store.flush()  # 2 MiB of incompressible values each
            expected.update(items)
        assert_reads(store, expected)
        assert mapped_resident_bytes(path) > 1 << 20
        store.release_mapped_pages()
        assert mapped_resident_bytes(path) == 0
        store.block_cache = type(store.block_cache)()  # no decompressed block left: reads go to the files again
        for reader in store.records:
            reader._cache = store.block_cache
        assert_reads(store, expected)
        assert mapped_resident_bytes(path) > 1 << 20
    finally:
        store.close()
