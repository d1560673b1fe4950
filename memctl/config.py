"""Configuration: seed 001's defaults, overridden by the tenant's memctl.yaml and then by --config FILE.

Every key a user may set exists in DEFAULTS; an unknown key or a value of the wrong type is refused with the
file, the dotted key and what was expected, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import copy
import os

from engine.errors import InputError

MIB = 1 << 20

DEFAULTS: dict = {
    "recall": {
        # seed 001 §4.y W-config (MVP switches) and §15 appendix A.
        "vector_enabled": False,
        "k_hop": 2,
        "mvp_k_hop": 1,
        "use_node_index": True,
        "seeds_top": 200,
        "budget_tokens": 2000,
        "mmr_lambda": 0.7,
        # λ measured with tools/eval_locomo.py on LoCoMo and MemDaily dev (ablations in tools/bench/RESULTS.md),
        # not appendix A's 0.2/0.4/0.3/0.1 ("需 A/B 调参"): without vectors those renormalise to BM25 0.33 /
        # PPR 0.5 / weight 0.17, which lifts graph neighbours and recent nodes above the turns that hold the
        # answer (LoCoMo Recall@10 0.768 instead of 0.779; MemDaily Recall@5 0.841, below plain BM25's 0.876).
        # PPR at 0.05 only orders what the graph adds (reply/temporal neighbours, SIMILAR_TO turns) after the
        # keyword matches: worth +0.05 Recall@5 on MemDaily, neutral on LoCoMo (0.01-0.1 give the same). Weight
        # and recency at 0: the answers are as often old as recent (recency 0.05: -0.015 MemDaily Recall@5).
        # The same for --mvp, whose seed formula 0.7·BM25 + 0.3·recency loses 0.1 Recall@5 on MemDaily.
        "lambda": {"bm25": 0.95, "vec": 0.0, "ppr": 0.05, "weight": 0.0, "recency": 0.0},
        "mvp_lambda": {"bm25": 0.95, "vec": 0.0, "ppr": 0.05, "weight": 0.0, "recency": 0.0},
        "ann_top": {"Episode": 200, "Fact": 150, "Concept": 100},
        "expand_edge_types": ["ABOUT", "SUPPORTS", "CONTRADICTS", "TEMPORAL_NEXT", "SIMILAR_TO"],
        "mvp_expand_edge_types": ["ABOUT", "SUPPORTS", "TEMPORAL_NEXT", "SIMILAR_TO"],
        "ppr_damping": 0.85,
        "ppr_iterations": 20,
        "raw": {
            "enabled": True,
            "low_coverage_topn": 10,
            "low_concentration": 0.6,
            "pattern_tokens": ["hex", "uuid", "url", "path", "code", "error_code"],
            "top": 100,
            # memctl/recall (raw_fallback.py): the lazily built passage index covers the most recently
            # ingested chunks, those the best node hits cite and those r2g has not converted yet.
            "hot_chunks": 8,
            "passage_tokens": 96,
        },
        # memctl/recall, measured on LoCoMo / MemDaily dev (tools/eval_locomo.py; ablations in RESULTS.md):
        # field_weights: the turn's own words, speaker, date and caption at 1, the reply context at 0.3; the
        #   summary fields at 0 (BM25+'s δ still counts a match there); weighting them costs 0.008 Recall@10.
        # result_types: Concepts are seeds and hubs, not default results (MemDaily NDCG@10 -0.019 with them).
        # speaker_prior (×2 when the query names the turn's speaker): LoCoMo +0.016 Recall@10, +0.05 NDCG@10.
        # reply_neighbor (+0.3·best reply neighbour): LoCoMo +0.013 Recall@10. clause_coverage 0.3: MemDaily
        #   +0.025 Recall@5. SIMILAR_TO in the expansion: MemDaily +0.006 Recall@5. MMR: -0.006 / -0.054.
        # hub_degree: nodes with more such edges join the subgraph but are not expanded through.
        # graph_only_lambda: without the NodeIndex (W4) the boolean filter's match share stands for BM25 and
        #   weight(node) (recency included) ranks too, as W4 says: 仅用近因/权重排序.
        "field_weights": {"title": 0.0, "text": 0.0, "keywords": 0.0, "entities": 0.0, "turn": 1.0,
                          "speaker": 1.0, "date": 1.0, "caption": 1.0, "context": 0.3},
        "result_types": ["Episode", "Fact", "Preference"],
        "expand_result_types": ["Episode"],
        "graph_only_lambda": {"bm25": 0.5, "vec": 0.0, "ppr": 0.2, "weight": 0.3, "recency": 0.0},
        "speaker_prior": 1.0,
        "reply_neighbor": 0.3,
        "reply_seeds": 100,
        "clause_coverage": 0.3,
        "coverage_pool": 50,
        "question_stopwords": True,
        "drop_single_cjk": True,
        "ppr_seeds": 20,
        "expand_max_nodes": 2000,
        "hub_degree": 256,
        "time_boost": 0.0,
        "mmr_enabled": False,
        "max_citations": 3,
    },
    "weights": {
        # weight(node) = α·importance + β·log(1+frequency) + γ·exp(-Δt/τ_type) + δ·emotion + ε·feedback - ζ·stale
        "alpha": 0.35,
        "beta": 0.15,
        "gamma": 0.3,
        "delta": 0.1,
        "epsilon": 0.1,
        "zeta": 0.1,
        "tau_days": {"Episode": 14, "Fact": 90, "Preference": 180, "Concept": 180, "Entity": 180, "Task": 30,
                     "Meta": 180},
        "recency_window_days": 30,
    },
    "graph": {
        "edge_weights": {"ABOUT": 1.0, "SUPPORTS": 0.8, "SIMILAR_TO": 0.5, "TEMPORAL_NEXT": 0.3},
        "default_edge_weight": 0.5,
        "degree_cap": {"ABOUT": 256, "SIMILAR_TO": 64},
        "similar_threshold": 0.75,
    },
    "tiers": {
        "short_days": 7,
        "mid_days": 30,
        "access_extension_days": 3,
        "topic_repeat": 3,
        "theta_conf": 0.8,
        "min_sources": 2,
    },
    "index": {
        "k1": 1.2,
        "b": 0.75,
        "delta": 1.0,
        "field_weights": {"title": 2.0, "text": 1.0, "keywords": 1.5, "entities": 1.5},
        "stopwords_zh": None,
        "stopwords_en": None,
        "user_dictionary": None,
    },
    "ingest": {
        "max_file_bytes": 64 * MIB,
        "max_blob_bytes": 64 * MIB,
        "chunk_min_tokens": 1000,
        "chunk_max_tokens": 2000,
    },
    "engine": {
        "flush_bytes": 8 * MIB,
    },
    "r2g": {
        # memctl/r2g (builder.py, emit.py, extract.importance; memctl.r2g.settings reads these).
        # batch_turns: turns per committed batch (one WAL record); similar_*: SIMILAR_TO from keyword Jaccard
        # overlap, at most similar_cap per Episode; same_event_days: R2G-5's time window for SAME_AS.
        # source_trust / external_trust: the source_trust term of R2G-4's edge weight for rule-built and
        # imported evidence; untimed_recency_boost: its recency term for evidence without a timestamp.
        "batch_turns": 1000,
        "source_trust": 0.8,
        "external_trust": 0.6,
        "untimed_recency_boost": 0.5,
        "similar_threshold": 0.3,
        "similar_cap": 8,
        "same_event_days": 1,
        # R2G-4: edge.weight = 0.5·conf_extract + 0.3·source_trust + 0.2·recency_boost.
        "edge_weight": {"confidence": 0.5, "source_trust": 0.3, "recency_boost": 0.2},
        # Initial Episode importance (memctl.r2g.extract.importance documents the heuristic).
        "importance": {"base": 0.3, "preference": 0.2, "lexicon_fact": 0.1, "lexicon_fact_cap": 0.2,
                       "named": 0.1, "dated": 0.1, "arousal": 0.1, "long_turn": 0.05, "long_turn_chars": 200,
                       "small_talk": -0.2, "floor": 0.05},
        # A directory whose lexicon files (predicates.yaml, aliases.yaml, concepts.yaml, gazetteer.yaml,
        # en_words.yaml, zh_words.yaml, sentiment.yaml) replace the shipped ones of memctl/data.
        "lexicon_directory": None,
    },
}

# Keys whose value may be null in DEFAULTS but a string (a path) when set.
_OPTIONAL_PATHS = {"index.stopwords_zh", "index.stopwords_en", "index.user_dictionary", "r2g.lexicon_directory"}
# Maps whose keys are open-ended (node or edge type names), so unknown keys are allowed there.
_OPEN_MAPS = {"recall.ann_top", "recall.field_weights", "weights.tau_days", "graph.edge_weights", "graph.degree_cap",
              "index.field_weights"}


class Config:
    """Nested settings with dotted lookup: config.get("recall.k_hop")."""

    def __init__(self, values: dict, sources: list[str]):
        self.values = values
        self.sources = sources

    def get(self, dotted: str):
        node = self.values
        for part in dotted.split("."):
            node = node[part]
        return node

    def section(self, name: str) -> dict:
        return self.values[name]


def load(tenant_file: str | None = None, user_file: str | None = None) -> Config:
    values = copy.deepcopy(DEFAULTS)
    sources = ["defaults"]
    for path in (tenant_file, user_file):
        if path and (path == user_file or os.path.exists(path)):
            _merge(values, _read_yaml(path), path, "")
            sources.append(path)
    return Config(values, sources)


def _read_yaml(path: str) -> dict:
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except FileNotFoundError:
        raise InputError("configuration file not found", where=path) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 (byte offset {error.start})", where=path) from None
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
        raise InputError(f"invalid YAML: {getattr(error, 'problem', None) or error}", where=where) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError("expected a mapping of settings at the top level", where=path)
    return data


def _merge(target: dict, overrides: dict, path: str, prefix: str) -> None:
    for key, value in overrides.items():
        dotted = f"{prefix}{key}"
        if key not in target:
            if prefix.rstrip(".") in _OPEN_MAPS:
                target[key] = _checked_number(value, dotted, path)
                continue
            known = ", ".join(sorted(map(str, target)))
            raise InputError(f"unknown setting {dotted!r} (known here: {known})", where=path)
        default = target[key]
        if isinstance(default, dict):
            if not isinstance(value, dict):
                raise InputError(f"setting {dotted!r} must be a mapping", where=path)
            _merge(default, value, path, dotted + ".")
        else:
            target[key] = _checked_value(default, value, dotted, path)


def _checked_number(value, dotted: str, path: str):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"setting {dotted!r} must be a number, got {value!r}", where=path)
    return value


def _checked_value(default, value, dotted: str, path: str):
    if default is None:
        if value is None or (dotted in _OPTIONAL_PATHS and isinstance(value, str)):
            return value
        raise InputError(f"setting {dotted!r} must be a file path, got {value!r}", where=path)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise InputError(f"setting {dotted!r} must be true or false, got {value!r}", where=path)
        return value
    if isinstance(default, (int, float)):
        number = _checked_number(value, dotted, path)
        if isinstance(default, int) and not isinstance(default, bool) and isinstance(number, float):
            if not number.is_integer():
                raise InputError(f"setting {dotted!r} must be a whole number, got {value!r}", where=path)
            return int(number)
        return number
    if isinstance(default, list):
        if not isinstance(value, list):
            raise InputError(f"setting {dotted!r} must be a list, got {value!r}", where=path)
        return value
    if not isinstance(value, type(default)):
        raise InputError(f"setting {dotted!r} must be a {type(default).__name__}, got {value!r}", where=path)
    return value
