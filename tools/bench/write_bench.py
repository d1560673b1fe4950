"""The agent's write path: `memctl remember` of one 2-turn exchange as a fresh process, small store vs 100k store.

(a) Latency. Contenders, each a fresh process, alternated in every round (common.interleaved's rule):
    the import floor   python -c "import typer, rich, numpy"
    memctl --home H remember --text "user: …\\nassistant: …" --quiet
English and Chinese exchanges (a new one each call), into the samples store (`ingest samples/` + `r2g`) and into
a large store: generated zh/en transcripts (tools/bench/ingest_bench.py's generator, --mb MiB in 40
conversations) through `ingest` + `r2g`, 164k nodes and 971k edges at 5 MiB, built once and cached under
--cache (copies are written to). The large store is timed as `r2g` leaves it (40 segments of each kind: one
per batch it flushed; nothing merges segments by size yet) and after `memctl compact` (one of each). Wall and
CPU (user + system of the child) medians, and the ratios the issue sets: remember ≤ 1.5× the floor, the large
store within 10% of the small one.
(b) 100 consecutive `remember` calls into a copy of the samples store, half English, half Chinese, each with a
distinctive phrase; then one `memctl recall batch` of those phrases: each must return its own exchange first
(cited by the chunk `remember` printed); `memctl check` must be clean; the segment count is reported.
(c) MemDaily dev (Chinese), the first --memdaily conversations, each into a store of its own as
tools/eval_locomo.py's CLI mode writes them: `ingest` + `r2g` (two processes) against one `remember`, alternated
per conversation; total wall seconds. The recall figures of stores written either way come from
`python tools/eval_locomo.py /work/shared/locomo/zh-memdaily-dev.json --mode cli --build remember`.

    python tools/bench/write_bench.py                        # full run, writes tools/bench/RESULTS.md
    python tools/bench/write_bench.py --rounds 3 --calls 20 --memdaily 10 --no-results
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [ROOT, HERE]

from common import compile_bytecode, table, write_section  # noqa: E402

MEMCTL = os.path.join(os.path.dirname(sys.executable), "memctl")
MEMDAILY_DEV = "/work/shared/locomo/zh-memdaily-dev.json"
FLOOR = [sys.executable, "-c", "import typer, rich, numpy"]
TARGET_FLOOR_RATIO = 1.5
TARGET_LARGE_RATIO = 1.10
ADJECTIVES = ["velvet", "copper", "frozen", "hollow", "crimson", "silent", "golden", "wooden", "paper", "marble"]
ANIMALS = ["otter", "heron", "badger", "walrus", "lynx", "gecko", "falcon", "bison", "marten", "ibis"]
# Words jieba's dictionary holds, joined by 的: a colour it does not know is cut differently in the query and in
# the exchange, which would measure segmentation instead of the write path.
COLOURS = ["红色", "蓝色", "绿色", "黄色", "紫色", "灰色", "黑色", "白色", "金色", "银色"]
CREATURES = ["麒麟", "仙鹤", "锦鲤", "老虎", "青蛙", "熊猫", "孔雀", "骆驼", "海豚", "松鼠"]
CITIES = ["杭州", "成都", "西安", "厦门", "昆明", "青岛", "苏州", "南京", "大连", "桂林"]


def exchange(language: str, number: int) -> tuple[str, str]:
    """(2-turn exchange, its distinctive phrase) number `number` (unique up to 100 per language)."""
    if language == "en":
        first, second = ADJECTIVES[number % 10], ANIMALS[number // 10 % 10]
        phrase = f"{first} {second} statue"
        return (f"user: I keep the {phrase} in storage unit {number}, next to my old bicycle.\n"
                f"assistant: Noted: the {phrase} is in unit {number}."), phrase
    colour, creature, city = COLOURS[number % 10], CREATURES[number // 10 % 10], CITIES[(number * 3) % 10]
    phrase = f"{colour}的{creature}雕像"
    return (f"用户: 我把{phrase}寄存在{city}的第{number}号仓库了。\n"
            f"助手: 好的，记下了：{phrase}在{city}第{number}号仓库。"), phrase


def run(arguments: list) -> tuple[float, float, str]:
    """(wall seconds, cpu seconds, stdout) of one child process."""
    started = time.perf_counter()
    process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    output, errors = process.communicate()
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(arguments)} failed ({process.returncode}): {errors.decode()[-2000:]}")
    return wall, _children_cpu(), output.decode()


_cpu_seen = [0.0]


def _children_cpu() -> float:
    """CPU seconds of the child that just ended (the difference of this process's children totals; getrusage
    counts microseconds where os.times counts clock ticks of 10 ms)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    spent, _cpu_seen[0] = total - _cpu_seen[0], total
    return spent


