"""`memctl r2g --jobs N` against `--jobs 1` on the generated mixed zh/en corpus (issue 20's bulk target: ≥ 1.7×
at 2 jobs on 4 MiB).

One ingest, then rounds that each copy the ingested store once per job count and run `memctl r2g --jobs N --json`
on the copies as fresh processes, job counts interleaved within a round so that the machine's load falls on
each alike. Wall time is what the user waits; CPU is user + system of the writer and its workers (os.wait4 of
the writer, whose workers it waited for). Every store must equal the `--jobs 1` store, clocks aside (store times
and time stamps taken while it runs: see rows_digest): the benchmark stops otherwise.

    python tools/bench/jobs_bench.py                       # 4 MiB, jobs 1 and 2, 3 rounds; writes RESULTS.md
    python tools/bench/jobs_bench.py --mb 1 --rounds 1 --jobs 1 2 3 --no-results
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [ROOT, HERE]

from common import table, write_section  # noqa: E402
from r2g_bench import MEMCTL, run  # noqa: E402

TARGET_AT_TWO = 1.7
CLOCK_FIELDS = ("created_at", "updated_at")
VERSION_CLOCK_FIELDS = ("recorded_at", "expired_at")


def rows_digest(home: str, not_before: float) -> str:
    """A digest of every table's rows, clocks aside: what `--jobs` must not change. A clock is a store time
    field (created_at, updated_at, a fact version's recorded_at and expired_at, the times of the event log, the
    facts audit and review queue) or a time stamp taken during the benchmark (`not_before` on: an undated
    edge's write time). Run in a child process of its own: a parent that had read a large store would pass its
    resident size on to the next child it forks (ru_maxrss counts the pages shared before the exec)."""
    import hashlib

    import msgpack

    from engine.store import Store
    from memctl.paths import tenant_dir

    store = Store.open(tenant_dir(home, "default"), writable=False)
    digest = hashlib.sha256()
    try:
        tables = set(store.tables)
        for records in store.records:
            tables |= set(records.tables)
        for name in sorted(tables):
            for key, value in store.scan(name):
                digest.update(msgpack.packb([name, key, _without_clocks(name, value, not_before)]))
        return digest.hexdigest()
    finally:
        store.close()


def _without_clocks(table: str, value, not_before: float):
    from memctl.event_log import LOG_TABLE
    from memctl.facts.tables import AUDIT_TABLE, REVIEW_TABLE

    if table == LOG_TABLE:  # [type, at, payload]
        return [value[0], value[2]]
    if table == AUDIT_TABLE:
        return [{name: item for name, item in entry.items() if name != "at"} for entry in value]
    if table == REVIEW_TABLE:
        return {name: item for name, item in value.items() if name != "since"}
    if not isinstance(value, dict):
        return value
    kept = {field: item for field, item in value.items() if field not in CLOCK_FIELDS and
            not (field == "ts" and isinstance(item, float) and item >= not_before)}
    attributes = (kept.get("props") or {}).get("attributes")
    if isinstance(attributes, dict) and "recorded_at" in attributes:
        kept["props"] = {**kept["props"], "attributes": {name: item for name, item in attributes.items()
                                                          if name not in VERSION_CLOCK_FIELDS}}
    return kept


def measure(ingested: str, job_counts: list, rounds: int) -> dict:
    import time

    results = {jobs: [] for jobs in job_counts}
    reference = None
    started = time.time()
    for _ in range(rounds):
        for jobs in job_counts:
            home = tempfile.mkdtemp(prefix=f"jobs-bench-{jobs}-")
            try:
                shutil.copytree(ingested, home, dirs_exist_ok=True)
                cpu, wall, rss, output = run([MEMCTL, "--home", home, "r2g", "--jobs", str(jobs), "--json"])
                rows = run([sys.executable, os.path.abspath(__file__), "--digest", home, str(started)])[3]
                if reference is None:
                    reference = rows
                elif rows != reference:
                    raise SystemExit(f"--jobs {jobs} built a different graph than --jobs {job_counts[0]}")
                results[jobs].append({"cpu": cpu, "wall": wall, "rss": rss,
                                      "turns": json.loads(output)["turns"]})
            finally:
                shutil.rmtree(home, ignore_errors=True)
    return results


def report(results: dict, megabytes: float, rounds: int) -> str:
    base = statistics.median(result["wall"] for result in results[min(results)])
    turns = results[min(results)][0]["turns"]
    rows = []
    for jobs, runs in results.items():
        wall = statistics.median(result["wall"] for result in runs)
        cpu = statistics.median(result["cpu"] for result in runs)
        rows.append([f"--jobs {jobs}", f"{wall:.1f} ({min(r['wall'] for r in runs):.1f}-"
                     f"{max(r['wall'] for r in runs):.1f})", f"{cpu:.1f}", f"{turns / wall:,.0f}",
                     f"{base / wall:.2f}×", f"{statistics.median(r['rss'] for r in runs) / 1024:,.0f} MiB"])
    at_two = [row for row in rows if row[0] == "--jobs 2"]
    verdict = ""
    if at_two:
        ratio = float(at_two[0][4].rstrip("×"))
        verdict = (f" At 2 jobs: {ratio:.2f}× (target ≥ {TARGET_AT_TWO}×: "
                   f"{'met' if ratio >= TARGET_AT_TWO else 'NOT met'}).")
    return "\n".join([
        table(["run", "wall s median (min-max)", "CPU s", "turns/s (wall)", "vs --jobs 1 (wall)", "writer max RSS"],
              rows), "",
        f"- Generated zh/en transcripts ({megabytes:g} MiB, {turns:,} turns; tools/bench/ingest_bench.py's generator, "
        f"seed 7), ingested once; {rounds} round(s), job counts interleaved; every graph equal to --jobs 1's "
        f"(clocks aside).{verdict}",
        "- CPU grows with jobs: each worker loads the lexicons and the Chinese dictionary, and analyses travel "
        "pickled (memctl/r2g/analysis_pool.py). The writer's own work (emit, SAME_AS, text index, commit) "
        "bounds the gain."])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=4.0, help="size of the generated corpus")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-results", action="store_true", help="print only; leave RESULTS.md alone")
    parser.add_argument("--digest", nargs=2, metavar=("HOME", "NOT_BEFORE"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.digest:
        print(rows_digest(arguments.digest[0], float(arguments.digest[1])))
        return
    from ingest_bench import generate_corpus

    work = tempfile.mkdtemp(prefix="jobs-bench-")
    try:
        corpus = os.path.join(work, "corpus")
        generate_corpus(corpus, int(arguments.mb * 2**20), arguments.seed)
        ingested = os.path.join(work, "ingested")
        run([MEMCTL, "--home", ingested, "ingest", "--raw", corpus, "--format", "transcript", "--quiet"])
        results = measure(ingested, sorted(arguments.jobs), arguments.rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    body = report(results, arguments.mb, arguments.rounds)
    print(body)
    if not arguments.no_results:
        write_section("jobs_bench", body)


if __name__ == "__main__":
    main()
