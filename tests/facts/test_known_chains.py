"""A run that commits batch after batch keeps what it wrote of each chain (memctl/facts/known_chains.py): a batch
reads the claims it brings, not every claim of the chains it touches, and the chains come out as when every
claim was read again."""

from __future__ import annotations

import itertools

import pytest

from engine.format import GRAPH_EDGE_TABLE, GRAPH_NODE_TABLE
from engine.graph.api import GraphStore
from facts_testkit import open_memory, write_jsonl
from memctl.facts.known_chains import Claim, KnownChains
from memctl.facts.tables import AUDIT_TABLE, CHAIN_TABLE, REVIEW_TABLE

# One residence after another, a value that comes back, two values the same day (contested), an end: every
# change of state of a claim an earlier batch wrote.
TURNS = [("2024-01-10T09:00:00", "我的住址是北京。"), ("2024-03-02T09:00:00", "我的住址是上海。"),
         ("2024-03-02T18:00:00", "我的住址是杭州。"), ("2024-05-20T09:00:00", "我的住址是北京。今天很冷。"),
         ("2024-06-01T09:00:00", "我的公司是腾讯。"), ("2024-07-15T09:00:00", "我的住址是深圳。"),
         ("2024-08-01T09:00:00", "我的公司是阿里巴巴。"), ("2024-09-09T09:00:00", "我的住址是成都。"),
         ("2024-10-01T09:00:00", "我的住址是上海。天气不错。"), ("2024-11-11T09:00:00", "我的住址是广州。")]


class _Forgetful(KnownChains):
    """Knows no chain: every batch reads every claim, as before."""

    def claims(self, chain, record):
        return None


def _sources(directory) -> list:
    """A file a turn, each its own chunk, so that each is a batch of its own."""
    directory.mkdir()
    return [str(write_jsonl(directory / f"{index}.jsonl", [{"id": f"a-{index}", "conv_id": "a", "speaker": "用户",
                                                             "ts": ts, "text": text}]))
            for index, (ts, text) in enumerate(TURNS)]


def _convert(home, sources, monkeypatch, known_chains) -> int:
    """r2g one chunk a batch on a fixed clock; returns how many node records the run read by key."""
    readings = itertools.count()
    monkeypatch.setattr(GraphStore.__init__, "__defaults__", (lambda: 1_790_000_000.7 + 0.6 * next(readings),))
    monkeypatch.setattr("memctl.r2g.builder.KnownChains", known_chains)
    read = []
    nodes = GraphStore.nodes
    monkeypatch.setattr(GraphStore, "nodes", lambda graph, keys: nodes(graph, read.extend(keys) or keys))
    with open_memory(home) as memory:
        memory.ingest(sources)
        memory.config = memory.config.with_values({"r2g.batch_turns": 1}, "test")
        assert memory.r2g()["batches"] == len(TURNS)
    monkeypatch.undo()
    return len(read)


def _tables(home) -> dict:
    with open_memory(home, writable=False) as memory:
        return {table: dict(memory.store.scan(table))
                for table in (GRAPH_NODE_TABLE, GRAPH_EDGE_TABLE, CHAIN_TABLE, REVIEW_TABLE, AUDIT_TABLE)}


def test_a_run_reads_each_claim_once_and_writes_the_chains_as_a_run_that_reads_them_all(tmp_path, monkeypatch):
    source = _sources(tmp_path / "turns")
    read_known = _convert(tmp_path / "known", source, monkeypatch, KnownChains)
    read_all = _convert(tmp_path / "all", source, monkeypatch, _Forgetful)
    known, every = _tables(tmp_path / "known"), _tables(tmp_path / "all")
    assert known == every
    [residence] = [record for key, record in known[CHAIN_TABLE].items() if key.endswith("|residence")]
    assert len(residence["entries"]) >= 8 and residence["reviews"]  # the chain grew, and was contested
    states = {record["props"]["attributes"].get("state") for record in known[GRAPH_NODE_TABLE].values()
              if "slot" in record.get("props", {}).get("attributes", {})}
    assert {"active", "superseded", "contested"} <= states
    assert read_known < read_all - 20  # the residence chain alone: 1 + 2 + … claims read again


def test_a_chain_is_known_once_its_batch_committed_and_while_its_record_is_the_one_written():
    known = KnownChains(limit=3)
    record = {"entries": [["f1", "2024-01-01"]], "claims": [], "contradicts": [], "in_force": ["f1"], "reviews": []}
    claims = {"f1": Claim("version", None, (), ())}
    known.stage("s|residence", record, claims)
    assert known.claims("s|residence", record) is None  # the batch has not committed
    known.committed()
    assert known.claims("s|residence", record) == claims
    assert known.claims("s|residence", {**record, "in_force": []}) is None  # written since by someone else
    known.stage("s|pet", record, {"a": claims["f1"], "b": claims["f1"], "c": claims["f1"]})
    known.committed()
    assert known.claims("s|residence", record) is None  # over the limit: the least recently touched goes
    assert known.claims("s|pet", record) is not None


@pytest.mark.parametrize("limit", [0, 2])
def test_a_run_that_forgets_chains_writes_the_same(tmp_path, monkeypatch, limit):
    source = _sources(tmp_path / "turns")
    _convert(tmp_path / "small", source, monkeypatch, lambda: KnownChains(limit))
    _convert(tmp_path / "all", source, monkeypatch, _Forgetful)
    assert _tables(tmp_path / "small") == _tables(tmp_path / "all")
