"""Recall quality on LoCoMo-shaped files (LoCoMo dev, MemDaily zh dev): memctl against plain BM25, one run.

    python tools/eval_locomo.py ../shared/locomo/locomo-dev.json [--limit N] [--mode inprocess|cli|both]
                                [--as locomo|jsonl] [--build ingest+r2g|remember] [--set recall.lambda.ppr=0.1 ...]
                                [--write] [--work DIR]

For each conversation (sample) of FILE: a fresh store; ingest it and run r2g; recall every question that has
evidence; a result retrieves a dialog id when one of its citations has that source_id. Scores over evidence
ids: Recall@5/@10/@20 and NDCG@10 (a result is relevant when it cites an evidence id no earlier result cited),
per category and overall (categories 1-4; category 5, adversarial, reported apart), latency p50/p95.

Modes. `cli` runs exactly the acceptance commands, one process each:
    memctl --home STORE ingest --raw CONV.json --format locomo --quiet
    memctl --home STORE r2g --quiet
    memctl --home STORE recall batch Q.jsonl --json --top 20
(`--build remember`: the first two are one `memctl --home STORE remember --raw CONV.json --format locomo
--quiet`, the agent's write).
`inprocess` does the same through the Python API in this process (ingest_paths, the R2G Builder, one
Recaller per store), which is fast enough for parameter studies; `--set` overrides settings for both (written to
a YAML file passed with --config). Latency: in-process, per query; cli, the recall process's wall time per
query (store opened once) and a cold single-query process for a few questions.

Baselines, computed in the same run over one document per turn (no graph):
- "BM25 (engine tokenizer)": this repository's tokenizer (Snowball English stemmer, stop words, jieba
  cut_for_search for Chinese, on both documents and queries), plain BM25 (k1 1.2; LoCoMo: document = date +
  speaker + text + caption, b 0.5, δ 0, the strongest plain profile the recall study found, 0.654 Recall@10 on
  dev; MemDaily: document = text, b 0.75, BM25+ δ 1, the README's reference profile, 0.877 / 0.930);
- "bm25s + Snowball" (English files): bm25s's Lucene BM25 with PyStemmer English and the tokenizer's English
  stop words over date + speaker + text + caption (the README's 0.639 profile with the speaker added).
The strongest baseline per file is the one with the higher Recall@10 (LoCoMo) or Recall@5 (MemDaily).

`--as jsonl` ingests each conversation re-dressed as a plain JSONL chat log instead of the LoCoMo file (the
proof that memctl reads no LoCoMo convention after ingest): one line per turn with an opaque `id` (a hash of the
conversation and dia_id), `conversation_id`, an opaque `session` label, `speaker`, `content`, an ISO
`timestamp` (the turn's own time, else its session's date), the image caption as `attachments: [{"type":
"image", "caption": …}]` and the turn's other keys as they are (MemDaily's place and mid; LoCoMo's img_url,
query and re-download are left out as the LoCoMo adapter leaves them out). The tool maps the cited opaque ids
back to dia_ids to score them; memctl never sees a dia_id.

Evidence quirks (shared/locomo/README.md): several ids per string, "D:11:26" → D11:26, "D30:05" → D30:5, strings
naming no turn are dropped.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools" / "bench"))

EVIDENCE_ID = re.compile(r"D:?(\d+):0*(\d+)")
KS = (5, 10, 20)
TOP = 20
COLD_QUESTIONS = 3  # cold single-query processes per conversation in cli mode
FALLBACKS: dict = defaultdict(int)  # fallback name → in-process queries it fired on


# --- data -------------------------------------------------------------------------------------------------


def parse_evidence(items) -> list:
    found = []
    for item in items or ():
        for match in EVIDENCE_ID.finditer(str(item)):
            dialog = f"D{int(match[1])}:{int(match[2])}"
            if dialog not in found:
                found.append(dialog)
    return found


def questions_of(sample: dict) -> list:
    out = []
    for index, qa in enumerate(sample.get("qa", [])):
        evidence = parse_evidence(qa.get("evidence"))
        if not evidence or not qa.get("question"):
            continue
        out.append({"id": f"{sample['sample_id']}#{index}", "q": qa["question"], "evidence": evidence,
                    "category": int(qa.get("category", 0)), "type": qa.get("memdaily_type"),
                    "now": qa.get("question_time")})
    return out


def sessions_of(sample: dict) -> list:
    """[(session number, its date text or None, its turns)] in conversation order."""
    conversation = sample["conversation"]
    numbers = sorted(int(key.split("_")[1]) for key in conversation
                     if re.fullmatch(r"session_\d+", key) and isinstance(conversation[key], list))
    return [(number, conversation.get(f"session_{number}_date_time"), conversation[f"session_{number}"])
            for number in numbers]


def turns_of(sample: dict) -> list:
    """[{dia_id, speaker, text, caption, date}] in conversation order."""
    return [{"dia_id": turn["dia_id"], "speaker": turn.get("speaker", ""), "text": turn.get("text", ""),
             "caption": turn.get("blip_caption") or "", "date": date or ""}
            for _, date, turns in sessions_of(sample) for turn in turns]


LOCOMO_ONLY_KEYS = ("speaker", "dia_id", "text", "time", "blip_caption", "img_url", "query", "re-download")
OPAQUE_IDS: dict = {}  # opaque turn id → dia_id, filled by as_jsonl_log


def _opaque(*parts) -> str:
    return hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=6).hexdigest()


def as_jsonl_log(sample: dict) -> str:
    """The conversation of `sample` as a plain JSONL chat log (see the module doc), one line per turn."""
    from memctl.ingest.dates import parse_any

    lines = []
    for number, date, turns in sessions_of(sample):
        session = f"s{_opaque(sample['sample_id'], 'session', number)}"
        for turn in turns:
            turn_id = f"m{_opaque(sample['sample_id'], turn['dia_id'])}"
            OPAQUE_IDS[turn_id] = turn["dia_id"]
            moment = turn.get("time") or date
            line = {"id": turn_id, "conversation_id": sample["sample_id"], "session": session,
                    "speaker": turn["speaker"], "content": turn["text"],
                    "timestamp": parse_any(moment) if moment else None}
            if turn.get("blip_caption"):
                line["attachments"] = [{"type": "image", "caption": turn["blip_caption"]}]
            line.update((key, value) for key, value in turn.items() if key not in LOCOMO_ONLY_KEYS)
            lines.append(json.dumps(line, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def language_of(samples: list) -> str:
    text = " ".join(turn["text"] for turn in turns_of(samples[0])[:20])
    return "zh" if re.search(r"[\u4e00-\u9fff]", text) else "en"


# --- metrics ----------------------------------------------------------------------------------------------


def score(ranked_sources: list, evidence: list) -> dict:
    """ranked_sources: per result (best first) the source ids it cites."""
    wanted = set(evidence)
    seen: set = set()
    relevant = []
    found_at = {}
    for position, sources in enumerate(ranked_sources):
        new = (set(sources) & wanted) - seen
        relevant.append(bool(new))
        for dialog in new:
            found_at[dialog] = position
        seen |= new
    out = {f"R@{k}": sum(1 for position in found_at.values() if position < k) / len(wanted) for k in KS}
    dcg = sum(1.0 / math.log2(position + 2) for position, hit in enumerate(relevant[:10]) if hit)
    ideal = sum(1.0 / math.log2(position + 2) for position in range(min(len(wanted), 10)))
    out["NDCG@10"] = dcg / ideal
    return out


METRICS = ("R@5", "R@10", "R@20", "NDCG@10")


def aggregate(rows: list) -> dict:
    """rows: (conv, category, type, metrics) → {bucket: {metric: mean, n}}; 'all' = categories 1-4."""
    buckets = defaultdict(list)
    for conv, category, qtype, metrics in rows:
        buckets[f"cat{category}"].append(metrics)
        if qtype:
            buckets[f"type:{qtype}"].append(metrics)
        if category in (1, 2, 3, 4):
            buckets["all"].append(metrics)
            buckets[f"conv:{conv}"].append(metrics)
    return {name: {**{metric: statistics.fmean(m[metric] for m in values) for metric in METRICS}, "n": len(values)}
            for name, values in buckets.items()}


# --- stores -----------------------------------------------------------------------------------------------


def memctl_command() -> list:
    found = shutil.which("memctl", path=os.path.dirname(sys.executable))
    return [found] if found else [sys.executable, "-m", "memctl"]


def run_cli(arguments: list, stdin=None) -> subprocess.CompletedProcess:
    result = subprocess.run(memctl_command() + arguments, input=stdin, capture_output=True, text=True,
                            cwd=str(ROOT))
    if result.returncode != 0:
        raise SystemExit(f"memctl {' '.join(arguments)} failed ({result.returncode}): {result.stderr.strip()}")
    return result


def build_store_cli(store: Path, conv_file: Path, config: Path | None, input_format: str,
                    build: str = "ingest+r2g") -> None:
    extra = ["--config", str(config)] if config else []
    write = "remember" if build == "remember" else "ingest"
    run_cli(["--home", str(store)] + extra + [write, "--raw", str(conv_file), "--format", input_format, "--quiet"])
    if build != "remember":
        run_cli(["--home", str(store)] + extra + ["r2g", "--quiet"])


def build_store_inprocess(store: Path, conv_file: Path, config: Path | None, input_format: str) -> None:
    from memctl.ingest.api import ingest_paths
    from memctl.memory import Memory
    from memctl.r2g.builder import Builder

    with Memory.open(home=str(store), config_file=str(config) if config else None, writable=True,
                     holder="eval_locomo") as memory:
        ingest_paths(memory.store, [str(conv_file)], format=input_format, config=memory.config)
        Builder(memory.store, memory.tenant, memory.config).run()


def recall_inprocess(store: Path, questions: list, config: Path | None, mvp: bool = False,
                     count: bool = True) -> tuple[dict, list]:
    from memctl.memory import Memory
    from memctl.recall.pipeline import Recaller, Request

    answers, latencies = {}, []
    with Memory.open(home=str(store), config_file=str(config) if config else None) as memory:
        recaller = Recaller(memory.store, memory.config, memory.tenant)
        for question in questions:
            started = time.perf_counter()
            answer = recaller.recall(Request(q=question["q"], top=TOP, now=_seconds(question.get("now")), mvp=mvp))
            latencies.append(time.perf_counter() - started)
            answers[question["id"]] = answer["results"]
            for fallback in answer["trace"]["fallbacks"] if count else ():
                FALLBACKS[fallback["name"]] += 1
    return answers, latencies


def recall_cli(store: Path, questions: list, config: Path | None, work: Path, mvp: bool = False) -> tuple:
    """(answers, per-query share of the batch process's wall time, cold single-query wall times)."""
    batch = work / "Q.jsonl"
    with open(batch, "w", encoding="utf-8") as handle:
        for question in questions:
            line = {"id": question["id"], "q": question["q"]}
            moment = _seconds(question.get("now"))
            if moment is not None:
                line["now"] = datetime.fromtimestamp(moment, timezone.utc).isoformat(timespec="seconds")
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    extra = ["--config", str(config)] if config else []
    flags = ["--mvp"] if mvp else []
    started = time.perf_counter()
    output = run_cli(["--home", str(store)] + extra + ["recall", "batch", str(batch), "--json", "--top", str(TOP)]
                     + flags)
    wall = time.perf_counter() - started
    answers = {}
    lines = [line for line in output.stdout.splitlines() if line.strip()]
    if len(lines) != len(questions):
        raise SystemExit(f"recall batch printed {len(lines)} lines for {len(questions)} queries")
    for line, question in zip(lines, questions):
        parsed = json.loads(line)
        if parsed["id"] != question["id"]:
            raise SystemExit(f"recall batch answered {parsed['id']!r} where {question['id']!r} was expected")
        answers[parsed["id"]] = parsed["results"]
    cold = []
    for question in questions[:COLD_QUESTIONS]:
        started = time.perf_counter()
        run_cli(["--home", str(store)] + extra + ["recall", "--q", question["q"], "--json", "--top", str(TOP)] + flags)
        cold.append(time.perf_counter() - started)
    return answers, [wall / max(len(questions), 1)] * len(questions), cold


def sources_of(results: list) -> list:
    """Per result, the dia_ids its citations name (an opaque id of a re-dressed log read back as its dia_id)."""
    return [[OPAQUE_IDS.get(citation.get("source_id"), citation.get("source_id"))
             for citation in result.get("citations", ())] for result in results]


def _seconds(text):
    """A question time ("2024年04月05日 周五 07:24", LoCoMo forms) as epoch seconds, read as UTC like turn times."""
    if not text:
        return None
    from memctl.ingest.dates import parse_any
    from memctl.node_documents import epoch_seconds

    try:
        return epoch_seconds(parse_any(text))
    except ValueError:
        return None


# --- baselines --------------------------------------------------------------------------------------------


class PlainBM25:
    """One document per turn, no graph: BM25 (δ = 0) or BM25+ (δ > 0) with ln((N+1)/df) idf."""

    def __init__(self, documents: list, tokenize, k1: float, b: float, delta: float):
        self.tokenize = tokenize
        self.k1, self.b, self.delta = k1, b, delta
        self.docs = [_counts(tokenize(text)) for text in documents]
        self.lengths = [sum(doc.values()) for doc in self.docs]
        self.average = statistics.fmean(self.lengths) if self.lengths else 1.0
        self.df = defaultdict(int)
        for doc in self.docs:
            for term in doc:
                self.df[term] += 1

    def rank(self, query: str, top: int = TOP) -> list:
        terms = _counts(self.tokenize(query))
        count = len(self.docs)
        scores = []
        for index, doc in enumerate(self.docs):
            norm = (1 - self.b) + self.b * self.lengths[index] / max(self.average, 1e-9)
            value = 0.0
            for term, weight in terms.items():
                tf = doc.get(term)
                if tf:
                    idf = math.log((count + 1.0) / self.df[term])
                    value += weight * idf * ((self.k1 + 1) * tf / (self.k1 * norm + tf) + self.delta)
            scores.append(value)
        # Every turn is ranked, ties (zero scores included) in conversation order, as in the README's reference.
        return sorted(range(count), key=lambda index: (-scores[index], index))[:top]


def _counts(terms) -> dict:
    out: dict = {}
    for term in terms:
        out[term] = out.get(term, 0) + 1
    return out


def baselines(samples: list, language: str, peers: bool = True) -> dict:
    """{name: {qid: [[dia_id]] ranked}}; without `peers`, only the engine tokenizer's BM25 (no bench extra)."""
    from engine.text.tokenizer import Tokenizer

    tokenizer = Tokenizer(cjk="jieba")

    def tokenize(text):
        return tokenizer.index_tokens(text)[0]

    out = {"BM25 (engine tokenizer)": {}}
    peers = peers and language == "en"
    if peers:
        out["bm25s + Snowball"] = {}
    for sample in samples:
        turns = turns_of(sample)
        questions = questions_of(sample)
        if language == "en":
            documents = [" ".join(x for x in (t["date"], t["speaker"], t["text"], t["caption"]) if x) for t in turns]
            plain = PlainBM25(documents, tokenize, 1.2, 0.5, 0.0)
        else:
            plain = PlainBM25([t["text"] for t in turns], tokenize, 1.2, 0.75, 1.0)
        for question in questions:
            out["BM25 (engine tokenizer)"][question["id"]] = [[turns[i]["dia_id"]] for i in plain.rank(question["q"])]
        if peers:
            ranked = _bm25s(turns, questions)
            out["bm25s + Snowball"].update(ranked)
    return out


def _bm25s(turns: list, questions: list) -> dict:
    import bm25s
    import Stemmer

    from engine.text.tokenizer import default_stopwords

    stemmer = Stemmer.Stemmer("english")
    stopwords = sorted(default_stopwords("en"))
    documents = [" ".join(x for x in (t["date"], t["speaker"] + ":", t["text"], t["caption"]) if x) for t in turns]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(documents, stopwords=stopwords, stemmer=stemmer, show_progress=False),
                    show_progress=False)
    out = {}
    for question in questions:
        tokens = bm25s.tokenize([question["q"]], stopwords=stopwords, stemmer=stemmer, show_progress=False,
                                return_ids=False)
        documents_found, _scores = retriever.retrieve(tokens, k=min(TOP, len(turns)), show_progress=False)
        out[question["id"]] = [[turns[int(i)]["dia_id"]] for i in documents_found[0]]
    return out


