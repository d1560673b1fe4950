"""Keyword search: memctl's text index against SQLite FTS5, bm25s and tantivy on the same corpora and queries.

    python tools/bench/search_bench.py [--documents 100000] [--queries 200] [--repeats 5] [--cold-runs 7]
                                       [--build-runs 3] [--unflushed-mib 0,1,2,4,8] [--only synthetic]
                                       [--no-write]

Corpora: (1) every turn of ../shared/locomo/locomo-dev.json (one document per turn, text + image caption),
queried with its 999 questions; (2) a generated corpus of mixed Chinese/English chat (jieba's dictionary and
LoCoMo's English words drawn with Zipf frequencies, some code-like tokens), queried with 2-4 word queries.

Every engine indexes the same terms: the corpus is analysed once with memctl's tokenizer (jieba search mode,
Snowball stemming, stop words), and the peers get those terms joined by spaces with a whitespace-only
tokenizer, so they are timed on indexing and ranking alone. memctl's build gets the same pre-analysed terms
(its analysis time is reported apart) but its queries go through its own query parsing (segmentation
against the index's terms), as `memctl search` does; the peers get the parsed terms. Every query is an OR
of its terms, top 10, the hit's key included. Latencies are per query: the median of --repeats rounds (the
engines alternate in every round), then p50/p95 over the queries.

memctl "numpy" is the CLI's path (no numba import); "numba" is the long-lived-process path; "numpy, nothing
remembered" forgets the searcher's decoded terms before every query. Cold is the wall time of a whole `memctl
search QUERY` process (median of --cold-runs after one warm-up; bytecode written first, as an installed
package has it), first on the compacted store, then with N MiB of batches left in the WAL (unflushed: every
open replays them and builds the in-memory part), which is what `engine.flush_bytes` bounds.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import re
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import compile_bytecode, table, write_section  # noqa: E402
from memctl.indexes import DOCUMENTS  # noqa: E402  the index `memctl search`, timed below, reads

LOCOMO_PATH = os.path.join(os.path.dirname(ROOT), "shared", "locomo", "locomo-dev.json")
TOP = 10
FORGETFUL = "numpy, nothing remembered"  # a searcher that forgets its decoded terms before every query
TOKENS_ONLY = "memctl (tokens only)"  # a build keeping no text: what FTS5's contentless table keeps the like of
NUMBA_BUILD, NUMBA_TOKENS_ONLY = "memctl (numba)", "memctl (numba, tokens only)"
# name → (store_text, kernels) of each memctl build; "memctl" is the command line's (numpy, text kept).
MEMCTL_BUILDS = {"memctl": (True, "numpy"), TOKENS_ONLY: (False, "numpy"), NUMBA_BUILD: (True, "numba"),
                 NUMBA_TOKENS_ONLY: (False, "numba")}
FTS5_CONTENT = "SQLite FTS5 (content table)"  # context only: the verdicts compare with the contentless table


@dataclass
class Corpus:
    name: str
    keys: list
    texts: list
    queries: list
    cold_query: str
    notes: list = field(default_factory=list)


class Stopwatch:
    """Wall and CPU seconds since it started (CPU: this process's, every thread), as a build's figures."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def read(self) -> dict:
        return {"build": time.perf_counter() - self.wall, "build_cpu": time.process_time() - self.cpu}


# --- corpora ----------------------------------------------------------------------------------------------


def locomo_corpus(path: str = LOCOMO_PATH) -> Corpus:
    with open(path, encoding="utf-8") as handle:
        samples = json.load(handle)
    keys, texts, queries = [], [], []
    for sample in samples:
        conversation = sample["conversation"]
        for name, turns in conversation.items():
            if not name.startswith("session_") or not isinstance(turns, list):
                continue
            for turn in turns:
                text = turn["text"] + (" " + turn["blip_caption"] if turn.get("blip_caption") else "")
                keys.append(f"{sample['sample_id']}/{turn['dia_id']}")
                texts.append(text)
        queries += [qa["question"] for qa in sample["qa"]]
    return Corpus("LoCoMo dev turns", keys, texts, queries, queries[0],
                  [f"{len(texts):,} turns, {len(queries):,} questions as queries"])


def _chinese_words(limit: int) -> list:
    import jieba

    path = os.path.join(os.path.dirname(jieba.__file__), "dict.txt")
    words = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            word, frequency, *_rest = line.split()
            if 2 <= len(word) <= 4 and all("\u4e00" <= character <= "\u9fff" for character in word):
                words.append((int(frequency), word))
    words.sort(reverse=True)
    return [word for _frequency, word in words[:limit]]


def _english_words(limit: int) -> list:
    counts: Counter = Counter()
    for text in locomo_corpus().texts:
        counts.update(word for word in re.findall(r"[a-z]+", text.lower()) if len(word) > 1)
    return [word for word, _count in counts.most_common(limit)]


def _code_tokens(rng) -> list:
    tokens = [f"0x{value:08X}" for value in rng.integers(0x80000000, 0x8FFFFFFF, 60)]
    tokens += [f"v{major}.{minor}.{patch}" for major, minor, patch in rng.integers(0, 12, (60, 3))]
    tokens += [f"EventID={value}" for value in rng.integers(1, 9999, 60)]
    tokens += [f"Win{value}" for value in (7, 8, 10, 11)] + [f"iPhone{value}" for value in range(8, 17)]
    tokens += [f"https://docs.example.com/kb/{value}" for value in rng.integers(1000, 99999, 30)]
    tokens += [f"/var/log/app{value}.log" for value in rng.integers(1, 60, 30)]
    return tokens


def _zipf_ranks(rng, size: int, vocabulary: int) -> np.ndarray:
    return (rng.zipf(1.12, size) - 1) % vocabulary


def synthetic_corpus(documents: int, query_count: int, seed: int = 7) -> Corpus:
    """Chat turns: 60% Chinese (words run together, with English words and codes mixed in), 40% English."""
    rng = np.random.default_rng(seed)
    chinese = _chinese_words(30_000)
    english = _english_words(8_000)
    codes = _code_tokens(rng)
    lengths = np.clip(rng.lognormal(2.7, 0.55, documents).astype(int), 3, 80)
    is_chinese = rng.random(documents) < 0.6
    texts = []
    for length, in_chinese in zip(lengths.tolist(), is_chinese.tolist()):
        if in_chinese:
            words = [chinese[rank] for rank in _zipf_ranks(rng, length, len(chinese)).tolist()]
            for place in np.flatnonzero(rng.random(length) < 0.12).tolist():
                words[place] = f" {english[int(_zipf_ranks(rng, 1, len(english))[0])]} "
            if rng.random() < 0.08:
                words.append(f" {codes[int(rng.integers(len(codes)))]} ")
            text = "".join(word + ("，" if rng.random() < 0.12 else "") for word in words) + "。"
        else:
            words = [english[rank] for rank in _zipf_ranks(rng, length, len(english)).tolist()]
            if rng.random() < 0.08:
                words.insert(int(rng.integers(len(words))), codes[int(rng.integers(len(codes)))])
            text = " ".join(words).capitalize() + "."
        texts.append(text)
    queries = _synthetic_queries(rng, query_count, chinese, english)
    cold = next(query for query in queries if any("\u4e00" <= character <= "\u9fff" for character in query))
    return Corpus(f"synthetic zh/en chat, {documents:,} docs", [f"chat/{index:07d}" for index in range(documents)],
                  texts, queries, cold, [f"{documents:,} documents (seed {seed}), {query_count} queries of 2-4 words: "
                                         "half Chinese, a quarter English, a quarter mixed"])


def _synthetic_queries(rng, count: int, chinese: list, english: list) -> list:
    """Words of rank 10..5,000 (log-uniform): from very common to rare, as people type them."""
    def pick(words: list) -> str:
        return words[int(math.exp(rng.uniform(math.log(10), math.log(min(5000, len(words) - 1)))))]

    queries = []
    for index in range(count):
        size = int(rng.integers(2, 5))
        kind = index % 4
        if kind in (0, 1):
            words = [pick(chinese) for _ in range(size)]
        elif kind == 2:
            words = [pick(english) for _ in range(size)]
        else:
            words = [pick(chinese)] + [pick(english) for _ in range(size - 1)]
        queries.append(" ".join(words))
    return queries


# --- memctl -----------------------------------------------------------------------------------------------


class Pretokenized:
    """A Tokenizer whose index_tokens returns the terms analysed beforehand (analysis is timed apart)."""

    def __init__(self, tokenizer, tokens: dict):
        self.tokenizer = tokenizer
        self.index_tokens = tokens.__getitem__  # the lookup alone, no Python frame: the peers get their terms free

    def signature(self) -> dict:
        return self.tokenizer.signature()


def directory_bytes(path: str, suffix: str = "") -> int:
    total = 0
    for root, _directories, names in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, name)) for name in names if name.endswith(suffix))
    return total


