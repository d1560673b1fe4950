"""The settings schema: every key valid by its own rules, read by the module it names, documented by a
reference that cannot drift from it; and the keys nothing read are gone."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

import pytest

from memctl.settings import defaults, reference
from memctl.settings.effective import View
from memctl.settings.schema import BY_NAME, KEYS, SECTIONS, TEXT_FIELDS
from memctl.settings.value_types import ListOf, MapOf, Name

ROOT = Path(__file__).resolve().parents[2]
REMOVED = ["recall.ann_top", "recall.vector_enabled", "recall.lambda.vec", "recall.mvp_lambda.vec",
           "recall.graph_only_lambda.vec", "weights.recency_window_days", "graph.similar_threshold",
           "tiers.short_days", "tiers.mid_days", "tiers.access_extension_days", "tiers.topic_repeat",
           "tiers.theta_conf", "tiers.min_sources"]


@pytest.mark.parametrize("key", KEYS, ids=lambda key: key.name)
def test_every_default_passes_its_own_type_and_range(key):
    if isinstance(key.type, MapOf):
        for entry, value in key.default.items():
            assert key.type.check_entry(entry, value) == value
    else:
        checked = key.type.check(list(key.default) if isinstance(key.default, tuple) else key.default)
        assert checked == key.default


@pytest.mark.parametrize("key", KEYS, ids=lambda key: key.name)
def test_every_key_is_documented(key):
    assert key.section in SECTIONS
    assert key.doc.strip() and key.source.strip() and key.readers
    assert key.type.describe()


def _code_words(path: Path) -> set:
    """Names and string literals of a module's code (comments left out): what it can read a key by."""
    words = set()
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type == tokenize.NAME:
            words.add(token.string)
        elif token.type == tokenize.STRING:
            words.add(token.string.strip("\"'"))
    return words


@pytest.mark.parametrize("key", KEYS, ids=lambda key: key.name)
def test_every_key_is_read_by_the_module_it_names(key):
    """A key is read by attribute (settings.recall.k_hop), item (parameters["base"]) or dotted name
    (config.get("graph.degree_cap")); declaring a key its reader does not use fails here."""
    for reader in key.readers:
        words = _code_words(ROOT / reader)
        assert key.name.rsplit(".", 1)[1] in words or key.name in words, f"{reader} does not read {key.name}"


def test_no_key_hides_behind_a_view_method():
    reserved = {name for name in dir(View) if not name.startswith("_")}
    assert not {part for key in KEYS for part in key.name.split(".")} & reserved


@pytest.mark.parametrize("name", REMOVED)
def test_keys_nothing_reads_are_not_declared(name):
    assert name not in BY_NAME
    with pytest.raises(Exception, match="unknown setting"):
        defaults().with_values({name: 1})


def test_name_lists_resolve_to_the_model_and_the_query_patterns():
    from memctl.model import EdgeType, NodeType
    from memctl.recall.query import PATTERNS

    types = {type(key.type.element if isinstance(key.type, ListOf) else key.type.keys): None for key in KEYS
             if isinstance(key.type, (ListOf, MapOf))}
    assert set(types) == {Name}
    assert BY_NAME["recall.result_types"].type.element.allowed() == tuple(member.value for member in NodeType)
    assert BY_NAME["graph.edge_weights"].type.keys.allowed() == tuple(member.value for member in EdgeType)
    assert set(BY_NAME["recall.raw.pattern_tokens"].type.element.allowed()) == set(PATTERNS)


def test_field_weights_name_exactly_the_node_index_fields():
    from memctl.node_documents import episode_fields, node_document

    turn = {"speaker": "Ann", "ts": "2024-05-08T13:56:00", "attachments": [{"kind": "image", "caption": "a cat"}]}
    props = {"title": "t", "text": "x", "keywords": ["k"], "entities": ["e"]}
    document = node_document("key", "Episode", props, episode_fields(turn, "words", "en", "the reply"))
    assert tuple(document["fields"]) == TEXT_FIELDS.allowed()
    for name in ("index.field_weights", "recall.field_weights"):
        assert tuple(BY_NAME[name].default) == TEXT_FIELDS.allowed()


def test_the_reference_file_is_generated_from_the_schema():
    """memctl/settings/REFERENCE.md is `memctl config doc`: regenerate it when the schema changes."""
    written = (ROOT / reference.REFERENCE_FILE).read_text(encoding="utf-8")
    assert written == reference.markdown()
    for key in KEYS:
        assert f"**`{key.name}`**" in written


def test_defaults_view_by_attribute_item_and_dotted_name():
    settings = defaults()
    assert settings.recall.raw.top == settings.get("recall.raw.top") == 100
    assert dict(settings.recall["lambda"]) == {"bm25": 0.95, "ppr": 0.05, "weight": 0.0, "recency": 0.0}
    assert settings.get("graph.degree_cap") == {"ABOUT": 256, "SIMILAR_TO": 64}
    assert settings.origin("graph.degree_cap.ABOUT").layer == "default"
    with pytest.raises(TypeError):
        settings.get("graph.degree_cap")["ABOUT"] = 1
    with pytest.raises(AttributeError, match="no setting recall.ann_top"):
        settings.recall.ann_top
