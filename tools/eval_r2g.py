"""R2G measured: the gold set, extraction speed, judging sheets of real conversations, labelled attributes.

    python tools/eval_r2g.py [--gold tests/r2g/gold.yaml] [--errors] [--element roles]
    python tools/eval_r2g.py --speed ../shared/locomo/locomo-dev.json
    python tools/eval_r2g.py --sample 60 --seed 1 FILE [--types Fact,Entity] [--split tune|heldout]
                             [--conversations conv-26,conv-30] [--limit N] [--out SHEET.yaml]
    python tools/eval_r2g.py --score SHEET.yaml [SHEET.yaml ...] [--json]
    python tools/eval_r2g.py --attributes tests/r2g/attributes_dev.yaml [--errors] [--json]

Gold set (default): precision and recall of `extract` on hand-annotated sentences; how predictions match gold
items is documented in memctl/r2g/evaluation.py (issue 6 targets: entity and time precision >= 0.85, recall
>= 0.75). --speed: extraction throughput (split + extract per turn, CPU time of this process, after a warm-up
that loads the lexicons and jieba) on a file in the LoCoMo shape; storage is not involved.

--sample N --seed S FILE builds the graph of FILE (any input `memctl ingest` takes) in a temporary store as
`memctl ingest` + `memctl r2g` do, draws N nodes of each type in --types (Fact, Entity, Preference; all of a
type when it has fewer; "Fact=60,Entity=40,Preference=30" gives a count per type) and writes a YAML sheet: one
item per node with its title, predicate or slot, its arguments (role → the entity it points to, with its
type), the sentence it was drawn from, the whole source turn, its speaker, date, conversation, session and turn
id (source), how many mentions were merged into it, and an empty verdict and note. Each type is sampled with
random.Random(f"{S}:{type}") from its nodes in key order. --split, --conversations and --limit pick
conversations from a file in the LoCoMo shape (MemDaily holds 591) before it is ingested.

Split (tools/r2g_eval/split.py): LoCoMo dev conv-26, conv-30 and the MemDaily dev conversations at even
positions of the file (0-based) are "tune" data; conv-41, conv-42, conv-43 and the odd MemDaily positions are
"heldout": they are judged to measure rules and never read while writing them.

--score reads judged sheets and prints, per type, the count judged and precision = correct / judged, partials
reported apart and as ½ in a second figure (unjudged rows are counted and left out).

--attributes scores a labelled attribute set (tests/r2g/attributes_*.yaml, see tools/r2g_eval/attributes.py):
the share of labelled attribute statements that come out as slot facts with the right holder, slot and value,
and the share of sentences labelled "none" that give no slot fact.

JUDGING RULES. A row is judged against its source turn (the sentence shown is the one it was drawn from); the
turn's speaker is "I"/"我", and nothing outside the turn is used except who the speakers are. A node merged
from several mentions is judged on the mention shown. Verdicts: correct, partial, wrong (c, p, w).

Fact (an event or state, or a slot fact: subject, slot, value)
  correct  all of: (1) the turn asserts it: a statement, not a question, greeting, thanks, wish to the other
           person, phatic phrase ("take care", "I bet", "way to go") or idiom read literally; a hypothetical or
           plan only with the modality that says so; (2) the predicate has content: it names what happened or
           holds; a light verb or copula (be, have, do, get, make, 是, 有) only together with the complement that
           carries the meaning (has_生日 with the birthday as value); (3) the holder is right: the AGENT, or a
           slot fact's subject, is who did it or of whom it is said; a vocative (the person addressed) is never
           an agent, nor is an inanimate thing the agent of an act; "my aunt" is the speaker's aunt, not the
           speaker; (4) every argument shown has the right role and points to the right entity (a filler may be
           shorter than its phrase when it still names the same thing); (5) negation, modality, polarity and a
           time shown are as the turn says; (6) nothing the statement hinges on is missing: the object of a
           transitive event the sentence states, a slot fact's value. A slot fact's slot is right when it is
           the attribute stated: a lexicon slot that names it, or a free slot named by the turn's own word.
  partial  the gist is right (the predicate, or subject + slot, names what the turn says) and at least one
           argument is right, but (5) or (6) fails or a filler is cut or over-long. A wrong holder or a wrong
           role is never partial.
  wrong    anything else: no content, not asserted, a wrong holder or role, a misread verb or slot, a value
           that is not the one stated.
Entity
  correct  it is a name (person, place, organisation, product, title of a work, named event), a specific person
           named through a holder ("Caroline's mom", 用户的婶婶), a date or time the turn states whose value, when
           given, is right for the turn's date, or a number-like value (a phone number, an e-mail address, an
           amount, a measurement); and its type is right: Person for people (a pet's name is Other), Location
           for places, Organization for organisations, Product for products, Time for dates and times, Object
           or Other for named works, events and number-like values.
  partial  a name of the right type whose span is cut or over-long ("Nicole" for "Becoming Nicole").
  wrong    anything else: common nouns (way, balance, pottery class), adjectives, verbs, interjections,
           pronouns, occupations and origins as Persons (厨师, 沈阳人), vague time words (now, lately), a time
           with a wrong value, a name of the wrong type.
Preference
  correct  the turn states that holder's taste (likes, dislikes), habit, wish or explicit instruction to the
           assistant, with the polarity shown, and the object names what is liked, done or wanted (it may be
           shorter than the clause when it keeps the gist). Advice or orders to another person in a chat
           between people ("Never give up!", "Don't forget to …") are not instructions.
  partial  a real preference of that holder with that polarity whose object is cut so that a part it needs is
           lost, or carries unrelated words.
  wrong    anything else: no preference stated, another person's taste, the opposite polarity, a question, an
           object that names nothing ("it", "those", "to"), a reaction to or compliment on something just shown
           or told ("I love how it shows …", "I love the theme", "I love it!"): that is no standing taste.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memctl.language.timenorm import parse_timestamp  # noqa: E402
from memctl.r2g.evaluation import ELEMENTS, evaluate, format_report, load_gold  # noqa: E402
from memctl.r2g.extract import analyze_turn  # noqa: E402
from tools.r2g_eval.sheet import JUDGED_TYPES  # noqa: E402
from tools.r2g_eval.split import SPLITS  # noqa: E402

USAGE_ERROR = 2


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


def counts_of(text: str, types: list) -> dict:
    """--sample's value: one count for every type in `types`, or TYPE=N pairs."""
    if "=" not in text:
        return {node_type: _count(text) for node_type in types}
    counts = {}
    for pair in text.split(","):
        node_type, _, number = pair.partition("=")
        if node_type.strip() not in JUDGED_TYPES:
            raise ValueError(f"--sample: {node_type.strip()!r} is not one of {', '.join(JUDGED_TYPES)}")
        counts[node_type.strip()] = _count(number)
    return counts