# --- running ----------------------------------------------------------------------------------------------


def write_config(settings: list, work: Path, name: str = "override") -> Path | None:
    if not settings:
        return None
    import yaml

    tree: dict = {}
    for item in settings:
        key, _, value = item.partition("=")
        node = tree
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = json.loads(value)
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(tree, allow_unicode=True), encoding="utf-8")
    return path


def evaluate_mode(samples: list, mode: str, work: Path, config: Path | None, mvp: bool = False,
                  ablations: dict | None = None, dressed_as: str = "locomo", build: str = "ingest+r2g") -> tuple:
    """(answers by qid, per-query latencies, cold latencies, build seconds, {ablation: answers by qid}).
    Ablations (in-process only) recall again on the same stores with other recall settings."""
    answers, latencies, cold = {}, [], []
    ablated: dict = {label: {} for label in ablations or {}}
    build_seconds = 0.0
    for sample in samples:
        conv_dir = work / mode / re.sub(r"[^\w.-]", "_", sample["sample_id"])
        if conv_dir.exists():
            shutil.rmtree(conv_dir)
        conv_dir.mkdir(parents=True)
        if dressed_as == "jsonl":
            conv_file = conv_dir / "conv.jsonl"
            conv_file.write_text(as_jsonl_log(sample), encoding="utf-8")
        else:
            conv_file = conv_dir / "conv.json"
            conv_file.write_text(json.dumps([sample], ensure_ascii=False), encoding="utf-8")
        store = conv_dir / "store"
        questions = questions_of(sample)
        started = time.perf_counter()
        if mode == "cli":
            build_store_cli(store, conv_file, config, dressed_as, build)
        else:
            build_store_inprocess(store, conv_file, config, dressed_as)
        build_seconds += time.perf_counter() - started
        if not questions:
            continue
        if mode == "cli":
            found, spent, cold_times = recall_cli(store, questions, config, conv_dir, mvp)
            cold += cold_times
        else:
            found, spent = recall_inprocess(store, questions, config, mvp)
            for label, variant in (ablations or {}).items():
                ablated[label].update(recall_inprocess(store, questions, variant, mvp, count=False)[0])
        answers.update(found)
        latencies += spent
        shutil.rmtree(store, ignore_errors=True)
    return answers, latencies, cold, {"build_seconds": build_seconds}, ablated


