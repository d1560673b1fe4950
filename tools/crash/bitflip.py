"""Bit-flip corruption (REFERENCES C #5): damage each file kind, require detection or a correct answer.

    python tools/crash/bitflip.py --seed S --count FLIPS_PER_KIND [--derived-count FLIPS] [--only CASE]
        [--no-fields] [--no-pages]

For each file kind of a reference store (the live WAL, every segment kind its MANIFEST names: records,
text.postings, graph.csr; the MANIFEST, CURRENT): `count` single-bit flips at seeded offsets (or
--derived-count for the text and graph segments, whose every damaged copy is asked every text and graph
question); then every field of every fixed header and footer (WAL file header, the first and last WAL record headers, segment header and footer, MANIFEST header) set to
extreme values (0, 2^31, 2^32-1 and the field's own maximum; magic bytes zeroed or 0xFF), both as is and
with the header CRC recomputed so the value gets past it; then every 4 KiB page zeroed.

Each damaged store is opened as a reader, checked, opened as a writer (recovery) and as a reader again,
within a deadline. Verdict: only CorruptionError (or its UnsupportedVersion) may be raised, naming the
file; an error in any step means check_store reports a problem too; a refused writer open modifies nothing;
every answer given, including those a step served before it raised, equals the undamaged store's (records
and counters in every step; when a text or graph segment is damaged, the first step's text rankings and
graph neighbours, k-hop and nodes by type too), except that damage inside the last WAL record may drop
that one batch (a torn tail cannot be told from a damaged last record) and a crafted WAL header (its CRC
recomputed) may cost the WAL's batches from some point on; damage to a segment is always reported by
check_store (its whole-file CRC covers every byte; a crafted header is the exception). Peak RSS may not
grow by more than 64 MiB. Cases listed in KNOWN_ISSUES (engine issues reported, not yet fixed) print KNOWN
instead of FAIL unless --enforce-known.
"""

from __future__ import annotations

import os
import random
import resource
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crashtool import Failures, log, parser, resolve_seed, scratch_space, try_damage  # noqa: E402

from engine.codec import crc32  # noqa: E402
from engine.errors import CorruptionError  # noqa: E402
from engine.format import (  # noqa: E402
    GRAPH_SEGMENT_KIND,
    MANIFEST_HEADER_FORMAT,
    SEGMENT_FOOTER_FORMAT,
    SEGMENT_FOOTER_SIZE,
    SEGMENT_HEADER_FORMAT,
    SEGMENT_HEADER_SIZE,
    TEXT_SEGMENT_KIND,
    WAL_HEADER_FORMAT,
    WAL_HEADER_SIZE,
    WAL_RECORD_HEADER_FORMAT,
)
from tools.testing import damage, derived, reference  # noqa: E402

PAGE = 4096
DERIVED_SEGMENTS = (f"segment:{TEXT_SEGMENT_KIND}", f"segment:{GRAPH_SEGMENT_KIND}")
RSS_GROWTH_LIMIT_KIB = 64 << 10
# Engine issues reported to the lead and not fixed yet (see crashtool.Failures).
KNOWN_ISSUES: dict = {}


def struct_fields(layout: str, base: int) -> list[tuple[str, int, int]]:
    """(struct code, absolute offset, size) of every field of a little-endian struct layout."""
    fields = []
    offset = base
    for code in _codes(layout):
        size = struct.calcsize("<" + code)
        fields.append((code, offset, size))
        offset += size
    return fields


def _codes(layout: str) -> list[str]:
    codes, digits = [], ""
    for character in layout.lstrip("<"):
        if character.isdigit():
            digits += character
        else:
            codes.append(digits + character)
            digits = ""
    return codes


def extremes(code: str, size: int) -> list[bytes]:
    if code.endswith("s"):
        return [bytes(size), b"\xff" * size]
    maximum = (1 << (8 * size)) - 1
    values = sorted({0, min(1 << 31, maximum), min((1 << 32) - 1, maximum), maximum, 1 << (8 * size - 1)})
    return [value.to_bytes(size, "little") for value in values]


