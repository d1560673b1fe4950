"""The text and graph answers in the crash verdict have teeth: engines that lose derived data are caught.

Each test breaks one derived kind the way a real bug would (a flush that drops a document, a flush that
forgets deletions, a compaction that keeps retired documents, a rebuild that drops a document), runs the crash
workload on it, and requires the verifier to refuse the store, although every record is intact and
check_store finds nothing wrong.
"""

from __future__ import annotations

import pytest

from engine.format import GRAPH_DEAD_TABLE
from engine.graph.kind import GraphKind
from engine.store import Store
from tools.testing import crashchild
from tools.testing.derived import TEXT_TABLES
from tools.testing.scripts import seed
from tools.testing.workload import Progress, RecoveryFailure, verify_recovery
from engine.text import merge as text_merge
from engine.text.kind import TextKind

BATCHES = 80
FLUSH_BYTES = 12 << 10


def run_workload(path: str, workload_seed: int, monkeypatch, rebuilds: bool = False):
    """The workload's model after running it; without `rebuilds`, its rebuild steps compact instead: a rebuild
    makes the derived segments again from the records and would hide a bug planted in a flush or compaction."""
    if not rebuilds:
        monkeypatch.setattr(Store, "rebuild", Store.compact)
    progress = Progress(workload_seed)
    crashchild.run(path, workload_seed, 1, BATCHES, progress.emit, FLUSH_BYTES)
    return progress.model


def test_a_text_flush_that_drops_a_document_is_caught(tmp_path, monkeypatch):
    original = TextKind._build  # what a flush builds its segment with, in one step or two (start_flush)

    def lossy(self, changes, *arguments):
        documents = dict(changes.get(TEXT_TABLES.documents, {}))
        documents.pop(min(documents, default=None), None)
        return original(self, {**changes, TEXT_TABLES.documents: documents}, *arguments)

    monkeypatch.setattr(TextKind, "_build", lossy)
    model = run_workload(str(tmp_path / "store"), seed(701), monkeypatch)
    with pytest.raises(RecoveryFailure, match="text search"):
        verify_recovery(str(tmp_path / "store"), model)


def test_a_graph_flush_that_forgets_deletions_is_caught(tmp_path, monkeypatch):
    original = GraphKind.flush

    def forgetful(self, changes, new_segment):
        return original(self, {table: rows for table, rows in changes.items() if table != GRAPH_DEAD_TABLE},
                        new_segment)

    monkeypatch.setattr(GraphKind, "flush", forgetful)
    model = run_workload(str(tmp_path / "store"), seed(702), monkeypatch)
    with pytest.raises(RecoveryFailure, match="graph"):
        verify_recovery(str(tmp_path / "store"), model)


def test_a_text_compaction_that_keeps_retired_documents_is_caught(tmp_path, monkeypatch):
    original = text_merge.merge
    monkeypatch.setattr(text_merge, "merge", lambda segments, deleted=(), signature=None, deleted_below=():
                        original(segments, (), signature, deleted_below))
    model = run_workload(str(tmp_path / "store"), seed(703), monkeypatch)
    with pytest.raises(RecoveryFailure, match="text"):
        verify_recovery(str(tmp_path / "store"), model)


def test_a_text_rebuild_that_drops_a_document_is_caught(tmp_path, monkeypatch):
    original = TextKind.rebuild

    def lossy(self, rows, new_segment):
        documents = dict(rows.get(TEXT_TABLES.documents, {}))
        oldest = min(documents, key=lambda key: documents[key]["docno"], default=None)  # the longest unchanged
        documents.pop(oldest, None)
        return original(self, {**rows, TEXT_TABLES.documents: documents}, new_segment)

    monkeypatch.setattr(TextKind, "rebuild", lossy)
    model = run_workload(str(tmp_path / "store"), seed(704), monkeypatch, rebuilds=True)
    with pytest.raises(RecoveryFailure, match="text search"):
        verify_recovery(str(tmp_path / "store"), model)
