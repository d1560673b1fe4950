"""Torn-tail sweep (REFERENCES C #4): truncate each file kind at every byte offset, judge the store.

    python tools/crash/truncate.py --seed S [--count MAX_OFFSETS_PER_FILE] [--wal-count MAX] [--near BYTES]
        [--store PATH] [--only CASE]

Files: the live WAL, one file of every segment kind the MANIFEST names (records, text.postings and
graph.csr: the reference stores write text documents and graph changes in every batch), the MANIFEST and
CURRENT. Offsets: every byte of the file when it is under 64 KiB, else every byte from the start of its second-to-last record (WAL) or of its last 8 KiB (other kinds) to
the end. --count (and --wal-count for the WAL) caps the offsets per file for CI: the ones within --near (16)
bytes of a record, fragment or block boundary are always kept, the rest are a seeded sample.

Verdicts. WAL cut at or above the MANIFEST's checkpoint (`wal_size`, engine/wal_checkpoint.py: the bytes synced
when it was published; a cut there is what a crash mid-append leaves): no exception anywhere; reader, writer
(recovery) and reader again all answer exactly the state of the complete records before the cut (the
reference store's model, or for --store a copy cut at the last record boundary): every record and counter, and
for the first cut that leaves each record prefix the text and graph answers too (they are a function of the
records and the segments); check_store reports no problem before or after recovery. WAL cut below the
checkpoint (acknowledged batches lost), segment, MANIFEST, CURRENT: every open raises a CorruptionError naming
the file, check_store reports a problem, a refused writer open modifies nothing, and a segment read directly
(Segment.open) is refused too.

Two reference stores are swept: a compacted one with a short WAL, and one with two segments and a WAL
whose second-to-last batch spans several 32 KiB blocks.
"""

from __future__ import annotations

import os
import random
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crashtool import Failures, log, parser, resolve_seed, scratch_space, try_damage  # noqa: E402

from engine.errors import CorruptionError  # noqa: E402
from engine.format import WAL_BLOCK_SIZE, WAL_HEADER_SIZE  # noqa: E402
from tools.testing import damage, reference  # noqa: E402

WHOLE_FILE_BELOW = 64 << 10
TAIL_BYTES = 8 << 10
NEAR = 16


def boundaries(kind: str, data: bytes) -> list[int]:
    marks = [0, len(data)]
    if kind == "wal":
        marks.append(WAL_HEADER_SIZE)
        for start, end in reference.wal_records(data):
            marks += [start, end]
        marks += list(range(WAL_BLOCK_SIZE, len(data), WAL_BLOCK_SIZE))
    return marks


def offsets(kind: str, data: bytes, limit: int | None, rng: random.Random, near: int = NEAR) -> list[int]:
    size = len(data)
    if size < WHOLE_FILE_BELOW:
        first = 0
    elif kind == "wal":
        first = reference.wal_records(data)[-2][0]
    else:
        first = size - TAIL_BYTES
    candidates = range(first, size)
    if limit is None or len(candidates) <= limit:
        return list(candidates)
    kept = {offset for mark in boundaries(kind, data) for offset in range(mark - near, mark + near + 1)
            if first <= offset < size}
    rest = [offset for offset in candidates if offset not in kept]
    return sorted(kept | set(rng.sample(rest, max(0, min(len(rest), limit - len(kept))))))


class WalOracle:
    """The answers a store must give when its WAL is cut at an offset."""

    def __init__(self, store: str, relative: str, data: bytes, pristine: dict, model: reference.Reference | None):
        from engine import manifest as manifest_module

        self.store, self.relative, self.data, self.pristine, self.model = store, relative, data, pristine, model
        self.records = reference.wal_records(data)
        self._cache: dict = {}
        self.checkpoint = manifest_module.load(store, manifest_module.read_current(store)).wal_size

    def refused(self, offset: int) -> bool:
        """Whether the cut loses bytes the MANIFEST recorded as synced: damage, not a torn tail."""
        return offset < self.checkpoint

    def complete(self, offset: int) -> int:
        """How many records lie whole before `offset`."""
        return sum(1 for _start, end in self.records if end <= offset)

    def expected(self, offset: int) -> dict:
        complete = self.complete(offset)
        if self.model is not None:
            return self.model.states[self.model.flushed + complete]
        if complete not in self._cache:
            cut = self.records[complete - 1][1] if complete else WAL_HEADER_SIZE
            damage.replace_file(os.path.join(self.store, self.relative), self.data[:cut])
            observation = damage.observe(self.store)
            damage.restore(self.store, self.pristine)
            self._cache[complete] = observation.reader
        return self._cache[complete]


def judge_wal(observation: damage.Observation, expected: dict) -> str:
    if observation.errors():
        return f"raised {observation.errors()[0]!r}"
    if not observation.answered_as([expected]):
        return "answers differ from the state of the complete records before the cut"
    if observation.check or observation.check_after:
        return f"check_store reports {(observation.check or observation.check_after)[0]}"
    return ""