def build_memctl(directory: str, corpus: Corpus, tokenizer, tokens: dict, store_text: bool = True,
                 kernels: str = "numpy") -> dict:
    """kernels "numpy": the command line's build (no numba in the process); "numba": a long-lived process's,
    with numba loaded (its vocabulary and build kernels, engine.text.term_table and build_kernels)."""
    import engine.text

    previous, engine.text.BUILD_KERNELS = engine.text.BUILD_KERNELS, kernels
    try:
        if kernels == "numba":  # loaded before the clock, as a long-lived process has them
            warm_up = directory + "-warm-up"
            _timed_build(warm_up, ["warm"], ["up"], Pretokenized(tokenizer, {"up": (["up"], [0])}), store_text, kernels)
            shutil.rmtree(warm_up)
        tokenizer.signature()  # part of the analysis: it looks for jieba's package (LoCoMo has no CJK)
        figures = _timed_build(directory, corpus.keys, corpus.texts, Pretokenized(tokenizer, tokens), store_text,
                               kernels)
    finally:
        engine.text.BUILD_KERNELS = previous
    return {**figures, "bytes": directory_bytes(os.path.join(directory, "seg"), ".text.postings.seg"),
            "store_bytes": directory_bytes(directory)}


def _timed_build(directory: str, keys: list, texts: list, tokenizer, store_text: bool, kernels: str) -> dict:
    from engine.store import Store
    from engine.text.index import TextIndex

    watch = Stopwatch()
    # As `memctl index --add` builds: one add_many of every document (one atomic batch, as FTS5's one
    # transaction) in a store of the default flush size, then a flush (a no-op when the batch filled the
    # memtable: the commit then flushed it, skipping the WAL).
    with Store.open(directory) as store:
        index = TextIndex(store, tokenizer, store_text=store_text, kernels=kernels, owner=DOCUMENTS)
        # Text given alone: the API's form for a document of the one field "text" (no map per document).
        index.add_many([{"key": key, "fields": text} for key, text in zip(keys, texts)])
        store.flush()
    return watch.read()