def header_fields(kind: str, data: bytes) -> list[tuple[str, int, int, int | None]]:
    """(label, offset, size, crc_end or None): the fields to set, and the span a header CRC covers."""
    found = []

    def add(label, layout, base, crc_end=None):
        for index, (code, offset, size) in enumerate(struct_fields(layout, base)):
            found.append((f"{label}.field{index}", offset, size, code, crc_end))

    if kind == "wal":
        add("wal_header", WAL_HEADER_FORMAT, 0, WAL_HEADER_SIZE - 4)
        records = reference.wal_records(data)
        if records:
            add("first_record", WAL_RECORD_HEADER_FORMAT, records[0][0])
            add("last_record", WAL_RECORD_HEADER_FORMAT, records[-1][0])
    elif kind.startswith("segment:"):
        add("segment_header", SEGMENT_HEADER_FORMAT, 0, SEGMENT_HEADER_SIZE - 4)
        add("segment_footer", SEGMENT_FOOTER_FORMAT, len(data) - SEGMENT_FOOTER_SIZE)
    elif kind == "manifest":
        add("manifest_header", MANIFEST_HEADER_FORMAT, 0)
    return found


def with_field(data: bytes, offset: int, value: bytes, crc_end: int | None) -> bytes:
    changed = bytearray(data)
    changed[offset: offset + len(value)] = value
    if crc_end is not None and offset < crc_end:
        changed[crc_end: crc_end + 4] = struct.pack("<I", crc32(bytes(changed[:crc_end])))
    return bytes(changed)


def damages(kind: str, data: bytes, count: int, rng: random.Random, fields: bool, pages: bool):
    """(case label, damaged bytes, first damaged offset, end of the damaged range)."""
    for _ in range(count):
        offset, bit = rng.randrange(len(data)), rng.randrange(8)
        flipped = bytearray(data)
        flipped[offset] ^= 1 << bit
        yield f"flip offset={offset} bit={bit}", bytes(flipped), offset, offset + 1
    if fields:
        for label, offset, size, code, crc_end in header_fields(kind, data):
            for value in extremes(code, size):
                for fix in ((False, True) if crc_end is not None and offset < crc_end else (False,)):
                    damaged = with_field(data, offset, value, crc_end if fix else None)
                    if damaged != data:
                        yield f"{label}={value.hex()}{' crc-fixed' if fix else ''}", damaged, offset, offset + size
    if pages:
        for page in range(0, len(data), PAGE):
            zeroed = data[:page] + bytes(min(PAGE, len(data) - page)) + data[page + PAGE:]
            if zeroed != data:
                yield f"zero page at {page}", zeroed, page, page + PAGE


def torn_from(records: list, start: int, end: int) -> int | None:
    """The index of the first WAL record hit by damage to [start, end) when every record from it on is hit
    too: the file then looks like a torn tail from that record, and dropping those batches is allowed."""
    hit = [index for index, (first, last) in enumerate(records) if first < end and start < last]
    if hit and hit == list(range(hit[0], len(records))):
        return hit[0]
    return None


def judge(kind: str, relative: str, observation: damage.Observation, allowed: list, segment: bool) -> str:
    """`segment`: the whole-file CRC must make check_store report the file (not for crafted headers: a header
    that embeds the CRC of its own bytes leaves the file CRC unchanged whatever the header holds)."""
    for step in observation.errors():
        if not isinstance(step, CorruptionError):
            return f"raised {type(step).__name__}: {str(step)[:300]}"
        if not step.path:
            return f"{step!r} names no file"
    if not observation.answered_as(allowed):
        return "served answers that differ from the undamaged store's"
    for served in observation.served:
        if not any(reference.served_part_of(served, state) for state in allowed):
            return "served answers that differ from the undamaged store's before raising"
    if observation.errors() and not observation.check:
        return f"reads raised {observation.errors()[0]!r} but check_store found no problem"
    if observation.changed_by_failed_open:
        return f"the refused writer open modified {observation.changed_by_failed_open}"
    if segment and not any(problem["file"] == relative for problem in observation.check):
        return f"check_store does not report the damaged segment: {observation.check}"
    return ""


