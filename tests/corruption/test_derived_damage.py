"""Damage to text.postings and graph.csr segments: detected before any answer is served, column by column.

The reference stores hold both derived kinds (truncate.py and bitflip.py sweep them as they find them in
the MANIFEST). Here every column of each derived segment gets one flipped byte in its first and last
data byte: every step that opens the store must refuse with a CorruptionError naming the segment, or give
exactly the undamaged answers (records, text rankings, graph neighbours and k-hop), and check_store must
report the file either way.
"""

from __future__ import annotations

import os
import struct

import pytest

from engine.codec import unpack
from engine.errors import CorruptionError
from engine.format import GRAPH_SEGMENT_KIND, SEGMENT_FOOTER_FORMAT, SEGMENT_FOOTER_SIZE, TEXT_SEGMENT_KIND
from tools.testing import damage, reference
from tools.testing.scripts import seed

KINDS = (f"segment:{TEXT_SEGMENT_KIND}", f"segment:{GRAPH_SEGMENT_KIND}")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("derived-damage") / "store")
    model = reference.build(path, seed(901), compact=False)
    return path, model, damage.snapshot(path)


def column_ranges(data: bytes) -> dict:
    """{column name: (offset, length)} from a segment's directory."""
    offset, length = struct.unpack_from(SEGMENT_FOOTER_FORMAT, data, len(data) - SEGMENT_FOOTER_SIZE)[:2]
    directory = unpack(data[offset: offset + length])
    return {entry[0]: (entry[3], entry[4]) for entry in directory["columns"]}


def test_both_reference_stores_hold_text_and_graph_segments_with_rows(tmp_path):
    for options in ({}, {"big_tail": True, "compact": False}):
        path = str(tmp_path / str(len(options)))
        reference.build(path, seed(902), **options)
        files = reference.files_by_kind(path)
        for kind in KINDS:
            with open(os.path.join(path, files[kind][-1]), "rb") as handle:
                ranges = column_ranges(handle.read())
            assert sum(length for _offset, length in ranges.values()) > 300, (kind, ranges)


@pytest.mark.parametrize("kind", KINDS)
def test_a_flipped_byte_in_any_column_is_refused_before_an_answer(built, kind):
    path, model, pristine = built
    relative = reference.files_by_kind(path)[kind][-1]
    data = pristine[relative]
    judged = 0
    for name, (offset, length) in sorted(column_ranges(data).items()):
        for position in sorted({offset, offset + length - 1}) if length else ():
            damaged = bytearray(data)
            damaged[position] ^= 0x10
            damage.replace_file(os.path.join(path, relative), bytes(damaged))
            try:
                observation = damage.observe(path)
            finally:
                damage.restore(path, pristine)
            judged += 1
            where = f"column {name} byte {position}"
            for step in observation.errors():
                assert isinstance(step, CorruptionError) and step.path, (where, step)
            assert observation.answered_as([model.final()]), f"{where}: wrong answers"
            assert all(reference.served_part_of(served, model.final()) for served in observation.served), where
            assert any(problem["file"] == relative for problem in observation.check), (where, observation.check)
    assert judged >= 20


def test_answers_served_before_an_error_are_compared_with_the_undamaged_ones():
    full = {"records": {("t", "a"): 1, ("t", "b"): 2}, "counters": {"c": 3},
            "text": {"search": {"q": "ranking"}, "statistics": {"documents": 2}}, "graph": {"khop": {"n": {}}}}
    assert reference.served_part_of({"records": {("t", "a"): 1}}, full)
    assert reference.served_part_of({"records": {}, "text": {"search": {"q": "ranking"}}}, full)
    assert not reference.served_part_of({"records": {("t", "a"): 2}}, full)
    assert not reference.served_part_of({"records": {("t", "z"): 1}}, full)
    assert not reference.served_part_of({"text": {"statistics": {"documents": 3}}}, full)
