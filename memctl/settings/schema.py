"""Every setting memctl reads, declared once: name, type and range, default, where the default comes from
(seed 001's section, or "measured" where ours differs from the seed on purpose, with the measurement), which
module reads it, and what it does.

Only keys something reads are declared, so a file naming any other key is refused (settings of features
not built yet, such as vectors or memory tiers, come with their issue). `memctl config doc` prints this as
the reference; tests check that every key is read by the module it names.
"""

from __future__ import annotations

from memctl.settings.value_types import Flag, ListOf, MapOf, Name, Number, OptionalPath

MIB = 1 << 20
NODE_TYPES = Name("memctl.model:NodeType")
EDGE_TYPES = Name("memctl.model:EdgeType")
PATTERN_KINDS = Name("memctl.recall.query:PATTERNS")
# The text index fields: `memctl index` documents have title and text; NodeIndex documents all of them
# (memctl/node_documents.py says what each holds).
TEXT_FIELDS = Name(("title", "text", "keywords", "entities", "turn", "speaker", "date", "caption", "context"))

SHARE = Number(0.0, 1.0)
FIELD_WEIGHT = MapOf(TEXT_FIELDS, Number(0.0, 100.0))

PIPELINE = "memctl/recall/pipeline.py"
STAGE_A = "memctl/recall/stage_a.py"
STAGE_C = "memctl/recall/stage_c.py"
RAW_FALLBACK = "memctl/recall/raw_fallback.py"
RANK = "memctl/recall/rank.py"
WEIGHT = "memctl/recall/weight.py"
TEXT_INDEX = "memctl/settings/text_index.py"
INGEST = "memctl/ingest/api.py"
BUILDER = "memctl/r2g/builder.py"
EMIT = "memctl/r2g/emit.py"
IMPORTANCE = "memctl/r2g/extract.py"
FEEDBACK = "memctl/feedback.py"
FACTS = "memctl/facts/priority.py"
FACT_SOURCES = Name("memctl.facts.priority:SOURCES")

LAMBDA_SOURCE = (
    "measured with tools/eval_locomo.py on LoCoMo and MemDaily dev (ablations in tools/bench/RESULTS.md), not "
    "seed 001 §15 appendix A's 0.2/0.4/0.3/0.1 (需 A/B 调参): without vectors those renormalise to BM25 0.33 / "
    "PPR 0.5 / weight 0.17, which lifts graph neighbours and recent nodes above the turns that hold the answer "
    "(LoCoMo Recall@10 0.768 instead of 0.779; MemDaily Recall@5 0.841, below plain BM25's 0.876). PPR at 0.05 "
    "only orders what the graph adds after the keyword matches: +0.05 Recall@5 on MemDaily, neutral on LoCoMo. "
    "Weight and recency at 0: the answers are as often old as recent (recency 0.05: -0.015 MemDaily Recall@5)")
MVP_LAMBDA_SOURCE = ("measured: as recall.lambda; seed 001 §4.y W4's 0.7·BM25 + 0.3·recency loses 0.1 Recall@5 "
                     "on MemDaily")
GRAPH_ONLY_SOURCE = ("seed 001 §4.y W4 纯图降级 (仅用近因/权重排序): the boolean filter's match share stands for "
                     "BM25 and weight(node), recency included, ranks too; values ours")

SECTIONS = {
    "recall": "How `memctl recall` finds, ranks and packs memories (seed 001 §4.y W3-W6, §5).",
    "weights": "weight(node), how easily a memory comes back regardless of the query (seed 001 §6.1).",
    "graph": "Edge weights of the graph walks (seed 001 §15 appendix A, §22.1).",
    "index": "Tokenizer and BM25F of the text indexes (seed 001 §3.3).",
    "ingest": "Input limits and chunk sizes of `memctl ingest` (seed 001 §3.0).",
    "engine": "The storage engine.",
    "r2g": "Conversion of raw chunks into the memory graph, `memctl r2g` (seed 001 §4.x R2G).",
    "feedback": "`memctl feedback`: pins and votes feeding weight(node)'s ε term (seed 002's BOOST rules).",
    "facts": "Version chains of slot facts: which claim holds, conflicts and the review queue (seed 001 §7).",
}


class Key:
    __slots__ = ("name", "type", "default", "source", "readers", "doc")

    def __init__(self, name: str, value_type, default, source: str, readers: tuple, doc: str):
        self.name = name
        self.type = value_type  # a memctl.settings.value_types type
        self.default = default
        self.source = source  # where the default comes from
        self.readers = readers  # the modules that read it, as paths in the repository
        self.doc = doc

    @property
    def section(self) -> str:
        return self.name.split(".", 1)[0]


