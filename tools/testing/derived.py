"""The derived kinds in the crash workload: text documents, a property graph and raw passages (tests only).

A batch may carry one `("text_add", [(key, document), …])`, one `("text_delete", key)` and one
`("graph", [graph operations], clock)`, applied inside the same store batch as its plain records
(TextIndex.add_many and GraphBatch both write into a caller's batch). The model keeps what the store must
hold: documents {key: fields, type, ts, tags} and a graph {node key: type, props, id} / {edge key: ends,
type, weight, id}, and predicts every answer the derived kinds serve:

    text   the documents as records hold them, and for fixed queries (English and Chinese words, code
           tokens, a phrase, type, tag and time filters) the complete ranking, and the top 3 of one of them,
           as a fresh in-memory index built from the model's documents ranks them (scores to 1e-6; keys of
           tied scores at a top-k cut may differ)
    graph  live nodes and edges as records hold them, nodes by type, the neighbours of every node key in
           both directions (the out and the in adjacency), and the 2-hop expansion in both directions from a
           few live nodes with the path edge and parent that reached each node (the engine's rule:
           strongest edge, then lowest edge id)
    passages   for fixed queries, the complete ranking and a top 3 of the raw passage index over the chunks
               stored with turns (tools.testing.workload's pool of turn_chunk), as an index built in memory
               from the model's chunks ranks them

Graph timestamps come from a clock that reads the batch number, so records are the same in every process.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache

from engine.format import (
    GRAPH_EDGE_COUNTER,
    GRAPH_EDGE_TABLE,
    GRAPH_EDGE_TYPE_COUNTER,
    GRAPH_NODE_COUNTER,
    GRAPH_NODE_TABLE,
    GRAPH_NODE_TYPE_COUNTER,
    GRAPH_TYPE_TABLE,
)
from engine.text.tables import text_tables

# The documents go to a named text index, as memctl's do (the unnamed one differs only in its tables' names).
TEXT_TABLES = text_tables("text:crash")
DERIVED_COUNTERS = (TEXT_TABLES.docno, GRAPH_NODE_COUNTER, GRAPH_EDGE_COUNTER, GRAPH_NODE_TYPE_COUNTER,
                    GRAPH_EDGE_TYPE_COUNTER)
DERIVED_RATE = 0.3  # chance that a batch writes text documents, and that it writes graph nodes and edges
TEXT_KEYS = tuple(f"doc{index:02d}" for index in range(10))
WORDS = ("memory", "crash", "recovery", "journal", "segment", "flush", "write", "ahead", "write ahead", "0x8007045D",
         "v2.3.1", "蓝牙", "耳机", "记忆", "日志", "断电", "恢复", "索引", "数据库")
DOCUMENT_TYPES = ("note", "chat")
TAGS = ("red", "blue")
# Timestamps cycle so that the time-window query keeps selecting documents however long a run goes.
TIME_CYCLE = 40
# Together the queries read every column of a text segment that holds a hit: the first asks for every
# term's postings, the second reads the type and time columns, the third the positions (phrase) and tags.
QUERIES = {
    "every word": (" ".join(WORDS), {}),
    "type and window": ("蓝牙 耳机 memory 日志 数据库 v2.3.1", {"types": ["note"], "since": 5.0, "until": 30.0}),
    "phrase and tag": ('"write ahead" journal 恢复 0x8007045d', {"tags": ["red"]}),
    "few words": ("memory 蓝牙 0x8007045d", {}),
}
TOP = 3
TOP_QUERIES = ("few words",)  # also asked for their top TOP only (the other queries: every hit)
ALL_HITS = len(TEXT_KEYS) + 1  # more than there can be documents: the complete ranking
SCORE_TOLERANCE = 1e-6

PASSAGE_QUERIES = {"every word": (" ".join(WORDS), 64), "few words": ("memory 蓝牙 0x8007045d", TOP)}

NODE_KEYS = ("n0", "n1", "n2", "n3", "n4", "n5", "n6", "Concept:蓝牙故障")
NODE_TYPES = ("Concept", "Event")
EDGE_TYPES = ("ABOUT", "SUPPORTS", "TEMPORAL_NEXT")
HOPS = 2
KHOP_SEEDS = 3  # k-hop from the first live node keys (probe order)
PROBE_LIMIT = 64  # node keys read from a store given to a damage tool (the workload has fewer)


# --- operations ---------------------------------------------------------------------------------------


def derived_operations(rng: random.Random, number: int, dense: bool) -> list:
    """The text and graph operations of one batch. `dense`: text and graph in every batch, and more of
    them (a reference store whose every segment holds a few dozen rows)."""
    operations = []
    rate, scale = (1.0, 2) if dense else (DERIVED_RATE, 1)
    if rng.random() < rate:
        documents = {rng.choice(TEXT_KEYS): _document(rng, number) for _ in range(rng.randint(scale, 3 * scale))}
        operations.append(("text_add", sorted(documents.items())))
    if rng.random() < rate / 3:
        operations.append(("text_delete", rng.choice(TEXT_KEYS)))
    if rng.random() < rate:
        graph = [_graph_operation(rng) for _ in range(rng.randint(scale, 4 * scale))]
        operations.append(("graph", graph, float(number)))
    return operations


def _document(rng: random.Random, number: int) -> dict:
    fields = {"text": " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))}
    if rng.random() < 0.7:
        fields["title"] = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
    return {"fields": fields, "type": rng.choice(DOCUMENT_TYPES + (None,)),
            "ts": None if rng.random() < 0.15 else float(number % TIME_CYCLE),
            "tags": sorted(set(rng.sample(TAGS, rng.randint(0, 2))))}


def _graph_operation(rng: random.Random) -> tuple:
    roll = rng.random()
    if roll < 0.3:
        return ("node", rng.choice(NODE_KEYS), rng.choice(NODE_TYPES), {"n": rng.randint(0, 99), "名": "值"})
    source, target, edge_type = rng.choice(NODE_KEYS), rng.choice(NODE_KEYS), rng.choice(EDGE_TYPES)
    key = edge_key_of(source, edge_type, target, rng.random() < 0.2)
    if roll < 0.85:
        # float32 in the CSR columns: weights with few bits keep the model's arithmetic exact
        return ("edge", source, edge_type, target, rng.choice((0.25, 0.5, 1.0, 1.5, 2.0)), key)
    if roll < 0.95:
        return ("delete_edge", key, rng.random() < 0.5)
    return ("delete_node", rng.choice(NODE_KEYS), rng.random() < 0.5)


def edge_key_of(source: str, edge_type: str, target: str, custom: bool) -> str:
    from engine.graph.keys import edge_key

    return f"custom:{source}>{edge_type}>{target}" if custom else edge_key(source, edge_type, target)


def apply_derived(store, batch, operation: tuple) -> bool:
    """Apply one text or graph operation into `batch`; False when `operation` is of another sort."""
    if operation[0] == "text_add":
        text_index(store).add_many([{"key": key, "fields": document["fields"], "type": document["type"],
                                     "timestamp": document["ts"], "tags": document["tags"]}
                                    for key, document in operation[1]], batch=batch)
    elif operation[0] == "text_delete":
        text_index(store).delete(operation[1], batch=batch)
    elif operation[0] == "graph":
        _apply_graph(store, batch, operation[1], operation[2])
    else:
        return False
    return True


def _apply_graph(store, batch, operations: list, now: float) -> None:
    from engine.graph.api import GraphStore
    from engine.graph.batch import GraphBatch

    writer = GraphBatch(GraphStore(store, clock=lambda: now), batch)
    for operation in operations:
        if operation[0] == "node":
            writer.add_node(operation[1], operation[2], operation[3])
        elif operation[0] == "edge":
            source, edge_type, target, weight, key = operation[1:]
            if writer.node(source) is not None and writer.node(target) is not None:
                writer.add_edge(source, edge_type, target, weight=weight, key=key)
        elif operation[0] == "delete_edge":
            if writer.edge(operation[1]) is not None:
                writer.delete_edge(operation[1], purge=operation[2])
        elif writer.node(operation[1]) is not None:
            writer.delete_node(operation[1], purge=operation[2])
    writer.finish()


@lru_cache(maxsize=None)
def tokenizer():
    """One tokenizer per process: the Chinese dictionary's blocks load once, and a forked child inherits them."""
    from engine.text.tokenizer import Tokenizer

    return Tokenizer()


