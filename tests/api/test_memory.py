"""memctl.Memory, the one entry point of the CLI and of agents in-process: each capability a command uses,
called directly."""

from __future__ import annotations

import io
import os

import pytest

from engine.errors import StoreBusy, InputError
from memctl.memory import Memory
from memctl.paths import tenant_dir

from recall_testkit import SAMPLES

CONCEPT = "Concept:Win11蓝牙故障"


@pytest.fixture
def home(tmp_path):
    return str(tmp_path / "home")


def open_memory(home, writable=False, lazy=False) -> Memory:
    return Memory.open(home=home, writable=writable, holder="memory test", lazy=lazy)


def test_ingest_r2g_recall_keywords_and_explain(home):
    with open_memory(home, writable=True) as memory:
        summary = memory.ingest([os.path.join(SAMPLES, "win11-bluetooth.transcript.txt")])
        assert summary["chunks_new"] > 0 and memory.r2g()["chunks_new"] == summary["chunks_new"]
    with open_memory(home) as memory:
        answer = memory.recall("Win11 蓝牙 打不开", top=3)
        assert len(answer["results"]) == 3 and "蓝牙" in answer["results"][0]["text"]
        assert "0x8007045d" in memory.keywords("错误码 0x8007045D")["keywords"]
        node = answer["results"][0]["id"]
        explained = memory.explain(node, "Win11 蓝牙 打不开", top=3)
        assert explained["id"] == node and explained["rank"] == 1
        chunks = memory.raw.list()
        cited = answer["results"][0]["citations"][0]
        assert cited["raw_id"] in [chunk["raw_id"] for chunk in chunks]
        assert memory.raw.read(cited["raw_id"], cited["offset"], cited["length"]).decode() == cited["snippet"]


def test_graph_capabilities(home):
    with open_memory(home, writable=True) as memory:
        added = memory.graph.add([CONCEPT, "Episode:e1", "Episode:e2"],
                                 [("Episode:e1", "ABOUT", CONCEPT), ("Episode:e2", "ABOUT", CONCEPT)], weight=0.5)
        assert added["added_nodes"] == [CONCEPT, "Episode:e1", "Episode:e2"] and len(added["added_edges"]) == 2
        with pytest.raises(InputError, match="TYPE:NAME"):
            memory.graph.add(["Episode:e3", "untyped"])
        summary = memory.graph.import_jsonl(io.BytesIO(b'{"kind":"node","id":"Entity:x","type":"Entity"}\n'))
        assert summary == {"nodes": 1, "edges": 0, "lines": 1, "batches": 1}
    with open_memory(home) as memory:
        graph = memory.graph
        assert sorted(row["key"] for row in graph.neighbors(CONCEPT, "in")) == ["Episode:e1", "Episode:e2"]
        assert [row["key"] for row in graph.khop("Episode:e1", k=2, direction="both")] == \
            ["Episode:e1", CONCEPT, "Episode:e2"]
        assert sum(row["score"] for row in graph.ppr(["Episode:e1"], direction="both")) == pytest.approx(1.0)
        assert graph.degree_statistics()["ABOUT"]["edges"] == 2
        stream = io.StringIO()
        assert graph.export(stream) == {"nodes": 4, "edges": 2}
        assert "Episode:e3" not in stream.getvalue()


def test_documents_capabilities(home, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.txt").write_text("蓝牙打不开\nWin11 蓝牙耳机连不上\n", encoding="utf-8")
    (notes / "b.txt").write_text("Quick fox\nThe quick brown fox\n", encoding="utf-8")
    with open_memory(home, writable=True) as memory:
        assert memory.documents.add_files([str(notes)], type="note", tags=["home"])["indexed"] == 2
        assert memory.documents.add([{"key": "c", "fields": {"text": "quick dogs"}}]) == \
            {"indexed": 1, "replaced": 0, "keys": ["c"]}
        with pytest.raises(InputError, match="nothing was deleted"):
            memory.documents.delete(["c", "nowhere"])
        assert memory.documents.delete(["c"]) == ["c"]
    with open_memory(home) as memory:
        hits = memory.documents.search("quick", tags=["home"])
        assert [(hit["rank"], hit["key"], hit["type"]) for hit in hits] == [(1, str(notes / "b.txt"), "note")]
        assert memory.documents.search("蓝牙", types=["chat"]) == []


def test_check_compact_and_stats(home):
    with open_memory(home, writable=True) as memory:
        memory.ingest([], ["以后优先中文回答"])
        sizes = memory.compact()
        assert sizes["segment_bytes_after"] > 0 and memory.stats()["raw_blobs"] == 1
    report = Memory.check(home)
    assert report["clean"] and report["path"] == tenant_dir(home, "default") and report["checked"]


def test_a_lazy_memory_opens_its_store_at_first_use(home, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"caf\xe9")
    with open_memory(home, writable=True, lazy=True) as memory:
        with pytest.raises(InputError, match="invalid UTF-8"):
            memory.ingest([str(bad)])
    assert not os.path.exists(tenant_dir(home, "default"))
    with open_memory(home, writable=True, lazy=True) as lazy:
        with open_memory(home, writable=True):
            pass  # the lazy writer holds no lock yet
        lazy.ingest([], ["hello"])
        with pytest.raises(StoreBusy):
            open_memory(home, writable=True)
