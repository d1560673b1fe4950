"""`memctl migrate` from format 4: the slot facts a format-4 store holds get the chains format 5 keeps, the same
as r2g builds them."""

from __future__ import annotations

import pytest

from engine.check import check_store
from engine.errors import UnsupportedVersion
from engine_testkit import rewrite_manifest_as
from facts_testkit import TENANT, chain_edges, chains, conversation, open_memory, remember_files
from memctl.memory import Memory
from memctl.paths import tenant_dir

TURNS = [("2024-01-10T09:00:00", "我的住址是北京。"), ("2024-03-01T09:00:00", "我的宠物是猫。"),
         ("2024-06-10T09:00:00", "我的住址是上海。")]


def test_a_format_4_store_gets_its_chains_from_migrate(tmp_path, monkeypatch):
    path = conversation(tmp_path / "c.jsonl", "c", TURNS)
    remember_files(tmp_path / "expected", path)
    with monkeypatch.context() as patched:  # a format-4 memctl: claims without chains
        patched.setattr("memctl.facts.maintain.update_chains", lambda *arguments, **keywords: [])
        remember_files(tmp_path / "old", path)
    old = tmp_path / "old"
    assert chains(old) == {}
    store_path = tenant_dir(str(old), TENANT)
    rewrite_manifest_as(store_path, 4)
    with pytest.raises(UnsupportedVersion, match="memctl migrate"):
        open_memory(old)
    report = Memory.migrate(str(old), TENANT)
    assert (report["from_version"], report["to_version"], report["migrated"]) == (4, 5, True)
    assert report["steps"] == [{"name": "fact_chains", "to_version": 5,
                                "counts": {"chains": 2, "claims": 3, "in_force": 2, "contradictions": 1}}]
    assert check_store(store_path).as_dict()["problems"] == []
    assert chains(old) == chains(tmp_path / "expected")
    assert chain_edges(old) == chain_edges(tmp_path / "expected")
