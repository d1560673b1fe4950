"""Stage A (seed 001 §5.2, W4): seeds from the NodeIndex by BM25F, or by a boolean filter over the graph.

Index path: BM25F+ over the NodeIndex documents (Episode/Fact/Preference/Concept) with recall's own field
weights (`recall.field_weights`: the turn's words, speaker, date and image caption at 1, the reply context at
0.3; the summary fields title/text/keywords/entities at 0, where BM25+'s δ still gives a matched term a floor,
so Facts and Concepts stay findable), then the speaker prior: a turn whose speaker the query names scores
×(1 + recall.speaker_prior). Measured on LoCoMo dev (tools/eval_locomo.py); the ablation is in RESULTS.md.

Pure-graph path (W4 degraded mode: index absent, `--graph-only`, or `recall.use_node_index: false`): every live
node of the seed types whose keywords, tags, entities (or, for Entities and Concepts, title and aliases) occur
in the query; scored by the share of the query's words they match. The pipeline ranks these by weight and
recency, as the seed's "仅用近因/权重排序（无 BM25）" asks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memctl.recall.query import is_single_cjk

PRIOR_MARGIN = 50  # hits fetched beyond seeds_top, which the speaker prior may lift into the seeds


@dataclass
class Seed:
    key: str
    score: float  # stage-A score after the speaker prior
    bm25: float
    type: str | None
    timestamp: float | None
    terms: list = field(default_factory=list)
    docno: int | None = None  # the NodeIndex document (which fields matched is read from it for the card)
    fields: dict | None = None  # term → the node properties holding it (the graph filter's seeds)


class NodeSearch:
    """BM25F over the store's node index (memctl.indexes.NODES), with recall's field weights and query rules."""

    def __init__(self, store, config, settings):
        from dataclasses import replace

        from engine.text.index import TextIndex
        from memctl.indexes import NODES
        from memctl.settings.text_index import text_settings
        from memctl.recall.query import QueryTokenizer

        tokenizer, parameters = text_settings(config)
        self.tokenizer = QueryTokenizer(tokenizer, settings.drop_single_cjk)
        self.parameters = replace(parameters, field_weights={**parameters.field_weights,
                                                             **settings.field_weights})
        self.searcher = TextIndex(store, self.tokenizer, self.parameters, kernels="numpy", owner=NODES).searcher()
        self.settings = settings
        self._names: dict = {}
        self._vocabulary = None

    @property
    def documents(self) -> int:
        return self.searcher.document_count

    def search(self, text: str, top: int, since=None, until=None) -> list:
        return self.searcher.search(text, top, since=since, until=until)

    def name_tokens(self, name: str) -> frozenset:
        """A speaker name's terms as a query would hold them (one-character CJK terms left out)."""
        tokens = self._names.get(name)
        if tokens is None:
            searcher = self.searcher
            terms = self.tokenizer.tokenizer.query_tokens(name, searcher.vocabulary(), searcher.cjk_mode)[0]
            tokens = self._names[name] = frozenset(term for term in terms if not is_single_cjk(term))
        return tokens

    def terms(self) -> list:
        """The terms the last search used."""
        return list(self.tokenizer.last_terms)

    def idf(self, term: str) -> float:
        """From the term dictionaries' stored document frequencies (deletions not subtracted: this only
        weighs terms for the raw fallback's trigger, and reading postings would cost a millisecond a term)."""
        import math

        if self._vocabulary is None:
            self._vocabulary = self.searcher.vocabulary()
        frequency = self._vocabulary.frequency(term)
        count = self.searcher.document_count
        # A term the index lacks weighs as much as the rarest possible one: the raw fallback may hold it.
        return math.log((count + 1.0) / max(frequency, 1))


def index_seeds(search: NodeSearch, query, nodes, settings, since=None, until=None) -> tuple[list, dict]:
    """(seeds best first, facts for the trace) from the NodeIndex."""
    fetch = max(settings.seeds_top + PRIOR_MARGIN, settings.coverage_pool)
    hits = search.search(query.search_text, fetch, since, until)
    terms = search.terms()
    query.keywords = terms
    seeds = [Seed(hit.key, hit.score, hit.score, hit.type, hit.timestamp, list(hit.terms), hit.docno) for hit in hits]
    named = apply_speaker_prior(seeds, set(terms), nodes, search.name_tokens, settings.speaker_prior)
    seeds.sort(key=lambda seed: -seed.score)
    seeds = seeds[: settings.seeds_top]
    return seeds, {"hits": len(hits), "terms": terms, "named_speakers": sorted(named)}