def _count(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"--sample takes a count of at least 1 (or TYPE=N pairs), not {text!r}")
    return int(text)


def sample_sheet(arguments) -> None:
    from tools.r2g_eval.sheet import build_graph, draw, header, write

    types = [name.strip() for name in arguments.types.split(",") if name.strip()]
    unknown = [name for name in types if name not in JUDGED_TYPES]
    if unknown:
        raise ValueError(f"--types: {', '.join(unknown)} is not one of {', '.join(JUDGED_TYPES)}")
    counts = counts_of(arguments.sample, types)
    with tempfile.TemporaryDirectory(prefix="eval_r2g_") as work:
        source, picked = _input(arguments, Path(work))
        build_graph([source], str(Path(work) / "home"))
        rows, population = draw(str(Path(work) / "home"), counts, arguments.seed)
    described = {"input": Path(arguments.file).name, "split": arguments.split, "seed": arguments.seed,
                 "conversations": picked, "command": "python tools/eval_r2g.py " + " ".join(sys.argv[1:])}
    write(arguments.out, header(described, population, rows), rows)


def _input(arguments, work: Path) -> tuple[str, object]:
    """The file to ingest, and the conversations picked from it (their count when there are many)."""
    if arguments.split is None and arguments.conversations is None and arguments.limit is None:
        return arguments.file, "all"
    from tools.r2g_eval.split import select

    try:
        with open(arguments.file, encoding="utf-8") as handle:
            samples = json.load(handle)
    except (OSError, ValueError) as error:
        raise ValueError(f"{arguments.file}: --split, --conversations and --limit need a JSON file in the LoCoMo "
                         f"shape ({error})") from None
    if not isinstance(samples, list) or not all(isinstance(sample, dict) and "sample_id" in sample
                                                for sample in samples):
        raise ValueError(f"{arguments.file}: --split, --conversations and --limit need a JSON list of samples "
                         f"with sample_id (the LoCoMo shape)")
    names = None if arguments.conversations is None else [name.strip() for name in
                                                          arguments.conversations.split(",") if name.strip()]
    chosen = select(samples, arguments.split, names, arguments.limit)
    if not chosen:
        raise ValueError(f"{arguments.file}: no conversation is left to sample from")
    path = work / Path(arguments.file).name
    path.write_text(json.dumps(chosen, ensure_ascii=False), encoding="utf-8")
    ids = [sample["sample_id"] for sample in chosen]
    return str(path), ids if len(ids) <= 10 else f"{len(ids)} conversations, {ids[0]} … {ids[-1]}"


