"""Graph benchmark: memctl's GraphStore against scipy.sparse, igraph and networkx on one graph, in one run.

    python tools/bench/graph_bench.py [--nodes 100000] [--edges 1000000] [--seeds 50] [--repeat 30]
                                      [--import-nodes 1000000] [--write]

Workloads (same synthetic graph, same 50 random seeds, typed by seed 001's recall types ABOUT, SUPPORTS,
CONTRADICTS, TEMPORAL_NEXT, following out-edges): 1-hop and 2-hop expansion; personalized PageRank, 20
iterations, over the 2-hop subgraph and over the whole graph (edge weight × appendix-A type weight).

memctl runs from its real store: JSONL import, compaction, then a read-only snapshot over mmap'd segments.
Peers get their structures built before timing (as a user would keep them in memory); their subgraph PPR
includes extracting the subgraph, as memctl's does. Results are checked to agree before timing. Also
measured: cold processes (a 2-hop expansion in Python, and `memctl graph --khop ID --k 2 --json` against the
`memctl --version` floor, wall and CPU), and optionally a 1e6-node import with its peak memory. Peers are
imported only here, never by memctl. --write replaces the graph_bench section of RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import gen_synthetic  # noqa: E402
from common import table, write_section  # noqa: E402
from engine.graph import pagerank, traverse  # noqa: E402
from engine.graph.api import GraphStore  # noqa: E402
from engine.graph.transfer import import_jsonl  # noqa: E402
from engine.store import Store  # noqa: E402

RECALL_TYPES = ["ABOUT", "SUPPORTS", "CONTRADICTS", "TEMPORAL_NEXT"]
ITERATIONS = 20
DAMPING = 0.85

COLD_KHOP = """
import sys, time
start = time.perf_counter()
from engine.store import Store
from engine.graph.api import GraphStore
graph = GraphStore(Store.open(sys.argv[1], writable=False))
rows = graph.khop(sys.argv[2:], 2, types={types!r}).rows()
elapsed = time.perf_counter() - start
assert "scipy" not in sys.modules and "numba" not in sys.modules, "a heavy import leaked onto the query path"
print(len(rows), elapsed)
"""

# `memctl` reporting its own peak RSS: VmHWM belongs to the process's memory map, which exec replaces, while
# getrusage's ru_maxrss of a child also counts the pages it shared with this big parent when it was forked.
MEMCTL_WITH_PEAK = """
import atexit, sys
def peak():
    with open("/proc/self/status") as status:
        sys.stderr.write(next(line for line in status if line.startswith("VmHWM")))
