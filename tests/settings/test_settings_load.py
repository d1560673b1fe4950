"""Loading settings files: every kind of refusal names the file, the line, the key and what was expected;
layers apply in order and every value remembers where it came from."""

from __future__ import annotations

import builtins
import math

import pytest

from engine.errors import InputError
from memctl.settings import defaults, load


def _file(tmp_path, text: str, name: str = "settings.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _refusal(tmp_path, text: str) -> str:
    path = _file(tmp_path, text)
    with pytest.raises(InputError) as caught:
        load(None, path)
    assert caught.value.exit_code == 2
    message = str(caught.value)
    assert message.startswith(path)
    return message


@pytest.mark.parametrize("text, key, expected", [
    # below the minimum
    ("recall:\n  budget_tokens: -5\n", "recall.budget_tokens", "-5 is out of range: expected a whole number from 1 "),
    ("engine:\n  flush_bytes: -1\n", "engine.flush_bytes", "-1 is out of range"),
    ("recall:\n  lambda: {bm25: -0.1}\n", "recall.lambda.bm25", "-0.1 is out of range: expected a number from 0 to 1"),
    # above the maximum
    ("recall:\n  ppr_iterations: 1000000000000\n", "recall.ppr_iterations",
     "1000000000000 is out of range: expected a whole number from 1 to 1000"),
    ("recall:\n  k_hop: 9999\n", "recall.k_hop", "9999 is out of range: expected a whole number from 0 to 5"),
    # not finite
    ("recall:\n  lambda:\n    bm25: .nan\n", "recall.lambda.bm25", ".nan is not a finite number"),
    ("index:\n  k1: .inf\n", "index.k1", ".inf is not a finite number"),
    ("r2g.importance.small_talk: -.inf\n", "r2g.importance.small_talk", "-.inf is not a finite number"),
    # wrong type
    ("recall:\n  k_hop: two\n", "recall.k_hop", "expected a whole number from 0 to 5, got 'two'"),
    ("recall:\n  k_hop: true\n", "recall.k_hop", "got true"),
    ("recall:\n  k_hop: {a: 1}\n", "recall.k_hop", "got a mapping"),
    ("recall:\n  mmr_enabled: 1\n", "recall.mmr_enabled", "expected true or false, got 1"),
    ("index:\n  stopwords_en: 3\n", "index.stopwords_en", "expected a file path, or null"),
    ("recall:\n  expand_edge_types: ABOUT\n", "recall.expand_edge_types", "expected a list of one of"),
    ("recall:\n  expand_edge_types: [ABOUT, FRIEND_OF]\n", "recall.expand_edge_types",
     "'FRIEND_OF' is not one of TEMPORAL_NEXT, ABOUT"),
    ("recall:\n  result_types: []\n", "recall.result_types", "the list is empty"),
    ("graph:\n  edge_weights: 2\n", "graph.edge_weights", "expected a mapping of one of"),
    ("graph:\n  edge_weights: {FRIEND_OF: 1}\n", "graph.edge_weights.FRIEND_OF", "got 'FRIEND_OF'"),
    ("graph:\n  degree_cap: {ABOUT: 0}\n", "graph.degree_cap.ABOUT", "0 is out of range"),
    ("recall: 3\n", "recall", "is a group of settings: expected a mapping of them, got 3"),
    # whole number
    ("recall:\n  k_hop: 1.5\n", "recall.k_hop", "1.5 is not a whole number"),
    ("ingest:\n  chunk_max_tokens: 1e3\n", "ingest.chunk_max_tokens", "got '1e3'"),
])
def test_a_value_outside_its_type_or_range_is_refused_naming_key_value_and_range(tmp_path, text, key, expected):
    message = _refusal(tmp_path, text)
    assert f"'{key}'" in message and expected in message


def test_the_refusal_names_the_line(tmp_path):
    message = _refusal(tmp_path, "# tuned\nrecall:\n  k_hop: 2\n  ppr_iterations: 0\n")
    assert ":4: setting 'recall.ppr_iterations': 0 is out of range" in message


def test_whole_numbers_written_as_floats_are_read_as_integers(tmp_path):
    settings = load(None, _file(tmp_path, "recall:\n  k_hop: 3.0\n  mmr_lambda: 1\n"))
    assert settings.recall.k_hop == 3 and isinstance(settings.recall.k_hop, int)
    assert settings.recall.mmr_lambda == 1.0 and isinstance(settings.recall.mmr_lambda, float)


@pytest.mark.parametrize("text, unknown, suggestion", [
    ("recal:\n  k_hop: 1\n", "recal", "recall"),
    ("recall:\n  khop: 1\n", "recall.khop", "recall.k_hop"),
    ("recall:\n  ann_top: {Episode: 200}\n", "recall.ann_top", None),
    ("tiers:\n  short_days: 7\n", "tiers", None),
    ("weights:\n  recency_window_days: 30\n", "weights.recency_window_days", None),
    ("recall:\n  vector_enabled: false\n", "recall.vector_enabled", None),
    ("recall:\n  lambda: {bm25: 0.9, vec: 0.1}\n", "recall.lambda.vec", None),
    ("graph:\n  similar_threshold: 0.75\n", "graph.similar_threshold", None),
])
def test_an_unknown_or_unread_key_is_refused_with_the_closest_known_key(tmp_path, text, unknown, suggestion):
    message = _refusal(tmp_path, text)
    assert f"unknown setting '{unknown}'" in message and "memctl config doc" in message
    if suggestion:
        assert f"did you mean '{suggestion}'?" in message


def test_a_key_set_twice_in_one_file_is_refused(tmp_path):
    message = _refusal(tmp_path, "recall:\n  k_hop: 1\nrecall.k_hop: 2\n")
    assert "'recall.k_hop' is set twice (lines 2 and 3)" in message
    message = _refusal(tmp_path, "graph:\n  edge_weights: {ABOUT: 1}\ngraph.edge_weights.ABOUT: 2\n")
    assert "'graph.edge_weights.ABOUT' is set twice" in message


def test_nested_and_dotted_keys_mix_and_maps_keep_the_entries_a_file_does_not_name(tmp_path):
    settings = load(None, _file(tmp_path, "recall.raw.top: 5\nrecall:\n  raw: {enabled: false}\n"
                                          "graph.edge_weights.ABOUT: 2\n"))
    assert (settings.recall.raw.top, settings.recall.raw.enabled) == (5, False)
    assert dict(settings.graph.edge_weights) == {"ABOUT": 2.0, "SUPPORTS": 0.8, "SIMILAR_TO": 0.5,
                                                 "TEMPORAL_NEXT": 0.3}


def test_layers_apply_in_order_and_each_value_keeps_its_origin(tmp_path):
    tenant = _file(tmp_path, "recall:\n  k_hop: 1\n  seeds_top: 50\n", "memctl.yaml")
    user = _file(tmp_path, "\nrecall:\n  k_hop: 3\n", "override.yaml")
    settings = load(tenant, user)
    assert (settings.recall.k_hop, settings.recall.seeds_top, settings.recall.ppr_iterations) == (3, 50, 20)
    assert str(settings.origin("recall.k_hop")) == f"--config {user}:3"
    assert str(settings.origin("recall.seeds_top")) == f"tenant {tenant}:3"
    assert str(settings.origin("recall.ppr_iterations")) == "default"
    assert [(source.layer, source.path, source.found) for source in settings.files] == \
        [("tenant", tenant, True), ("--config", user, True)]


def test_a_missing_tenant_file_is_the_defaults_but_a_missing_config_file_is_refused(tmp_path):
    settings = load(str(tmp_path / "memctl.yaml"))
    assert settings.values == defaults().values and not settings.files[0].found
    with pytest.raises(InputError, match=r"^--config: .*absent.yaml: no such settings file"):
        load(None, str(tmp_path / "absent.yaml"))


def test_a_directory_as_settings_file_is_refused_naming_the_option(tmp_path):
    with pytest.raises(InputError, match=rf"^--config: {tmp_path} is a directory, not a YAML settings file"):
        load(None, str(tmp_path))
    (tmp_path / "memctl.yaml").mkdir()
    with pytest.raises(InputError, match="memctl.yaml: .*memctl.yaml is a directory"):
        load(str(tmp_path / "memctl.yaml"))


def test_an_unreadable_settings_file_is_refused_naming_the_option(tmp_path, monkeypatch):
    path = _file(tmp_path, "recall:\n  k_hop: 1\n")
    real_open = builtins.open

    def refusing(file, *args, **kwargs):
        if file == path:
            raise PermissionError(13, "Permission denied", path)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing)
    with pytest.raises(InputError, match=rf"^--config: cannot read {path}: Permission denied") as caught:
        load(None, path)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("data, expected", [
    (b"recall: [\n", "invalid YAML"),
    (b"- k_hop\n", "expected a mapping of settings at the top level"),
    (b"recall:\n  k_hop: \xff\n", r"not UTF-8 \(byte offset 17\)"),
    (b"3: 1\n", "setting names are text, got 3"),
])
def test_a_file_that_is_not_a_settings_mapping_is_refused(tmp_path, data, expected):
    path = tmp_path / "broken.yaml"
    path.write_bytes(data)
    with pytest.raises(InputError, match=expected):
        load(None, str(path))


def test_an_empty_file_changes_nothing(tmp_path):
    assert load(None, _file(tmp_path, "# nothing yet\n")).values == defaults().values


def test_with_values_checks_like_a_file():
    tuned = defaults().with_values({"recall": {"hub_degree": 10}, "weights.tau_days": {"Fact": 7}}, "test")
    assert tuned.recall.hub_degree == 10 and tuned.weights.tau_days["Fact"] == 7.0
    assert tuned.origin("weights.tau_days.Fact").layer == "test"
    assert defaults().recall.hub_degree == 256
    with pytest.raises(InputError, match="^test: setting 'recall.time_boost': .nan is not a finite number"):
        defaults().with_values({"recall.time_boost": math.nan}, "test")