def _lambdas(prefix: str, values: dict, source: str, readers: tuple, what: str) -> list:
    stages = {"bm25": "the keyword stage (BM25F, the graph filter or raw passages)", "ppr": "PPR over the graph",
              "weight": "weight(node)", "recency": "recency alone (exp(-Δt/τ))"}
    first = f"{prefix}.bm25"
    return [Key(f"{prefix}.{stage}", SHARE, values[stage], source if stage == "bm25" else f"as {first}", readers,
                f"λ of {stages[stage]} in {what}; the λ of the stages that ran are renormalised to sum 1.")
            for stage in stages]


KEYS: tuple = (
    # --- recall ---------------------------------------------------------------------------------------------
    Key("recall.k_hop", Number(0, 5, whole=True), 2, "seed 001 §15 appendix A (图扩散 k=2), §9.2", (PIPELINE,),
        "Hops of the graph expansion (stage C) around the best seeds; 0 turns PPR off. --k-hop overrides it."),
    Key("recall.mvp_k_hop", Number(0, 5, whole=True), 1, "seed 001 §4.y W4 (k=1 扩展)", (PIPELINE,),
        "recall.k_hop for --mvp."),
    Key("recall.use_node_index", Flag(), True, "seed 001 §4.y 配置开关 use_node_index", (PIPELINE,),
        "Seed from the NodeIndex (BM25F); false: the pure-graph mode, a boolean filter over node keywords, tags "
        "and entities (W4 纯图降级)."),
    Key("recall.seeds_top", Number(1, 100_000, whole=True), 200, "seed 001 §4.y MVP pseudo-code, §5.4 (topk=200)",
        (STAGE_A, PIPELINE), "How many stage-A hits become seeds."),
    Key("recall.budget_tokens", Number(1, 1_000_000, whole=True), 2000, "seed 001 §9.1, §9.2 (token_budget 2000)",
        (PIPELINE,), "Token budget the cards are packed into; --budget overrides it (--budget 0: no budget)."),
    Key("recall.mmr_enabled", Flag(), False,
        "measured: seed 001 §5.2 asks for MMR, which costs LoCoMo / MemDaily dev Recall@5 0.006 / 0.054",
        (PIPELINE,), "Reorder the ranked candidates by maximal marginal relevance."),
    Key("recall.mmr_lambda", SHARE, 0.7, "seed 001 §15 appendix A (MMR 多样性阈值 0.7)", (PIPELINE,),
        "MMR's trade-off between score (1) and novelty (0), when recall.mmr_enabled."),
    *_lambdas("recall.lambda", {"bm25": 0.95, "ppr": 0.05, "weight": 0.0, "recency": 0.0}, LAMBDA_SOURCE, (RANK,),
              "the final score (seed 001 §5.3)"),
    *_lambdas("recall.mvp_lambda", {"bm25": 0.95, "ppr": 0.05, "weight": 0.0, "recency": 0.0}, MVP_LAMBDA_SOURCE,
              (RANK,), "the final score with --mvp"),
    *_lambdas("recall.graph_only_lambda", {"bm25": 0.5, "ppr": 0.2, "weight": 0.3, "recency": 0.0},
              GRAPH_ONLY_SOURCE, (RANK,), "the final score without the NodeIndex (--graph-only, pure-graph mode)"),
    Key("recall.expand_edge_types", ListOf(EDGE_TYPES),
        ("ABOUT", "SUPPORTS", "CONTRADICTS", "TEMPORAL_NEXT", "SIMILAR_TO"),
        "seed 001 §5.4 (ABOUT, SUPPORTS, CONTRADICTS, TEMPORAL_NEXT); SIMILAR_TO measured: MemDaily dev +0.006 "
        "Recall@5", (PIPELINE,), "Edge types the k-hop expansion and PPR walk."),
    Key("recall.mvp_expand_edge_types", ListOf(EDGE_TYPES), ("ABOUT", "SUPPORTS", "TEMPORAL_NEXT", "SIMILAR_TO"),
        "seed 001 §4.y W4 (ABOUT, SUPPORTS, TEMPORAL_NEXT); SIMILAR_TO as recall.expand_edge_types", (PIPELINE,),
        "recall.expand_edge_types for --mvp."),
    Key("recall.ppr_damping", Number(0.0, 0.99), 0.85, "ours (seed 001 §5.2 names PPR, no value): the usual 0.85",
        (STAGE_C,), "Probability that PPR's walk follows an edge rather than restarting at a seed."),
    Key("recall.ppr_iterations", Number(1, 1000, whole=True), 20, "ours", (STAGE_C,),
        "Power iterations of PPR."),
    Key("recall.ppr_seeds", Number(1, 100_000, whole=True), 20, "ours", (STAGE_C,),
        "PPR restarts at the best this many seeds, in proportion to their scores."),
    Key("recall.expand_max_nodes", Number(1, 10_000_000, whole=True), 2000, "ours", (STAGE_C,),
        "At most this many nodes in the expanded subgraph (the strongest edges' nodes are kept)."),
    Key("recall.hub_degree", Number(1, 10_000_000, whole=True), 256, "ours (seed 001 §22.1's ABOUT degree cap)",
        (STAGE_C,), "A node with more expansion edges than this joins the subgraph but is not expanded through."),
    Key("recall.raw.enabled", Flag(), True, "seed 001 §4.y 配置开关 raw.enabled", (RAW_FALLBACK,),
        "Let the raw fallback (W5) fire on its own triggers; --allow-raw and --cite run it regardless."),
    Key("recall.raw.low_coverage_topn", Number(0, 100_000, whole=True), 10, "seed 001 §4.y raw.trigger",
        (RAW_FALLBACK,), "Trigger: fewer node hits than this."),
    Key("recall.raw.low_concentration", SHARE, 0.6, "seed 001 §4.y raw.trigger", (RAW_FALLBACK,),
        "Trigger: the best node hit matches less than this share of the query's idf weight."),
    Key("recall.raw.pattern_tokens", ListOf(PATTERN_KINDS), ("hex", "uuid", "url", "path", "code", "error_code"),
        "seed 001 §4.y raw.trigger", (RAW_FALLBACK,), "Trigger: the query holds a token of one of these kinds."),
    Key("recall.raw.top", Number(1, 100_000, whole=True), 100, "seed 001 §4.y MVP pseudo-code (topk=100)",
        (PIPELINE,), "How many raw passages the fallback returns."),
    Key("recall.field_weights", FIELD_WEIGHT,
        {"title": 0.0, "text": 0.0, "keywords": 0.0, "entities": 0.0, "turn": 1.0, "speaker": 1.0, "date": 1.0,
         "caption": 1.0, "context": 0.3},
        "measured on LoCoMo / MemDaily dev: the turn's own words, speaker, date and caption at 1, the reply "
        "context at 0.3; the summary fields at 0 (BM25+'s δ still counts a match there); weighting them costs "
        "0.008 Recall@10", (STAGE_A,),
        "BM25F weight of each NodeIndex field in stage A; replaces index.field_weights for recall."),
    Key("recall.result_types", ListOf(NODE_TYPES, min_items=1), ("Episode", "Fact", "Preference"),
        "measured: Concepts are seeds and hubs, not default results (MemDaily NDCG@10 -0.019 with them)",
        (PIPELINE,), "Node types recall returns (raw passages too); --types overrides it."),
    Key("recall.expand_result_types", ListOf(NODE_TYPES), ("Episode",), "ours", (PIPELINE,),
        "Node types the graph expansion may add as results beyond the seeds."),
    Key("recall.speaker_prior", Number(0.0, 100.0), 1.0,
        "measured: ×2 when the query names the turn's speaker, LoCoMo +0.016 Recall@10, +0.05 NDCG@10",
        (STAGE_A,), "A hit by a speaker the query names scores (1 + this) times as much."),
    Key("recall.reply_neighbor", Number(0.0, 100.0), 0.3, "measured: LoCoMo +0.013 Recall@10", (PIPELINE,),
        "Reply hop: a turn gains this times the best score among the replies it got or answered."),
    Key("recall.reply_seeds", Number(0, 100_000, whole=True), 100, "ours", (PIPELINE,),
        "The reply hop starts from the best this many Episodes."),
    Key("recall.clause_coverage", SHARE, 0.3, "measured: MemDaily +0.025 Recall@5", (PIPELINE,),
        "Multi-clause queries: a clause's share of a candidate's score counts g^c, c how much of it the "
        "candidates already picked cover; 1 turns it off."),
    Key("recall.coverage_pool", Number(1, 100_000, whole=True), 50, "ours", (PIPELINE, STAGE_A),
        "Clause coverage and MMR reorder the best this many candidates."),
    Key("recall.question_stopwords", Flag(), True, "ours", (PIPELINE,),
        "Leave question phrasing (what, when, 什么, 哪里…) out of the keyword search."),
    Key("recall.drop_single_cjk", Flag(), True, "ours", (STAGE_A,),
        "Leave one-character Chinese terms out of the query when it has longer ones."),
    Key("recall.time_boost", Number(0.0, 100.0), 0.0,
        "measured: 0.5 costs MemDaily dev Recall@5 0.006, LoCoMo unchanged", (PIPELINE,),
        "A candidate inside a time window the query names scores (1 + this) times as much."),
    Key("recall.max_citations", Number(1, 1000, whole=True), 3, "ours", (PIPELINE,),
        "At most this many raw citations per card."),
    # --- weights --------------------------------------------------------------------------------------------
    Key("weights.alpha", SHARE, 0.35, "ours (seed 001 §6.1 gives the formula, no values)", (WEIGHT,),
        "α: weight of importance."),
    Key("weights.beta", SHARE, 0.15, "ours (seed 001 §6.1)", (WEIGHT,), "β: weight of log(1 + frequency)."),
    Key("weights.gamma", SHARE, 0.3, "ours (seed 001 §6.1)", (WEIGHT,), "γ: weight of recency, exp(-Δt/τ)."),
    Key("weights.delta", SHARE, 0.1, "ours (seed 001 §6.1)", (WEIGHT,), "δ: weight of emotional arousal."),
    Key("weights.epsilon", SHARE, 0.1, "ours (seed 001 §6.1)", (WEIGHT,), "ε: weight of pins and upvotes."),
    Key("weights.zeta", SHARE, 0.1, "ours (seed 001 §6.1)", (WEIGHT,),
        "ζ: penalty of a node another version replaced."),
    Key("weights.tau_days", MapOf(NODE_TYPES, Number(0.01, 100_000.0)),
        {"Episode": 14.0, "Fact": 90.0, "Preference": 180.0, "Concept": 180.0, "Entity": 180.0, "Task": 30.0,
         "Meta": 180.0},
        "seed 001 §15 appendix A (τ_Episode 14 d, τ_Fact 90 d, τ_Concept 180 d); the other types ours",
        (WEIGHT,), "τ of recency per node type, in days."),
    # --- feedback -------------------------------------------------------------------------------------------
    Key("feedback.boost", SHARE, 0.3, "seed 002 ([BOOST:mem_id] → +0.3)", (FEEDBACK,),
        "What one `--up` adds to a memory's feedback (and one `--down` takes away)."),
    Key("feedback.cooldown_hours", Number(0.0, 8760.0), 2.0, "seed 002 (BOOST 冷却期: 2 小时内只算 1 次)",
        (FEEDBACK,), "A memory's next --up counts only this long after its last one."),
    Key("feedback.daily_cap", Number(0.0, 100.0), 1.0, "seed 002 (BOOST 每日上限 +1.0)", (FEEDBACK,),
        "At most this much --up per memory in any 24 hours."),
    # --- graph ----------------------------------------------------------------------------------------------
    Key("graph.edge_weights", MapOf(EDGE_TYPES, Number(0.0, 100.0)),
        {"ABOUT": 1.0, "SUPPORTS": 0.8, "SIMILAR_TO": 0.5, "TEMPORAL_NEXT": 0.3},
        "seed 001 §15 appendix A", (STAGE_C,), "PPR multiplies an edge's weight by its type's."),
    Key("graph.default_edge_weight", Number(0.0, 100.0), 0.5, "ours", (STAGE_C,),
        "The type weight of edge types graph.edge_weights does not list."),
    Key("graph.degree_cap", MapOf(EDGE_TYPES, Number(1, 10_000_000, whole=True)),
        {"ABOUT": 256, "SIMILAR_TO": 64}, "seed 001 §22.1 (ABOUT=256, SIMILAR_TO=64)", ("memctl/graph.py",),
        "`memctl graph neighbors/khop` follow at most this many edges of a type per node."),
    # --- index ----------------------------------------------------------------------------------------------
    Key("index.k1", Number(0.0, 100.0), 1.2, "ours (seed 001 §3.3 names BM25+): the usual 1.2", (TEXT_INDEX,),
        "BM25 term-frequency saturation k1."),
    Key("index.b", SHARE, 0.75, "ours (seed 001 §3.3): the usual 0.75", (TEXT_INDEX,),
        "BM25 length normalisation b."),
    Key("index.delta", Number(0.0, 100.0), 1.0, "ours (seed 001 §3.3 BM25+)", (TEXT_INDEX,),
        "BM25+'s δ, added once per matched query term."),
    Key("index.field_weights", FIELD_WEIGHT,
        {"title": 2.0, "text": 1.0, "keywords": 1.5, "entities": 1.5, "turn": 1.0, "speaker": 1.0, "date": 1.0,
         "caption": 1.0, "context": 0.3},
        "ours (seed 001 §3.3 字段加权); the NodeIndex turn fields measured, see memctl/node_documents.py",
        (TEXT_INDEX,), "BM25F weight per field for `memctl search` and r2g's lookups (recall uses "
                       "recall.field_weights)."),
    Key("index.stopwords_en", OptionalPath("file"), None, "ours", (TEXT_INDEX,),
        "English stop words, one per line ('#' comments), replacing the packaged list."),
    Key("index.stopwords_zh", OptionalPath("file"), None, "ours", (TEXT_INDEX,),
        "Chinese stop words, one per line ('#' comments), replacing the packaged list."),
    Key("index.user_dictionary", OptionalPath("file"), None, "seed 001 §3.3 (中文可接入外部分词)", (TEXT_INDEX,),
        "A jieba user dictionary for Chinese word segmentation."),
    # --- ingest ---------------------------------------------------------------------------------------------
    Key("ingest.max_file_bytes", Number(1, 1 << 40, whole=True), 64 * MIB, "ours", (INGEST,),
        "Larger input files are refused."),
    Key("ingest.max_blob_bytes", Number(1, 64 * MIB, whole=True), 64 * MIB,
        "ours; at most the format's 64 MiB blob limit (MANIFEST.spec)", (INGEST,),
        "Larger raw chunks are refused."),
    Key("ingest.chunk_min_tokens", Number(1, 1_000_000, whole=True), 1000, "seed 001 §3.0, R2G-1 (1k-2k tokens)",
        (INGEST,), "A chunk holding this many tokens closes before a session that would not fit whole."),
    Key("ingest.chunk_max_tokens", Number(1, 1_000_000, whole=True), 2000, "seed 001 §3.0, R2G-1 (1k-2k tokens)",
        (INGEST,), "A chunk closes before a turn that would take it past this many tokens."),
    # --- engine ---------------------------------------------------------------------------------------------
    Key("engine.flush_bytes", Number(1, 1 << 40, whole=True), 8 * MIB, "ours", ("memctl/memory.py",),
        "A batch that takes the in-memory table past this many bytes is written straight to segments."),
    # --- r2g ------------------------------------------------------------------------------------------------
    Key("r2g.batch_turns", Number(1, 10_000_000, whole=True), 1000, "ours", (BUILDER,),
        "Turns per committed batch (one WAL record)."),
    Key("r2g.source_trust", SHARE, 0.8, "ours (seed 001 R2G-4's source_trust)", (EMIT,),
        "source_trust of rule-built evidence in the edge weight."),
    Key("r2g.external_trust", SHARE, 0.6, "ours (seed 001 R2G-4's source_trust)", ("memctl/r2g/external.py",),
        "source_trust of evidence imported with `memctl r2g --from jsonl`."),
    Key("r2g.untimed_recency_boost", SHARE, 0.5, "ours (seed 001 R2G-4's recency_boost)", (EMIT,),
        "recency_boost of evidence without a timestamp (timed evidence: 1)."),
    Key("r2g.similar_threshold", SHARE, 0.3, "ours (seed 001 R2G-6: keyword co-occurrence)", (BUILDER,),
        "SIMILAR_TO joins Episodes whose keyword Jaccard overlap reaches this."),
    Key("r2g.similar_cap", Number(0, 100_000, whole=True), 8, "ours (seed 001 §22.1: keep SIMILAR_TO sparse)",
        (BUILDER,), "At most this many SIMILAR_TO edges per Episode."),
    Key("r2g.same_event_days", Number(0, 36_500, whole=True), 1, "seed 001 R2G-5 (±1d)", (BUILDER,),
        "Facts of one event (SAME_AS) lie at most this many days apart."),
    Key("r2g.edge_weight.confidence", SHARE, 0.5, "seed 001 R2G-4", ("memctl/model.py",),
        "edge.weight = confidence·conf_extract + source_trust·source_trust + recency_boost·recency_boost."),
    Key("r2g.edge_weight.source_trust", SHARE, 0.3, "seed 001 R2G-4", ("memctl/model.py",),
        "See r2g.edge_weight.confidence."),
    Key("r2g.edge_weight.recency_boost", SHARE, 0.2, "seed 001 R2G-4", ("memctl/model.py",),
        "See r2g.edge_weight.confidence."),
    Key("r2g.importance.base", SHARE, 0.3, "ours (seed 001 R2G-2 leaves importance to the summariser)",
        (IMPORTANCE,), "Initial Episode importance before the terms below."),
    Key("r2g.importance.preference", SHARE, 0.2, "ours", (IMPORTANCE,),
        "Added when the turn states a preference or instruction."),
    Key("r2g.importance.lexicon_fact", SHARE, 0.1, "ours", (IMPORTANCE,),
        "Added per fact whose predicate is in the lexicon…"),
    Key("r2g.importance.lexicon_fact_cap", SHARE, 0.2, "ours", (IMPORTANCE,), "…up to this much in all."),
    Key("r2g.importance.named", SHARE, 0.1, "ours", (IMPORTANCE,),
        "Added when the turn names a person, place, organisation or product."),
    Key("r2g.importance.dated", SHARE, 0.1, "ours", (IMPORTANCE,), "Added when the turn dates something."),
    Key("r2g.importance.arousal", SHARE, 0.1, "ours", (IMPORTANCE,),
        "Times the strongest emotion's arousal, added."),
    Key("r2g.importance.long_turn", SHARE, 0.05, "ours", (IMPORTANCE,),
        "Added for a turn longer than r2g.importance.long_turn_chars."),
    Key("r2g.importance.long_turn_chars", Number(0, 1_000_000, whole=True), 200, "ours", (IMPORTANCE,),
        "See r2g.importance.long_turn."),
    Key("r2g.importance.small_talk", Number(-1.0, 0.0), -0.2, "ours", (IMPORTANCE,),
        "Added (negative) when the turn holds no fact, entity or preference."),
    Key("r2g.importance.floor", SHARE, 0.05, "ours", (IMPORTANCE,), "Importance is at least this."),
    Key("r2g.lexicon_directory", OptionalPath("directory"), None, "ours", (BUILDER, "memctl/r2g/external.py"),
        "A directory whose lexicon files (predicates.yaml, aliases.yaml, concepts.yaml, gazetteer.yaml, "
        "en_words.yaml, zh_words.yaml, sentiment.yaml) replace the shipped ones of memctl/data; its slots.yaml "
        "extends the shipped slot lexicon (a slot of the same name is replaced)."),
    # --- facts ----------------------------------------------------------------------------------------------
    Key("facts.weights.source_trust", SHARE, 0.3, "ours (seed 001 §7.2's a, left open)", (FACTS,),
        "a of prio = a·source_trust + b·recency + c·evidence_support + d·consistency, which decides between two "
        "claims of one single-valued slot that cannot both hold."),
    Key("facts.weights.recency", SHARE, 0.4, "ours (seed 001 §7.2's b)", (FACTS,),
        "b of prio: the newer claim weighs most, a claim goes on holding until another is made."),
    Key("facts.weights.evidence_support", SHARE, 0.2, "ours (seed 001 §7.2's c)", (FACTS,),
        "c of prio: 1 − 0.5^(statements of the claim)."),
    Key("facts.weights.consistency", SHARE, 0.1, "ours (seed 001 §7.2's d)", (FACTS,),
        "d of prio: the claim's confidence."),
    Key("facts.source_trust", MapOf(FACT_SOURCES, SHARE), {"user": 1.0, "agent": 0.7, "r2g": 0.8, "external": 0.6},
        "ours (seed 001 §7.2: 可配置白名单/信誉分)", (FACTS,),
        "source_trust of a claim by who asserted it: user and agent (`fact add --source`), r2g (the rules), "
        "external (`r2g --from jsonl`)."),
    Key("facts.default_trust", SHARE, 0.5, "ours", (FACTS,), "source_trust of a source facts.source_trust omits."),
    Key("facts.recency_half_life_days", Number(0.01, 36_500.0), 14.0, "ours", (FACTS,),
        "recency = 0.5^(days between the claim and the newer one / this): claims days apart stay close, months "
        "apart the newer one holds."),
    Key("facts.review_margin", SHARE, 0.05, "ours (seed 001 §7.2: 分差低于阈值触发审核队列)", ("memctl/facts/timeline.py",),
        "Two contradicting claims whose prio differ by less than this are contested: the higher holds, both go "
        "to the review queue (`memctl fact review`) until `fact resolve` decides."),
)

BY_NAME: dict = {key.name: key for key in KEYS}
