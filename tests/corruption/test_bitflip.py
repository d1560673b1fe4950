"""Bit flips, extreme header fields, zeroed pages (REFERENCES C #5): tools/crash/bitflip.py."""

from __future__ import annotations

from tools.testing.scripts import crash_tool, seed

bitflip = crash_tool("bitflip")


def test_a_thousand_flips_per_file_kind_and_every_header_field_are_detected_or_harmless():
    # Text and graph segments: 200 flips each, every damaged copy asked every text and graph question.
    failures = bitflip.run(seed(501), count=1000, derived_count=200, log=print)
    assert not failures, "\n".join(failures.items)
    assert failures.cases >= 4 * 1000 + 2 * 200


def test_regression_w1_a_zeroed_wal_header_is_detected():
    failures = bitflip.run(seed(502), count=0, fields=False, only="wal zero page at 0", enforce_known=True,
                           log=print)
    assert not failures, "\n".join(failures.items)


def test_struct_fields_cover_each_header_byte_once():
    from engine.format import SEGMENT_FOOTER_FORMAT, SEGMENT_FOOTER_SIZE

    fields = bitflip.struct_fields(SEGMENT_FOOTER_FORMAT, 100)
    assert [(offset, size) for _code, offset, size in fields] == [(100, 8), (108, 4), (112, 4), (116, 4),
                                                                  (120, 4), (124, 8)]
    assert sum(size for _code, _offset, size in fields) == SEGMENT_FOOTER_SIZE
