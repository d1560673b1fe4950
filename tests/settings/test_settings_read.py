"""Every declared key is read: memctl's commands run over the samples (each mode switched on once) with the
settings views recording what they hand out; a key nobody asked for is a setting that does nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memctl.settings.effective import Settings, View
from memctl.settings.schema import BY_NAME

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
AGENT_LINES = [
    {"name": "create_memory", "ts": "2025-11-05T20:00:00",
     "arguments": {"subject": "我", "memory_type": "事实", "topic": "情绪", "object": "不开心"}},
    {"name": "create_memory", "ts": "2025-11-05T20:00:00",
     "arguments": {"subject": "我", "memory_type": "事件", "topic": "摔东西"}},
    {"name": "link_memories", "arguments": {"source_memory_description": "我不开心",
                                            "target_memory_description": "我摔东西", "relation_type": "导致"}},
]


@pytest.fixture
def reads(monkeypatch) -> set:
    """Names of the keys read through any Settings or View while the test runs."""
    found: set = set()
    by_item, by_get = View.__getitem__, Settings.get

    def item(view, member):
        found.add(f"{view._name}.{member}")
        return by_item(view, member)

    def attribute(view, member):
        if member.startswith("_") or member not in view._members:
            raise AttributeError(member)
        return item(view, member)

    def get(settings, name):
        found.add(name)
        return by_get(settings, name)

    monkeypatch.setattr(View, "__getitem__", item)
    monkeypatch.setattr(View, "__getattr__", attribute)
    monkeypatch.setattr(Settings, "get", get)
    return found


def test_every_key_is_read_by_some_command(cli, tmp_path, reads):
    agent = tmp_path / "agent.jsonl"
    agent.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in AGENT_LINES), encoding="utf-8")
    mmr = tmp_path / "mmr.yaml"
    mmr.write_text("recall:\n  mmr_enabled: true\n", encoding="utf-8")
    runs = [["ingest", *[argument for path in sorted(SAMPLES.iterdir()) for argument in ("--raw", str(path))]],
            ["r2g"], ["r2g", "--from", "jsonl", str(agent)],
            ["recall", "--q", "Which line does Dana take to work? What does 0x8007045D mean?", "--allow-raw"],
            ["--config", str(mmr), "recall", "--q", "Dana commute Red Line", "--mvp"],
            ["recall", "--q", "蓝牙 打不开", "--graph-only"],
            ["search", "bluetooth"], ["raw", "ls"]]
    for arguments in runs:
        result = cli(*arguments)
        assert result.exit_code == 0, (arguments, result.stderr)
    episode = json.loads(cli("recall", "--q", "Red Line", "--json").stdout)["results"][0]["id"]
    assert cli("graph", "--khop", episode).exit_code == 0
    assert cli("feedback", episode, "--up").exit_code == 0
    assert cli("feedback", episode, "--up").exit_code == 1  # within the cooldown
    raw_id = json.loads(cli("raw", "ls", "--json").stdout)[0]["raw_id"]
    assert cli("raw", "cat", raw_id).exit_code == 0
    first = json.loads(cli("fact", "add", "I", "residence", "Boston", "--since", "2024-01-01", "--json").stdout)
    assert cli("fact", "add", "I", "residence", "Denver", "--since", "2024-01-02", "--conflicts", first["fact"]
               ).exit_code == 0  # a contest: prio's weights and trust, the half-life, the review margin
    assert set(BY_NAME) - reads == set()