def memctl_searchers(directory: str, tokenizer):
    from engine.store import Store

    from engine.text.search import Searcher

    store = Store.open(directory, writable=False)
    snapshot = store.kind(DOCUMENTS)
    searchers = {mode: snapshot.searcher(tokenizer, kernels=mode) for mode in ("numpy", "numba")}
    # A searcher of its own: forgetting before each query must not empty the memory of the "numpy" one.
    searchers[FORGETFUL] = Searcher(snapshot.parts, tokenizer, deleted=snapshot.deleted)
    return store, searchers


def memctl_search(searcher, forget: bool):
    def search(query: str) -> list:
        if forget:
            searcher.forget()
        return searcher.search(query, TOP)
    return search


# --- peers ------------------------------------------------------------------------------------------------


def _fts5_tokenchars(term_lists) -> str:
    characters = {character for terms in term_lists for term in terms for character in term if not character.isalnum()}
    return "".join(sorted(characters)).replace("'", "''").replace('"', '""')


class Fts5:
    """contentless (the verdicts' peer): FTS5 keeps its index alone; else it also keeps what it indexed (the
    joined terms) in its content table, as memctl keeping tokens only keeps its tokens."""

    def __init__(self, contentless: bool = True):
        self.contentless = contentless
        self.name = "SQLite FTS5" if contentless else FTS5_CONTENT

    def build(self, directory: str, keys: list, documents: list) -> dict:
        path = os.path.join(directory, "fts5.db")
        # Which characters the analysed terms hold is the harness's knowledge (a user configures tokenchars),
        # not FTS5's indexing: it is found before the clock (0.18 s of CPU on the 100k corpus).
        chars = _fts5_tokenchars(documents)
        content = ", content=''" if self.contentless else ""
        watch = Stopwatch()
        self.connection = sqlite3.connect(path)
        self.connection.execute(
            f"CREATE VIRTUAL TABLE docs USING fts5(body{content}, "
            f"tokenize=\"unicode61 remove_diacritics 0 tokenchars '{chars}'\")")
        # The keys in a table of their own, as memctl's segment and tantivy's stored field keep them: a search
        # answers with keys after a restart. The index merged into one b-tree ('optimize'), as the sizes and
        # query times below measure it (and as memctl's build ends in one segment); VACUUM, which only hands the
        # free pages back for the size, is not timed.
        with self.connection:
            self.connection.execute("CREATE TABLE doc_keys(rowid INTEGER PRIMARY KEY, key TEXT NOT NULL)")
            self.connection.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)",
                                        ((number + 1, " ".join(terms)) for number, terms in enumerate(documents)))
            self.connection.executemany("INSERT INTO doc_keys VALUES (?, ?)", enumerate(keys, start=1))
        unmerged = watch.read()["build"]  # reported beside the verdict: what the merge adds
        with self.connection:
            self.connection.execute("INSERT INTO docs(docs) VALUES ('optimize')")
        timing = watch.read()
        self.connection.execute("VACUUM")
        return {**timing, "build_unmerged": unmerged, "bytes": os.path.getsize(path)}

    def prepare(self, terms: list):
        return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)

    def search(self, match: str) -> list:
        rows = self.connection.execute(
            "SELECT (SELECT key FROM doc_keys WHERE doc_keys.rowid = hit.rowid) FROM "
            "(SELECT rowid, bm25(docs) AS score FROM docs WHERE docs MATCH ? ORDER BY score LIMIT ?) AS hit "
            "ORDER BY hit.score", (match, TOP)).fetchall()
        return [key for key, in rows]


