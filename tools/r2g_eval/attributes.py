"""The labelled attribute set (tests/r2g/attributes_dev.yaml, attributes_heldout.yaml) scored against the slot facts
R2G extracts.

A file is YAML: `items:`, each with id, source ("<sample id> <turn id>" of LoCoMo or MemDaily dev), speaker, date
(the session's date as the data writes it), text (one real sentence) and `attributes`: "none" when the sentence
states no attribute, else a list of {holder, slot, value, polarity?} (polarity stated unless it says negated or
ended). The labelling conventions are in the files' headers.

Each item is analysed as `memctl r2g` analyses a turn (memctl.r2g.extract.analyze_turn with its speaker and date).
A labelled attribute is found when one slot fact of its item has the same holder and slot (normalised: NFKC,
case-folded), the same polarity, and a value that matches the label's as preference objects match in the gold
set (memctl/r2g/evaluation.py: one contains the other with at least 30% of its length, or a word (English) /
character (Chinese) F1 of at least 0.5); each slot fact is used once. Reported: the share of labelled attributes
found ("recall"), the share of "none" items that give no slot fact ("clean negatives"), and the slot facts that
match no label ("spurious", on items with attributes and on negatives).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memctl.model import normalize_text
from tools.r2g_eval.yaml_file import read

POLARITIES = ("stated", "negated", "ended")


class AttributeFileError(ValueError):
    """A labelled file that cannot be scored: the message names the file and the item."""


@dataclass
class Tally:
    attributes: int = 0
    found: int = 0
    negatives: int = 0
    clean_negatives: int = 0
    spurious: int = 0

    @property
    def recall(self) -> float | None:
        return self.found / self.attributes if self.attributes else None

    @property
    def clean_share(self) -> float | None:
        return self.clean_negatives / self.negatives if self.negatives else None

    def add(self, other: "Tally") -> None:
        for name in ("attributes", "found", "negatives", "clean_negatives", "spurious"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict:
        return {"attributes": self.attributes, "found": self.found, "recall": self.recall,
                "negatives": self.negatives, "clean_negatives": self.clean_negatives,
                "clean_share": self.clean_share, "spurious": self.spurious}


@dataclass
class Result:
    by_language: dict = field(default_factory=dict)  # lang → Tally
    misses: list = field(default_factory=list)  # (item id, text, label, extracted slot facts)
    spurious: list = field(default_factory=list)  # (item id, text, slot fact)

    @property
    def total(self) -> Tally:
        total = Tally()
        for tally in self.by_language.values():
            total.add(tally)
        return total

    def as_dict(self) -> dict:
        return {"all": self.total.as_dict(),
                **{lang: tally.as_dict() for lang, tally in sorted(self.by_language.items())}}


def load(path: str) -> list:
    data = read(path, AttributeFileError)
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise AttributeFileError(f"{path}: expected a mapping with `items:` (see tools/r2g_eval/attributes.py)")
    for position, item in enumerate(data["items"]):
        _check(path, position, item)
    return data["items"]


def _check(path: str, position: int, item) -> None:
    where = f"{path}: item {position + 1}"
    if not isinstance(item, dict) or not isinstance(item.get("text"), str) or "attributes" not in item:
        raise AttributeFileError(f"{where}: expected a mapping with id, text, speaker, date and attributes")
    labels = item["attributes"]
    if labels == "none":
        return
    if not isinstance(labels, list) or not labels:
        raise AttributeFileError(f"{where} ({item.get('id')}): attributes must be \"none\" or a list")
    for label in labels:
        if not isinstance(label, dict) or not all(isinstance(label.get(key), str) and label[key]
                                                  for key in ("holder", "slot", "value")):
            raise AttributeFileError(f"{where} ({item.get('id')}): each attribute needs holder, slot and value")
        if label.get("polarity", "stated") not in POLARITIES:
            raise AttributeFileError(f"{where} ({item.get('id')}): polarity must be one of {', '.join(POLARITIES)}")


def extracted(item: dict) -> list[tuple]:
    """(holder, slot, value, polarity) of every slot fact R2G extracts from the item's text."""
    from memctl.language.timenorm import parse_timestamp
    from memctl.r2g.extract import analyze_turn

    try:
        stamp = parse_timestamp(item["date"]) if item.get("date") else None
    except ValueError as error:
        raise AttributeFileError(f"item {item.get('id')}: {error} (give the session date as the data writes it)") \
            from None
    analysis = analyze_turn(item["text"], stamp, speaker=item.get("speaker"))
    return [(slot.subject, slot.slot, slot.value, slot.polarity)
            for _, extraction in analysis.sentences for slot in extraction.slots]


def evaluate_files(paths: list) -> Result:
    from memctl.r2g.lang import detect_language

    result = Result()
    for path in paths:
        for item in load(path):
            tally = result.by_language.setdefault(detect_language(item["text"]), Tally())
            try:
                facts = extracted(item)
            except AttributeFileError as error:
                raise AttributeFileError(f"{path}: {error}") from None
            _score_item(item, facts, tally, result)
    return result


def _score_item(item: dict, facts: list, tally: Tally, result: Result) -> None:
    if item["attributes"] == "none":
        tally.negatives += 1
        tally.clean_negatives += not facts
        tally.spurious += len(facts)
        result.spurious.extend((item.get("id"), item["text"], fact) for fact in facts)
        return
    unused = list(facts)
    for label in item["attributes"]:
        tally.attributes += 1
        match = next((fact for fact in unused if _matches(label, fact)), None)
        if match is None:
            result.misses.append((item.get("id"), item["text"], label, facts))
        else:
            tally.found += 1
            unused.remove(match)
    tally.spurious += len(unused)
    result.spurious.extend((item.get("id"), item["text"], fact) for fact in unused)


def _matches(label: dict, fact: tuple) -> bool:
    from memctl.r2g.evaluation import objects_match

    holder, slot, value, polarity = fact
    return (normalize_text(label["holder"]) == normalize_text(holder)
            and normalize_text(label["slot"]) == normalize_text(slot)
            and label.get("polarity", "stated") == polarity and objects_match(label["value"], value))


def report(result: Result, errors: bool = False) -> str:
    lines = [f"{'language':<10}{'attributes':>11}{'found':>7}{'recall':>8}{'negatives':>11}{'clean':>7}"
             f"{'clean share':>13}{'spurious':>10}"]
    rows = sorted(result.by_language.items()) + [("all", result.total)]
    for lang, tally in rows:
        lines.append(f"{lang:<10}{tally.attributes:>11}{tally.found:>7}{_share(tally.recall):>8}{tally.negatives:>11}"
                     f"{tally.clean_negatives:>7}{_share(tally.clean_share):>13}{tally.spurious:>10}")
    if errors:
        for item_id, text, label, facts in result.misses:
            lines.append(f"missed    {item_id}: {text}\n          label {label}\n          got   {facts}")
        for item_id, text, fact in result.spurious:
            lines.append(f"spurious  {item_id}: {text}\n          got   {fact}")
    return "\n".join(lines)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
