"""The `r2g` settings: the schema's defaults, overridden by a tenant's memctl.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import InputError
from memctl.language import lexicon
from memctl.model import edge_weight
from memctl.paths import CONFIG_FILE, tenant_dir
from memctl.settings import defaults
from r2g_testkit import TENANT, convert, dump, ingest, nodes_of_type, write_jsonl

TURN = {"speaker": "Ann", "ts": "2023-05-10T14:00:00", "text": "Tom played soccer in the park."}


def _convert_with(home, tmp_path, settings_yaml: str | None) -> None:
    ingest(home, write_jsonl(tmp_path / "turn.jsonl", [TURN]))
    if settings_yaml is not None:
        (Path(tenant_dir(str(home), TENANT)) / CONFIG_FILE).write_text(settings_yaml, encoding="utf-8")
    convert(home)


def _fact_and_episode(home) -> tuple[dict, dict]:
    [fact] = nodes_of_type(home, "Fact").values()
    [episode] = nodes_of_type(home, "Episode").values()
    return fact, episode


def _agent_weight(home, fact_key: str) -> float:
    [weight] = [edge[3] for edge in dump(home)["edges"].values() if edge[0] == fact_key and edge[1] == "AGENT"]
    return weight


def test_defaults_are_the_seed_values():
    settings = defaults().r2g
    assert dict(settings.edge_weight) == {"confidence": 0.5, "source_trust": 0.3, "recency_boost": 0.2}
    assert (settings.batch_turns, settings.similar_threshold, settings.similar_cap) == (1000, 0.3, 8)
    assert settings.importance["base"] == 0.3 and settings.lexicon_directory is None
    assert edge_weight(1.0, 1.0, 1.0) == pytest.approx(1.0)


def test_memctl_yaml_changes_edge_weights_and_importance(tmp_path, monkeypatch):
    default_home, tuned_home = tmp_path / "default", tmp_path / "tuned"
    monkeypatch.setenv("MEMCTL_HOME", str(default_home))
    _convert_with(default_home, tmp_path, None)
    monkeypatch.setenv("MEMCTL_HOME", str(tuned_home))
    _convert_with(tuned_home, tmp_path, "r2g:\n  source_trust: 0.2\n"
                  "  edge_weight: {confidence: 0.6, source_trust: 0.2, recency_boost: 0.2}\n"
                  "  importance: {base: 0.4}\n")
    default_fact, default_episode = _fact_and_episode(default_home)
    fact, episode = _fact_and_episode(tuned_home)
    confidence = fact["props"]["confidence"]
    assert _agent_weight(default_home, default_fact["key"]) == pytest.approx(edge_weight(confidence, 0.8, 1.0))
    assert _agent_weight(tuned_home, fact["key"]) == pytest.approx(0.6 * confidence + 0.2 * 0.2 + 0.2 * 1.0)
    assert episode["props"]["importance"] == pytest.approx(default_episode["props"]["importance"] + 0.1)


def test_lexicon_directory_replaces_a_shipped_lexicon(isolated_home, tmp_path):
    lexicons = tmp_path / "lexicons"
    lexicons.mkdir()
    (lexicons / "predicates.yaml").write_text("kick_about: {en: [play soccer]}\n", encoding="utf-8")
    try:
        _convert_with(isolated_home, tmp_path, f"r2g:\n  lexicon_directory: {lexicons}\n")
        fact, _ = _fact_and_episode(isolated_home)
        assert fact["props"]["attributes"]["predicate"]["normalized"] == "kick_about"
    finally:
        lexicon.use_directory(None)


def test_a_missing_lexicon_directory_is_refused(isolated_home, tmp_path):
    with pytest.raises(InputError, match="lexicon directory not found"):
        _convert_with(isolated_home, tmp_path, f"r2g:\n  lexicon_directory: {tmp_path / 'absent'}\n")