atexit.register(peak)
from memctl.cli.app import main
sys.argv[0] = "memctl"
sys.exit(main())
"""


def timed(function, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return samples


def build_memctl(graph_data, workdir: Path):
    jsonl = workdir / "graph.jsonl"
    with open(jsonl, "w", encoding="utf-8") as stream:
        gen_synthetic.write_jsonl(graph_data, 1, stream)
    store_path = workdir / "store"
    start = time.perf_counter()
    store = Store.open(str(store_path))
    report = import_jsonl(GraphStore(store), str(jsonl))
    imported = time.perf_counter() - start
    start = time.perf_counter()
    store.compact()
    compacted = time.perf_counter() - start
    store.close()
    return (f"memctl import: {report.nodes:,} nodes, {report.edges:,} edges in {imported:.1f} s "
            f"({(report.nodes + report.edges) / imported:,.0f} lines/s); compaction {compacted:.1f} s.")


def peers(graph_data, node_count: int, type_ids: list, weights: np.ndarray):
    import igraph
    import networkx
    import scipy.sparse as sparse

    typed = np.isin(graph_data.edge_type, type_ids)
    source, target = graph_data.source[typed], graph_data.target[typed]
    typed_matrix = sparse.csr_matrix((np.ones(len(source)), (source, target)), shape=(node_count, node_count))
    edge_weight = graph_data.weight.astype(np.float64) * weights[graph_data.edge_type]
    weighted = sparse.csr_matrix((edge_weight, (graph_data.source, graph_data.target)), shape=(node_count, node_count))
    typed_graph = igraph.Graph(n=node_count, edges=np.column_stack([source, target]).tolist(), directed=True)
    whole_graph = igraph.Graph(n=node_count, edges=np.column_stack([graph_data.source, graph_data.target]).tolist(),
                               directed=True)
    whole_graph.es["weight"] = edge_weight.tolist()
    typed_nx = networkx.DiGraph()
    typed_nx.add_nodes_from(range(node_count))
    typed_nx.add_edges_from(zip(source.tolist(), target.tolist()))
    whole_nx = networkx.DiGraph()
    whole_nx.add_nodes_from(range(node_count))
    whole_nx.add_weighted_edges_from(zip(graph_data.source.tolist(), graph_data.target.tolist(), edge_weight.tolist()))
    return sparse, typed_matrix, weighted, typed_graph, whole_graph, typed_nx, whole_nx


def scipy_khop(matrix, seeds, k):
    visited = np.unique(seeds)
    frontier = visited
    for _ in range(k):
        found = np.unique(matrix[frontier].indices)
        frontier = np.setdiff1d(found, visited, assume_unique=True)
        visited = np.union1d(visited, frontier)
    return visited


def scipy_ppr(sparse, matrix, seeds, iterations=ITERATIONS):
    """Power iteration as memctl runs it: row-normalized, dangling mass back to the seeds."""
    size = matrix.shape[0]
    out_weight = np.asarray(matrix.sum(axis=1)).ravel()
    dangling = out_weight == 0
    inverse = np.divide(1.0, out_weight, out=np.zeros(size), where=~dangling)
    transposed = (sparse.diags(inverse) @ matrix).T.tocsr()
    return scipy_power(transposed, dangling, seeds, size, iterations)


def scipy_power(transposed, dangling, seeds, size, iterations=ITERATIONS):
    personal = np.zeros(size)
    np.add.at(personal, seeds, 1.0 / len(seeds))
    scores = personal.copy()
    for _ in range(iterations):
        scores = DAMPING * (transposed @ scores) + (DAMPING * scores[dangling].sum() + 1 - DAMPING) * personal
    return scores


def networkx_khop(graph, seeds, k):
    visited = set(seeds.tolist())
    frontier = list(visited)
    for _ in range(k):
        found = {neighbor for node in frontier for neighbor in graph.successors(node)} - visited
        visited |= found
        frontier = list(found)
    return visited


def cold_processes(store_path: Path, seeds: list, repeat: int) -> dict:
    """{name: ([wall seconds], [CPU seconds])} of cold processes, interleaved."""
    home = store_path.parent / "home"
    (home / "tenants").mkdir(parents=True, exist_ok=True)
    if not (home / "tenants" / "default").exists():
        (home / "tenants" / "default").symlink_to(store_path)
    memctl = str(Path(sys.executable).with_name("memctl"))
    commands = {
        "python: 2-hop typed, 50 seeds": [sys.executable, "-c", COLD_KHOP.format(types=RECALL_TYPES),
                                          str(store_path), *seeds],
        "memctl graph --khop ID --k 2 --json": [memctl, "--home", str(home), "graph", "--khop", seeds[0], "--k", "2",
                                                "--json"],
        "memctl --version (floor)": [memctl, "--version"],
        "python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
    }
    # As a user runs it: bytecode cached (a first, untimed round writes it where it is missing or stale).
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    samples = {name: ([], []) for name in commands}
    for round_index in range(repeat + 1):
        for name, command in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            result = subprocess.run(command, capture_output=True, cwd=ROOT, env=environment)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if result.returncode:
                raise SystemExit(f"{name} failed: {result.stderr.decode()[-500:]}")
            if not round_index:
                continue
            samples[name][0].append(wall)
            samples[name][1].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return samples


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--import-nodes", type=int, default=0, help="also time a cold import of this many nodes")
    parser.add_argument("--write", action="store_true", help="write the results into tools/bench/RESULTS.md")
    options = parser.parse_args(argv)

    graph_data = _graph_with_edges(options.nodes, options.edges)
    report = [say(f"Graph: {options.nodes:,} nodes, {len(graph_data.source):,} edges (tools/gen_synthetic.py, seed 1); "
                  f"{options.seeds} seeds; types {','.join(RECALL_TYPES)}; out-edges; PPR {ITERATIONS} iterations.")]
    with tempfile.TemporaryDirectory(prefix="graph_bench_") as workdir:
        report.append(say(build_memctl(graph_data, Path(workdir))))
        report.append(run_queries(graph_data, options, Path(workdir) / "store"))
        seeds = [gen_synthetic.node_key(int(seed)) for seed in _seeds(options)]
        load_before = "%.1f %.1f %.1f" % os.getloadavg()
        cold = cold_processes(Path(workdir) / "store", seeds, max(5, options.repeat // 6))
        rows = [[name, f"{statistics.median(wall) * 1e3:.0f}", f"{statistics.median(cpu) * 1e3:.0f}",
                 f"{min(wall) * 1e3:.0f}"] for name, (wall, cpu) in cold.items()]
        report.append(say(f"Cold processes (medians of {len(cold[next(iter(cold))][0])}, interleaved; imports, "
                          f"store open and the query included; load average before: {load_before}):\n\n"
                          + table(["process", "wall ms", "CPU ms", "min wall ms"], rows)))
        if options.import_nodes:
            report.append(say(import_million(options.import_nodes, Path(workdir))))
    if options.write:
        write_section("graph_bench", "\n\n".join(report))
    return 0


def say(text: str) -> str:
    print(text + "\n")
    return text


def _graph_with_edges(nodes: int, edges: int):
    """The generator drops duplicate edges; ask for a little more until the target is met."""
    request = edges
    while True:
        graph_data = gen_synthetic.generate(nodes, request, seed=1)
        if len(graph_data.source) >= edges:
            return graph_data
        request = int(request * edges / len(graph_data.source) * 1.01) + 1


def _seeds(options) -> np.ndarray:
    return np.sort(np.random.default_rng(7).choice(options.nodes, options.seeds, replace=False))


def run_queries(graph_data, options, store_path: Path) -> str:
    graph = GraphStore(Store.open(str(store_path), writable=False))
    view = graph.snapshot().view
    assert graph.node_id(gen_synthetic.node_key(12345 % options.nodes)) == 12345 % options.nodes
    edge_type_ids = graph.type_ids("edge")
    memctl_types = [edge_type_ids[name] for name in RECALL_TYPES if name in edge_type_ids]
    memctl_weights = pagerank.type_weights(edge_type_ids)
    generator_types = [gen_synthetic.EDGE_TYPES.index(name) for name in RECALL_TYPES]
    generator_weights = pagerank.type_weights({name: index for index, name in enumerate(gen_synthetic.EDGE_TYPES)})
    sparse, typed_matrix, weighted, typed_graph, whole_graph, typed_nx, whole_nx = peers(
        graph_data, options.nodes, generator_types, generator_weights)
    seeds = _seeds(options)
    subgraph = traverse.khop(view, seeds, 2, memctl_types, "out").node
    sorted_subgraph = np.sort(subgraph)

    workloads = {
        "1-hop typed": {
            "memctl": lambda: traverse.khop(view, seeds, 1, memctl_types, "out"),
            "scipy": lambda: scipy_khop(typed_matrix, seeds, 1),
            "igraph": lambda: set().union(*typed_graph.neighborhood(seeds.tolist(), order=1, mode="out")),
            "networkx": lambda: networkx_khop(typed_nx, seeds, 1),
        },
        "2-hop typed": {
            "memctl": lambda: traverse.khop(view, seeds, 2, memctl_types, "out"),
            "scipy": lambda: scipy_khop(typed_matrix, seeds, 2),
            "igraph": lambda: set().union(*typed_graph.neighborhood(seeds.tolist(), order=2, mode="out")),
            "networkx": lambda: networkx_khop(typed_nx, seeds, 2),
        },
        "PPR 2-hop subgraph": {
            "memctl": lambda: pagerank.personalized_pagerank(view, seeds, None, subgraph, memctl_weights,
                                                             iterations=ITERATIONS, tolerance=0.0),
            "scipy": lambda: scipy_ppr(sparse, weighted[sorted_subgraph][:, sorted_subgraph],
                                       np.searchsorted(sorted_subgraph, seeds)),
            "igraph": lambda: _igraph_subgraph_ppr(whole_graph, sorted_subgraph, seeds),
            "networkx": lambda: _networkx_ppr(whole_nx.subgraph(sorted_subgraph.tolist()), seeds),
        },
        "PPR whole graph": {
            "memctl": lambda: pagerank.personalized_pagerank(view, seeds, None, None, memctl_weights,
                                                             iterations=ITERATIONS, tolerance=0.0),
            "memctl+numba": lambda: pagerank.personalized_pagerank(view, seeds, None, None, memctl_weights,
                                                                   iterations=ITERATIONS, tolerance=0.0,
                                                                   kernel="numba"),
            "scipy": lambda: scipy_ppr(sparse, weighted, seeds),
            "igraph": lambda: whole_graph.personalized_pagerank(damping=DAMPING, reset_vertices=seeds.tolist(),
                                                                weights="weight"),
            "networkx": lambda: _networkx_ppr(whole_nx, seeds),
        },
    }
    _check_agreement(workloads, view, seeds, subgraph, sorted_subgraph)
    rows = []
    for workload, tools in workloads.items():
        repeat = {name: (2 if name == "networkx" and "whole" in workload else options.repeat) for name in tools}
        samples = {name: [] for name in tools}
        for round_index in range(max(repeat.values())):
            for name, function in tools.items():  # interleaved: machine noise hits every tool alike
                if round_index < repeat[name]:
                    samples[name] += timed(function, 1)
        reference = statistics.median(samples["scipy"])
        for name, values in samples.items():
            median = statistics.median(values)
            rows.append([workload, name, f"{median * 1e3:.3f}", f"{min(values) * 1e3:.3f}",
                         f"{median / reference:.2f}x"])
    return say(f"In-process queries (2-hop subgraph: {len(subgraph):,} nodes; medians of {options.repeat} "
               "interleaved runs, networkx whole-graph PPR 2):\n\n"
               + table(["workload", "tool", "median ms", "min ms", "vs scipy"], rows)
               + "\n\nWhole-graph PPR in memctl includes building the walk from the segments on every call; "
               "scipy's includes normalizing and transposing its prebuilt matrix; igraph solves exactly (PRPACK).")


def _igraph_subgraph_ppr(whole_graph, sorted_subgraph, seeds):
    subgraph = whole_graph.induced_subgraph(sorted_subgraph.tolist())
    return subgraph.personalized_pagerank(damping=DAMPING, weights="weight",
                                          reset_vertices=np.searchsorted(sorted_subgraph, seeds).tolist())


def _networkx_ppr(graph, seeds):
    """networkx's pagerank for exactly ITERATIONS iterations (an unreachable tolerance, then its give-up)."""
    import networkx

    try:
        return networkx.pagerank(graph, alpha=DAMPING, personalization={int(seed): 1.0 for seed in seeds},
                                 max_iter=ITERATIONS, tol=1e-30, weight="weight")
    except networkx.PowerIterationFailedConvergence:
        return None