def memctl(home: str, *arguments: str) -> list:
    return [MEMCTL, "--home", home, *arguments]


def samples_store(directory: str) -> str:
    home = os.path.join(directory, "samples-home")
    run(memctl(home, "ingest", "--raw", os.path.join(ROOT, "samples"), "--quiet"))
    run(memctl(home, "r2g", "--quiet"))
    return home


def large_store(cache: str, megabytes: float, seed: int) -> tuple[str, dict]:
    """The cached large store (built when missing) and its node and edge counts."""
    home = os.path.join(cache, f"home-{megabytes:g}mb-seed{seed}")
    if not os.path.isdir(home):
        from ingest_bench import generate_corpus

        corpus = os.path.join(cache, "corpus")
        paths = generate_corpus(corpus, int(megabytes * 2**20), seed, conversations=40)
        building = home + ".building"
        shutil.rmtree(building, ignore_errors=True)
        run(memctl(building, "ingest", *sum((["--raw", path] for path in paths), []), "--quiet"))
        run(memctl(building, "r2g", "--quiet"))
        os.rename(building, home)
        shutil.rmtree(corpus, ignore_errors=True)
    run(memctl(home, "r2g", "--quiet"))  # a store built before conversation tails gets them now
    stats = json.loads(run(memctl(home, "stats", "--json"))[2])
    return home, {"nodes": stats["counters"]["graph.node_id"], "edges": stats["counters"]["graph.edge_id"],
                  "segments": sum(kind["segments"] for kind in stats["segments"].values())}


def latency(stores: dict, rounds: int) -> dict:
    """{contender: [(wall, cpu)]}: the floor and remember (en, zh) into each store, interleaved."""
    samples: dict = {"import floor": []}
    for store in stores:
        for language in ("en", "zh"):
            samples[f"remember {language}, {store}"] = []
    for number in range(rounds):
        for name in samples:
            if name == "import floor":
                wall, cpu, _ = run(FLOOR)
            else:
                language, store = name.removeprefix("remember ").split(", ", 1)
                text, _ = exchange(language, 50 + number)  # apart from part (b)'s numbers
                wall, cpu, _ = run(memctl(stores[store], "remember", "--text", text, "--quiet"))
            samples[name].append((wall, cpu))
    return samples