def judge_refused(observation: damage.Observation, relative: str) -> str:
    for step in observation.steps():
        if not isinstance(step, CorruptionError):
            return f"an open gave {type(step).__name__}: {str(step)[:200]}, not a CorruptionError"
        if not step.path:
            return f"{step!r} names no file"
    if not any(problem["file"] == relative for problem in observation.check):
        return f"check_store does not name {relative}: {observation.check}"
    if observation.changed_by_failed_open:
        return f"the refused writer open modified {observation.changed_by_failed_open}"
    return ""


def judge_segment_alone(path: str) -> str:
    from engine.segment import Segment

    try:
        Segment.open(path).verify()
    except CorruptionError:
        return ""
    except Exception as error:  # any other type is the failure being looked for
        return f"Segment.open raised {error!r}"
    return "Segment.open accepted a truncated segment"


def sweep_store(label: str, store: str, model, limits: tuple, rng, only, failures: Failures, near: int = NEAR) -> int:
    """`limits`: (offsets per file, offsets of the WAL or None for the same)."""
    pristine = damage.snapshot(store)
    cases = 0
    for kind, relatives in sorted(reference.files_by_kind(store).items()):
        relative = relatives[-1]
        path = os.path.join(store, relative)
        data = pristine[relative]
        oracle = WalOracle(store, relative, data, pristine, model) if kind == "wal" else None
        if oracle is not None:
            failures.log(f"truncate.py: {label} wal: cuts below byte {oracle.checkpoint} (the MANIFEST's checkpoint) "
                         "must be refused")
        limit = limits[1] if kind == "wal" and limits[1] is not None else limits[0]
        chosen = offsets(kind, data, limit, rng, near)
        # Derived answers are a function of the records and segments: every cut's records are read whole, and
        # the text and graph questions are asked once per record prefix a cut can leave (refused opens read
        # nothing).
        asked: set = set()
        failures.log(f"truncate.py: {label} {kind} {relative}: {len(data)} bytes, {len(chosen)} offsets")
        for offset in chosen:
            case = f"{label} {kind} offset={offset}"
            if only and only != case:
                continue
            cases += 1
            group = oracle.complete(offset) if oracle is not None and not oracle.refused(offset) else None

            def verdict():
                observation = damage.observe(store, derived_answers=group is not None and group not in asked)
                asked.add(group)
                if oracle is not None and not oracle.refused(offset):
                    return judge_wal(observation, oracle.expected(offset))
                problem = judge_refused(observation, relative)
                if not problem and kind.startswith("segment:"):
                    problem = judge_segment_alone(path)
                return problem

            try_damage(failures, case, store, pristine, path, data[:offset], verdict)
    return cases


def run(seed: int, limit: int | None = None, store: str | None = None, only: str | None = None,
        keep: bool = False, log=log, near: int = NEAR, wal_limit: int | None = None) -> Failures:
    """`wal_limit` caps the WAL's offsets (default `limit`): a cut WAL opens, and is read, three times."""
    failures = Failures("truncate.py", seed, log)
    rng = random.Random(seed)
    with scratch_space("truncate", keep) as scratch:
        if store is not None:
            copy = os.path.join(scratch, "given")
            shutil.copytree(store, copy, ignore=shutil.ignore_patterns("LOCK", "LOCK.gc"))
            failures.cases += sweep_store("given", copy, None, (limit, wal_limit), rng, only, failures, near)
        else:
            for label, options in (("compacted", {}), ("multiblock", {"big_tail": True, "compact": False})):
                path = os.path.join(scratch, label)
                model = reference.build(path, seed, **options)
                failures.cases += sweep_store(label, path, model, (limit, wal_limit), rng, only, failures, near)
        log(f"truncate.py: {failures.cases} truncated stores judged")
    return failures


def main(argv=None) -> int:
    arguments_parser = parser(__doc__.splitlines()[0], default_count=0)
    arguments_parser.add_argument("--store", default=None, help="sweep a copy of this store instead")
    arguments_parser.add_argument("--only", default=None, help="one case, as printed by a failure")
    arguments_parser.add_argument("--wal-count", type=int, default=None, help="cap on the WAL's offsets (default --count)")
    arguments_parser.add_argument("--near", type=int, default=NEAR,
                                  help="offsets this close to a boundary are always kept (default %(default)s)")
    arguments = arguments_parser.parse_args(argv)
    failures = run(resolve_seed(arguments.seed), arguments.count or None, arguments.store, arguments.only,
                   arguments.keep, near=arguments.near, wal_limit=arguments.wal_count)
    return failures.exit_code()


if __name__ == "__main__":
    sys.exit(main())