def warm_up() -> None:
    """Analyze every word before forking children (a child killed within milliseconds would otherwise die
    reading the Chinese dictionary, before its first batch)."""
    tokenizer().index_tokens(" ".join(WORDS))


def text_index(store):
    from engine.text.index import TextIndex

    return TextIndex(store, tokenizer(), owner=TEXT_TABLES.owner)


# --- the model ----------------------------------------------------------------------------------------


class DerivedModel:
    """Documents and graph the store must hold; `counters` is the workload model's (shared) dict."""

    def __init__(self, counters: dict):
        for name in DERIVED_COUNTERS:
            counters[name] = 0
        self.documents: dict = {}
        self.nodes: dict = {}  # key -> {"id", "type", "props"}
        self.edges: dict = {}  # key -> {"id", "src", "dst", "type", "weight"}
        self.types: dict = {"node": set(), "edge": set()}

    def apply(self, operation: tuple, counters: dict) -> bool:
        if operation[0] == "text_add":
            for key, document in operation[1]:
                self.documents[key] = document
            counters[TEXT_TABLES.docno] += len(operation[1])
        elif operation[0] == "text_delete":
            self.documents.pop(operation[1], None)
        elif operation[0] == "graph":
            for graph_operation in operation[1]:
                self._apply_graph(graph_operation, counters)
        else:
            return False
        return True

    def _apply_graph(self, operation: tuple, counters: dict) -> None:
        if operation[0] == "node":
            _, key, node_type, properties = operation
            existing = self.nodes.get(key)
            identifier = existing["id"] if existing else self._allocate(counters, GRAPH_NODE_COUNTER)
            self._register(counters, "node", node_type)
            self.nodes[key] = {"id": identifier, "type": node_type, "props": properties}
        elif operation[0] == "edge":
            source, edge_type, target, weight, key = operation[1:]
            if source not in self.nodes or target not in self.nodes:
                return
            existing = self.edges.get(key)
            identifier = existing["id"] if existing else self._allocate(counters, GRAPH_EDGE_COUNTER)
            self._register(counters, "edge", edge_type)
            self.edges[key] = {"id": identifier, "src": source, "dst": target, "type": edge_type, "weight": weight}
        elif operation[0] == "delete_edge":
            self.edges.pop(operation[1], None)
        elif self.nodes.pop(operation[1], None) is not None:
            for key in [key for key, edge in self.edges.items() if operation[1] in (edge["src"], edge["dst"])]:
                del self.edges[key]

    @staticmethod
    def _allocate(counters: dict, name: str) -> int:
        counters[name] += 1
        return counters[name] - 1

    def _register(self, counters: dict, kind: str, name: str) -> None:
        if name not in self.types[kind]:
            self.types[kind].add(name)
            counters[GRAPH_NODE_TYPE_COUNTER if kind == "node" else GRAPH_EDGE_TYPE_COUNTER] += 1

    def text_state(self) -> dict:
        return {"documents": dict(self.documents), "search": _expected_search(self.documents),
                "statistics": {"documents": len(self.documents)}}

    def graph_state(self) -> dict:
        nodes = {key: (node["type"], node["props"]) for key, node in self.nodes.items()}
        edges = {key: (edge["src"], edge["type"], edge["dst"], edge["weight"]) for key, edge in self.edges.items()}
        neighbors = {}
        for key in _probes(self.nodes):
            rows = [(edge[other], edge_key, edge["type"], edge["weight"]) for edge_key, edge in self.edges.items()
                    for end, other in (("src", "dst"), ("dst", "src")) if edge[end] == key]
            neighbors[key] = sorted(rows, key=repr) if key in self.nodes else None
        return {"nodes": nodes, "edges": edges, "by_type": _by_type(nodes), "neighbors": neighbors,
                "khop": {key: self._khop(key) for key in _khop_seeds(self.nodes)}}

    def _khop(self, seed: str) -> dict:
        """{node: (hop, path edge, parent)} within HOPS hops in both directions (the engine's rule)."""
        reached = {seed: (0, None, None)}
        frontier = {seed}
        for hop in range(1, HOPS + 1):
            best: dict = {}
            for key, edge in self.edges.items():
                for origin, neighbor in ((edge["src"], edge["dst"]), (edge["dst"], edge["src"])):
                    if origin in frontier and neighbor not in reached:
                        rank = (-edge["weight"], edge["id"])
                        if neighbor not in best or rank < best[neighbor][0]:
                            best[neighbor] = (rank, key, origin)
            for neighbor, (_rank, key, origin) in best.items():
                reached[neighbor] = (hop, key, origin)
            frontier = set(best)
        return reached