def hundred_calls(home: str, calls: int, work: str) -> dict:
    """Part (b): `calls` remembers, then one recall batch of their phrases, `check`, and the segment count."""
    expected, walls = {}, []
    for number in range(calls):
        language = ("en", "zh")[number % 2]
        text, phrase = exchange(language, number // 2)
        wall, _, output = run(memctl(home, "remember", "--text", text, "--json"))
        walls.append(wall)
        expected[f"q{number}"] = (phrase, json.loads(output)["chunks"][0])
    questions = os.path.join(work, "phrases.jsonl")
    with open(questions, "w", encoding="utf-8") as handle:
        for qid, (phrase, _) in expected.items():
            handle.write(json.dumps({"id": qid, "q": phrase}, ensure_ascii=False) + "\n")
    answers = [json.loads(line) for line in
               run(memctl(home, "recall", "batch", questions, "--json", "--top", "3"))[2].splitlines()]
    first = sum(_cites(answer, expected[answer["id"]][1]) for answer in answers)
    check = json.loads(run(memctl(home, "check", "--json"))[2])
    stats = json.loads(run(memctl(home, "stats", "--json"))[2])
    return {"calls": calls, "found_first": first, "check_clean": check["clean"],
            "segments": sum(kind["segments"] for kind in stats["segments"].values()),
            "median_wall": statistics.median(walls), "max_wall": max(walls)}


def memdaily_writes(limit: int, work: str) -> dict:
    """Part (c): {"conversations", "ingest+r2g", "remember"}: total wall seconds of each way of writing."""
    from pathlib import Path

    from tools.eval_locomo import build_store_cli

    with open(MEMDAILY_DEV, encoding="utf-8") as handle:
        samples = json.load(handle)[:limit]
    spent = {"ingest+r2g": 0.0, "remember": 0.0}
    for index, sample in enumerate(samples):
        conversation = Path(work) / f"conversation-{index}.json"
        conversation.write_text(json.dumps([sample], ensure_ascii=False), encoding="utf-8")
        for build in sorted(spent, reverse=index % 2 == 1):
            store = Path(work) / f"{build}-{index}"
            started = time.perf_counter()
            build_store_cli(store, conversation, None, "locomo", build)
            spent[build] += time.perf_counter() - started
            shutil.rmtree(store)
    return {"conversations": len(samples), **spent}


def _cites(answer: dict, raw_id: str) -> bool:
    results = answer.get("results") or []
    return bool(results) and any(citation["raw_id"] == raw_id for citation in results[0]["citations"])


def report(samples: dict, counts: dict, megabytes: float, hundred: dict, rounds: int, memdaily: dict) -> str:
    medians = {name: (statistics.median(wall for wall, _ in runs), statistics.median(cpu for _, cpu in runs))
               for name, runs in samples.items()}
    floor_wall, floor_cpu = medians["import floor"]
    rows = [[name, f"{wall * 1000:.0f}", f"{cpu * 1000:.0f}", f"{wall / floor_wall:.2f}×", f"{cpu / floor_cpu:.2f}×"]
            for name, (wall, cpu) in medians.items()]
    large = []
    for store in ("large, compacted", "large, as built"):
        for language in ("en", "zh"):
            (wall, cpu), (small_wall, small_cpu) = medians[f"remember {language}, {store}"], \
                medians[f"remember {language}, samples"]
            large.append([f"{language}, {store}", f"{wall / small_wall:.2f}×", f"{cpu / small_cpu:.2f}×"])
    return "\n".join([
        "`memctl remember` of one 2-turn exchange, as a fresh process, against the import floor "
        "`python -c \"import typer, rich, numpy\"`.",
        f"Stores: `samples` = `ingest samples/` + `r2g`; `large` = {megabytes:g} MiB of generated zh/en transcripts "
        f"(40 conversations) through `ingest` + `r2g`: {counts['nodes']:,} nodes, {counts['edges']:,} edges, "
        f"as built ({counts['segments']} segments) and after `memctl compact`. "
        f"Each row: {rounds} fresh processes, alternated with the other rows in every round; medians.",
        "",
        table(["process", "wall ms", "CPU ms", "wall / floor", "CPU / floor"], rows),
        "",
        f"Targets: remember ≤ {TARGET_FLOOR_RATIO}× the import floor; the large store within "
        f"{(TARGET_LARGE_RATIO - 1) * 100:.0f}% of the small one:",
        "",
        table(["exchange, store", "large / samples (wall)", "large / samples (CPU)"], large),
        "",
        f"{hundred['calls']} consecutive `remember` calls into the samples store (half English, half Chinese): "
        f"median {hundred['median_wall'] * 1000:.0f} ms wall per call (max {hundred['max_wall'] * 1000:.0f} ms); "
        f"one `recall batch` of their distinctive phrases returned its own exchange first for "
        f"{hundred['found_first']}/{hundred['calls']}; `memctl check` clean: {hundred['check_clean']}; "
        f"segments afterwards: {hundred['segments']}.",
        "",
        f"MemDaily dev, the first {memdaily['conversations']} conversations, one store each: `ingest` + `r2g` "
        f"{memdaily['ingest+r2g']:.1f} s, `remember` {memdaily['remember']:.1f} s "
        f"({memdaily['remember'] / memdaily['ingest+r2g']:.2f}× the time).",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--memdaily", type=int, default=100, help="MemDaily dev conversations of part (c)")
    parser.add_argument("--mb", type=float, default=5.0, help="size of the generated corpus of the large store")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "memctl-write-bench"))
    parser.add_argument("--no-results", action="store_true", help="print only; leave RESULTS.md alone")
    arguments = parser.parse_args()
    compile_bytecode()
    os.makedirs(arguments.cache, exist_ok=True)
    cached, counts = large_store(arguments.cache, arguments.mb, arguments.seed)
    work = tempfile.mkdtemp(prefix="write-bench-")
    try:
        stores = {"samples": samples_store(work)}
        for name in ("large, as built", "large, compacted"):
            stores[name] = os.path.join(work, name.replace(", ", "-").replace(" ", "-"))
            shutil.copytree(cached, stores[name])
        run(memctl(stores["large, compacted"], "compact"))
        subprocess.run(["sync"], check=True)  # the copies' dirty pages are not the first remember's to write
        samples = latency(stores, arguments.rounds)
        hundred = hundred_calls(samples_store(os.path.join(work, "hundred")), arguments.calls, work)
        memdaily = memdaily_writes(arguments.memdaily, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    body = report(samples, counts, arguments.mb, hundred, arguments.rounds, memdaily)
    print(body)
    if not arguments.no_results:
        write_section("write_bench", body)


if __name__ == "__main__":
    main()