def apply_speaker_prior(seeds: list, terms: set, nodes, name_tokens, prior: float) -> set:
    """Multiply the score of seeds whose speaker the query names by (1 + prior); returns the names found."""
    if not prior or not terms:
        return set()
    named: set = set()
    for seed in seeds:
        if seed.type != "Episode":
            continue
        speaker = nodes.attribute(seed.key, "speaker")
        if speaker and name_tokens(speaker) & terms:
            named.add(speaker)
            seed.score *= 1.0 + prior
    return named


# --- pure-graph fallback ---------------------------------------------------------------------------------


def graph_seeds(graph, query, settings, types, since=None, until=None) -> tuple[list, dict]:
    """Seeds by a boolean filter over node keywords/tags/entities (no index)."""
    from engine.text.tokenizer import Tokenizer, normalize
    from memctl.node_documents import epoch_seconds

    tokenizer = Tokenizer(cjk="bigram")
    folded = normalize(query.text)
    words = set(tokenizer.query_tokens(query.search_text, None, "bigram")[0])
    words = {word for word in words if not is_single_cjk(word)}
    wanted = set(types) | {"Entity"}
    matcher = _KeywordMatcher(tokenizer, folded, words)
    seeds = []
    scanned = 0
    for node in graph.iter_nodes():
        if node.type not in wanted:
            continue
        scanned += 1
        props = node.props or {}
        matched = matcher.match(_filter_words(node.type, props))
        if not matched:
            continue
        timestamp = epoch_seconds(props.get("recency")) if isinstance(props.get("recency"), str) else None
        if (since is not None or until is not None) and not _inside(timestamp, since, until):
            continue
        share = min(1.0, sum(len(word) for word in matched) / max(1, len(folded.replace(" ", ""))))
        seeds.append(Seed(node.key, share, 0.0, node.type, timestamp, sorted(matched), fields=matched))
    seeds.sort(key=lambda seed: (-seed.score, -(seed.timestamp or 0.0), seed.key))
    query.keywords = sorted(words)
    return seeds[: settings.seeds_top], {"scanned": scanned, "matched": len(seeds)}


def _filter_words(node_type: str, props: dict) -> list:
    """(property, word) of the words the filter tests."""
    names = ["keywords", "tags", "entities"]
    words = [(name, word) for name in names for word in props.get(name) or ()]
    if node_type in ("Entity", "Concept"):
        words.append(("title", props.get("title") or ""))
        words += [("aliases", alias) for alias in (props.get("attributes") or {}).get("aliases") or ()]
    return [(name, word) for name, word in words if isinstance(word, str) and word.strip()]


def _inside(timestamp, since, until) -> bool:
    if timestamp is None:
        return False
    return (since is None or timestamp >= since) and (until is None or timestamp <= until)


class _KeywordMatcher:
    """A node word matches when, normalised, it occurs in the query: CJK words as substrings, other words
    when all their stemmed tokens are query tokens (so "drivers" matches "driver", "bluetooth" matches
    "Bluetooth" but "cat" does not match "catalog")."""

    def __init__(self, tokenizer, folded: str, words: set):
        self.tokenizer = tokenizer
        self.folded = folded
        self.words = words
        self.cache: dict = {}

    def match(self, candidates: list) -> dict:
        """{matched word (case-folded): [properties holding it]} of (property, word) candidates."""
        matched: dict = {}
        for name, word in candidates:
            hit = self.cache.get(word)
            if hit is None:
                hit = self.cache[word] = self._test(word)
            if hit:
                places = matched.setdefault(word.casefold(), [])
                if name not in places:
                    places.append(name)
        return matched

    def _test(self, word: str) -> bool:
        from engine.text.tokenizer import normalize

        normalized = normalize(word)
        if any(is_single_cjk(character) for character in normalized):
            return len(normalized) > 1 and normalized in self.folded
        tokens = [token for token in self.tokenizer.index_tokens(normalized)[0] if not token.isdigit() or
                  len(token) > 1]
        return bool(tokens) and all(token in self.words for token in tokens)