def _probes(nodes) -> list:
    """Node keys whose neighbours are read: every key of the pool and the keys the store knows."""
    return sorted(set(NODE_KEYS) | set(nodes))[:PROBE_LIMIT]


def _khop_seeds(nodes) -> list:
    return [key for key in _probes(nodes) if key in nodes][:KHOP_SEEDS]


def _by_type(nodes: dict) -> dict:
    return {name: sorted(key for key, (node_type, _props) in nodes.items() if node_type == name)
            for name in NODE_TYPES}


def _expected_search(documents: dict) -> dict:
    """The answers of a fresh index holding exactly `documents` (built in memory, no store); a verifier asks
    for the same documents many times (every damage variant of a crash point, every injected error)."""
    key = repr(sorted(documents.items()))
    if key not in _SEARCH_MEMO:
        if len(_SEARCH_MEMO) >= MEMO_LIMIT:
            _SEARCH_MEMO.clear()
        _SEARCH_MEMO[key] = _rebuilt_search(documents)
    return _SEARCH_MEMO[key]


_SEARCH_MEMO: dict = {}
MEMO_LIMIT = 512


def _rebuilt_search(documents: dict) -> dict:
    from engine.text import stored
    from engine.text.build import Document, build
    from engine.text.reader import TextSegment
    from engine.text.search import Searcher

    analysis = tokenizer()
    built = [Document(number, key, {name: stored.encode(*analysis.index_tokens(text))
                                    for name, text in document["fields"].items()},
                      document["type"], document["ts"], tuple(document["tags"]))
             for number, (key, document) in enumerate(sorted(documents.items()))]
    parts = [TextSegment.from_columns(*build(built, (), analysis.signature()))] if built else []
    return _search_answers(Searcher(parts, analysis).search)


