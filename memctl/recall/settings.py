"""The `recall` settings as one frozen object, read once per Recaller from the configuration.

Every default lives in memctl.config.DEFAULTS["recall"]; RECALL_DEFAULTS repeats the keys this package added
after that file was written, so an older configuration module (or a test's partial one) still works.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RECALL_DEFAULTS = {
    "field_weights": {"title": 0.0, "text": 0.0, "keywords": 0.0, "entities": 0.0, "turn": 1.0, "speaker": 1.0,
                      "date": 1.0, "caption": 1.0, "context": 0.3},
    "result_types": ["Episode", "Fact", "Preference", "Concept"],
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
}
RAW_DEFAULTS = {"hot_chunks": 8, "passage_tokens": 96}


@dataclass(frozen=True)
class RecallSettings:
    k_hop: int = 2
    mvp_k_hop: int = 1
    use_node_index: bool = True
    vector_enabled: bool = False
    seeds_top: int = 200
    budget_tokens: int = 2000
    mmr_lambda: float = 0.7
    mmr_enabled: bool = False
    lambdas: dict = field(default_factory=lambda: {"bm25": 0.7, "vec": 0.0, "ppr": 0.3, "weight": 0.0})
    mvp_lambdas: dict = field(default_factory=lambda: {"bm25": 1.0, "recency": 0.0})
    graph_only_lambdas: dict = field(default_factory=lambda: dict(RECALL_DEFAULTS["graph_only_lambda"]))
    expand_edge_types: tuple = ("ABOUT", "SUPPORTS", "CONTRADICTS", "TEMPORAL_NEXT")
    mvp_expand_edge_types: tuple = ("ABOUT", "SUPPORTS", "TEMPORAL_NEXT")
    ppr_damping: float = 0.6
    ppr_iterations: int = 20
    ppr_seeds: int = 20
    expand_max_nodes: int = 2000
    hub_degree: int = 256
    field_weights: dict = field(default_factory=lambda: dict(RECALL_DEFAULTS["field_weights"]))
    result_types: tuple = tuple(RECALL_DEFAULTS["result_types"])
    expand_result_types: tuple = tuple(RECALL_DEFAULTS["expand_result_types"])
    speaker_prior: float = 1.0
    reply_neighbor: float = 0.3
    reply_seeds: int = 100
    clause_coverage: float = 0.3
    coverage_pool: int = 50
    question_stopwords: bool = True
    drop_single_cjk: bool = True
    time_boost: float = 0.0
    max_citations: int = 3
    raw_enabled: bool = True
    raw_low_coverage_topn: int = 10
    raw_low_concentration: float = 0.6
    raw_pattern_tokens: tuple = ("hex", "uuid", "url", "path", "code", "error_code")
    raw_top: int = 100
    raw_hot_chunks: int = 8
    raw_passage_tokens: int = 96
    edge_weights: dict = field(default_factory=lambda: {"ABOUT": 1.0, "SUPPORTS": 0.8, "SIMILAR_TO": 0.5,
                                                        "TEMPORAL_NEXT": 0.3})
    default_edge_weight: float = 0.5
    weights: dict = field(default_factory=lambda: {"alpha": 0.35, "beta": 0.15, "gamma": 0.3, "delta": 0.1,
                                                   "epsilon": 0.1, "zeta": 0.1})
    tau_days: dict = field(default_factory=lambda: {"Episode": 14, "Fact": 90, "Concept": 180})

    @classmethod
    def from_config(cls, config) -> "RecallSettings":
        if config is None:
            return cls()
        recall = {**RECALL_DEFAULTS, **config.section("recall")}
        raw = {**RAW_DEFAULTS, **recall.get("raw", {})}
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
