"""Chinese segmentation in a fresh process: jieba's own first cut (its dictionary cache in place) against the
compiled dictionary's (engine.text.chinese), and what that does to `memctl r2g` of one small exchange.

    python tools/bench/chinese_bench.py                      # 7 interleaved rounds, writes tools/bench/RESULTS.md
    python tools/bench/chinese_bench.py --runs 3 --no-results --baseline-tree /tmp/memctl-base

Rows, each a median over interleaved rounds (the contenders alternate in every round):
  first cut          from before the import to the first sentence's words: `import jieba; jieba.cut(S)` against
                     `chinese.tokenizer().cut(S)`, timed inside a fresh interpreter (start-up excluded)
  first posseg cut   the same for jieba.posseg.cut and chinese.pos_tagger().cut
  R2G tagger ready   memctl.r2g.nlp_zh.warm_up(): jieba's dictionary plus the lexicon words, or the compiled one
  memctl r2g         wall time of the `memctl r2g` process after a 2-turn exchange (Chinese, then English) was
                     ingested into a copy of the samples store (samples/ ingested and converted)
The "jieba" side of the r2g rows is jieba itself, as memctl cut Chinese before the compiled dictionary: by
default the same code with the compiled dictionary made unusable (a cache directory that cannot exist), or,
with --baseline-tree, another checkout of memctl (say the commit before this change, `git archive`d).
The compiled dictionaries (the text index's, R2G's) are built first, timed once, in a cache directory of the
run's own.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [ROOT, HERE]

from common import compile_bytecode, interleaved, table, write_section  # noqa: E402

SENTENCE = "我的电脑升级到Win11之后蓝牙打不开了，小明昨天在公园里踢足球。"
CHINESE_EXCHANGE = "用户：我下周三要去杭州出差，帮我记一下，顺便提醒我带上蓝牙耳机。\n" \
                   "助手：好的，已记下：下周三去杭州出差，记得带蓝牙耳机。\n"
ENGLISH_EXCHANGE = "Dana: I'm flying to Lisbon next Wednesday for the product launch, remind me to pack my charger.\n" \
                   "Assistant: Noted: Lisbon next Wednesday for the launch; pack the charger.\n"
PROBES = {
    "jieba cut": "import jieba, logging; jieba.setLogLevel(logging.WARNING); list(jieba.cut(S))",
    "compiled cut": "from engine.text import chinese; list(chinese.tokenizer().cut(S))",
    "jieba posseg": "import jieba, logging; jieba.setLogLevel(logging.WARNING); import jieba.posseg; "
                    "list(jieba.posseg.cut(S))",
    "compiled posseg": "from engine.text import chinese; list(chinese.pos_tagger().cut(S))",
    "R2G tagger": "from memctl.r2g import nlp_zh; nlp_zh.warm_up()",
}
PROBE = "import sys, time\nS = sys.argv[1]\nstarted = time.perf_counter()\n{code}\nprint(time.perf_counter() - started)\n"


def environment(cache: str, python_path: str | None = None) -> dict:
    variables = {**os.environ, "XDG_CACHE_HOME": cache, "OPENBLAS_NUM_THREADS": "1"}
    variables.pop("PYTHONPATH", None)
    if python_path:
        variables["PYTHONPATH"] = python_path
    return variables


def probe(code: str, cache: str) -> float:
    result = subprocess.run([sys.executable, "-c", PROBE.format(code=code), SENTENCE], cwd=ROOT, check=True,
                            capture_output=True, text=True, env=environment(cache))
    return float(result.stdout.strip().splitlines()[-1])


def memctl(arguments: list, variables: dict) -> float:
    """Wall seconds of one `python -m memctl ARGUMENTS` process."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memctl", *arguments], check=True, capture_output=True, env=variables,
                   cwd=tempfile.gettempdir())
    return time.perf_counter() - started


def samples_store(directory: str, cache: str) -> str:
    home = os.path.join(directory, "samples-home")
    memctl(["--home", home, "ingest", "--raw", os.path.join(ROOT, "samples"), "--quiet"], environment(cache))
    memctl(["--home", home, "r2g", "--quiet"], environment(cache))
    return home