def _check_agreement(workloads, view, seeds, subgraph, sorted_subgraph) -> None:
    for k, name in ((1, "1-hop typed"), (2, "2-hop typed")):
        memctl_nodes = set(workloads[name]["memctl"]().node.tolist())
        assert memctl_nodes == set(workloads[name]["scipy"]().tolist()) == workloads[name]["igraph"](), name
    ranking = workloads["PPR 2-hop subgraph"]["memctl"]()
    assert np.array_equal(ranking.node, sorted_subgraph)
    assert np.allclose(ranking.score, workloads["PPR 2-hop subgraph"]["scipy"](), atol=1e-12)
    ranking = workloads["PPR whole graph"]["memctl"]()
    assert np.allclose(ranking.score, workloads["PPR whole graph"]["scipy"]()[ranking.node], atol=1e-12)


def import_million(nodes: int, workdir: Path) -> str:
    graph_data = gen_synthetic.generate(nodes, int(nodes * 1.2), seed=1)
    jsonl = workdir / "million.jsonl"
    with open(jsonl, "w", encoding="utf-8") as stream:
        gen_synthetic.write_jsonl(graph_data, 1, stream)
    home = workdir / "million_home"
    load_before = "%.1f %.1f %.1f" % os.getloadavg()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", MEMCTL_WITH_PEAK, "--home", str(home), "graph", "import",
                             str(jsonl), "--json"], check=True, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_seconds = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    summary = json.loads(result.stdout)
    peak_kib = int(result.stderr.split("VmHWM:")[1].split()[0])
    start = time.perf_counter()
    with Store.open(str(home / "tenants" / "default")) as store:
        store.compact()
    return (f"`memctl graph import FILE.jsonl --json` of {summary['nodes']:,} nodes + {summary['edges']:,} edges "
            f"({os.path.getsize(jsonl) / 1e6:.0f} MB JSONL, {summary['batches']} batches), a cold process: "
            f"{seconds:.1f} s wall, {cpu_seconds:.1f} s CPU, peak RSS {peak_kib / 1024 / 1024:.2f} GiB "
            f"(load average before it: {load_before}); compaction afterwards {time.perf_counter() - start:.1f} s.")


if __name__ == "__main__":
    sys.exit(main())
