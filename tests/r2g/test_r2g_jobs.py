"""`memctl r2g --jobs N` (issue 20): turns analysed in worker processes, the same graph as one process builds."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from engine.format import GRAPH_NODE_TABLE
from memctl.r2g import analysis_pool
from memctl.r2g.analysis_pool import Inline, Pool
from memctl.r2g.rawturns import ChunkStart
from r2g_testkit import dump, ingest, open_memory, write_jsonl

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "samples")


def _conversation(conv: str, turns: int) -> list[dict]:
    lines = ["I moved to Denver last weekend with my dog Max.", "我上个月开始在字节跳动上班了。",
             "My sister Anna plays tennis every Tuesday.", "Did you go hiking at Mount Tam?",
             "我婶婶的电话号码是15522637476。", "We adopted a cat named Miso in March."]
    return [{"conv_id": conv, "id": f"D{number // 10 + 1}:{number}", "speaker": ("Ann", "Ben")[number % 2],
             "ts": f"2023-{number // 40 + 1:02d}-{number % 28 + 1:02d}T10:{number % 60:02d}:00",
             "text": f"{lines[number % len(lines)]} ({conv} {number})"} for number in range(turns)]


def _internal_ids(home) -> dict:
    with open_memory(home, writable=False) as memory:
        return {key: record["id"] for key, record in memory.store.scan(GRAPH_NODE_TABLE)}


def test_jobs_build_the_graph_one_process_builds(tmp_path, monkeypatch):
    # Small groups and lookahead so that this input crosses many group boundaries and releases.
    monkeypatch.setattr(analysis_pool, "GROUP_TURNS", 5)
    monkeypatch.setattr(analysis_pool, "LOOKAHEAD_GROUPS", 2)
    inputs = [write_jsonl(tmp_path / "a.jsonl", _conversation("c1", 90) + _conversation("c2", 37)), SAMPLES]
    homes = {jobs: tmp_path / f"home{jobs}" for jobs in (1, 2)}
    summaries = {}
    for jobs, home in homes.items():
        ingest(home, *inputs)
        with open_memory(home) as memory:  # one store clock for both runs: tests/r2g/conftest.py
            summaries[jobs] = memory.r2g(jobs=jobs)
    assert summaries[1]["turns"] > 127
    assert {**summaries[1], "seconds": 0} == {**summaries[2], "seconds": 0}
    assert dump(homes[2]) == dump(homes[1])
    assert _internal_ids(homes[2]) == _internal_ids(homes[1])


class _Turn:
    def __init__(self, number: int, new: bool):
        self.new = new
        self.text = f"I moved to Lisbon in May, turn {number}."
        self.meta = {"ts": "2023-05-10T10:00:00", "speaker": "Ann"}


def test_the_pool_yields_every_item_in_the_walks_order_with_its_own_analysis(monkeypatch):
    monkeypatch.setattr(analysis_pool, "GROUP_TURNS", 3)
    monkeypatch.setattr(analysis_pool, "LOOKAHEAD_GROUPS", 1)
    items = []
    for number in range(23):
        if number % 7 == 0:
            items.append(ChunkStart(info=None, new=True, turns=7))
        items.append((None, _Turn(number, new=number % 5 != 3), None))  # some old turns between new ones
    inline = list(Inline(None).analyzed(iter(items)))
    with Pool(2, None) as pool:
        pooled = list(pool.analyzed(iter(items)))
    assert [item for item, _ in pooled] == items
    assert [analysis is None for _, analysis in pooled] == [not isinstance(item, tuple) or not item[1].new
                                                          for item in items]
    assert [analysis and analysis.text for _, analysis in pooled] == [analysis and analysis.text
                                                                     for _, analysis in inline]
    assert [analysis and analysis.sentences for _, analysis in pooled] == [analysis and analysis.sentences
                                                                          for _, analysis in inline]


def test_jobs_zero_means_one_per_core_and_bad_values_exit_2(cli, tmp_path):
    shutil.copy(os.path.join(SAMPLES, "dana-move-and-job.jsonl"), tmp_path / "d.jsonl")
    assert cli("ingest", "--raw", str(tmp_path / "d.jsonl"), "--quiet").exit_code == 0
    for bad in ("-1", "65", "two"):
        result = cli("r2g", "--jobs", bad)
        assert result.exit_code == 2 and "--jobs" in result.output
    result = cli("r2g", "--from", "jsonl", str(tmp_path / "d.jsonl"), "--jobs", "2")
    assert result.exit_code == 2 and "--jobs goes with --from raw" in result.output
    result = cli("r2g", "--jobs", "0", "--json")
    assert result.exit_code == 0 and json.loads(result.output)["turns"] > 0


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_error_in_the_writer_stops_the_run_and_commits_no_partial_batch(tmp_path, monkeypatch, jobs):
    from memctl.r2g.emit import TurnEmitter

    ingest(tmp_path / "home", write_jsonl(tmp_path / "a.jsonl", _conversation("c1", 40)))
    calls = []

    def failing_turn(self, *args):
        calls.append(1)
        if len(calls) == 30:
            raise RuntimeError("injected")
        return original(self, *args)

    original = TurnEmitter.turn
    monkeypatch.setattr(TurnEmitter, "turn", failing_turn)
    with open_memory(tmp_path / "home") as memory:
        with pytest.raises(RuntimeError, match="injected"):
            memory.r2g(jobs=jobs)
    assert _internal_ids(tmp_path / "home") == {}
