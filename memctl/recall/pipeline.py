"""The recall pipeline A → (raw W5) → C → rank → pack, over one store snapshot (seed 001 §4.y W3–W6, §5).

    recaller = Recaller(store, config, tenant)
    answer = recaller.recall(Request(q="Win11 蓝牙 打不开", top=10, mvp=True))
    answer["results"], answer["trace"]

A Recaller keeps what it read (node records, verified chunks, the raw passage searcher, the searcher) for its
snapshot, so a batch of queries opens the store once and reads each record once. Stage B (vectors) is not built
yet: the vector stage is always absent and the §18 "A→C" variant is used. Degraded modes, each named in the
trace: no NodeIndex / --graph-only → boolean graph filter; no graph (r2g not run) → raw passages only; k = 0
or no graph edges → no PPR.

Slot questions (issue 19; memctl.recall.slot_question, memctl.recall.versions): when the store has version
chains and the question asks for a person's attribute now, at a past time or when it changed, the version it
asks for comes first (its card cites the version's evidence, earliest first), then the normal ranking; every
card of a version not in force says so (memctl.recall.version_cards). --as-of T (Request.as_of): a slot
question is answered as of T (the version valid at T, unless the question names its own time); for every
question the results are those of --until T (nothing recorded after T), and T is the reference time for
recency and relative dates when --now is not given.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from engine.errors import InputError
from memctl.recall import rank
from memctl.recall.query import build
from memctl.recall.trace import Trace, top_scores
from memctl.settings import resolve

RAW_PASSAGE = "RawPassage"
EPISODE = "Episode"
PPR_ONLY_CANDIDATES = 50
RAW_MERGE_WEIGHT = 0.5  # a raw passage match counts half as much as a node match of the same strength
CHAIN_EDGES = ("ACTIVE_OF", "VERSION_NEXT")  # a store without these edge types has no version chain


@dataclass
class Request:
    q: str
    top: int = 10
    budget: int | None = None  # None: recall.budget_tokens; 0: no budget
    k_hop: int | None = None
    types: tuple | None = None
    since: float | None = None
    until: float | None = None
    graph_only: bool = False
    allow_raw: bool = False
    cite: bool = False
    mvp: bool = False
    now: float | None = None
    as_of: float | str | None = None  # answer as of this time, epoch seconds or ISO (see the module docstring)
    explain: bool = True  # gather what only the trace shows (the query's stored Entities); off for batches


class Recaller:
    def __init__(self, store, config=None, tenant: str = "default"):
        self.store = store
        self.config = config
        self.tenant = tenant
        self.settings = resolve(config)
        self._graph = None
        self._nodes = None
        self._search = None
        self._stage = None
        self._passages = None
        self._citations = None
        self._raw = None
        self._chains = None

    # --- lazily opened parts ------------------------------------------------------------------------------

    @property
    def graph(self):
        if self._graph is None:
            from engine.graph.api import GraphStore

            self._graph = GraphStore(self.store)
        return self._graph

    @property
    def nodes(self):
        if self._nodes is None:
            from memctl.recall.nodes import Nodes

            self._nodes = Nodes(self.graph)
        return self._nodes

    @property
    def raw(self):
        if self._raw is None:
            from engine.raw import RawStore

            self._raw = RawStore(self.store)
        return self._raw

    def search(self):
        """The NodeIndex searcher, or None when the store has no indexed document."""
        if self._search is None:
            from memctl.recall.stage_a import NodeSearch

            search = NodeSearch(self.store, self.config, self.settings.recall)
            self._search = search if search.documents else False
        return self._search or None

    def graph_stage(self):
        if self._stage is None:
            from memctl.recall.stage_c import GraphStage

            self._stage = GraphStage(self.graph, self.nodes, self.settings)
        return self._stage

    def passages(self):
        if self._passages is None:
            from memctl.recall.raw_fallback import RawPassages

            self._passages = RawPassages(self.raw)
        return self._passages

    def citations(self):
        if self._citations is None:
            from memctl.recall.pack import Citations

            self._citations = Citations(self.raw)
        return self._citations

    def chains(self):
        if self._chains is None:
            from memctl.recall.versions import ChainReader

            self._chains = ChainReader(self.graph, self.nodes)
        return self._chains

    def graph_ready(self) -> bool:
        return self.graph_stage().snapshot.node_count > 0 and bool(self.graph.type_ids("node"))

    # --- recall -------------------------------------------------------------------------------------------

    def recall(self, request: Request) -> dict:
        if not isinstance(request.q, str) or not request.q.strip():
            raise InputError("the query is empty", "--q")
        if request.top < 1:
            raise InputError(f"--top must be at least 1, not {request.top}", "--top")
        if request.as_of is not None:
            request = _as_of(request)
        trace = Trace()
        run = _Run(self, request, trace)
        results = run.execute()
        return {"query": request.q, "results": results, "packing": run.packing, "trace": trace.as_dict(),
                "keywords": run.query.as_dict()}

    def extract(self, request: Request) -> dict:
        """Query building only (--extract-keywords): keywords as stage A would search them, entities, times."""
        query = build(request.q, request.now or time.time(), self.settings.recall.question_stopwords)
        search = None if request.graph_only or not self.settings.recall.use_node_index else self.search()
        if search is not None:
            search.search(query.search_text, 1)
            query.keywords = search.terms()
        else:
            from engine.text.tokenizer import Tokenizer

            query.keywords = Tokenizer(cjk="bigram").query_tokens(query.search_text, None, "bigram")[0]
        if self.graph_ready():
            query.entities = self._entities(query.text)
        return query.as_dict()

    def _entities(self, text: str) -> list:
        from memctl.recall import entities

        return entities.match(text, self.tenant, self.nodes, _aliases())

    # --- explain ------------------------------------------------------------------------------------------

    def explain(self, key: str, request: Request | None = None) -> dict:
        """One node: what it is, its weight, its neighbours and citations, and (with a query) where it ranks."""
        from memctl.recall.pack import card_refs
        from memctl.recall.weight import node_weight

        node = self.graph.get_node(key)
        if node is None:
            raise InputError(f"no node {key!r}", "--explain")
        reference = (request.now if request else None) or time.time()
        weight, recency = node_weight(node["props"], node["type"], reference, self.settings.weights)
        neighbours = []
        for direction in ("out", "in"):
            for row in self.graph.neighbors(key, direction, limit=20).rows():
                neighbours.append({"direction": direction, "edge": row["type"], "weight": row["weight"],
                                   "id": row["key"], "type": self.nodes.type(row["key"]),
                                   "title": self.nodes.props(row["key"]).get("title")})
        citations = [self.citations().cite(ref) for ref in card_refs(node["props"], None,
                                                                      self.settings.recall.max_citations)]
        explained = {"id": key, "type": node["type"], "title": node["props"].get("title"),
                     "text": node["props"].get("text"), "weight": round(weight, 6), "recency": round(recency, 6),
                     "props": {name: value for name, value in node["props"].items() if name != "raw_refs"},
                     "neighbors": neighbours, "citations": citations}
        if request is not None and request.q:
            answer = self.recall(Request(**{**request.__dict__, "top": 1000, "budget": 0}))
            ranked = [result["id"] for result in answer["results"]]
            position = ranked.index(key) + 1 if key in ranked else None
            explained["query"] = request.q
            explained["rank"] = position
            explained["result"] = answer["results"][position - 1] if position else None
        return explained


class _Run:
    """One recall: the stages in order, sharing the Recaller's caches."""

    def __init__(self, recaller: Recaller, request: Request, trace: Trace):
        self.recaller = recaller
        self.request = request
        self.trace = trace
        self.settings = recaller.settings.recall
        self.reference = request.now if request.now is not None else time.time()
        self.query = build(request.q, self.reference, self.settings.question_stopwords)
        self.candidates: dict = {}
        self.available = {"weight"}
        self.keyword_source = None  # "A" NodeIndex, "G" graph filter, "R" raw passages only
        self.packing: dict = {}  # what budget packing did (memctl.recall.pack.pack's facts)
        self.matches = None  # memctl.recall.matched.Matches of the cards, made by the pack stage
        self.choice = None  # memctl.recall.versions.Choice of a slot question, when one chose a version

    def execute(self) -> list:
        request, settings = self.request, self.settings
        graph_ready = self.recaller.graph_ready()
        search = None if request.graph_only or not settings.use_node_index else self.recaller.search()
        self._query_stage(graph_ready)
        if graph_ready:
            self._version_stage()
        seeds = self._stage_a(search, graph_ready)
        raw_hits = self._raw_stage(seeds, search, graph_ready)
        self._collect(seeds, raw_hits, graph_ready)
        if graph_ready and self.candidates:
            self._stage_c()
        return self._rank_and_pack(search)

    # --- stages -------------------------------------------------------------------------------------------

    def _query_stage(self, graph_ready: bool) -> None:
        with self.trace.stage("query") as entry:
            if graph_ready and self.request.explain:
                self.query.entities = self.recaller._entities(self.query.text)
            entry["notes"] = {"language": self.query.language,
                              "entities": [f"{entity['name']} ({entity['type']})" for entity in self.query.entities],
                              "patterns": self.query.pattern_kinds,
                              "times": [f"{time.expression} → {time.value or '?'} ({time.granularity})"
                                        for time in self.query.times],
                              "clauses": len(self.query.clauses)}
            entry["candidates"] = len(self.query.entities)

    def _version_stage(self) -> None:
        """A slot question's chain and the version it asks for (memctl.recall.versions)."""
        known = self.recaller.graph.type_ids("edge")
        if not any(name in known for name in CHAIN_EDGES):
            return
        from memctl.recall.slot_question import parse

        query = self.query
        question = parse(query.text, query.language, query.times, self.reference, self.request.as_of)
        if question is None:
            return
        from memctl.recall.versions import choose, describe, holders

        reader = self.recaller.chains()

        with self.trace.stage("V: version chain") as entry:
            entities = query.entities or self.recaller._entities(query.text)
            holder_keys = holders(query.text, query.language, entities, self.recaller.tenant, self.recaller.nodes)
            choice = choose(question, holder_keys, reader, query.text, self.reference, entities)
            entry["notes"] = describe(question, holder_keys, choice, self.recaller.nodes)
            if choice is not None and choice.chosen:
                self.choice = choice
                entry["candidates"] = len(choice.chain.versions)
                entry["top"] = [[version.key, 1.0] for version in choice.chosen[:3]]

    def _stage_a(self, search, graph_ready: bool) -> list:
        from memctl.recall.stage_a import graph_seeds, index_seeds

        request, settings = self.request, self.settings
        if search is not None:
            with self.trace.stage("A: NodeIndex BM25F") as entry:
                seeds, facts = index_seeds(search, self.query, self.recaller.nodes, settings, request.since,
                                           request.until)
                self._describe(entry, seeds, facts)
            self.available.add("bm25")
            self.keyword_source = "A"
            return seeds
        if not graph_ready:
            self.trace.fallback("no_graph", "the store has no memory graph (run `memctl r2g`): raw passages only")
            return []
        reason = "--graph-only" if request.graph_only else \
            "recall.use_node_index is false" if not settings.use_node_index else "the NodeIndex has no documents"
        self.trace.fallback("graph_filter", f"{reason}: boolean filter over node keywords/tags/entities, "
                                            "ranked by weight and recency (W4)")
        with self.trace.stage("A: graph filter") as entry:
            seeds, facts = graph_seeds(self.recaller.graph, self.query, settings, self._result_types(),
                                       request.since, request.until)
            self._describe(entry, seeds, facts)
        self.available.add("bm25")
        self.keyword_source = "G"
        return seeds

    def _describe(self, entry: dict, seeds: list, facts: dict) -> None:
        entry["candidates"] = len(seeds)
        entry["top"] = top_scores((seed.key, seed.score) for seed in seeds)
        entry["notes"] = facts

    def _raw_stage(self, seeds: list, search, graph_ready: bool) -> list:
        from memctl.recall.raw_fallback import triggers

        request, settings = self.request, self.settings
        explicit = [flag for flag, given in (("--allow-raw", request.allow_raw), ("--cite", request.cite)) if given]
        if not graph_ready:
            explicit.append("no memory graph")
        fired = triggers(self.query, seeds, search, settings.raw, explicit)
        if not fired:
            return []
        for name, reason in fired:
            self.trace.fallback(f"raw:{name}", reason)
        passages = self.recaller.passages()
        with self.trace.stage("W5: raw passages") as entry:
            hits = passages.search(self.query.search_text, settings.raw.top, request.since, request.until)
            entry["candidates"] = len(hits)
            entry["top"] = top_scores((hit.node_id, hit.score) for hit in hits)
            entry["notes"] = {"passages": passages.documents}
        self.available.add("bm25")
        self.keyword_source = self.keyword_source or "R"
        return hits

    def _collect(self, seeds: list, raw_hits: list, graph_ready: bool) -> None:
        for seed in seeds:
            self.candidates[seed.key] = rank.Candidate(seed.key, seed.type, keyword=seed.score,
                                                       term_part=seed.score, timestamp=seed.timestamp,
                                                       terms=seed.terms, docno=seed.docno, fields=seed.fields)
        if not raw_hits:
            return
        from memctl.model import episode_id  # 5-10 ms of imports a query without raw hits does not pay

        top_seed = max((seed.score for seed in seeds), default=0.0)
        top_raw = raw_hits[0].score
        scale = (top_seed / top_raw) * RAW_MERGE_WEIGHT if top_seed > 0 and top_raw > 0 else 1.0
        for hit in raw_hits:
            ref = hit.turn["raw_ref"]
            key = episode_id(self.recaller.tenant, hit.raw_id, ref["offset"], ref["offset"] + ref["length"]) \
                if graph_ready else None
            value = hit.score * scale
            if key is None or not self.recaller.nodes.exists(key):
                key, kind = hit.node_id, RAW_PASSAGE
            else:
                kind = EPISODE
            candidate = self.candidates.get(key)
            if candidate is None:
                candidate = self.candidates[key] = rank.Candidate(key, kind, timestamp=_turn_seconds(hit.turn),
                                                                  terms=hit.terms)
            candidate.raw = max(candidate.raw, hit.score)
            if candidate.raw_hit is None or hit.score > candidate.raw_hit.score:
                candidate.raw_hit = hit
            if value > candidate.keyword:
                candidate.keyword = candidate.term_part = value

    def _stage_c(self) -> None:
        request, settings = self.request, self.settings
        stage = self.recaller.graph_stage()
        with self.trace.stage("C: reply hop") as entry:
            scores = dict(sorted(((key, candidate.keyword) for key, candidate in self.candidates.items()
                                  if candidate.type == EPISODE and candidate.keyword > 0),
                                 key=lambda item: (-item[1], item[0]))[: settings.reply_seeds])
            updated, via, facts = stage.reply_hop(scores, settings.reply_neighbor)
            for key, score in updated.items():
                candidate = self.candidates.get(key)
                if candidate is None:
                    candidate = self.candidates[key] = rank.Candidate(key, EPISODE, via=via.get(key))
                candidate.keyword = score
            entry["candidates"] = len(updated)
            entry["top"] = top_scores(updated.items())
            entry["notes"] = facts
        k = request.k_hop if request.k_hop is not None else (settings.mvp_k_hop if request.mvp else settings.k_hop)
        lambdas = self._lambdas()
        if k <= 0 or not lambdas.get("ppr"):
            reason = "k = 0" if k <= 0 else "λ_ppr is 0"
            self.trace.fallback("no_ppr", f"{reason}: stage C stops after the reply hop")
            return
        edge_types = settings.mvp_expand_edge_types if request.mvp else settings.expand_edge_types
        with self.trace.stage(f"C: {k}-hop + PPR") as entry:
            scores = {key: candidate.keyword for key, candidate in self.candidates.items()
                      if candidate.keyword > 0 and candidate.type != RAW_PASSAGE}
            added_types = self.request.types or settings.expand_result_types
            ppr, added, facts = stage.expand(scores, k, edge_types, added_types, PPR_ONLY_CANDIDATES)
            for key, score in ppr.items():
                self.candidates[key].ppr = score
            for key, score, node_type, via in added:
                self.candidates[key] = rank.Candidate(key, node_type, ppr=score, via=via)
            entry["candidates"] = facts.get("subgraph", 0)
            entry["top"] = top_scores([(key, score) for key, score in ppr.items()] +
                                      [(key, score) for key, score, _, _ in added])
            entry["notes"] = {**facts, "added": len(added)}
        if ppr or added:
            self.available.add("ppr")

    # --- ranking and packing ------------------------------------------------------------------------------

    def _lambdas(self) -> dict:
        """Without the NodeIndex the seed's graph-only rule ranks by weight too (W4: 仅用近因/权重排序), --mvp or
        not; otherwise --mvp's λ, else recall.lambda."""
        if self.request.graph_only or not self.settings.use_node_index or self.recaller.search() is None:
            return dict(self.settings.graph_only_lambda)
        if self.request.mvp:
            return dict(self.settings.mvp_lambda)
        return dict(self.settings["lambda"])

    def _result_types(self) -> tuple:
        return tuple(self.request.types) if self.request.types else self.settings.result_types

    def _rank_and_pack(self, search) -> list:
        from memctl.recall.weight import node_weight

        request, settings = self.request, self.settings
        with self.trace.stage("rank") as entry:
            candidates = list(self.candidates.values())
            nodes = self.recaller.nodes
            lambdas = self._lambdas()
            if lambdas.get("recency"):
                self.available.add("recency")
            name, weights = rank.variant(lambdas, self.available, self.keyword_source or "A")
            self.trace.variant, self.trace.lambdas = name, weights
            need_weight = bool(weights.get("weight") or weights.get("recency"))
            for candidate in candidates:
                if candidate.type is None:
                    candidate.type = nodes.type(candidate.key)
                if need_weight and candidate.type != RAW_PASSAGE:
                    candidate.weight, candidate.recency = node_weight(nodes.props(candidate.key), candidate.type,
                                                                      self.reference, self.recaller.settings.weights)
            windows = [(time.start, time.end) for time in self.query.times if time.start is not None]
            rank.blend(candidates, weights, windows, settings.time_boost)
            types = set(self._result_types())
            if not request.types:
                types.add(RAW_PASSAGE)
            ranked = rank.order(candidates)
            if EPISODE in types:
                self._link_sources(candidates)
                ranked = rank.fold_supports(ranked)
            ranked = [candidate for candidate in ranked if candidate.type in types]
            if request.since is not None or request.until is not None:
                ranked = [candidate for candidate in ranked if self._inside_window(candidate)]
            if self.query.clauses and search is not None and settings.clause_coverage < 1.0:
                pool = ranked[: settings.coverage_pool]
                clause_scores = [self._clause_scores(search, clause, pool) for clause in self.query.clauses]
                ranked = rank.clause_select(ranked, clause_scores, settings.clause_coverage, settings.coverage_pool)
            if settings.mmr_enabled:
                ranked = rank.mmr(ranked, self._similarity, settings.mmr_lambda, settings.coverage_pool)
            entry["candidates"] = len(ranked)
            entry["top"] = [[candidate.key, round(candidate.final, 4)] for candidate in ranked[:3]]
            entry["notes"] = {"variant": name, "vector": "stage B (vector ANN) not built yet"}
        with self.trace.stage("pack") as entry:
            from memctl.recall.matched import Matches

            first = self._version_cards(ranked[0].final if ranked else 1.0)
            if first:
                ranked = self._without_chosen(ranked, first)
            ranked = ranked[: request.top - len(first)]
            self.matches = Matches(self.query.text, search, ranked)
            cards = first + [self._card(candidate) for candidate in ranked]
            budget = settings.budget_tokens if request.budget is None else (request.budget or None)
            from memctl.recall.pack import pack

            cards, self.packing = pack(cards, budget)
            entry["candidates"] = len(cards)
            # The answer's "packing" has every fact; the trace keeps the three it always showed.
            entry["notes"] = {name: self.packing[name] for name in ("budget", "tokens", "dropped")}
        return cards

    def _inside_window(self, candidate) -> bool:
        """--since/--until hold for every result, graph additions included (stage A filtered its own)."""
        seconds = candidate.timestamp
        if seconds is None:
            if candidate.raw_hit is not None:
                seconds = _turn_seconds(candidate.raw_hit.turn)
            elif candidate.type != RAW_PASSAGE:
                from memctl.node_documents import epoch_seconds

                recency = self.recaller.nodes.props(candidate.key).get("recency")
                seconds = epoch_seconds(recency) if isinstance(recency, str) else None
            candidate.timestamp = seconds
        request = self.request
        return seconds is not None and (request.since is None or seconds >= request.since) and \
            (request.until is None or seconds <= request.until)

    def _clause_scores(self, search, clause: str, pool: list) -> dict:
        wanted = {candidate.key for candidate in pool}
        hits = search.search(clause, max(len(wanted) * 4, self.settings.seeds_top), self.request.since,
                             self.request.until)
        return {hit.key: hit.score for hit in hits if hit.key in wanted}

    def _link_sources(self, candidates: list) -> None:
        """source_episode of Fact/Preference candidates: the Episode they derive from (DERIVED_FROM)."""
        derived = [candidate for candidate in candidates if candidate.type in ("Fact", "Preference")]
        if not derived:
            return
        sources = self.recaller.graph_stage().episodes_of([candidate.key for candidate in derived])
        for candidate in derived:
            candidate.source_episode = sources.get(candidate.key)

    def _similarity(self, first, second) -> float:
        one = {word.casefold() for word in self.recaller.nodes.props(first.key).get("keywords") or ()} or \
            set(first.terms)
        two = {word.casefold() for word in self.recaller.nodes.props(second.key).get("keywords") or ()} or \
            set(second.terms)
        return len(one & two) / len(one | two) if one and two else 0.0

    def _without_chosen(self, ranked: list, first: list) -> list:
        """The ranking without the chosen versions and without the Episodes of the turns their cards cite
        (the same evidence twice would push another turn out of the top)."""
        from memctl.recall.pack import covers

        chosen = {card["id"] for card in first}
        cited = [citation for card in first for citation in card["citations"]]

        def repeated(candidate) -> bool:
            if candidate.key in chosen:
                return True
            if candidate.type != EPISODE:
                return False
            refs = self.recaller.nodes.props(candidate.key).get("raw_refs") or ()
            return any(covers(ref, citation) for ref in refs if isinstance(ref, dict) for citation in cited)

        return [candidate for candidate in ranked if not repeated(candidate)]

    def _version_cards(self, score: float) -> list:
        """Cards of the versions a slot question chose, scored as the best of the ranking (they come first and
        budget packing keeps the best card that fits)."""
        if self.choice is None:
            return []
        from memctl.language.slot_lexicon import slot_lexicon
        from memctl.recall.version_cards import chosen_title

        choice, cards = self.choice, []
        spec = slot_lexicon().slots.get(choice.chain.slot)
        label = spec.label(self.query.language) if spec is not None else choice.chain.slot
        for version in choice.chosen[: self.request.top]:
            candidate = rank.Candidate(version.key, "Fact", final=score,
                                       via=(choice.chain.holder, "ACTIVE_OF" if version.active else "SUBJECT",
                                            f"version chain: {choice.reason}"))
            refs = sorted((ref for ref in version.props.get("raw_refs") or () if isinstance(ref, dict)),
                          key=lambda ref: str(ref.get("ts") or ""))  # the evidence that started it first
            card = self._card(candidate, refs)
            card["title"] = chosen_title(version, choice.chain, label)
            card["version"].update(chosen=choice.question.kind, reason=choice.reason)
            cards.append(card)
        return cards

    def _card(self, candidate, refs: list | None = None) -> dict:
        """A result card; `refs`: the raw_refs to cite instead of the node's own."""
        from memctl.recall.pack import card_refs, card_tokens
        from memctl.recall.version_cards import marked_title, version_field

        settings = self.settings
        citations_reader = self.recaller.citations()
        if candidate.type == RAW_PASSAGE:
            hit = candidate.raw_hit
            speaker = hit.turn.get("speaker")
            title = " ".join(part for part in (hit.turn.get("source_id") or hit.raw_id, speaker) if part)
            props, text = {}, hit.text
        else:
            props = self.recaller.nodes.props(candidate.key)
            title, text = props.get("title") or "", props.get("text") or ""
        cited = {**props, "raw_refs": refs} if refs is not None else props
        citations = [citations_reader.cite(ref) for ref in card_refs(cited, candidate.raw_hit, settings.max_citations)]
        scores = {stage: round(candidate.scores.get(stage, 0.0), 6) for stage in ("bm25", "vec", "ppr", "weight")}
        if "recency" in self.available:
            scores["recency"] = round(candidate.recency, 6)
        version = version_field(props)
        card = {"id": candidate.key, "type": candidate.type, "title": marked_title(title, version), "text": text,
                "score": round(candidate.final, 6), "scores": scores, "path": self._path(candidate),
                "citations": citations}
        if version:
            card["version"] = version
        if candidate.supports:
            card["supports"] = [self._support(key) for key in candidate.supports]
        card["tokens"] = card_tokens(card)
        return card

    def _support(self, key: str) -> dict:
        from memctl.recall.version_cards import marked_title, version_field

        props = self.recaller.nodes.props(key)
        return {"id": key, "type": self.recaller.nodes.type(key),
                "title": marked_title(props.get("title"), version_field(props))}

    def _path(self, candidate) -> list:
        """The k=1 evidence path: the seed that brought the node in and the edge between them, or for a seed
        itself what it matched (memctl.recall.matched)."""
        nodes = self.recaller.nodes
        own = {"id": candidate.key, "type": candidate.type, "title": _title(nodes, candidate)}
        if candidate.via is not None:
            parent, edge_type, kind = candidate.via
            return [{"id": parent, "type": nodes.type(parent), "title": nodes.props(parent).get("title")},
                    {"edge": edge_type, "kind": kind}, own]
        return [{**own, **self.matches.describe(candidate)}]


def _as_of(request: Request) -> Request:
    """--as-of T as the request's window and reference time (see the module docstring)."""
    as_of = request.as_of
    if isinstance(as_of, str):
        from memctl.isotime import parse_time

        as_of = parse_time(as_of, "as_of", end_of_day=True)
    elif isinstance(as_of, bool) or not isinstance(as_of, (int, float)):
        raise InputError(f"as_of must be epoch seconds or an ISO date or date-time, not {as_of!r}", "as_of")
    until = as_of if request.until is None else min(request.until, as_of)
    return replace(request, as_of=float(as_of), until=until, now=as_of if request.now is None else request.now)


def _title(nodes, candidate) -> str | None:
    if candidate.type == RAW_PASSAGE:
        return candidate.raw_hit.turn.get("source_id") if candidate.raw_hit else None
    return nodes.props(candidate.key).get("title")


def _turn_seconds(turn: dict) -> float | None:
    from memctl.node_documents import epoch_seconds

    return epoch_seconds(turn.get("ts"))


def _aliases():
    from memctl.language.lexicon import aliases

    return aliases()
