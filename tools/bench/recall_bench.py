"""Recall latency on a generated 100k-node / 1M-edge store: in-process p50/p95/p99 and cold `memctl recall` wall.

    python tools/bench/recall_bench.py [--nodes 100000] [--edges 1000000] [--queries 200] [--cold 20]
                                       [--work DIR] [--write]

The store (built once per --work directory, then reused): tools/gen_synthetic.py's graph (seed 001 node and
edge types, power-law degrees, mixed Chinese/English texts), imported as a memory graph R2G would write:
Episodes grouped 40 to a conversation, each conversation one raw chunk holding the turns' texts (so citations
read and verify real blobs), Episodes with raw_refs, speaker and session, TEMPORAL_NEXT edges carrying
same_session/speaker_change; Episode, Fact, Preference and Concept nodes in the NodeIndex with the fields R2G
gives them (title, text, turn, speaker, date); then flushed and compacted, as a long-lived store is.

Measured: in-process, one Recaller answering --queries queries (2-4 words drawn from the generator's Zipf
vocabulary, Chinese, English and mixed), first query apart; cold, a fresh `memctl --home STORE recall --q Q
--json` process per query (interpreter start and imports included), and which heavy modules such a process
loaded (numba and jieba must not be among them). Targets (issue 7): in-process p95 ≤ 50 ms, cold p95 ≤ 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tools" / "bench"))

TURNS_PER_CONVERSATION = 40
SPEAKERS = ("用户", "助手")
INDEXED = ("Episode", "Fact", "Preference", "Concept")
TENANT = "default"

# What any cold reader of this store pays before recall's own work: imports, opening the store, the first
# record read, the first text search and the first graph gather (each verifies the checksum blocks it reads).
ENGINE_FLOOR = """
import sys, time
started = time.perf_counter()
import numpy as np
from engine.store import Store
from engine.graph.api import GraphStore
from engine.graph.traverse import gather
from engine.text.tokenizer import Tokenizer
store = Store.open(sys.argv[1], writable=False)
opened = time.perf_counter()
store.get("graph.node", "n0000001")
record = time.perf_counter()
store.kind("text:nodes").searcher(Tokenizer()).search("driver crash", 10)
text = time.perf_counter()
view = GraphStore(store).snapshot().view
gather(view, np.arange(20, dtype=np.int64), "both")
graph = time.perf_counter()
print(opened - started, record - opened, text - record, graph - text)
"""

COLD_MODULES = """
import sys
sys.argv = ["memctl"] + sys.argv[1:]
from memctl.cli.app import app  # not main(): it ends a recall process without returning here
try:
    app()
except SystemExit:
    pass
