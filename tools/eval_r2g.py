"""Precision and recall of the rule-based R2G extraction on the hand-annotated gold set.

    python tools/eval_r2g.py [--gold tests/r2g/gold.yaml] [--errors] [--element roles]
    python tools/eval_r2g.py --speed ../shared/locomo/locomo-dev.json

--speed reports extraction throughput (split + extract per turn, CPU time of this process, after a warm-up that
loads the lexicons and jieba) on a file in the LoCoMo shape; storage is not involved.

Targets (issue 6): entity and time precision >= 0.85, recall >= 0.75. How predictions are matched to gold
items is documented in memctl/r2g/evaluation.py.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memctl.r2g.evaluation import ELEMENTS, evaluate, format_report, load_gold  # noqa: E402
from memctl.r2g.extract import analyze_turn  # noqa: E402
from memctl.language.timenorm import parse_timestamp  # noqa: E402


def _turns(path: str) -> list[tuple]:
    turns = []
    with open(path, encoding="utf-8") as handle:
        samples = json.load(handle)
    for sample in samples:
        conversation = sample["conversation"]
        for key, session in conversation.items():
            if key.startswith("session_") and isinstance(session, list):
                stamp = parse_timestamp(conversation[f"{key}_date_time"])
                turns.extend((turn["text"], stamp, turn["speaker"]) for turn in session)
    return turns


def speed(path: str) -> str:
    turns = _turns(path)
    for text, stamp, speaker in turns[:20]:
        analyze_turn(text, stamp, speaker=speaker)
    started = time.process_time()
    sentences = sum(len(analyze_turn(text, stamp, speaker=speaker).sentences) for text, stamp, speaker in turns)
    elapsed = time.process_time() - started
    return (f"{Path(path).name}: {len(turns)} turns, {sentences} sentences in {elapsed:.2f} s CPU: "
            f"{len(turns) / elapsed:.0f} turns/s, {sentences / elapsed:.0f} sentences/s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", default=str(ROOT / "tests" / "r2g" / "gold.yaml"))
    parser.add_argument("--errors", action="store_true", help="list every missed and spurious item")
    parser.add_argument("--element", choices=ELEMENTS, help="with --errors: only this element")
    parser.add_argument("--speed", metavar="CONVERSATIONS_JSON", help="measure extraction speed instead")
    arguments = parser.parse_args(argv)
    if arguments.speed:
        print(speed(arguments.speed))
        return 0
    gold = load_gold(arguments.gold)
    report = evaluate(gold)
    print(f"{len(gold['sentences'])} sentences")
    print(format_report(report))
    if arguments.errors:
        for sentence_id, element, missed, spurious in report.errors:
            if arguments.element in (None, element):
                print(f"{sentence_id:<8}{element:<16} missed={missed} spurious={spurious}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
