"""Shared by the benchmarks in tools/bench/: repeated timing with medians, a plain table, one section per
benchmark in tools/bench/RESULTS.md (replaced on rerun, other sections kept), and the bytecode an installed
package would have.

    from common import compile_bytecode, interleaved, table, write_section
"""

from __future__ import annotations

import datetime
import os
import platform
import re
import shlex
import statistics
import sys
import time
from dataclasses import dataclass

RESULTS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS_TITLE = "# Benchmark results\n\nEach section is written by the benchmark it names; rerunning one replaces only its section.\n"


@dataclass
class Timing:
    """Seconds of each repetition of one measurement."""

    samples: list

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


def _once(run, setup) -> float:
    """Time `run()`, or `run(setup())` with the setup untimed. `run` may return its own elapsed seconds (a
    float) to exclude part of its work, such as opening and closing what it measures."""
    argument = setup() if setup is not None else None
    started = time.perf_counter()
    returned = run(argument) if setup is not None else run()
    elapsed = time.perf_counter() - started
    return returned if isinstance(returned, float) else elapsed


def interleaved(contenders: dict, times: int = 5) -> dict:
    """{name: run or (run, setup)} → {name: Timing}, alternating the contenders in every round so that a
    machine whose load drifts (other jobs, disk cache, CPU frequency) treats them alike."""
    samples: dict = {name: [] for name in contenders}
    for _ in range(times):
        for name, contender in contenders.items():
            run, setup = contender if isinstance(contender, tuple) else (contender, None)
            samples[name].append(_once(run, setup))
    return {name: Timing(values) for name, values in samples.items()}


def table(headers: list[str], rows: list[list]) -> str:
    """A Markdown table, readable as plain text in a terminal too."""
    cells = [[str(cell) for cell in row] for row in [headers] + rows]
    widths = [max(len(row[column]) for row in cells) for column in range(len(headers))]

    def line(row):
        return "| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths)) + " |"

    return "\n".join([line(cells[0]), "|" + "|".join("-" * (width + 2) for width in widths) + "|"]
                     + [line(row) for row in cells[1:]])


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_summary() -> str:
    # nproc counts the CPUs this process may run on, which is what a benchmark gets.
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    memory = _memory_bytes()
    ram = f"{memory / 2**30:.1f} GiB RAM" if memory else "RAM unknown"
    try:
        load = "load average %.1f %.1f %.1f" % os.getloadavg()
    except OSError:
        load = "load average unknown"
    return (f"nproc {nproc}, {ram}, {_cpu_model()}, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}; {load} when the results were written")


def command_line() -> str:
    """How this run was started, relative to the repository root when possible."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = os.path.relpath(os.path.abspath(sys.argv[0]), root) if sys.argv else "?"
    return shlex.join(["python", script] + sys.argv[1:])


def compile_bytecode() -> None:
    """Write the .pyc files of memctl and engine, as installing the package does: with PYTHONDONTWRITEBYTECODE
    set, every process would otherwise compile each module edited since the last write (tens of ms), some of
    them inside a timed call (the modules a command imports lazily)."""
    import compileall

    for package in ("engine", "memctl"):
        compileall.compile_dir(os.path.join(ROOT, package), quiet=1)


def write_section(name: str, body: str, path: str = RESULTS_PATH) -> None:
    """Replace the section `name` of RESULTS.md (delimited by HTML comments) with `body`, keeping the rest."""
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    stamp = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    section = (f"{begin}\n## {name}\n\nCommand: `{command_line()}`  \nDate: {stamp}  \nMachine: {machine_summary()}\n\n"
               f"{body.strip()}\n{end}")
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        text = RESULTS_TITLE
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _match: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text.rstrip("\n") + "\n")