class Bm25s:
    name = "bm25s (numba)"

    def build(self, directory: str, keys: list, documents: list) -> dict:
        import bm25s
        from bm25s.tokenization import Tokenized

        self.keys = keys
        watch = Stopwatch()
        vocabulary: dict = {}
        ids = [[vocabulary.setdefault(term, len(vocabulary)) for term in terms] for terms in documents]
        self.retriever = bm25s.BM25(method="bm25+", k1=1.2, b=0.75, delta=1.0, backend="numba")
        self.retriever.index(Tokenized(ids, vocabulary), show_progress=False)
        timing = watch.read()
        self.retriever.save(os.path.join(directory, "bm25s"), show_progress=False)
        self.retriever.get_scores(list(vocabulary)[:1])  # compile the numba kernels outside the timings
        return {**timing, "bytes": directory_bytes(os.path.join(directory, "bm25s"))}

    def prepare(self, terms: list):
        return [terms]

    def search(self, query) -> list:
        results = self.retriever.retrieve(query, k=TOP, show_progress=False, n_threads=1)
        return [self.keys[index] for index in results.documents[0].tolist()]


class Tantivy:
    name = "tantivy"

    def build(self, directory: str, keys: list, documents: list) -> dict:
        import tantivy

        self.tantivy = tantivy
        path = os.path.join(directory, "tantivy")
        os.makedirs(path)
        watch = Stopwatch()
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("key", stored=True, tokenizer_name="raw", index_option="basic")
        builder.add_text_field("body", stored=False, tokenizer_name="whitespace_only", index_option="position")
        self.schema = builder.build()
        self.index = tantivy.Index(self.schema, path=path)
        self.index.register_tokenizer("whitespace_only",
                                      tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())
        writer = self.index.writer(heap_size=256 << 20, num_threads=1)
        for key, terms in zip(keys, documents):
            writer.add_document(tantivy.Document(key=key, body=" ".join(terms)))
        writer.commit()
        writer.wait_merging_threads()
        timing = watch.read()
        self.index.reload()
        self.searcher = self.index.searcher()
        return {**timing, "bytes": directory_bytes(path)}

    def prepare(self, terms: list):
        return terms

    def search(self, terms: list) -> list:
        tantivy = self.tantivy
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "body", term)) for term in terms])
        searcher = self.searcher
        return [searcher.doc(address)["key"][0] for _score, address in searcher.search(query, TOP).hits]


# --- measurement ------------------------------------------------------------------------------------------


def latencies(contenders: dict, queries: list, repeats: int) -> dict:
    """{name: (search, prepared queries)} → {name: per-query median seconds}, engines alternating per round."""
    samples = {name: [[] for _ in queries] for name in contenders}
    for name, (search, prepared) in contenders.items():
        for query in prepared:
            search(query)  # warm-up: caches, lazily read columns, jit
    for _round in range(repeats):
        for name, (search, prepared) in contenders.items():
            clock = time.perf_counter
            per_query = samples[name]
            for index, query in enumerate(prepared):
                started = clock()
                search(query)
                per_query[index].append(clock() - started)
    return {name: np.array([statistics.median(values) for values in per_query]) for name, per_query in samples.items()}