heavy = sorted(name for name in ("numba", "jieba", "scipy", "yaml") if name in sys.modules)
sys.stderr.write("HEAVY " + ",".join(heavy) + "\\n")
"""


def build_store(home: Path, nodes: int, edges: int, seed: int) -> dict:
    """Generate, import, index, flush and compact; returns build facts."""
    import gen_synthetic
    from engine.graph.api import GraphStore
    from engine.graph.transfer import import_jsonl
    from engine.raw import RawStore
    from engine.text.index import TextIndex
    from memctl.memory import Memory
    from memctl.r2g.nodeindex import open_index

    started = time.perf_counter()
    graph_data = gen_synthetic.generate(nodes, edges, seed)
    texts = list(gen_synthetic.node_texts(graph_data, seed))
    types = [gen_synthetic.NODE_TYPES[index] for index in graph_data.node_type.tolist()]
    episodes = [index for index, name in enumerate(types) if name == "Episode"]
    place = {}  # episode index → (conversation number, turn number)
    for position, index in enumerate(episodes):
        place[index] = divmod(position, TURNS_PER_CONVERSATION)
    facts = {"nodes": nodes, "edges": edges, "episodes": len(episodes)}
    with Memory.open(home=str(home), writable=True, holder="recall_bench") as memory:
        store = memory.store
        refs = _write_raw(RawStore(store), episodes, texts, graph_data)
        facts["chunks"] = len({ref["raw_id"] for ref in refs.values()})
        jsonl = home / "graph.jsonl"
        with open(jsonl, "w", encoding="utf-8") as stream:
            for index, (title, text) in enumerate(texts):
                stream.write(json.dumps(_node_line(index, types[index], title, text, graph_data, refs, place),
                                        ensure_ascii=False) + "\n")
            for source, target, edge_type, weight, timestamp in zip(
                    graph_data.source.tolist(), graph_data.target.tolist(), graph_data.edge_type.tolist(),
                    graph_data.weight.tolist(), graph_data.timestamp.tolist()):
                name = gen_synthetic.EDGE_TYPES[edge_type]
                line = {"kind": "edge", "src": gen_synthetic.node_key(source), "type": name,
                        "dst": gen_synthetic.node_key(target), "weight": round(weight, 3), "ts": round(timestamp, 3)}
                if name == "TEMPORAL_NEXT" and source in place and target in place:
                    line["same_session"] = place[source][0] == place[target][0]
                    line["speaker_change"] = (place[source][1] - place[target][1]) % 2 == 1
                stream.write(json.dumps(line, ensure_ascii=False) + "\n")
        import_jsonl(GraphStore(store), str(jsonl))
        os.remove(jsonl)
        index = open_index(store, memory.config)
        documents = []
        for number, (title, text) in enumerate(texts):
            if types[number] not in INDEXED:
                continue
            fields = {"title": title, "text": text}
            if types[number] == "Episode":
                conversation, turn = place[number]
                fields.update({"turn": text, "speaker": SPEAKERS[turn % 2], "date": _date_words(graph_data, number)})
            documents.append({"key": gen_synthetic.node_key(number), "type": types[number], "fields": fields,
                              "timestamp": float(graph_data.created_at[number])})
            if len(documents) >= 5000:
                index.add_many(documents)
                documents = []
        if documents:
            index.add_many(documents)
        assert isinstance(index, TextIndex)
        store.flush()
        store.compact()
    facts["build_seconds"] = round(time.perf_counter() - started, 1)
    return facts


def _write_raw(raw, episodes: list, texts: list, graph_data) -> dict:
    """One chunk per conversation of TURNS_PER_CONVERSATION episodes; returns episode index → raw_ref."""
    from datetime import datetime, timezone

    refs = {}
    for start in range(0, len(episodes), TURNS_PER_CONVERSATION):
        members = episodes[start: start + TURNS_PER_CONVERSATION]
        pieces, turns, offset = [], [], 0
        conversation = f"bench-{start // TURNS_PER_CONVERSATION:05d}"
        for turn, index in enumerate(members):
            speaker = SPEAKERS[turn % 2]
            prefix = f"{speaker}: ".encode("utf-8")
            body = texts[index][1].encode("utf-8")
            moment = datetime.fromtimestamp(float(graph_data.created_at[index]), timezone.utc)
            ts = moment.replace(tzinfo=None).isoformat(timespec="seconds")
            turns.append({"speaker": speaker, "ts": ts, "source_id": f"{conversation}#{turn + 1}",
                          "offset": offset + len(prefix), "length": len(body)})
            pieces.append(prefix + body + b"\n")
            offset += len(prefix) + len(body) + 1
        data = b"".join(pieces)
        with raw.batch() as writer:
            result = writer.put_turns(data, {"source": conversation}, conversation, turns)
        for turn, index in zip(turns, members):
            refs[index] = {"raw_id": result.raw_id, "offset": turn["offset"], "length": turn["length"],
                           "source_id": turn["source_id"], "ts": turn["ts"]}
    return refs


def _node_line(index: int, node_type: str, title: str, text: str, graph_data, refs: dict, place: dict) -> dict:
    import gen_synthetic
    from datetime import datetime, timezone

    moment = datetime.fromtimestamp(float(graph_data.created_at[index]), timezone.utc).replace(tzinfo=None)
    line = {"kind": "node", "id": gen_synthetic.node_key(index), "type": node_type, "title": title, "text": text,
            "recency": moment.isoformat(timespec="seconds"), "importance": 0.5, "frequency": 1,
            "keywords": text.split()[:8], "created_at": float(graph_data.created_at[index])}
    if index in refs:
        conversation, turn = place[index]
        line["raw_refs"] = [refs[index]]
        line["attributes"] = {"speaker": SPEAKERS[turn % 2], "session": f"S{conversation}",
                              "source_id": refs[index]["source_id"], "conv_id": f"bench-{conversation:05d}"}
    return line


def _date_words(graph_data, index: int) -> str:
    from datetime import datetime, timezone

    from memctl.node_documents import date_text

    moment = datetime.fromtimestamp(float(graph_data.created_at[index]), timezone.utc).replace(tzinfo=None)
    return date_text(moment.isoformat(timespec="seconds"), "en")


def make_queries(count: int, seed: int) -> list:
    import gen_synthetic

    rng = random.Random(seed)
    words = gen_synthetic.VOCABULARY
    chinese = [word for word in words if not word.isascii()]
    english = [word for word in words if word.isascii()]
    queries = []
    for number in range(count):
        pool = (chinese, english, words)[number % 3]
        queries.append(" ".join(rng.sample(pool, rng.randint(2, 4))))
    return queries


def in_process(home: Path, queries: list) -> dict:
    from memctl.memory import Memory
    from memctl.recall.pipeline import Recaller, Request

    with Memory.open(home=str(home)) as memory:
        recaller = Recaller(memory.store, memory.config, memory.tenant)
        started = time.perf_counter()
        first = recaller.recall(Request(q=queries[0], top=10))
        first_seconds = time.perf_counter() - started
        samples, cpu, stages = [], [], {}
        for query in queries[1:]:
            started, ticks = time.perf_counter(), time.process_time()
            answer = recaller.recall(Request(q=query, top=10))
            samples.append(time.perf_counter() - started)
            cpu.append(time.process_time() - ticks)
            for stage in answer["trace"]["stages"]:
                stages.setdefault(stage["name"], []).append(
                    stage["ms"])
        fired = bool(first["trace"]["fallbacks"])
    return {"first_ms": first_seconds * 1000, "samples": samples, "cpu": cpu, "stages": stages,
            "fallbacks_first": fired, "results_first": len(first["results"])}


def cold(home: Path, queries: list, runs: int, work: Path) -> dict:
    """Wall and CPU seconds of fresh `memctl recall` processes. Python's bytecode cache is on (in a prefix
    directory under --work, written by an untimed first run), as in an installed package, even where the
    environment sets PYTHONDONTWRITEBYTECODE; the same without it is reported too."""
    script = os.path.join(os.path.dirname(sys.executable), "memctl")
    cached = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    cached["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    uncached = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    command = [script, "--home", str(home), "recall", "--json", "--q"]
    _process(command + [queries[0]], cached)
    walls, cpus = [], []
    for query in queries[:runs]:
        wall, cpu = _process(command + [query], cached)
        walls.append(wall)
        cpus.append(cpu)
    plain = [_process(command + [query], uncached)[0] for query in queries[:5]]
    probe = subprocess.run([sys.executable, "-c", COLD_MODULES, "--home", str(home), "recall",
                            "--q", queries[0], "--json"], capture_output=True, text=True, env=cached)
    heavy = next((line[6:] for line in probe.stderr.splitlines() if line.startswith("HEAVY ")), "?")
    bare = [_process([script, "--version"], cached)[0] for _ in range(5)]
    floors = []
    for _ in range(5):
        probe = subprocess.run([sys.executable, "-c", ENGINE_FLOOR, str(home / "tenants" / TENANT)],
                               capture_output=True, text=True, env=cached, cwd=str(ROOT))
        floors.append([float(value) for value in probe.stdout.split()])
    floor = [statistics.median(column) for column in zip(*floors)]
    return {"walls": walls, "cpus": cpus, "uncached": plain, "heavy": heavy, "bare": statistics.median(bare),
            "floor": floor}


def _process(command: list, env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of one process."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    error = child.stderr.read().decode("utf-8", "replace")
    child.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed: {error}")
    return wall, usage.ru_utime + usage.ru_stime


def percentile(values: list, percent: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(percent / 100 * len(ordered) + 0.5)) - 1))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cold", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", default=None, help="Store directory (reused when it already holds the store).")
    parser.add_argument("--write", action="store_true", help="Write the result to tools/bench/RESULTS.md.")
    options = parser.parse_args(argv)

    from engine.format import FORMAT_VERSION, SEGMENT_CHECKSUM_BLOCK_BYTES

    work = Path(options.work or f"/tmp/memctl_recall_bench_{options.nodes}_{options.edges}")
    home = work / "home"
    marker = work / "built.json"
    facts = json.loads(marker.read_text()) if marker.exists() else {}
    # A store of another format version or checksum block size would not measure this reader.
    if (facts.get("checksum_block"), facts.get("format_version")) != (SEGMENT_CHECKSUM_BLOCK_BYTES, FORMAT_VERSION):
        shutil.rmtree(home, ignore_errors=True)
        work.mkdir(parents=True, exist_ok=True)
        facts = {**build_store(home, options.nodes, options.edges, options.seed),
                 "checksum_block": SEGMENT_CHECKSUM_BLOCK_BYTES, "format_version": FORMAT_VERSION}
        marker.write_text(json.dumps(facts))
    queries = make_queries(options.queries, options.seed)
    warm = in_process(home, queries)
    cold_result = cold(home, queries, options.cold, work)
    samples = warm["samples"]
    from common import table

    rows = [["in-process recall (Recaller reused)", len(samples), f"{percentile(samples, 50) * 1000:.1f} ms",
             f"{percentile(samples, 95) * 1000:.1f} ms", f"{percentile(samples, 99) * 1000:.1f} ms",
             "p95 ≤ 50 ms: " + ("yes" if percentile(samples, 95) <= 0.05 else "NO")],
            ["same, CPU time", len(warm["cpu"]), f"{percentile(warm['cpu'], 50) * 1000:.1f} ms",
             f"{percentile(warm['cpu'], 95) * 1000:.1f} ms", f"{percentile(warm['cpu'], 99) * 1000:.1f} ms", ""],
            ["first query of a Recaller", 1, f"{warm['first_ms']:.1f} ms", "", "", ""],
            ["cold `memctl recall --q … --json` process, wall", len(cold_result["walls"]),
             f"{percentile(cold_result['walls'], 50):.3f} s", f"{percentile(cold_result['walls'], 95):.3f} s",
             f"{max(cold_result['walls']):.3f} s",
             "p95 ≤ 0.5 s: " + ("yes" if percentile(cold_result["walls"], 95) <= 0.5 else "NO")],
            ["same, CPU (user + system)", len(cold_result["cpus"]), f"{percentile(cold_result['cpus'], 50):.3f} s",
             f"{percentile(cold_result['cpus'], 95):.3f} s", f"{max(cold_result['cpus']):.3f} s", ""],
            ["same without a bytecode cache, wall", len(cold_result["uncached"]),
             f"{percentile(cold_result['uncached'], 50):.3f} s", f"{percentile(cold_result['uncached'], 95):.3f} s",
             f"{max(cold_result['uncached']):.3f} s", ""],
            ["bare `memctl --version` process (floor)", 5, f"{cold_result['bare']:.3f} s", "", "", ""]]
    stage_rows = [[name, f"{statistics.median(values):.2f} ms", f"{percentile(values, 95):.2f} ms"]
                  for name, values in warm["stages"].items()]
    body = "\n".join([
        f"Store: {facts['nodes']:,} nodes, {facts['edges']:,} edges requested (gen_synthetic seed {options.seed}), "
        f"{facts['episodes']:,} Episodes in {facts['chunks']:,} raw chunks; built, flushed and compacted in "
        f"{facts['build_seconds']} s.",
        f"Queries: {len(queries)} of 2-4 generator words (zh, en, mixed), --top 10, default settings.",
        "",
        table(["measurement", "n", "p50", "p95", "p99 / max", "target"], rows),
        "",
        "Per stage, in-process (median / p95):",
        "",
        table(["stage", "median", "p95"], stage_rows),
        "",
        f"Heavy modules a cold recall process loaded: {cold_result['heavy'] or 'none'} "
        "(numba and jieba must not appear).",
        "",
        "Engine floor of a cold reader of this store (medians of 5 processes, before any recall work): "
        f"imports + Store.open {cold_result['floor'][0] * 1000:.0f} ms, first record read "
        f"{cold_result['floor'][1] * 1000:.0f} ms, first text search {cold_result['floor'][2] * 1000:.0f} ms, "
        f"first graph gather {cold_result['floor'][3] * 1000:.0f} ms. Segment columns are checksummed in "
        f"{SEGMENT_CHECKSUM_BLOCK_BYTES >> 10} KiB blocks (MANIFEST.spec section 3), each verified when a read "
        "first touches it; a reader that takes a whole column verifies all of its blocks.",
    ])
    print(body)
    if options.write:
        from common import write_section

        write_section("recall_bench", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
