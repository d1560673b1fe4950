"""Reader fuzzing (REFERENCES C #6): every decoder answers any bytes with data or a CorruptionError.

Three input families per decoder: raw `st.binary()`; mutations (bit flips, overwrites, insertions,
deletions, truncation) of a valid file; and, where a checksum would stop the fuzzer at the door,
structure-aware inputs whose CRCs are recomputed, so the code behind the checksum sees hostile values too
(a crafted file is still a file memctl may be handed). Plus seeded random mutation loops, 10,000 cases per
decoder, which cost far less per case than hypothesis.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_targets import (
    TARGETS,
    manifest_with_body,
    run_target,
    seed_manifest,
    seed_segment,
    seed_segment_columns,
    seed_segment_layout1,
    seed_wal,
    segment_with_directory,
    segment_with_meta,
)

EXAMPLES = 300
SEEDED_CASES = 10_000
fuzz_settings = settings(max_examples=EXAMPLES, deadline=None, database=None,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SEEDS = {"varint": b"\x80\x80\x01\xff\x7f", "wal": seed_wal(), "manifest": seed_manifest(),
         "current": b"MANIFEST-000007\n", "segment": seed_segment(), "segment_layout1": seed_segment_layout1(),
         "segment_columns": seed_segment_columns()}

# Everything msgpack can carry: from -2**63 to 2**64 - 1.
extreme_integers = (st.sampled_from([0, 1, -1, 31, 32, 63, 64, 255, 1 << 31, (1 << 32) - 1, 1 << 32, 1 << 63,
                                     (1 << 64) - 1, -(1 << 63)])
                    | st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1))
anything = st.recursive(st.none() | st.booleans() | extreme_integers | st.floats() | st.text(max_size=12)
                        | st.binary(max_size=12),
                        lambda children: st.lists(children, max_size=4)
                        | st.dictionaries(st.text(max_size=8), children, max_size=4), max_leaves=12)


@st.composite
def mutations(draw, original: bytes) -> bytes:
    data = bytearray(original)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        kind = draw(st.sampled_from(("flip", "set", "insert", "delete", "truncate")))
        position = draw(st.integers(min_value=0, max_value=max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[position] ^= 1 << draw(st.integers(min_value=0, max_value=7))
        elif kind == "set" and data:
            chunk = draw(st.binary(min_size=1, max_size=8))
            data[position: position + len(chunk)] = chunk
        elif kind == "insert":
            data[position:position] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[position: position + draw(st.integers(min_value=1, max_value=16))]
        else:
            del data[position:]
    return bytes(data)


@pytest.mark.parametrize("target", sorted(TARGETS))
@fuzz_settings
@given(data=st.data())
def test_any_bytes(target, data):
    run_target(target, data.draw(st.binary(max_size=4096)))


@pytest.mark.parametrize("target", sorted(TARGETS))
@fuzz_settings
@given(data=st.data())
def test_mutated_valid_files(target, data):
    run_target(target, data.draw(mutations(SEEDS[target])))


column_entries = st.lists(st.one_of(
    st.tuples(st.text(max_size=6), st.sampled_from(["<u8", "<u4", "|u1", "<f4", "|V0", "|O", "<M8[s]", "S3", "x"])
              | st.text(max_size=4) | anything,
              st.lists(extreme_integers, max_size=3) | anything, extreme_integers, extreme_integers,
              extreme_integers).map(list),
    anything), max_size=6)


@fuzz_settings
@given(columns=column_entries, meta=anything, body=st.binary(max_size=256))
def test_segment_directories_behind_a_valid_crc(columns, meta, body):
    run_target("segment", segment_with_directory({"kind": "records", "columns": columns, "meta": meta}, body))


@fuzz_settings
@given(directory=anything, body=st.binary(max_size=128))
def test_any_segment_directory_behind_a_valid_crc(directory, body):
    run_target("segment", segment_with_directory(directory, body))


@pytest.mark.parametrize("seed", ["segment", "segment_layout1"])
@fuzz_settings
@given(meta=st.fixed_dictionaries({"tables": anything | st.dictionaries(st.text(max_size=6),
                                                                         st.lists(extreme_integers, max_size=3)),
                                   "count": anything},
                                  optional={"layout": st.sampled_from([1, 2, 3]) | anything, "blocks": anything}))
def test_records_meta_behind_a_valid_crc(seed, meta):
    """The columns of a real records segment under a hostile meta (the meta is inside the directory CRC)."""
    run_target("segment", segment_with_meta(SEEDS[seed], meta))


@fuzz_settings
@given(body=anything | st.fixed_dictionaries({
    "version": anything, "number": anything, "segments": anything | st.lists(anything, max_size=3),
    "counters": anything, "wal_number": anything, "last_sequence": anything, "next_file_number": anything}))
def test_manifest_bodies_behind_a_valid_crc(body):
    run_target("manifest", manifest_with_body(body))


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_seeded_random_mutations(target):
    rng = random.Random(f"fuzz:{target}")
    original = SEEDS[target]
    for _ in range(SEEDED_CASES):
        data = bytearray(original)
        for _ in range(rng.randint(1, 3)):
            position = rng.randrange(len(data)) if data else 0
            roll = rng.random()
            if roll < 0.5 and data:
                data[position] ^= 1 << rng.randrange(8)
            elif roll < 0.7 and data:
                data[position] = rng.choice((0, 0xFF, 0x7F, 0x80, rng.randrange(256)))
            elif roll < 0.85:
                del data[position:]
            else:
                data[position:position] = rng.randbytes(rng.randint(1, 8))
        run_target(target, bytes(data))