def memctl_command() -> list:
    found = shutil.which("memctl", path=os.path.dirname(sys.executable)) or shutil.which("memctl")
    return [found] if found else [sys.executable, "-c", "from memctl.cli.app import main; main()"]


def _process_seconds(command: list) -> tuple[float, float]:
    """(wall, CPU) seconds of one process; CPU (user + system) is what a loaded machine does not inflate."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    error = child.stderr.read().decode("utf-8", "replace")
    child.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{shlex.join(command)} failed: {error}")
    return elapsed, usage.ru_utime + usage.ru_stime


def cold_seconds(home: str, tenant: str, query: str, runs: int) -> tuple[float, float]:
    """Median (wall, CPU) seconds of `memctl search QUERY`, after one untimed run (page cache)."""
    search = memctl_command() + ["--home", home, "--tenant", tenant, "search", query, "--top", str(TOP)]
    samples = [_process_seconds(search) for _run in range(runs + 1)][1:]
    return statistics.median(wall for wall, _cpu in samples), statistics.median(cpu for _wall, cpu in samples)


def process_floor(runs: int) -> dict:
    """What any process costs on this machine: bare Python, numpy, and `memctl --version` (the CLI)."""
    floors = {}
    for name, command in (("python -c pass", [sys.executable, "-c", "pass"]),
                          ("python -c 'import numpy'", [sys.executable, "-c", "import numpy"]),
                          ("memctl --version", memctl_command() + ["--version"])):
        samples = [_process_seconds(command) for _run in range(runs)]
        floors[name] = (statistics.median(wall for wall, _cpu in samples),
                        statistics.median(cpu for _wall, cpu in samples))
    return floors


def add_unflushed(directory: str, corpus: Corpus, tokenizer, tokens: dict, target_bytes: int, start: int) -> int:
    """Append documents (copies of the corpus under new keys) as 1,000-document batches that stay in the WAL
    until the memtable holds `target_bytes`; returns the next copy number."""
    from engine.store import Store
    from engine.text.index import TextIndex

    with Store.open(directory, flush_bytes=1 << 62) as store:
        index = TextIndex(store, Pretokenized(tokenizer, tokens), owner=DOCUMENTS)
        number = start
        while store.memtable_bytes < target_bytes:
            batch = []
            for _ in range(1000):
                position = number % len(corpus.texts)
                batch.append({"key": f"extra/{number:08d}", "fields": {"text": corpus.texts[position]}})
                number += 1
            index.add_many(batch)
    return number


def run_corpus(corpus: Corpus, work: str, arguments) -> dict:
    from engine.text.tokenizer import Tokenizer

    print(f"== {corpus.name}: analysing {len(corpus.texts):,} documents", flush=True)
    tokenizer = Tokenizer()
    started = time.perf_counter()
    tokens = {text: tokenizer.index_tokens(text) for text in corpus.texts}
    analysis = time.perf_counter() - started
    documents = [tokens[text][0] for text in corpus.texts]
    # The harness's corpus and analysis (millions of objects) are no engine's to walk: unfrozen, every full
    # cyclic collection during a build traverses them (0.35 s of memctl's 100k-document build).
    gc.freeze()

    home = os.path.join(work, "home")
    tenant = re.sub(r"[^A-Za-z0-9]+", "-", corpus.name)[:40].strip("-")
    directory = os.path.join(home, "tenants", tenant)
    peers = [Fts5(), Bm25s(), Tantivy()]
    print(f"   building memctl and {peers[0].name} ({arguments.build_runs} rounds)", flush=True)
    builds = compared_builds(work, tenant, directory, corpus, tokenizer, tokens, documents, peers[0],
                             arguments.build_runs)
    store, searchers = memctl_searchers(directory, tokenizer)
    parsed = [searchers["numpy"].tokenizer.parse_query(query, searchers["numpy"].vocabulary(),
                                                       searchers["numpy"].cjk_mode).terms for query in corpus.queries]
    query_terms = [list(dict.fromkeys(terms)) for terms in parsed]
    keep = [index for index, terms in enumerate(query_terms) if terms]
    queries = [corpus.queries[index] for index in keep]
    query_terms = [query_terms[index] for index in keep]

    for peer in peers[1:]:
        print(f"   building {peer.name}", flush=True)
        peer_directory = os.path.join(work, tenant + "-" + peer.__class__.__name__.lower())
        os.makedirs(peer_directory)
        builds[peer.name] = peer.build(peer_directory, corpus.keys, documents)

    contenders = {f"memctl ({mode})": (memctl_search(searcher, mode == FORGETFUL), queries)
                  for mode, searcher in searchers.items()}
    for peer in peers:
        contenders[peer.name] = (peer.search, [peer.prepare(terms) for terms in query_terms])
    print(f"   querying ({len(queries)} queries x {arguments.repeats} rounds)", flush=True)
    timings = latencies(contenders, queries, arguments.repeats)
    agreement = _agreement(searchers["numpy"], peers[1], queries, query_terms)
    store.close()

    print("   cold `memctl search`", flush=True)
    cold = {0: cold_seconds(home, tenant, corpus.cold_query, arguments.cold_runs)}
    if arguments.unflushed_mib and corpus.name.startswith("synthetic"):
        number = 0
        for mebibytes in arguments.unflushed_mib:
            if mebibytes:
                number = add_unflushed(directory, corpus, tokenizer, tokens, mebibytes << 20, number)
                cold[mebibytes] = cold_seconds(home, tenant, corpus.cold_query, arguments.cold_runs)
    gc.unfreeze()
    return {"corpus": corpus, "analysis": analysis, "builds": builds, "timings": timings, "cold": cold,
            "agreement": agreement, "queries": len(queries), "build_runs": arguments.build_runs}


def compared_builds(work: str, tenant: str, directory: str, corpus: Corpus, tokenizer, tokens: dict, documents: list,
                    fts5, rounds: int) -> dict:
    """Median build figures of memctl, memctl keeping tokens only, FTS5 and (context) FTS5 keeping its content,
    built in turn `rounds` times (a load spike from another process then skews one sample, not the ratio); the
    last builds of memctl and FTS5 are kept."""
    with_content = Fts5(contentless=False)
    samples: dict = {name: [] for name in MEMCTL_BUILDS}
    samples.update({fts5.name: [], with_content.name: []})
    for round_number in range(rounds):
        last = round_number == rounds - 1
        scratch = os.path.join(work, f"{tenant}-round-{round_number}")
        samples["memctl"].append(build_memctl(directory if last else scratch, corpus, tokenizer, tokens))
        for name, (store_text, kernels) in MEMCTL_BUILDS.items():
            if name != "memctl":
                lean = scratch + "-" + re.sub(r"[^a-z]+", "-", name)
                samples[name].append(build_memctl(lean, corpus, tokenizer, tokens, store_text, kernels))
                shutil.rmtree(lean)
        os.makedirs(scratch + "-fts5")
        samples[fts5.name].append(fts5.build(scratch + "-fts5", corpus.keys, documents))
        os.makedirs(scratch + "-fts5-content")
        samples[with_content.name].append(with_content.build(scratch + "-fts5-content", corpus.keys, documents))
        with_content.connection.close()
        shutil.rmtree(scratch + "-fts5-content")
        if not last:
            shutil.rmtree(scratch)
            shutil.rmtree(scratch + "-fts5")
    return {name: {figure: statistics.median(sample[figure] for sample in runs) for figure in runs[0]}
            for name, runs in samples.items()}


def _agreement(searcher, bm25s_peer, queries: list, query_terms: list) -> float:
    """Mean share of memctl's top-10 keys that bm25s's BM25+ top 10 holds too: a check that both rank alike."""
    shared = 0.0
    for query, terms in zip(queries, query_terms):
        ours = {hit.key for hit in searcher.search(query, TOP)}
        shared += len(ours & set(bm25s_peer.search([terms]))) / max(1, len(ours))
    return shared / max(1, len(queries))


# --- report -----------------------------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def _ratio(value: float, reference: float) -> str:
    return f"{value / reference:.2f}x" if reference else "-"


def report(result: dict) -> str:
    corpus, builds, timings = result["corpus"], result["builds"], result["timings"]
    fts5, tantivy = timings["SQLite FTS5"], timings["tantivy"]
    rows = []
    for name, values in timings.items():
        build = builds.get(NUMBA_BUILD if name == NUMBA_BUILD else "memctl" if name.startswith("memctl") else name)
        p50, p95 = float(np.percentile(values, 50)), float(np.percentile(values, 95))
        rows.append([name, _ms(p50), _ms(p95), _ratio(p50, float(np.percentile(fts5, 50))),
                     _ratio(p50, float(np.percentile(tantivy, 50))),
                     f"{build['build']:.2f} s" if build else "", _ratio(build["build"], builds["SQLite FTS5"]["build"])
                     if build else "", f"{build['bytes']:,}" if build else "",
                     _ratio(build["bytes"], builds["tantivy"]["bytes"]) if build else ""])
    lines = [f"### {corpus.name}", "", table(
        ["engine", "p50", "p95", "p50/FTS5", "p50/tantivy", "build", "build/FTS5", "index bytes", "bytes/tantivy"],
        rows), ""]
    memctl = builds["memctl"]
    unmerged = builds["SQLite FTS5"]["build_unmerged"]
    lines += [f"- {note}" for note in corpus.notes]
    lines.append(f"- {result['queries']} queries with at least one indexed term; top {TOP}, keys fetched.")
    lines.append(f"- Analysis (jieba search mode + Snowball, once, shared by every engine): {result['analysis']:.1f} s; "
                 f"not in any build time. The harness's own objects (corpus, analysis) are gc.freeze()d before the "
                 f"builds, so that no engine's cyclic collections walk them.")
    lines.append("- A memctl searcher remembers decoded terms (16 MiB), term lookups and the keys of hits between "
                 "queries; every round after the warm-up finds its query's terms there, as tantivy's searcher finds "
                 f"its caches warm. \"{FORGETFUL}\" forgets before every query: what a query whose terms no earlier "
                 "query used costs.")
    lines.append(f"- Builds of memctl and FTS5: median of {result['build_runs']} rounds, the engines in turn in "
                 "each; bm25s and tantivy: one build. FTS5's tokenchars (the characters the analysed terms hold) "
                 "are found before its clock: the harness's knowledge, not FTS5's indexing (RESULTS before "
                 "2026-11-25 timed that scan too: 0.18 s of FTS5's 100k-document build). FTS5's build ends as "
                 "memctl's does, with the keys stored (a table rowid → key, in the documents' transaction) and the "
                 "index then merged into one b-tree ('optimize', a second transaction), the form whose size and "
                 "query times are measured; RESULTS before 2026-11-27 timed neither (the keys lived in the "
                 f"harness's memory). FTS5 without the merge: {unmerged:.2f} s, memctl "
                 f"{memctl['build'] / unmerged:.2f}x that. memctl's build is what `memctl index --add` runs: one "
                 "add_many of every document, in a store of the default flush size, then a flush (before "
                 "2026-11-27: ten add_many of 10,000 documents, each its own commit, in a store that never flushed "
                 "on its own).")
    lines.append("- Build CPU seconds (the building process, every thread; wall in the table): " + ", ".join(
        f"{name} {build['build_cpu']:.2f} s" for name, build in builds.items()) +
        f"; memctl/FTS5 {builds['memctl']['build_cpu'] / builds['SQLite FTS5']['build_cpu']:.2f}x.")
    lines.append(f"- memctl index bytes = its text.postings segment; the whole store (records with text and tokens, "
                 f"the source of truth) is {memctl['store_bytes']:,} bytes.")
    lean, numba, numba_lean = builds[TOKENS_ONLY], builds[NUMBA_BUILD], builds[NUMBA_TOKENS_ONLY]
    lines.append(f"- memctl keeping tokens only (store_text=False, as R2G's index does: the text stays with the "
                 f"caller, as it does with FTS5's contentless table; the tokens remain the source of truth): build "
                 f"{lean['build']:.2f} s wall / {lean['build_cpu']:.2f} s CPU, "
                 f"{lean['build'] / builds['SQLite FTS5']['build']:.2f}x FTS5's wall; store {lean['store_bytes']:,} "
                 "bytes.")
    lines.append(f"- memctl (numba): the same segment, byte for byte, built in a process with numba loaded (a "
                 f"long-lived one; the command line never loads it): terms coded by engine.text.term_table, tokens "
                 f"sorted and postings encoded by engine.text.build_kernels; numba and its cached kernels are loaded "
                 f"before the clock. Build {numba['build']:.2f} s wall / {numba['build_cpu']:.2f} s CPU, "
                 f"{numba['build'] / builds['SQLite FTS5']['build']:.2f}x FTS5's wall; keeping tokens only "
                 f"{numba_lean['build']:.2f} s / {numba_lean['build_cpu']:.2f} s, "
                 f"{numba_lean['build'] / builds['SQLite FTS5']['build']:.2f}x.")
    content = builds[FTS5_CONTENT]
    lines.append(f"- Context, not a verdict: FTS5 keeping its content table (the joined terms it indexes, as memctl "
                 f"keeping tokens only keeps its tokens): build {content['build']:.2f} s wall / "
                 f"{content['build_cpu']:.2f} s CPU, {content['bytes']:,} bytes; memctl tokens only is "
                 f"{lean['build'] / content['build']:.2f}x its wall, {lean['build_cpu'] / content['build_cpu']:.2f}x "
                 "its CPU.")
    lines.append(f"- Top-{TOP} overlap of memctl with bm25s's BM25+ (same k1, b, δ and idf): "
                 f"{result['agreement'] * 100:.1f}% of the keys on average. bm25s adds δ·idf of every query term to "
                 "every document (its non-occurrence array), so δ does not reward matching more terms there as in "
                 "Lv & Zhai's BM25+, which memctl follows.")
    cold = result["cold"]
    lines.append(f"- Cold `memctl search` (whole process, query {json.dumps(corpus.cold_query, ensure_ascii=False)}), "
                 f"wall / CPU: {cold[0][0]:.3f} s / {cold[0][1]:.3f} s on the compacted store" + "".join(
                     f"; {cold[size][0]:.3f} s / {cold[size][1]:.3f} s with {size} MiB of unflushed batches"
                     for size in sorted(cold) if size))
    return "\n".join(lines)


def verdicts(result: dict) -> list:
    timings, builds = result["timings"], result["builds"]
    p50 = {name: float(np.percentile(values, 50)) for name, values in timings.items()}
    rows = []
    for mode in ("numpy", "numba"):
        name = f"memctl ({mode})"
        rows.append([f"p50 ≤ 0.5× FTS5 ({mode})", _ratio(p50[name], p50["SQLite FTS5"]),
                     "yes" if p50[name] <= 0.5 * p50["SQLite FTS5"] else "NO"])
        rows.append([f"p50 ≤ 3× tantivy ({mode})", _ratio(p50[name], p50["tantivy"]),
                     "yes" if p50[name] <= 3 * p50["tantivy"] else "NO"])
    for name, label in (("memctl", ""), (TOKENS_ONLY, ", tokens only"), (NUMBA_BUILD, ", numba"),
                        (NUMBA_TOKENS_ONLY, ", numba, tokens only")):
        for figure, clock in (("build", "wall"), ("build_cpu", "CPU")):
            build = builds[name][figure] / builds["SQLite FTS5"][figure]
            rows.append([f"build ≤ 1.5× FTS5 ({clock}{label})", f"{build:.2f}x", "yes" if build <= 1.5 else "NO"])
    size = builds["memctl"]["bytes"] / builds["tantivy"]["bytes"]
    rows.append(["index bytes ≤ tantivy", f"{size:.2f}x", "yes" if size <= 1.0 else "NO"])
    wall, cpu = result["cold"][0]
    rows.append(["cold ≤ 0.4 s (wall)", f"{wall:.3f} s", "yes" if wall <= 0.4 else "NO"])
    rows.append(["cold ≤ 0.4 s (CPU: what an idle machine's wall would be)", f"{cpu:.3f} s",
                 "yes" if cpu <= 0.4 else "NO"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cold-runs", type=int, default=7)
    parser.add_argument("--build-runs", type=int, default=3, help="Interleaved builds of memctl and FTS5 (median).")
    parser.add_argument("--unflushed-mib", type=lambda text: [int(part) for part in text.split(",") if part],
                        default=[1, 2, 4, 8])
    parser.add_argument("--only", choices=["locomo", "synthetic"])
    parser.add_argument("--no-write", action="store_true", help="Print only; leave RESULTS.md alone.")
    arguments = parser.parse_args()

    corpora = []
    if arguments.only != "synthetic":
        corpora.append(locomo_corpus())
    if arguments.only != "locomo":
        corpora.append(synthetic_corpus(arguments.documents, arguments.queries))
    compile_bytecode()
    work = tempfile.mkdtemp(prefix="search-bench-")
    try:
        results = [run_corpus(corpus, work, arguments) for corpus in corpora]
        floors = process_floor(arguments.cold_runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sections = [report(result) for result in results]
    target = results[-1]
    sections.append(f"### Targets ({target['corpus'].name})\n\n" + table(["target", "measured", "met"],
                                                                          verdicts(target)))
    sections.append("Process floor on this machine (median wall / CPU): " + ", ".join(
        f"`{name}` {wall:.3f} s / {cpu:.3f} s" for name, (wall, cpu) in floors.items()) + ".")
    body = "\n\n".join(sections)
    print(body)
    if not arguments.no_write:
        write_section("search_bench", body)


if __name__ == "__main__":
    main()