def score_sheets(arguments) -> None:
    from tools.r2g_eval.verdicts import report, score

    tallies = score(arguments.score)
    if arguments.json:
        print(json.dumps({node_type: tally.as_dict() for node_type, tally in tallies.items()}, indent=2))
    else:
        print(report(tallies))


def score_attributes(arguments) -> None:
    from tools.r2g_eval.attributes import evaluate_files, report

    result = evaluate_files(arguments.attributes)
    print(json.dumps(result.as_dict(), indent=2, ensure_ascii=False) if arguments.json
          else report(result, errors=arguments.errors))


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", metavar="FILE", help="the conversation file --sample builds a graph of")
    parser.add_argument("--gold", default=str(ROOT / "tests" / "r2g" / "gold.yaml"))
    parser.add_argument("--errors", action="store_true", help="list every missed and spurious item")
    parser.add_argument("--element", choices=ELEMENTS, help="with --errors: only this element")
    parser.add_argument("--speed", metavar="CONVERSATIONS_JSON", help="measure extraction speed instead")
    parser.add_argument("--sample", metavar="N", help="draw a judging sheet of N nodes per type (or TYPE=N,…)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the sample (default 1)")
    parser.add_argument("--types", default=",".join(JUDGED_TYPES), help="node types to sample, comma-separated")
    parser.add_argument("--split", choices=SPLITS, help="only the conversations of this half of the dev data")
    parser.add_argument("--conversations", metavar="A,B", help="only these conversations (sample ids)")
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N conversations (after the others)")
    parser.add_argument("--out", metavar="SHEET", help="write the sheet here (default: standard output)")
    parser.add_argument("--score", nargs="+", metavar="SHEET", help="score judged sheets")
    parser.add_argument("--attributes", nargs="+", metavar="FILE", help="score labelled attribute sets")
    parser.add_argument("--json", action="store_true", help="with --score or --attributes: JSON output")
    return parser


def main(argv=None) -> int:
    from engine.errors import InputError

    arguments = parser().parse_args(argv)
    try:
        if arguments.speed:
            print(speed(arguments.speed))
        elif arguments.sample is not None:
            if arguments.file is None:
                raise ValueError("--sample needs the conversation FILE to build a graph of")
            if arguments.limit is not None and arguments.limit < 1:
                raise ValueError("--limit takes a count of at least 1")
            sample_sheet(arguments)
        elif arguments.score:
            score_sheets(arguments)
        elif arguments.attributes:
            score_attributes(arguments)
        else:
            gold = load_gold(arguments.gold)
            report = evaluate(gold)
            print(f"{len(gold['sentences'])} sentences")
            print(format_report(report))
            if arguments.errors:
                for sentence_id, element, missed, spurious in report.errors:
                    if arguments.element in (None, element):
                        print(f"{sentence_id:<8}{element:<16} missed={missed} spurious={spurious}")
    except (ValueError, InputError) as error:
        print(f"eval_r2g: {error}", file=sys.stderr)
        return USAGE_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
