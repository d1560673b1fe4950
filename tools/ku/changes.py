"""Change detection scored on a labelled set (issue 19's second proof; tools/ku/data/changes.yaml).

    python tools/ku/changes.py FILE [--predictor none|slots|MODULE:FUNCTION] [--errors] [--json]

A file is YAML: `items:`, each with id, lang (en | zh), source, speaker, date (as the data writes it), text,
kind (set | change | end | add | stop | none), split (dev | dev2 | heldout) and, unless kind is none, holder, slot (a
name or a list of names that fit equally), value (a string, a list of equally good strings, or null: any) and
optionally polarity (stated | negated | ended; default "ended" for end and stop, else "stated") and `also`: other
facts the sentence states, each a mapping of the same keys, whose predictions are neither right nor wrong (left
out of the counts). The labelling conventions are in the data file's header.

A predictor is a function (text, speaker, date) → an iterable of predictions, each a `Prediction` or a tuple
(holder, slot, value, kind[, polarity]); an empty iterable, or only predictions of kind "none", says the
sentence changes nothing. Built in: `none` (the trivial baseline: nothing is ever a change) and `slots` (the
slot facts `memctl r2g` extracts today, with the kind they carry, "set" when they carry none).
`--predictor package.module:function` imports one (the repository root is on the import path).

Matching: a prediction is right when its kind is the label's, its holder equals the label's (NFKC, case-folded),
its slot is one of the label's, its polarity is the label's and its value matches one of the label's as
preference objects match in the gold set (memctl/r2g/evaluation.py objects_match: one contains the other with
at least 30% of its length, or a word / character F1 ≥ 0.5); a null label value takes any value. Per kind K:
precision = right predictions of kind K / predictions of kind K, recall = right predictions of kind K / items
labelled K; only one prediction per item can be right, every other one counts against its kind's precision.
For "none": the items given no prediction, against the items labelled none. "all" is the micro average of the
five fact kinds, "changes" of change, end, add and stop. Reported per split and language.

--errors lists the dev and dev2 items a predictor got wrong; held-out items are never listed, so that rules are
not written from them. dev2 (written after the rules were tuned on dev, by other phrasings) was first measured
untouched, as a second held-out figure; rules are tuned on dev and dev2 since.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, NamedTuple

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FACT_KINDS = ("set", "change", "end", "add", "stop")
CHANGE_KINDS = ("change", "end", "add", "stop")
KINDS = FACT_KINDS + ("none",)
SPLITS = ("dev", "dev2", "heldout")
LANGUAGES = ("en", "zh")
POLARITIES = ("stated", "negated", "ended")
ROWS = KINDS + ("changes", "all")


class ChangeFileError(ValueError):
    """A labelled file that cannot be scored: the message names the file and the item."""


class Prediction(NamedTuple):
    holder: str
    slot: str
    value: str
    kind: str
    polarity: str | None = None


@dataclass
class Counts:
    labelled: int = 0
    predicted: int = 0
    right: int = 0

    @property
    def precision(self) -> float | None:
        return self.right / self.predicted if self.predicted else None

    @property
    def recall(self) -> float | None:
        return self.right / self.labelled if self.labelled else None

    def add(self, other: "Counts") -> None:
        self.labelled += other.labelled
        self.predicted += other.predicted
        self.right += other.right

    def as_dict(self) -> dict:
        return {"labelled": self.labelled, "predicted": self.predicted, "right": self.right,
                "precision": self.precision, "recall": self.recall}


@dataclass
class Score:
    counts: dict = field(default_factory=dict)  # (split, lang) → {kind: Counts}
    errors: list = field(default_factory=list)  # (item, predictions) of dev and dev2 items scored wrong

    def table(self, split: str, lang: str | None = None) -> dict:
        """{row: Counts} of one split, one language or both; rows "changes" and "all" summed from the kinds."""
        out = {kind: Counts() for kind in KINDS}
        for (item_split, item_lang), by_kind in self.counts.items():
            if item_split == split and lang in (None, item_lang):
                for kind, counts in by_kind.items():
                    out[kind].add(counts)
        for row, kinds in (("changes", CHANGE_KINDS), ("all", FACT_KINDS)):
            out[row] = Counts()
            for kind in kinds:
                out[row].add(out[kind])
        return out

    def as_dict(self) -> dict:
        return {split: {lang or "all": {row: counts.as_dict() for row, counts in self.table(split, lang).items()}
                        for lang in LANGUAGES + (None,)} for split in SPLITS}


def load(path: str) -> list:
    from tools.r2g_eval.yaml_file import read

    data = read(path, ChangeFileError)
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise ChangeFileError(f"{path}: expected a mapping with `items:` (see tools/ku/changes.py)")
    for position, item in enumerate(data["items"]):
        _check(f"{path}: item {position + 1}", item)
    return data["items"]


def _check(where: str, item) -> None:
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        raise ChangeFileError(f"{where}: expected a mapping with id, lang, speaker, date, text, kind and split")
    where = f"{where} ({item.get('id')})"
    for key, allowed in (("kind", KINDS), ("split", SPLITS), ("lang", LANGUAGES),
                         ("polarity", POLARITIES + (None,))):
        if item.get(key) not in allowed:
            raise ChangeFileError(f"{where}: {key} is {item.get(key)!r}, expected one of "
                                  f"{', '.join(str(value) for value in allowed if value)}")
    if item["kind"] != "none":
        _check_fact(where, item)
    if not isinstance(item.get("also", []), list):
        raise ChangeFileError(f"{where}: also must be a list of facts")
    for fact in item.get("also", []):
        if not isinstance(fact, dict) or fact.get("kind") not in FACT_KINDS:
            raise ChangeFileError(f"{where}: each fact of `also` needs a kind among {', '.join(FACT_KINDS)}")
        _check_fact(f"{where}, also", fact)


def _check_fact(where: str, fact: dict) -> None:
    if not isinstance(fact.get("holder"), str) or not fact["holder"]:
        raise ChangeFileError(f"{where}: a {fact['kind']} fact needs a holder")
    if not _names(fact.get("slot")):
        raise ChangeFileError(f"{where}: slot must be a name or a list of names")
    if "value" not in fact or (fact["value"] is not None and not _names(fact["value"])):
        raise ChangeFileError(f"{where}: value must be a string, a list of strings or null (any value)")


def _names(value) -> list:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(name, str) and name for name in names):
        return []
    return names


def default_polarity(kind: str) -> str:
    return "ended" if kind in ("end", "stop") else "stated"


def score(items: list, predict: Callable[[str, str, str], Iterable]) -> Score:
    result = Score()
    for item in items:
        predictions = [Prediction(*prediction) for prediction in predict(item["text"], item["speaker"], item["date"])]
        predictions = [prediction for prediction in predictions if prediction.kind != "none"
                       and not any(matches(fact, prediction) for fact in item.get("also", ()))]
        by_kind = result.counts.setdefault((item["split"], item["lang"]), {kind: Counts() for kind in KINDS})
        by_kind[item["kind"]].labelled += 1
        for prediction in predictions:
            by_kind.setdefault(prediction.kind, Counts()).predicted += 1
        if not predictions:
            by_kind["none"].predicted += 1
        right = _right(item, predictions)
        by_kind[item["kind"]].right += right
        surplus = len(predictions) - (right and item["kind"] != "none")
        if item["split"] != "heldout" and (not right or surplus):
            result.errors.append((item, predictions))
    return result


def _right(item: dict, predictions: list) -> bool:
    if item["kind"] == "none":
        return not predictions
    return any(matches(item, prediction) for prediction in predictions)


def matches(item: dict, prediction: Prediction) -> bool:
    from memctl.model import normalize_text
    from memctl.r2g.evaluation import objects_match

    polarity = item.get("polarity") or default_polarity(item["kind"])
    values = _names(item["value"]) if item["value"] is not None else None
    return (prediction.kind == item["kind"]
            and (prediction.polarity or default_polarity(prediction.kind)) == polarity
            and normalize_text(prediction.holder or "") == normalize_text(item["holder"])
            and prediction.slot in _names(item["slot"])
            and (values is None or any(objects_match(value, prediction.value or "") for value in values)))


def predict_none(text: str, speaker: str, date: str) -> list:
    """The trivial baseline: no sentence changes anything."""
    return []


def predict_slots(text: str, speaker: str, date: str) -> list:
    """The slot facts `memctl r2g` extracts from the sentence, each with the kind it carries ("set" when none)."""
    from memctl.language.timenorm import parse_timestamp
    from memctl.r2g.extract import analyze_turn

    analysis = analyze_turn(text, parse_timestamp(date), speaker=speaker)
    return [Prediction(slot.subject, slot.slot, slot.value, getattr(slot, "kind", None) or "set", slot.polarity)
            for _, extraction in analysis.sentences for slot in extraction.slots]


PREDICTORS = {"none": predict_none, "slots": predict_slots}


def predictor(name: str) -> Callable:
    if name in PREDICTORS:
        return PREDICTORS[name]
    module_name, _, function_name = name.partition(":")
    if not function_name:
        raise ChangeFileError(f"--predictor {name}: expected none, slots or MODULE:FUNCTION")
    try:
        return getattr(importlib.import_module(module_name), function_name)
    except (ImportError, AttributeError) as error:
        raise ChangeFileError(f"--predictor {name}: cannot load it ({error})") from None


def report(result: Score, errors: bool = False) -> str:
    header = f"{'':<9}" + "".join(f"| {split:<37}" for split in SPLITS)
    columns = f"{'kind':<9}" + f"| {'labelled':>8}{'predicted':>10}{'right':>6}{'P':>6}{'R':>6} " * len(SPLITS)
    lines = []
    for lang in LANGUAGES + (None,):
        lines += [f"-- {lang or 'all languages'}", header, columns]
        tables = [result.table(split, lang) for split in SPLITS]
        for row in ROWS:
            cells = "".join(f"| {table[row].labelled:>8}{table[row].predicted:>10}{table[row].right:>6}"
                            f"{_share(table[row].precision):>6}{_share(table[row].recall):>6} " for table in tables)
            lines.append(f"{row:<9}{cells}")
    if errors:
        for item, predictions in result.errors:
            label = {key: item.get(key) for key in ("holder", "slot", "value", "kind", "polarity") if key in item}
            lines.append(f"wrong  {item['id']}: {item['text']}\n       label {label}\n       got   "
                         f"{[tuple(prediction) for prediction in predictions]}")
    return "\n".join(lines)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--predictor", default="none", help="none | slots | MODULE:FUNCTION (default: none)")
    parser.add_argument("--errors", action="store_true", help="list the dev and dev2 items scored wrong")
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args(argv)
    try:
        result = score(load(arguments.file), predictor(arguments.predictor))
    except ChangeFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(result.as_dict(), indent=1) if arguments.json else report(result, arguments.errors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
