"""Store size and r2g memory: bytes on disk after `memctl r2g` + `memctl compact`, against the turn text bytes.

Each input goes into an empty store through the commands a user runs, as fresh processes:
    memctl --home H ingest --raw INPUT --quiet;  memctl --home H r2g --json;  memctl --home H compact
r2g is timed with os.wait4 (CPU = user + system, peak RSS = ru_maxrss). Turn text bytes: the UTF-8 bytes of
every turn's text as the store keeps it (each turn's raw_ref span), the measure of issue 17's targets (store
bytes <= 10x turn text bytes; r2g peak RSS <= 1 GiB for any input size). Store bytes: every file of the
tenant's directory, by part. Cold recall: `memctl recall QUERY --json` as a fresh process, median of --recalls.

    python tools/bench/size_bench.py                          # LoCoMo conv-26, LoCoMo dev, MemDaily dev, 6 MiB
    python tools/bench/size_bench.py --mb 6 32 --no-results   # print only
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

from common import compile_bytecode, table, write_section  # noqa: E402
from r2g_bench import LOCOMO_DEV, MEMCTL, MEMDAILY_DEV, run  # noqa: E402

TARGET_RATIO = 10
TARGET_RSS_MIB = 1024
QUERIES = {"locomo": "What did Caroline research about adoption agencies?", "transcript": "蓝牙 meeting 周末"}
PARTS = (("records", ".records.seg"), ("graph", ".graph."), ("text index", ".text."))


def turn_text_bytes(tenant: str) -> tuple[int, int]:
    """(turns, UTF-8 bytes of their texts) of the store at `tenant`."""
    from engine.raw import RawStore
    from engine.store import Store

    with Store.open(tenant, writable=False) as store:
        lengths = [turn["raw_ref"]["length"] for turn in RawStore(store).iter_turns()]
    return len(lengths), sum(lengths)


def records_by_table(tenant: str) -> dict:
    """{table: [rows, key and value bytes, zstd bytes]} of the store's live records, each table compressed alone
    as a compaction writes it (its level and block size): what each table costs in the records segment."""
    import zstandard

    from engine.format import SEGMENT_COMPACTION_LEVEL
    from engine.records.blocks import encode_block
    from engine.records.writer import compaction_block_bytes
    from engine.store import Store

    rows: dict = {}
    with Store.open(tenant, writable=False) as store:
        for segment in store.records:
            for composite, _rank, packed in segment.raw_rows(0):
                rows.setdefault(composite[: composite.index(b"\0")].decode("utf-8"), []).append((composite, packed))
    compressor = zstandard.ZstdCompressor(level=SEGMENT_COMPACTION_LEVEL)
    found = {}
    for table_name, table_rows in rows.items():
        sizes = [len(composite) + len(packed or b"") for composite, packed in table_rows]
        compressed, start, filled, mark = 0, 0, 0, compaction_block_bytes(table_name)
        for end, size in enumerate(sizes, start=1):
            filled += size
            if filled >= mark or end == len(sizes):
                composites, values = zip(*table_rows[start:end])
                compressed += len(compressor.compress(encode_block(list(composites), list(values))))
                start, filled = end, 0
        found[table_name] = [len(table_rows), sum(sizes), compressed]
    return found


def part_of(relative: str) -> str:
    if relative.startswith("raw" + os.sep):
        return "raw blobs"
    name = os.path.basename(relative)
    return next((part for part, marker in PARTS if marker in name), "other")


def store_bytes(tenant: str) -> dict:
    """{part: bytes} of every file under `tenant`, and "total"."""
    found = {part: 0 for part, _ in PARTS} | {"raw blobs": 0, "other": 0}
    for path, _, names in os.walk(tenant):
        for name in names:
            full = os.path.join(path, name)
            found[part_of(os.path.relpath(full, tenant))] += os.path.getsize(full)
    found["total"] = sum(found.values())
    return found


def measure(name: str, inputs: list, fmt: str, recalls: int) -> dict:
    home = tempfile.mkdtemp(prefix="size-bench-")
    tenant = os.path.join(home, "tenants", "default")
    try:
        run([MEMCTL, "--home", home, "ingest", *sum((["--raw", path] for path in inputs), []), "--format", fmt,
             "--quiet"])
        r2g = run([MEMCTL, "--home", home, "r2g", "--json"])
        compact = run([MEMCTL, "--home", home, "compact"])
        latencies = [run([MEMCTL, "--home", home, "recall", QUERIES[fmt], "--json"])[1] for _ in range(recalls)]
        turns, text_bytes = turn_text_bytes(tenant)
        return {"name": name, "turns": turns, "text_bytes": text_bytes, "bytes": store_bytes(tenant),
                "tables": records_by_table(tenant),
                "r2g_cpu": r2g[0], "r2g_wall": r2g[1], "r2g_rss_mib": r2g[2] / 1024, "compact_cpu": compact[0],
                "recall_ms": 1000 * statistics.median(latencies)}
    finally:
        shutil.rmtree(home, ignore_errors=True)


def report(measured: list, recalls: int) -> str:
    rows = []
    for entry in measured:
        ratio = entry["bytes"]["total"] / entry["text_bytes"]
        rows.append([entry["name"], f"{entry['turns']:,}", f"{entry['text_bytes']:,}", f"{entry['bytes']['total']:,}",
                     f"{ratio:.1f}x ({'yes' if ratio <= TARGET_RATIO else 'NO'})",
                     *(f"{entry['bytes'][part]:,}" for part in ("records", "graph", "text index", "raw blobs", "other")),
                     f"{entry['r2g_rss_mib']:,.0f} MiB ({'yes' if entry['r2g_rss_mib'] <= TARGET_RSS_MIB else 'NO'})",
                     f"{1000 * entry['r2g_cpu'] / entry['turns']:.2f}", f"{entry['compact_cpu']:.2f}",
                     f"{entry['recall_ms']:.0f}"])
    headers = ["input", "turns", "turn text bytes", "store bytes", "store/text <= 10x", "records", "graph",
               "text index", "raw blobs", "other", "r2g peak RSS <= 1 GiB", "r2g CPU ms/turn", "compact CPU s",
               "cold recall ms"]
    notes = [f"- Store bytes: every file of the tenant directory after r2g and compaction; cold recall: median "
             f"wall time of {recalls} `memctl recall QUERY --json` processes (interpreter start included).",
             "- Generated inputs: tools/bench/ingest_bench.py's transcripts (Markov chains over the dev texts, mixed "
             "Chinese and English), seed 7 as r2g_bench uses."]
    return "\n".join([table(headers, rows), "", *notes, "", tables_report(measured)])


def tables_report(measured: list, shown: int = 8) -> str:
    """Per input, the records tables that cost most (zstd bytes, each table compressed alone), the rest summed."""
    rows = []
    for entry in measured:
        ranked = sorted(entry["tables"].items(), key=lambda item: -item[1][2])
        rest = [sum(column) for column in zip(*(counts for _, counts in ranked[shown:]))] or [0, 0, 0]
        for table_name, (count, raw, compressed) in [*ranked[:shown], (f"{len(ranked) - shown} more", rest)]:
            rows.append([entry["name"], table_name, f"{count:,}", f"{count / entry['turns']:.2f}", f"{raw:,}",
                         f"{compressed:,}", f"{compressed / entry['turns']:.0f}"])
    headers = ["input", "records table", "rows", "rows/turn", "key+value bytes", "zstd bytes", "zstd bytes/turn"]
    return "\n".join(["Records by table (live rows; each table compressed alone as a compaction writes it):", "",
                      table(headers, rows)])


def conversation(path: str, sample_id: str, directory: str) -> str:
    with open(path, encoding="utf-8") as handle:
        samples = [sample for sample in json.load(handle) if sample["sample_id"] == sample_id]
    extracted = os.path.join(directory, f"{sample_id}.json")
    with open(extracted, "w", encoding="utf-8") as handle:
        json.dump(samples, handle)
    return extracted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, nargs="*", default=[6.0], help="generated corpora, MiB each")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--recalls", type=int, default=5)
    parser.add_argument("--no-results", action="store_true", help="print only; leave RESULTS.md alone")
    arguments = parser.parse_args()
    from ingest_bench import generate_corpus

    compile_bytecode()
    scratch = tempfile.mkdtemp(prefix="size-bench-inputs-")
    try:
        inputs = [("LoCoMo conv-26", [conversation(LOCOMO_DEV, "conv-26", scratch)], "locomo"),
                  ("LoCoMo dev", [LOCOMO_DEV], "locomo"), ("MemDaily dev (zh)", [MEMDAILY_DEV], "locomo")]
        for megabytes in arguments.mb:
            corpus = os.path.join(scratch, f"corpus-{megabytes:g}")
            generate_corpus(corpus, int(megabytes * 2**20), arguments.seed)
            inputs.append((f"generated zh/en transcripts ({megabytes:g} MiB)", [corpus], "transcript"))
        measured = []
        for name, paths, fmt in inputs:
            measured.append(measure(name, paths, fmt, arguments.recalls))
            print(json.dumps(measured[-1]), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    body = report(measured, arguments.recalls)
    print(body)
    if not arguments.no_results:
        write_section("size_bench", body)


if __name__ == "__main__":
    main()