def turn_chunk(seed: int, number: int) -> bytes:
    """Chunk `number` of the seed's pool of chunks stored with turns: lines of the workload's words, a turn each
    (the same bytes in every process)."""
    rng = random.Random(f"turns:{seed}:{number}")
    lines = [f"turn {number}.{line}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 10)))
             for line in range(rng.randint(1, 4))]
    return ("\n".join(lines) + "\n").encode()


def expected_passages(chunks: dict) -> dict:
    """The answers of a raw passage index holding exactly the passages of `chunks` ({raw_id: bytes} of chunks of
    turn_chunk), built in memory."""
    from engine.raw.passage_build import build_from_bytes
    from engine.raw.passage_text import PassageAnalyzer
    from engine.text.build import build_memory
    from engine.text.search import Searcher

    analyzer = PassageAnalyzer()
    spans = []
    for identifier, data in sorted(chunks.items()):
        lines = data.split(b"\n")[:-1]
        offsets = [sum(len(line) + 1 for line in lines[:index]) for index in range(len(lines))]
        spans.append((identifier, data, offsets, [len(line) for line in lines], [None] * len(lines)))
    parts = [build_memory(built.sources, (), analyzer.signature()) for built in build_from_bytes(spans, 0, analyzer)]
    return _passage_answers(Searcher(parts, analyzer.tokenizer).search)


def _passage_answers(search, into: dict | None = None) -> dict:
    answers = {} if into is None else into
    for label, (query, top) in PASSAGE_QUERIES.items():
        answers[label] = Ranking([(hit.key, hit.score, tuple(hit.terms)) for hit in search(query, top=top)], top)
    return answers


# --- reading a store ----------------------------------------------------------------------------------


def read_passages(store, into: dict | None = None) -> dict:
    """What the raw passage index serves for the passage queries, filled into `into` as it is read."""
    from engine.raw import RawStore

    return _passage_answers(RawStore(store).passages().searcher().search, into)



def read_text(store, into: dict | None = None, records: bool = True) -> dict:
    """What the text kind serves, filled into `into` as it is read (a damage test keeps what was served
    before an error); `records`: also the documents as their records hold them."""
    from engine.text import stored

    found = {} if into is None else into
    if records:
        found["documents"] = documents = {}
        for key, record in store.scan(TEXT_TABLES.documents):
            documents[key] = {"fields": stored.record_texts(record), "type": record.get("type"),
                              "ts": record.get("ts"), "tags": list(record.get("tags", ()))}
    index = text_index(store)
    found["search"] = {}
    _search_answers(index.search, found["search"])
    found["statistics"] = {"documents": index.statistics()["documents"]}
    return found