def sweep_kind(store: str, model: reference.Reference, kind: str, relative: str, count: int, rng, options,
               only, failures: Failures) -> int:
    pristine = damage.snapshot(store)
    data = pristine[relative]
    path = os.path.join(store, relative)
    final = model.final()
    wal_prefixes = model.states[model.flushed:]
    records = reference.wal_records(data) if kind == "wal" else []
    # Text and graph answers come from their kinds' segments and from records: damage anywhere else can
    # change them only through records, which every step reads whole.
    derived_answers = kind in DERIVED_SEGMENTS
    cases = 0
    for label, damaged, start, end in damages(kind, data, count, rng, *options):
        case = f"{kind} {label}"
        if only and only != case:
            continue
        cases += 1
        crafted = label.endswith("crc-fixed")
        allowed = [final]
        if kind == "wal" and crafted:
            allowed = wal_prefixes  # a valid-looking header may cost the tail, never wrong data
        elif kind == "wal":
            lost = torn_from(records, start, end)
            if lost is not None:
                allowed.append(wal_prefixes[lost])
        strict = kind.startswith("segment:") and not crafted

        def verdict():
            observation = damage.observe(store, seconds=2.0, derived_answers=derived_answers)
            return judge(kind, relative, observation, allowed, strict)

        try_damage(failures, case, store, pristine, path, damaged, verdict)
    return cases


def run(seed: int, count: int = 1000, fields: bool = True, pages: bool = True, only: str | None = None,
        enforce_known: bool = False, keep: bool = False, log=log, derived_count: int | None = None) -> Failures:
    failures = Failures("bitflip.py", seed, log, known=KNOWN_ISSUES, enforce_known=enforce_known)
    rng = random.Random(seed)
    with scratch_space("bitflip", keep) as scratch:
        derived.warm_up()  # jieba's dictionary is loaded once per process, not per damaged store
        baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for label, options in (("compacted", {}), ("multiblock", {"big_tail": True, "compact": False})):
            store = os.path.join(scratch, label)
            model = reference.build(store, seed, **options)
            for kind, relatives in sorted(reference.files_by_kind(store).items()):
                # Random flips on the small store (every byte is a candidate), fields and pages on both.
                flips = 0 if label != "compacted" else count if derived_count is None or \
                    kind not in DERIVED_SEGMENTS else derived_count
                cases = sweep_kind(store, model, kind, relatives[-1], flips, rng, (fields, pages), only, failures)
                log(f"bitflip.py: {label} {kind} {relatives[-1]}: {cases} damaged copies judged")
                failures.cases += cases
        growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - baseline
        if growth > RSS_GROWTH_LIMIT_KIB:
            failures.add("rss", f"peak RSS grew by {growth // 1024} MiB")
        log(f"bitflip.py: {failures.cases} damaged stores judged, peak RSS growth {growth // 1024} MiB")
    return failures


def main(argv=None) -> int:
    arguments_parser = parser(__doc__.splitlines()[0], default_count=1000)
    arguments_parser.add_argument("--derived-count", type=int, default=None,
                                  help="flips per text and graph segment (default: --count)")
    arguments_parser.add_argument("--only", default=None, help="one case, as printed by a failure")
    arguments_parser.add_argument("--no-fields", action="store_true", help="skip the header/footer fields")
    arguments_parser.add_argument("--no-pages", action="store_true", help="skip the zeroed pages")
    arguments_parser.add_argument("--enforce-known", action="store_true", help="count KNOWN_ISSUES cases as failures")
    arguments = arguments_parser.parse_args(argv)
    failures = run(resolve_seed(arguments.seed), arguments.count, not arguments.no_fields, not arguments.no_pages,
                   arguments.only, arguments.enforce_known, arguments.keep, derived_count=arguments.derived_count)
    return failures.exit_code()


if __name__ == "__main__":
    sys.exit(main())