def table_rows(name: str, result: dict, categories: list, headline: str) -> list:
    row = [name] + [f"{result['all'][metric]:.3f}" for metric in METRICS]
    row += [f"{result[f'cat{c}'][headline]:.3f}" if f"cat{c}" in result else "-" for c in categories]
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--limit", type=int, default=None, help="Only the first N conversations.")
    parser.add_argument("--mode", choices=("inprocess", "cli", "both"), default="inprocess")
    parser.add_argument("--as", dest="dressed_as", choices=("locomo", "jsonl"), default="locomo",
                        help="Ingest each conversation as the LoCoMo file (default) or re-dressed as a JSONL chat log.")
    parser.add_argument("--build", choices=("ingest+r2g", "remember"), default="ingest+r2g",
                        help="CLI mode: write each store with `ingest` then `r2g` (default) or one `remember`.")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                        help="Override a setting, e.g. recall.lambda.ppr=0.1 (repeatable).")
    parser.add_argument("--work", default=None, help="Working directory (default: a temporary one).")
    parser.add_argument("--ablate", action="append", default=[], metavar="LABEL|KEY=JSON|…",
                        help="In-process: also recall with these recall settings on the same stores "
                             "(e.g. 'no reply hop|recall.reply_neighbor=0'); repeatable.")
    parser.add_argument("--mvp", action="store_true", help="Recall with --mvp (k = 1, recall.mvp_lambda).")
    parser.add_argument("--write", action="store_true", help="Write the tables to tools/bench/RESULTS.md.")
    parser.add_argument("--per-question", default=None, help="Write per-question metrics (JSONL) here.")
    options = parser.parse_args(argv)

    samples = json.load(open(options.file, encoding="utf-8"))
    if options.limit:
        samples = samples[: options.limit]
    language = language_of(samples)
    work = Path(options.work or tempfile.mkdtemp(prefix="eval_locomo_"))
    work.mkdir(parents=True, exist_ok=True)
    config = write_config(options.set, work)
    questions = {question["id"]: (sample["sample_id"], question) for sample in samples
                 for question in questions_of(sample)}
    headline = "R@10" if language == "en" else "R@5"
    categories = sorted({question["category"] for _, question in questions.values()})

    results, lines, timing = {}, [], {}
    for name, ranked in baselines(samples, language).items():
        results[name] = _evaluate(ranked, questions)
    modes = ("inprocess", "cli") if options.mode == "both" else (options.mode,)
    per_question = {}
    ablations = {}
    for number, spec in enumerate(options.ablate):
        label, *pairs = spec.split("|")
        ablations[label] = write_config(options.set + pairs, work, f"ablation{number}")
    for mode in modes:
        answers, latencies, cold, build, ablated = evaluate_mode(samples, mode, work, config, options.mvp,
                                                                 ablations if mode == "inprocess" else None,
                                                                 options.dressed_as, options.build)
        for label, found in ablated.items():
            results[f"ablation: {label}"] = _evaluate({qid: sources_of(cards) for qid, cards in found.items()},
                                                       questions)
        ranked = {qid: sources_of(found) for qid, found in answers.items()}
        name = f"memctl recall{' --mvp' if options.mvp else ''} " \
               f"({'in-process' if mode == 'inprocess' else 'CLI acceptance commands'}" \
               f"{', input as JSONL' if options.dressed_as == 'jsonl' else ''}" \
               f"{', written by remember' if mode == 'cli' and options.build == 'remember' else ''})"
        results[name] = _evaluate(ranked, questions)
        per_question[mode] = ranked
        timing[name] = {"p50_ms": _percentile(latencies, 50) * 1000, "p95_ms": _percentile(latencies, 95) * 1000,
                        "cold_p50_s": _percentile(cold, 50) if cold else None,
                        "cold_p95_s": _percentile(cold, 95) if cold else None,
                        "queries": len(latencies), **build}

    base_names = [name for name in results if not name.startswith(("memctl", "ablation"))]
    strongest = max(base_names, key=lambda name: results[name]["all"][headline])
    headers = ["method"] + list(METRICS) + [f"cat{c} {headline}" for c in categories]
    rows = [table_rows(name, results[name], categories, headline) for name in results]
    from common import table

    lines.append(f"File: `{os.path.relpath(options.file, ROOT)}` ({len(samples)} conversations, {len(questions)} "
                 f"questions with evidence; headline = categories 1-4 ({results[strongest]['all']['n']} questions); "
                 f"category 5 is adversarial: no evidence should exist, reported apart).")
    if options.set:
        lines.append(f"Settings overridden: `{' '.join(options.set)}`")
    lines.append("")
    lines.append(table(headers, rows))
    lines.append("")
    for name in results:
        if not name.startswith("memctl"):
            continue
        ours = results[name]
        deltas = {metric: ours["all"][metric] - results[strongest]["all"][metric] for metric in METRICS}
        below = [f"cat{c}" for c in categories if c != 5 and f"cat{c}" in ours and
                 ours[f"cat{c}"][headline] < results[strongest][f"cat{c}"][headline]]
        lines.append(f"- {name} vs strongest baseline ({strongest}): " +
                     ", ".join(f"{metric} {delta:+.3f}" for metric, delta in deltas.items()) +
                     (f"; below it on {', '.join(below)}" if below else "; not below it on any category 1-4"))
        t = timing[name]
        cold = f", cold single-query process p50 {t['cold_p50_s']:.2f} s / p95 {t['cold_p95_s']:.2f} s" \
            if t["cold_p50_s"] is not None else ""
        lines.append(f"  latency per query p50 {t['p50_ms']:.1f} ms / p95 {t['p95_ms']:.1f} ms over "
                     f"{t['queries']} queries{cold}; {'remember' if 'remember' in name else 'ingest + r2g'} "
                     f"{t['build_seconds']:.1f} s in total")
    main_rows = [name for name in results if not name.startswith("ablation")]
    if FALLBACKS:
        total = len(questions)
        lines.append("  fallbacks (in-process): " + ", ".join(f"{name} {count / total:.0%}"
                                                          for name, count in sorted(FALLBACKS.items())))
    if language == "zh":
        types = sorted({key for key in results[strongest] if key.startswith("type:")})
        if types:
            lines.append("")
            type_rows = [[key[5:], results[strongest][key]["n"]] +
                         [f"{results[name][key]['R@5']:.3f} / {results[name][key]['NDCG@10']:.3f}"
                          for name in main_rows] for key in types]
            lines.append(table(["type", "n"] + [f"{name} R@5 / NDCG@10" for name in main_rows], type_rows))
    conv_keys = sorted(key for key in results[strongest] if key.startswith("conv:"))
    if language == "en" and conv_keys:
        lines.append("")
        conv_rows = [[key[5:], results[strongest][key]["n"]] +
                     [f"{results[name][key]['R@10']:.3f}" for name in main_rows] for key in conv_keys]
        lines.append(table(["conversation", "n"] + [f"{name} R@10" for name in main_rows], conv_rows))
    text = "\n".join(lines)
    print(text)
    if options.per_question:
        with open(options.per_question, "w", encoding="utf-8") as handle:
            for qid, (conv, question) in questions.items():
                row = {"id": qid, "category": question["category"], "q": question["q"],
                       "evidence": question["evidence"]}
                for mode, ranked in per_question.items():
                    row[mode] = ranked.get(qid, [])[:10]
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    if options.write:
        from common import write_section

        as_jsonl = " (input as JSONL)" if options.dressed_as == "jsonl" else ""
        write_section(f"recall quality: {Path(options.file).name}{as_jsonl}", text)
    return 0


def _evaluate(ranked: dict, questions: dict) -> dict:
    rows = []
    for qid, (conv, question) in questions.items():
        metrics = score(ranked.get(qid, []), question["evidence"])
        rows.append((conv, question["category"], question.get("type"), metrics))
    return aggregate(rows)


def _percentile(values: list, percent: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(percent / 100 * len(ordered)) - 1))
    return ordered[index]


if __name__ == "__main__":
    sys.exit(main())
