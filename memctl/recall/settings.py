"""The `recall` settings as one frozen object, read once per Recaller from the configuration.

Every default lives in memctl.config.DEFAULTS (sections recall, weights, graph); `from_config(None)` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RecallSettings:
    k_hop: int
    mvp_k_hop: int
    use_node_index: bool
    vector_enabled: bool
    seeds_top: int
    budget_tokens: int
    mmr_lambda: float
    mmr_enabled: bool
    lambdas: dict
    mvp_lambdas: dict
    graph_only_lambdas: dict
    expand_edge_types: tuple
    mvp_expand_edge_types: tuple
    ppr_damping: float
    ppr_iterations: int
    ppr_seeds: int
    expand_max_nodes: int
    hub_degree: int
    field_weights: dict
    result_types: tuple
    expand_result_types: tuple
    speaker_prior: float
    reply_neighbor: float
    reply_seeds: int
    clause_coverage: float
    coverage_pool: int
    question_stopwords: bool
    drop_single_cjk: bool
    time_boost: float
    max_citations: int
    raw_enabled: bool
    raw_low_coverage_topn: int
    raw_low_concentration: float
    raw_pattern_tokens: tuple
    raw_top: int
    raw_hot_chunks: int
    raw_passage_tokens: int
    edge_weights: dict
    default_edge_weight: float
    weights: dict
    tau_days: dict

    @classmethod
    def from_config(cls, config) -> "RecallSettings":
        if config is None:
            from memctl.config import load

            config = load()
        recall = config.section("recall")
        raw = recall["raw"]
        weights = config.section("weights")
        graph = config.section("graph")
        return cls(
            k_hop=int(recall["k_hop"]), mvp_k_hop=int(recall["mvp_k_hop"]),
            use_node_index=bool(recall["use_node_index"]), vector_enabled=bool(recall["vector_enabled"]),
            seeds_top=int(recall["seeds_top"]), budget_tokens=int(recall["budget_tokens"]),
            mmr_lambda=float(recall["mmr_lambda"]), mmr_enabled=bool(recall["mmr_enabled"]),
            lambdas=dict(recall["lambda"]), mvp_lambdas=dict(recall["mvp_lambda"]),
            graph_only_lambdas=dict(recall["graph_only_lambda"]),
            expand_edge_types=tuple(recall["expand_edge_types"]),
            mvp_expand_edge_types=tuple(recall["mvp_expand_edge_types"]),
            ppr_damping=float(recall["ppr_damping"]), ppr_iterations=int(recall["ppr_iterations"]),
            ppr_seeds=int(recall["ppr_seeds"]), expand_max_nodes=int(recall["expand_max_nodes"]),
            hub_degree=int(recall["hub_degree"]),
            field_weights=dict(recall["field_weights"]), result_types=tuple(recall["result_types"]),
            expand_result_types=tuple(recall["expand_result_types"]),
            speaker_prior=float(recall["speaker_prior"]), reply_neighbor=float(recall["reply_neighbor"]),
            reply_seeds=int(recall["reply_seeds"]),
            clause_coverage=float(recall["clause_coverage"]), coverage_pool=int(recall["coverage_pool"]),
            question_stopwords=bool(recall["question_stopwords"]), drop_single_cjk=bool(recall["drop_single_cjk"]),
            time_boost=float(recall["time_boost"]), max_citations=int(recall["max_citations"]),
            raw_enabled=bool(raw["enabled"]), raw_low_coverage_topn=int(raw["low_coverage_topn"]),
            raw_low_concentration=float(raw["low_concentration"]),
            raw_pattern_tokens=tuple(raw["pattern_tokens"]), raw_top=int(raw["top"]),
            raw_hot_chunks=int(raw["hot_chunks"]), raw_passage_tokens=int(raw["passage_tokens"]),
            edge_weights=dict(graph["edge_weights"]), default_edge_weight=float(graph["default_edge_weight"]),
            weights={name: float(weights[name]) for name in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")},
            tau_days=dict(weights["tau_days"]),
        )