def _search_answers(search, into: dict | None = None) -> dict:
    answers = {} if into is None else into
    for label, (query, filters) in QUERIES.items():
        for top in (ALL_HITS, TOP) if label in TOP_QUERIES else (ALL_HITS,):
            hits = search(query, top=top, **filters)
            answers[f"{label} top={top}"] = Ranking([(hit.key, hit.score, tuple(hit.terms)) for hit in hits], top)
    return answers


def read_graph(store, into: dict | None = None, records: bool = True) -> dict:
    """What the graph kind serves (nodes by type, neighbours, k-hop), filled into `into` as it is read;
    `records`: also the live nodes and edges as their records hold them."""
    from engine.errors import InputError
    from engine.graph.api import GraphStore
    from engine.graph.traverse import DegreeCap

    found = {} if into is None else into
    names = {}
    for key, type_id in store.scan(GRAPH_TYPE_TABLE):
        kind, _, name = key.partition(":")
        names[(kind, type_id)] = name
    keys, nodes = {}, {}
    for key, record in store.scan(GRAPH_NODE_TABLE):
        keys[record["id"]] = key
        if not record.get("deleted"):
            nodes[key] = (names.get(("node", record["type"])), record.get("props", {}))
    graph = GraphStore(store)
    if records:
        found["nodes"] = nodes
        found["edges"] = {key: (keys.get(record["src"]), names.get(("edge", record["type"])), keys.get(record["dst"]),
                                record["weight"])
                          for key, record in store.scan(GRAPH_EDGE_TABLE) if not record.get("deleted")}
    found["by_type"] = {name: sorted(graph.nodes_of_type(name), key=_none_first) for name in NODE_TYPES}
    found["neighbors"] = neighbors = {}
    for key in _probes(nodes):
        try:
            rows = graph.neighbors(key, "both").rows()
        except InputError:
            neighbors[key] = None
            continue
        neighbors[key] = sorted(((row["key"], row["edge"], row["type"], row["weight"]) for row in rows), key=repr)
    found["khop"] = khop = {}
    # A degree cap no node reaches changes no answer, but makes the walk read the edge time column too
    # (a node has at most two edges of a type, default and custom key, to and from each node).
    cap = DegreeCap({name: 4 * len(NODE_KEYS) for name in EDGE_TYPES}, now=0.0)
    for key in _khop_seeds(nodes):
        try:
            rows = graph.khop(key, HOPS, direction="both", cap=cap).rows()
        except InputError:  # a node its record calls live is unknown to the graph: a wrong answer
            khop[key] = None
            continue
        khop[key] = {row["key"]: (row["hop"], row["via"], row["parent"]) for row in rows}
    return found


def _none_first(key):
    return (key is not None, key or "")


class Ranking:
    """Search hits [(key, score, matched terms)], best first. Equal to another ranking of the same `top` when
    scores agree to SCORE_TOLERANCE position by position and every key above a tie at the top-k cut has the
    same score and terms in both (the order of equal scores is the index's docno order, not the model's)."""

    def __init__(self, hits: list, top: int):
        self.hits = hits
        self.top = top

    def __eq__(self, other) -> bool:
        if not isinstance(other, Ranking) or self.top != other.top or len(self.hits) != len(other.hits):
            return False
        if not all(_close(mine[1], theirs[1]) for mine, theirs in zip(self.hits, other.hits)):
            return False
        if not (self._best_first() and other._best_first()):
            return False
        cut = self.hits[-1][1] if len(self.hits) == self.top else None
        mine, theirs = self._decided(cut), other._decided(cut)
        return mine.keys() == theirs.keys() and all(_close(mine[key][0], theirs[key][0]) and
                                                    mine[key][1] == theirs[key][1] for key in mine)

    def _best_first(self) -> bool:
        return all(_at_most(later[1], earlier[1]) for earlier, later in zip(self.hits, self.hits[1:]))

    def _decided(self, cut) -> dict:
        return {key: (score, terms) for key, score, terms in self.hits if cut is None or not _close(score, cut)}

    def __repr__(self) -> str:
        return f"Ranking(top={self.top}, {[(key, round(score, 6)) for key, score, _terms in self.hits]})"


def _close(left: float, right: float) -> bool:
    return math.isclose(left, right, rel_tol=SCORE_TOLERANCE, abs_tol=SCORE_TOLERANCE)


def _at_most(later: float, earlier: float) -> bool:
    return later <= earlier or _close(later, earlier)
