"""Deterministic synthetic memory graph with seed 001's node and edge types and power-law degrees.

    python tools/gen_synthetic.py --nodes 1000000 --edges 1200000 --seed 1 --out graph.jsonl [--npz graph.npz]

Output is the JSONL that `memctl graph import` reads, one object per line, nodes first:

    {"kind": "node", "id": "n0000042", "type": "Concept", "title": "...", "text": "...", "created_at": 1.7e9}
    {"kind": "edge", "src": "n0000001", "type": "ABOUT", "dst": "n0000042", "weight": 0.73, "confidence": 0.9,
     "ts": 1.7e9}

Node texts are short mixed Chinese/English phrases drawn from a Zipf vocabulary, so text-recall benchmarks
can index the same graph. `--npz` also writes the arrays (internal ids 0..n-1 in line order) for peers in
tools/bench. The same seed always gives byte-identical output.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass

import numpy as np

NODE_TYPES = ["Episode", "Fact", "Preference", "Concept", "Entity", "Task", "Meta"]
NODE_SHARE = [0.50, 0.15, 0.04, 0.05, 0.18, 0.05, 0.03]
EDGE_TYPES = ["TEMPORAL_NEXT", "ABOUT", "MENTIONS", "CAUSES", "CAUSED_BY", "SUPPORTS", "CONTRADICTS",
              "DERIVED_FROM", "REFERS_TO", "SIMILAR_TO"]
# (edge type, source node type, target node type, share of the edges): episodes point at concepts and
# entities, facts derive from episodes, concepts resemble concepts — the shape R2G produces.
EDGE_PLAN = [
    ("ABOUT", "Episode", "Concept", 0.26),
    ("MENTIONS", "Episode", "Entity", 0.22),
    ("TEMPORAL_NEXT", "Episode", "Episode", 0.12),
    ("DERIVED_FROM", "Fact", "Episode", 0.10),
    ("SUPPORTS", "Fact", "Fact", 0.07),
    ("CONTRADICTS", "Fact", "Fact", 0.02),
    ("SIMILAR_TO", "Concept", "Concept", 0.08),
    ("REFERS_TO", "Episode", "Episode", 0.05),
    ("CAUSES", "Episode", "Episode", 0.03),
    ("CAUSED_BY", "Episode", "Episode", 0.01),
    ("ABOUT", "Preference", "Concept", 0.02),
    ("ABOUT", "Task", "Concept", 0.02),
]
START_TIME = 1_700_000_000.0
SPAN_SECONDS = 2 * 365 * 86400.0
VOCABULARY = (
    "蓝牙 驱动 故障 Win11 更新 重启 设置 耳机 连接 配对 网络 WiFi 内存 磁盘 备份 日志 错误 事件ID 服务 注册表 "
    "Python 脚本 部署 数据库 索引 查询 缓存 延迟 测试 发布 版本 回滚 会议 周报 计划 预算 旅行 机票 酒店 咖啡 "
    "跑步 健身 饮食 睡眠 阅读 电影 音乐 家人 朋友 生日 礼物 中文 回答 偏好 简洁 详细 代码 示例 图表 文档 "
    "bluetooth driver crash update reboot settings headset pairing network memory disk backup log error "
    "service registry script deploy database index query cache latency test release rollback meeting "
    "report plan budget travel flight hotel coffee running fitness sleep reading movie music family friend"
).split()


@dataclass
class SyntheticGraph:
    node_type: np.ndarray  # uint8 index into NODE_TYPES, per node
    created_at: np.ndarray
    source: np.ndarray  # int64 node index
    target: np.ndarray
    edge_type: np.ndarray  # uint8 index into EDGE_TYPES
    weight: np.ndarray  # float32
    confidence: np.ndarray
    timestamp: np.ndarray


def generate(node_count: int, edge_count: int, seed: int) -> SyntheticGraph:
    rng = np.random.default_rng(seed)
    node_type = rng.choice(len(NODE_TYPES), size=node_count, p=NODE_SHARE).astype(np.uint8)
    created_at = np.sort(START_TIME + rng.random(node_count) * SPAN_SECONDS)
    members = {name: np.flatnonzero(node_type == index) for index, name in enumerate(NODE_TYPES)}
    parts = [_edges_of_plan(rng, members, created_at, plan, edge_count) for plan in EDGE_PLAN]
    source, target, edge_type = (np.concatenate([part[index] for part in parts]) for index in range(3))
    keep = source != target
    source, target, edge_type = source[keep], target[keep], edge_type[keep]
    # One edge per (source, type, target): the import keys edges by that triple.
    key = (source * len(EDGE_TYPES) + edge_type) * node_count + target
    _, first = np.unique(key, return_index=True)
    first.sort()
    source, target, edge_type = source[first], target[first], edge_type[first]
    size = len(source)
    weight = np.round(0.1 + 0.9 * rng.random(size), 3).astype(np.float32)
    confidence = np.round(0.5 + 0.5 * rng.random(size), 3)
    timestamp = np.maximum(created_at[source], created_at[target]) + rng.random(size) * 3600.0
    return SyntheticGraph(node_type, created_at, source, target, edge_type, weight, confidence, timestamp)


def _edges_of_plan(rng, members: dict, created_at, plan, edge_count: int):
    name, source_type, target_type, share = plan
    sources, targets = members[source_type], members[target_type]
    count = int(edge_count * share * 1.03)  # a little extra: duplicates and self-loops are dropped later
    if len(sources) == 0 or len(targets) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint8)
    if name == "TEMPORAL_NEXT":
        # A chain in time order: each episode points at the next one (sources are sorted by time).
        chosen = rng.choice(len(sources) - 1, size=min(count, len(sources) - 1), replace=False)
        return sources[chosen], sources[chosen + 1], np.full(len(chosen), EDGE_TYPES.index(name), np.uint8)
    source = sources[_heavy_tail(rng, len(sources), count, exponent=0.6)]
    target = targets[_heavy_tail(rng, len(targets), count, exponent=1.0)]
    return source, target, np.full(count, EDGE_TYPES.index(name), np.uint8)


def _heavy_tail(rng, population: int, count: int, exponent: float) -> np.ndarray:
    """Indices whose frequency falls as rank^-exponent (a Zipf-like law), over a shuffled population."""
    permutation = rng.permutation(population)
    uniform = rng.random(count)
    if exponent == 1.0:
        rank = np.floor(np.power(float(population), uniform)).astype(np.int64) - 1
    else:
        power = 1.0 - exponent
        rank = np.floor(np.power(uniform * (population**power - 1.0) + 1.0, 1.0 / power)).astype(np.int64) - 1
    return permutation[np.clip(rank, 0, population - 1)]


def node_key(index: int) -> str:
    return f"n{index:07d}"


def node_texts(graph: SyntheticGraph, seed: int):
    """(title, text) per node, built from Zipf-drawn vocabulary words."""
    rng = np.random.default_rng(seed + 1)
    vocabulary = np.array(VOCABULARY)
    count = len(graph.node_type)
    lengths = rng.integers(4, 11, size=count)
    words = vocabulary[_heavy_tail(rng, len(vocabulary), int(lengths.sum()), exponent=1.0)]
    ends = np.cumsum(lengths)
    for index in range(count):
        phrase = words[ends[index] - lengths[index]: ends[index]]
        yield " ".join(phrase[:3]), " ".join(phrase)


def write_jsonl(graph: SyntheticGraph, seed: int, stream) -> int:
    lines = 0
    for index, (title, text) in enumerate(node_texts(graph, seed)):
        record = {"kind": "node", "id": node_key(index), "type": NODE_TYPES[graph.node_type[index]],
                  "title": title, "text": text, "created_at": round(float(graph.created_at[index]), 3)}
        stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        lines += 1
    for source, target, edge_type, weight, confidence, timestamp in zip(
            graph.source.tolist(), graph.target.tolist(), graph.edge_type.tolist(), graph.weight.tolist(),
            graph.confidence.tolist(), graph.timestamp.tolist()):
        stream.write(
            f'{{"kind": "edge", "src": "{node_key(source)}", "type": "{EDGE_TYPES[edge_type]}", '
            f'"dst": "{node_key(target)}", "weight": {round(weight, 3)}, "confidence": {confidence}, '
            f'"ts": {round(timestamp, 3)}}}\n')
        lines += 1
    return lines


def save_npz(graph: SyntheticGraph, path: str) -> None:
    np.savez(path, node_type=graph.node_type, created_at=graph.created_at, source=graph.source,
             target=graph.target, edge_type=graph.edge_type, weight=graph.weight, confidence=graph.confidence,
             timestamp=graph.timestamp, node_types=np.array(NODE_TYPES), edge_types=np.array(EDGE_TYPES))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--edges", type=int, default=1_200_000, help="approximate; duplicates are dropped")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="-", help="JSONL path, or - for stdout")
    parser.add_argument("--npz", help="also write the arrays here")
    options = parser.parse_args(argv)
    if options.nodes < 2 or options.edges < 1:
        parser.error("need at least 2 nodes and 1 edge")
    graph = generate(options.nodes, options.edges, options.seed)
    if options.npz:
        save_npz(graph, options.npz)
    if options.out == "-":
        lines = write_jsonl(graph, options.seed, sys.stdout)
    else:
        with open(options.out, "w", encoding="utf-8") as stream:
            lines = write_jsonl(graph, options.seed, stream)
    print(f"{options.nodes} nodes, {len(graph.source)} edges, {lines} lines", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
