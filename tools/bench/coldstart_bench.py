"""Cold start: fresh `memctl` processes on the samples store against the import floor, in one run.

    python tools/bench/coldstart_bench.py [--rounds 30] [--importtime 9] [--write]

Every memctl command runs as a fresh process, so what a user waits for is mostly interpreter start and imports.
The floor is `python -c "import typer, rich, numpy"`: what any Python CLI built on those libraries pays before its
own code. Each round runs the floor and every command once, in turn (interleaved, so load drifting on a shared
machine treats them alike); the table gives medians of wall and CPU time (user + system of the child) and their
ratio to the floor's. Target (issue 16 point 8): `recall QUERY --json` ≤ 1.4× the floor.

Two ways of loading memctl's own modules are measured:
- installed: bytecode cached, as `pip install` leaves it (a first, untimed round writes what is missing or stale);
- from source: memctl and engine compiled in every process, as an editable install under
  PYTHONDONTWRITEBYTECODE=1 does (a copy of both packages without __pycache__, first on PYTHONPATH; the libraries
  keep their installed bytecode).

The store: samples/ ingested, `memctl r2g`, and samples/journal.txt added to the documents index, in a temporary
home; the writers (`ingest --text`, `r2g` of nothing new) run on a copy of it. --importtime N adds the
`python -X importtime` self times of memctl's and engine's modules in a cold recall, both ways (the least of
N runs). --write replaces the coldstart_bench section of RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import compile_bytecode, table, write_section  # noqa: E402

FLOOR = "python -c 'import typer, rich, numpy' (floor)"
TARGET = 1.4
QUERY = "Win11 蓝牙 打不开"
OWN_PACKAGES = ("memctl", "engine")


def memctl_command() -> str:
    return str(Path(sys.executable).with_name("memctl"))


def commands(home: Path, writer_home: Path, node: str) -> dict:
    """{row name: argv}, the floor first; the writers on a copy of the store, so the readers' store stays as built."""
    memctl = [memctl_command(), "--home", str(home)]
    writer = [memctl_command(), "--home", str(writer_home)]
    return {
        FLOOR: [sys.executable, "-c", "import typer, rich, numpy"],
        f"recall {QUERY!r} --json": memctl + ["recall", QUERY, "--json"],
        "search 'bluetooth driver' --json": memctl + ["search", "bluetooth driver", "--json"],
        "graph khop ID --k 2 --json": memctl + ["graph", "khop", node, "--k", "2", "--json"],
        "stats --json": memctl + ["stats", "--json"],
        "ingest --text 'one line' --quiet": writer + ["ingest", "--text", "one line", "--quiet"],
        "r2g (nothing new) --json": writer + ["r2g", "--json"],
        "--help": memctl + ["--help"],
    }


def build_store(home: Path) -> str:
    """The samples store; returns the key of recall's first result, for khop."""
    memctl = [memctl_command(), "--home", str(home)]
    for sample in sorted((ROOT / "samples").iterdir()):
        _check([*memctl, "ingest", "--raw", str(sample), "--quiet"])
    _check([*memctl, "r2g", "--quiet"])
    _check([*memctl, "index", "add", str(ROOT / "samples" / "journal.txt")])
    import json

    answer = json.loads(_check([*memctl, "recall", QUERY, "--json"]))
    return answer["results"][0]["id"]


def _check(argv: list, environment: dict | None = None) -> str:
    result = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=environment)
    if result.returncode:
        raise SystemExit(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr[-800:]}")
    return result.stdout


def installed_environment() -> dict:
    compile_bytecode()
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def source_environment(work: Path) -> dict:
    """memctl and engine from a copy without bytecode, never writing any."""
    copy = work / "source"
    for package in OWN_PACKAGES:
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    environment = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(copy), os.environ.get("PYTHONPATH")]))
    return environment


