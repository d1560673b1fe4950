"""Precision and recall of `extract` against a hand-annotated gold set (tests/r2g/gold.yaml).

Elements and how a prediction matches a gold item (one-to-one, greedily, within a sentence):
- entities (name, type), Time excluded (times are scored apart): same type, and the names are equal after
  normalisation or one contains the other at a word boundary ("new apartment" ~ "apartment", "华为公司" ~ "华为")
  — the relaxed "head match" of NER evaluations; `entities_strict` requires equal names.
- times (value, granularity): equal; an unspecified time matches an unspecified time whose expression overlaps.
- roles (role, filler): same role and the fillers match as entity names do (pronouns included).
- predicates (predicate.normalized, negation): equal.
- preferences (polarity, object): same polarity and objects that overlap enough: one contains the other with
  at least 30% of its length, or the word (English) / character (Chinese) F1 of the two is at least 0.5.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memctl.model import normalize_text

ELEMENTS = ("entities", "entities_strict", "times", "roles", "predicates", "preferences")


@dataclass
class Score:
    true_positives: int = 0
    predicted: int = 0
    gold: int = 0

    @property
    def precision(self) -> float:
        return self.true_positives / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.true_positives / self.gold if self.gold else 1.0

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0


@dataclass
class Report:
    scores: dict = field(default_factory=lambda: {element: Score() for element in ELEMENTS})
    by_language: dict = field(default_factory=dict)
    errors: list = field(default_factory=list)  # (sentence id, element, missed gold items, spurious predictions)


def load_gold(path) -> dict:
    import yaml

    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def evaluate(gold: dict) -> Report:
    from memctl.r2g.extract import extract

    report = Report()
    default_ref = gold.get("ref_time")
    for item in gold["sentences"]:
        result = extract(item["text"], ref_time=item.get("ref_time", default_ref))
        language_scores = report.by_language.setdefault(result.lang, {element: Score() for element in ELEMENTS})
        for element, (gold_items, predicted_items, matches) in _elements(item, result).items():
            matched_gold, matched_predicted = _match(gold_items, predicted_items, matches)
            for scores in (report.scores, language_scores):
                score = scores[element]
                score.true_positives += len(matched_gold)
                score.predicted += len(predicted_items)
                score.gold += len(gold_items)
            missed = [g for index, g in enumerate(gold_items) if index not in matched_gold]
            spurious = [p for index, p in enumerate(predicted_items) if index not in matched_predicted]
            if missed or spurious:
                report.errors.append((item["id"], element, missed, spurious))
    return report


def _elements(item: dict, result) -> dict:
    from memctl.r2g.extract import first_person

    gold_entities = [_split_entity(text) for text in item.get("entities") or []]
    # A slot fact's first-person holder (我, I) stands for the speaker, whose node R2G keys by the speaker's name:
    # the gold annotates names in the sentence, and pronouns are never entities there.
    predicted_entities = [(entity.name, entity.type) for entity in result.entities
                          if entity.type != "Time" and not first_person(entity.name, result.lang)]
    gold_times = [_split_time(text) for text in item.get("times") or []]
    predicted_times = [(time.expression, time.value, time.granularity) for time in result.times]
    gold_roles = _unique((role, value) for fact in item.get("facts") or [] for role, values in fact.items()
                         if role.isupper() for value in (values if isinstance(values, list) else [values]))
    predicted_roles = _unique((role, filler.text) for fact in result.facts for role, fillers in fact.roles.items()
                              for filler in fillers)
    gold_predicates = _unique((fact["predicate"], bool(fact.get("negation", False))) for fact in item.get("facts") or [])
    predicted_predicates = _unique((fact.predicate, fact.negation) for fact in result.facts)
    gold_preferences = [(1 if text.strip()[0] == "+" else -1, text.strip()[1:].strip()) for text in item.get("preferences") or []]
    predicted_preferences = [(hit.polarity, hit.object) for hit in result.preferences]
    return {
        "entities": (gold_entities, predicted_entities, _entity_match),
        "entities_strict": (gold_entities, predicted_entities,
                            lambda g, p: g[1] == p[1] and normalize_text(g[0]) == normalize_text(p[0])),
        "times": (gold_times, predicted_times, _time_match),
        "roles": (gold_roles, predicted_roles, lambda g, p: g[0] == p[0] and _names_match(str(g[1]), p[1])),
        "predicates": (gold_predicates, predicted_predicates, lambda g, p: g == p),
        "preferences": (gold_preferences, predicted_preferences,
                        lambda g, p: g[0] == p[0] and objects_match(g[1], p[1])),
    }


def _unique(items) -> list:
    return list(dict.fromkeys(items))


def _split_entity(text: str) -> tuple[str, str]:
    name, _, entity_type = text.rpartition("/")
    return name.strip(), entity_type.strip()


def _split_time(text: str) -> tuple[str, str | None, str]:
    expression, value, granularity = (part.strip() for part in str(text).split("|"))
    return expression, None if value == "-" else value, granularity


def _match(gold_items: list, predicted_items: list, matches) -> tuple[set, set]:
    matched_gold: set[int] = set()
    matched_predicted: set[int] = set()
    for gold_index, gold_item in enumerate(gold_items):
        for predicted_index, predicted_item in enumerate(predicted_items):
            if predicted_index not in matched_predicted and matches(gold_item, predicted_item):
                matched_gold.add(gold_index)
                matched_predicted.add(predicted_index)
                break
    return matched_gold, matched_predicted


def _entity_match(gold: tuple, predicted: tuple) -> bool:
    return gold[1] == predicted[1] and _names_match(gold[0], predicted[0])


def _names_match(gold: str, predicted: str) -> bool:
    gold, predicted = normalize_text(gold), normalize_text(predicted)
    if gold == predicted:
        return True
    shorter, longer = sorted((gold, predicted), key=len)
    if not shorter or shorter not in longer:
        return False
    if re.search(r"[a-z0-9]", shorter):
        return re.search(rf"(?<![a-z0-9]){re.escape(shorter)}(?![a-z0-9])", longer) is not None
    return True


def _time_match(gold: tuple, predicted: tuple) -> bool:
    if gold[2] == "unspecified" or predicted[2] == "unspecified":
        return gold[2] == predicted[2] and (gold[0] in predicted[0] or predicted[0] in gold[0])
    return gold[1] == predicted[1] and gold[2] == predicted[2]


def objects_match(gold: str, predicted: str) -> bool:
    """Preference objects (and the values of tools/r2g_eval/attributes.py's labelled attributes) match when one
    contains the other with at least 30% of its length, or their word (Chinese: character) F1 is at least 0.5."""
    gold, predicted = normalize_text(gold), normalize_text(predicted)
    shorter, longer = sorted((gold, predicted), key=len)
    if shorter and shorter in longer and len(shorter) >= 0.3 * len(longer):
        return True
    if re.search(r"[\u4e00-\u9fff]", gold):
        gold_units, predicted_units = list(gold.replace(" ", "")), list(predicted.replace(" ", ""))
    else:
        gold_units, predicted_units = gold.split(), predicted.split()
    common = sum(min(gold_units.count(unit), predicted_units.count(unit)) for unit in set(gold_units))
    if not common:
        return False
    precision, recall = common / len(predicted_units), common / len(gold_units)
    return 2 * precision * recall / (precision + recall) >= 0.5


def format_report(report: Report) -> str:
    lines = [f"{'element':<18}{'precision':>10}{'recall':>9}{'f1':>7}{'gold':>7}{'predicted':>11}"]
    sections = [("all", report.scores)] + sorted(report.by_language.items())
    for label, scores in sections:
        lines.append(f"-- {label}")
        for element in ELEMENTS:
            score = scores[element]
            lines.append(f"{element:<18}{score.precision:>10.3f}{score.recall:>9.3f}{score.f1:>7.3f}"
                         f"{score.gold:>7}{score.predicted:>11}")
    return "\n".join(lines)
