"""Knowledge-update recall: memctl against plain BM25 over turns, on the set tools/ku/generate.py writes.

    python tools/ku/evaluate.py [FILE] [--seed 19] [--conversations 40] [--limit N] [--as-of]
                                [--splits dev,dev2,heldout] [--per-question OUT.jsonl] [--write] [--work DIR]

Without FILE the set is generated in memory (tools/ku/generate.py with --seed and --conversations). For each
conversation, as tools/eval_locomo.py does in-process: a fresh store, ingest + r2g, then every question recalled
(top 20) with its own time as `now` (qa.question_time). With --as-of, past questions also pass their month
(qa.as_of) as `as_of` when the recall API takes one (memctl.recall.pipeline.Request); the output says whether it
did. The baseline is eval_locomo's "BM25 (engine tokenizer)": one document per turn, this repository's
tokenizer, plain BM25.

--splits keeps the conversations of the splits named (tuning runs: dev,dev2, so that no held-out question is
printed with --per-question).

Scores, per question kind (current, past, when), language and split (dev, dev2, heldout): hit@1 = the first result
cites an evidence turn (the turn that stated the value asked about, or the change asked about); Recall@5 = the
share of evidence turns cited in the top 5 (eval_locomo's measure). A second table tells what the first result
cites when it misses, by the roles the generator gives turns (sample["roles"]): the statement of another value
of the slot asked about (an earlier or later one, or its end), the value restated or asked about, a former value
in passing, a plan or someone else's value, a turn about another timeline, anything else (greetings, small
talk, reactions). --write puts both tables in tools/bench/RESULTS.md, section "Knowledge updates".
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "tools" / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from tools.eval_locomo import _seconds, baselines, build_store_inprocess, score, sources_of  # noqa: E402
from tools.ku.generate import DEFAULT_CONVERSATIONS, DEFAULT_SEED, LANGUAGES, generate  # noqa: E402

KINDS = ("current", "past", "when")
MISSES = {"state": "another value's statement", "end": "another value's statement",
          "stop": "another value's statement", "restate": "value restated or asked", "ask": "value restated or asked",
          "passing": "former value in passing", "plan": "plan or someone else's", "other": "plan or someone else's"}
MISS_ORDER = ("evidence", "another value's statement", "value restated or asked", "former value in passing",
              "plan or someone else's", "another timeline", "anything else")
SPLITS = ("dev", "dev2", "heldout")
TOP = 20
BM25 = "BM25 (engine tokenizer)"
MEMCTL = "memctl recall (in-process)"
SECTION = "Knowledge updates"


def questions(sample: dict) -> list:
    """The sample's qa with the ids eval_locomo's baselines give them (<sample id>#<position>)."""
    return [dict(qa, id=f"{sample['sample_id']}#{position}") for position, qa in enumerate(sample["qa"])]


def recall_accepts_as_of() -> bool:
    from memctl.recall.pipeline import Request

    return "as_of" in {field.name for field in dataclasses.fields(Request)}


def memctl_answers(samples: list, work: Path, as_of: bool) -> tuple[dict, float]:
    """({question id: ranked sources}, seconds spent building stores)."""
    from memctl.memory import Memory
    from memctl.recall.pipeline import Recaller, Request

    answers, building = {}, 0.0
    for sample in samples:
        folder = work / re.sub(r"[^\w.-]", "_", sample["sample_id"])
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        conversation = folder / "conv.json"
        conversation.write_text(json.dumps([sample], ensure_ascii=False), encoding="utf-8")
        store = folder / "store"
        started = time.perf_counter()
        build_store_inprocess(store, conversation, None, "locomo")
        building += time.perf_counter() - started
        with Memory.open(home=str(store)) as memory:
            recaller = Recaller(memory.store, memory.config, memory.tenant)
            for qa in questions(sample):
                extra = {"as_of": qa["as_of"]} if as_of and qa.get("as_of") else {}
                request = Request(q=qa["question"], top=TOP, now=_seconds(qa["question_time"]), explain=False,
                                  **extra)
                answers[qa["id"]] = sources_of(recaller.recall(request)["results"])
        shutil.rmtree(folder, ignore_errors=True)
    return answers, building


def bm25_answers(samples: list) -> dict:
    answers = {}
    for language in LANGUAGES:
        chosen = [sample for sample in samples if sample["lang"] == language]
        if chosen:
            answers.update(baselines(chosen, language, peers=False)[BM25])
    return answers


def measure(ranked: list, evidence: list) -> dict:
    first = set(ranked[0]) if ranked else set()
    return {"hit@1": float(bool(first & set(evidence))), "R@5": score(ranked, evidence)["R@5"]}


def tally(samples: list, answers: dict) -> dict:
    """{(language, split, kind): {metric: mean, "n": count}}, with "all" for every language, split and kind."""
    buckets = defaultdict(list)
    for sample in samples:
        for qa in questions(sample):
            metrics = measure(answers.get(qa["id"], []), qa["evidence"])
            for language in (sample["lang"], "all"):
                for split in (sample["split"], "all"):
                    for kind in (qa["kind"], "all"):
                        buckets[(language, split, kind)].append(metrics)
    return {key: {"hit@1": statistics.fmean(m["hit@1"] for m in rows), "R@5": statistics.fmean(m["R@5"] for m in rows),
                  "n": len(rows)} for key, rows in buckets.items()}


def first_result(sample: dict, qa: dict, ranked: list) -> str:
    """What the first result cites, as one of MISS_ORDER (the first that applies)."""
    first = ranked[0] if ranked else []
    if set(first) & set(qa["evidence"]):
        return "evidence"
    found = []
    for dia in first:
        role, person, slot = sample.get("roles", {}).get(dia, (None, None, None))
        if role is None:
            found.append("anything else")
        elif (person, slot) != (qa["person"], qa["slot"]):
            found.append("another timeline")
        else:
            found.append(MISSES[role])
    return min(found or ["anything else"], key=MISS_ORDER.index)


def first_results(samples: list, results: dict) -> str:
    """The share of questions of each kind whose first result cites each MISS_ORDER item, per method."""
    from common import table

    rows = []
    for method, answers in results.items():
        for kind in KINDS:
            chosen = [(sample, qa) for sample in samples for qa in questions(sample) if qa["kind"] == kind]
            shares = defaultdict(int)
            for sample, qa in chosen:
                shares[first_result(sample, qa, answers.get(qa["id"], []))] += 1
            rows.append([method, kind] + [f"{shares[item] / len(chosen):.2f}" if chosen else "-"
                                          for item in MISS_ORDER])
    return table(["method", "kind"] + list(MISS_ORDER), rows)


def report(results: dict) -> str:
    from common import table

    headers = ["language", "split", "method"] + [f"{kind} {metric}" for kind in KINDS + ("all",)
                                                 for metric in ("hit@1", "R@5")]
    rows = []
    for language in LANGUAGES + ("all",):
        for split in SPLITS + ("all",):
            for method, found in results.items():
                if (language, split, "all") not in found:
                    continue
                cells = [f"{found[(language, split, kind)][metric]:.3f}" if (language, split, kind) in found else "-"
                         for kind in KINDS + ("all",) for metric in ("hit@1", "R@5")]
                rows.append([language, split, method] + cells)
    return table(headers, rows)


def counts(samples: list) -> str:
    kinds = defaultdict(int)
    for sample in samples:
        for qa in sample["qa"]:
            kinds[(sample["split"], qa["kind"])] += 1
    timelines = len({(sample["sample_id"], qa["person"], qa["slot"]) for sample in samples for qa in sample["qa"]})
    parts = [f"{split}: " + ", ".join(f"{kinds[(split, kind)]} {kind}" for kind in KINDS) for split in SPLITS]
    return f"{len(samples)} conversations, {timelines} timelines, questions {'; '.join(parts)}"


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", help="a set written by tools/ku/generate.py (default: generate it)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--conversations", type=int, default=DEFAULT_CONVERSATIONS, help="per language")
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations of each language")
    parser.add_argument("--as-of", action="store_true", help="pass past questions' month to recall as as_of")
    parser.add_argument("--splits", default=",".join(SPLITS), help="the splits to measure, comma-separated")
    parser.add_argument("--per-question", default=None, help="write each question's top 5 per method (JSONL)")
    parser.add_argument("--write", action="store_true", help=f"write the table to RESULTS.md ({SECTION})")
    parser.add_argument("--work", default=None, help="working directory (default: a temporary one)")
    options = parser.parse_args(argv)

    if options.file:
        samples = json.loads(Path(options.file).read_text(encoding="utf-8"))
        origin = f"`{options.file}`"
    else:
        samples = generate(options.seed, options.conversations)
        origin = f"generated (seed {options.seed}, {options.conversations} conversations per language)"
    unknown = set(options.splits.split(",")) - set(SPLITS)
    if unknown:
        parser.error(f"--splits: unknown {', '.join(sorted(unknown))}; expected some of {', '.join(SPLITS)}")
    samples = [sample for sample in samples if sample["split"] in options.splits.split(",")]
    if options.limit:
        samples = [sample for language in LANGUAGES
                   for sample in [one for one in samples if one["lang"] == language][:options.limit]]
    work = Path(options.work or tempfile.mkdtemp(prefix="ku_evaluate_"))
    as_of = options.as_of and recall_accepts_as_of()
    ranked = {BM25: bm25_answers(samples)}
    ranked[MEMCTL], building = memctl_answers(samples, work, as_of)
    results = {method: tally(samples, found) for method, found in ranked.items()}
    if not options.work:
        shutil.rmtree(work, ignore_errors=True)
    as_of_note = ("past questions recalled with as_of = the middle of the month asked about" if as_of else
                  "past questions recalled without as_of (" +
                  ("--as-of not given)" if not options.as_of else "recall's Request takes no as_of)"))
    text = "\n".join([f"Set: {origin}: {counts(samples)}.",
                      f"Every question recalled with now = its question_time; {as_of_note}; "
                      f"ingest + r2g {building:.1f} s in total.", "", report(results), "",
                      "What the first result cites (share of the questions of a kind, both languages and splits):",
                      "", first_results(samples, ranked)])
    print(text)
    if options.per_question:
        _write_per_question(options.per_question, samples, ranked)
    if options.write:
        from common import write_section

        write_section(SECTION, text)
    return 0


def _write_per_question(path: str, samples: list, ranked: dict) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for sample in samples:
            for qa in questions(sample):
                row = {"id": qa["id"], "lang": sample["lang"], "split": sample["split"], "kind": qa["kind"],
                       "question": qa["question"], "evidence": qa["evidence"]}
                row.update({method: found.get(qa["id"], [])[:5] for method, found in ranked.items()})
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    sys.exit(main())