def measure(argvs: dict, environment: dict, rounds: int) -> dict:
    """{name: (wall seconds, CPU seconds)} medians over `rounds` interleaved rounds after an untimed one."""
    samples = {name: ([], []) for name in argvs}
    for round_index in range(rounds + 1):
        for name, argv in argvs.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            _check(argv, environment)
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if round_index:
                samples[name][0].append(wall)
                samples[name][1].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {name: (statistics.median(walls), statistics.median(cpus)) for name, (walls, cpus) in samples.items()}


def timing_table(results: dict) -> str:
    """One row per command: for each way of loading, wall and CPU medians (ms) and their ratios to the floor."""
    headers = ["command"]
    for way in results:
        headers += [f"{way}: wall ms", "× floor", "CPU ms", "× floor"]
    rows = []
    for name in next(iter(results.values())):
        row = [name]
        for medians in results.values():
            (wall, cpu), (floor_wall, floor_cpu) = medians[name], medians[FLOOR]
            row += [f"{wall * 1e3:.0f}", f"{wall / floor_wall:.2f}", f"{cpu * 1e3:.0f}", f"{cpu / floor_cpu:.2f}"]
        rows.append(row)
    return table(headers, rows)


_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)$")


def importtime_table(argv: list, environment: dict, runs: int, top: int = 25) -> str:
    """memctl's and engine's modules by self import time (the least of `runs` processes), with their totals."""
    least: dict = {}
    for _ in range(runs):
        # The memctl script, not `python -c`: that would put the repository (and its bytecode) first on sys.path.
        result = subprocess.run([sys.executable, "-X", "importtime", memctl_command(), *argv], capture_output=True,
                                text=True, cwd=ROOT, env=environment)
        for line in result.stderr.splitlines():
            match = _IMPORT_LINE.match(line)
            if match:
                self_us, module = int(match.group(1)), match.group(4)
                least[module] = min(least.get(module, self_us), self_us)
    own = {module: spent for module, spent in least.items() if module.split(".")[0] in OWN_PACKAGES}
    ranked = sorted(own.items(), key=lambda item: -item[1])
    rows = [[module, f"{spent / 1e3:.2f}"] for module, spent in ranked[:top]]
    summary = (f"{len(own)} modules of memctl and engine, {sum(own.values()) / 1e3:.1f} ms self in all; "
               f"{len(least)} modules in all, {sum(least.values()) / 1e3:.1f} ms")
    return summary + "\n\n" + table(["module", "self ms"], rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--importtime", type=int, default=9, metavar="N", help="importtime runs (0: none)")
    parser.add_argument("--write", action="store_true", help="replace the coldstart_bench section of RESULTS.md")
    options = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="memctl-coldstart-") as work:
        work = Path(work)
        environments = {"installed": installed_environment(), "from source": source_environment(work)}
        node = build_store(work / "home")
        shutil.copytree(work / "home", work / "writer-home")
        argvs = commands(work / "home", work / "writer-home", node)
        results = {way: measure(argvs, environment, options.rounds) for way, environment in environments.items()}
        report = [f"Medians of {options.rounds} interleaved rounds (one untimed round first); "
                  f"target: recall ≤ {TARGET}× the floor.", "", timing_table(results)]
        recall = argvs[f"recall {QUERY!r} --json"]
        report.append("")
        for way, medians in results.items():
            wall, cpu = (medians[f"recall {QUERY!r} --json"][index] / medians[FLOOR][index] for index in (0, 1))
            verdict = "within" if max(wall, cpu) <= TARGET else "OVER"
            report.append(f"- recall, {way}: {wall:.2f}× the floor's wall time, {cpu:.2f}× its CPU time: {verdict} "
                          f"the target")
        for way, environment in environments.items() if options.importtime else ():
            report += ["", f"`python -X importtime` of a cold `memctl recall {QUERY!r} --json` ({way}), "
                       f"memctl and engine modules by self time, least of {options.importtime} runs:", "",
                       importtime_table(recall[1:], environment, options.importtime)]
    text = "\n".join(report)
    print(text)
    if options.write:
        write_section("coldstart_bench", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