def r2g_after_exchange(samples: str, exchange: str, directory: str, variables: dict):
    """(run, setup) for interleaved: setup copies the samples store and ingests the exchange, run times r2g."""

    def setup():
        home = tempfile.mkdtemp(dir=directory)
        shutil.rmtree(home)
        shutil.copytree(samples, home)
        path = os.path.join(home, "exchange.transcript.txt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(exchange)
        memctl(["--home", home, "ingest", "--raw", path, "--quiet"], variables)
        return home

    def run(home):
        seconds = memctl(["--home", home, "r2g", "--quiet"], variables)
        shutil.rmtree(home)
        return seconds

    return run, setup


def measure(runs: int, baseline_tree: str | None) -> dict:
    directory = tempfile.mkdtemp(prefix="chinese-bench-")
    try:
        cache = os.path.join(directory, "cache")
        started = time.perf_counter()
        probe("from engine.text import chinese; chinese.tokenizer()", cache)
        build_seconds = time.perf_counter() - started
        started = time.perf_counter()
        probe(PROBES["R2G tagger"], cache)  # R2G's own file: the dictionary with the lexicon words
        r2g_build_seconds = time.perf_counter() - started
        probe(PROBES["jieba cut"], cache)  # jieba writes its own cache (/tmp/jieba.cache) if it has none
        blocked = os.path.join(directory, "no-cache")
        with open(blocked, "w"):
            pass  # XDG_CACHE_HOME naming a file: the compiled dictionary cannot be built, memctl uses jieba
        probes = interleaved({
            "jieba cut": lambda: probe(PROBES["jieba cut"], cache),
            "compiled cut": lambda: probe(PROBES["compiled cut"], cache),
            "jieba posseg": lambda: probe(PROBES["jieba posseg"], cache),
            "compiled posseg": lambda: probe(PROBES["compiled posseg"], cache),
            "jieba R2G tagger": lambda: probe(PROBES["R2G tagger"], blocked),
            "compiled R2G tagger": lambda: probe(PROBES["R2G tagger"], cache),
        }, runs)
        samples = samples_store(directory, cache)
        before = environment(blocked, baseline_tree)
        after = environment(cache)
        processes = interleaved({
            "jieba r2g zh": r2g_after_exchange(samples, CHINESE_EXCHANGE, directory, before),
            "compiled r2g zh": r2g_after_exchange(samples, CHINESE_EXCHANGE, directory, after),
            "jieba r2g en": r2g_after_exchange(samples, ENGLISH_EXCHANGE, directory, before),
            "compiled r2g en": r2g_after_exchange(samples, ENGLISH_EXCHANGE, directory, after),
        }, runs)
        return {"build": build_seconds, "r2g build": r2g_build_seconds, **probes, **processes}
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def report(timings: dict, runs: int, baseline_tree: str | None) -> str:
    rows = []
    for label, jieba_name, ours_name in [
            ("first cut (import + first sentence)", "jieba cut", "compiled cut"),
            ("first posseg cut", "jieba posseg", "compiled posseg"),
            ("R2G tagger ready (nlp_zh.warm_up)", "jieba R2G tagger", "compiled R2G tagger"),
            ("memctl r2g, 2 Chinese turns into the samples store (process wall)", "jieba r2g zh", "compiled r2g zh"),
            ("memctl r2g, 2 English turns into the samples store (process wall)", "jieba r2g en", "compiled r2g en")]:
        theirs, ours = timings[jieba_name].median, timings[ours_name].median
        rows.append([label, f"{theirs * 1000:,.0f} ms", f"{ours * 1000:,.1f} ms", f"{theirs / ours:.1f}×"])
    baseline = (f"another checkout ({baseline_tree}) with the compiled dictionary unusable" if baseline_tree
                else "this checkout with the compiled dictionary unusable (jieba cuts, as before the change)")
    return "\n".join([
        table(["measure", "jieba", "compiled dictionary", "jieba / compiled"], rows), "",
        f"- Medians of {runs} interleaved rounds; fresh interpreters. Building the compiled dictionary (once per "
        f"jieba version and user dictionary, at the first Chinese text): {timings['build']:.2f} s; R2G's, with "
        f"its lexicon words (once per lexicon): {timings['r2g build']:.2f} s (the lexicons' loading included).",
        f"- jieba side of the r2g rows: {baseline}.",
        "- Target: the compiled dictionary's first cut (load included) within 50 ms."])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--baseline-tree", help="a memctl source tree to run the r2g rows' jieba side with")
    parser.add_argument("--no-results", action="store_true", help="print only; leave RESULTS.md alone")
    arguments = parser.parse_args()
    compile_bytecode()
    timings = measure(arguments.runs, arguments.baseline_tree)
    body = report(timings, arguments.runs, arguments.baseline_tree)
    print(body)
    print(json.dumps({name: value if isinstance(value, float) else value.samples for name, value in timings.items()}))
    if not arguments.no_results:
        write_section("chinese_bench", body)


if __name__ == "__main__":
    main()
