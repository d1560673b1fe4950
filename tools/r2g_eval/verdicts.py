"""Scores of judged sheets: precision per node type, correct = 1, wrong = 0, partial reported apart (and as ½ in
a second figure). A row without a verdict is counted as unjudged and left out of the precision."""

from __future__ import annotations

from dataclasses import dataclass

from tools.r2g_eval.sheet import JUDGED_TYPES, SHEET_FORMAT, VERDICTS
from tools.r2g_eval.yaml_file import read

SHORT = {"c": "correct", "p": "partial", "w": "wrong"}


class SheetError(ValueError):
    """A sheet that cannot be scored: the message names the file and the item."""


@dataclass
class Tally:
    correct: int = 0
    partial: int = 0
    wrong: int = 0
    unjudged: int = 0

    @property
    def judged(self) -> int:
        return self.correct + self.partial + self.wrong

    @property
    def precision(self) -> float | None:
        return self.correct / self.judged if self.judged else None

    @property
    def with_partial(self) -> float | None:
        return (self.correct + 0.5 * self.partial) / self.judged if self.judged else None

    def as_dict(self) -> dict:
        return {"judged": self.judged, "correct": self.correct, "partial": self.partial, "wrong": self.wrong,
                "unjudged": self.unjudged, "precision": self.precision, "precision_half_partial": self.with_partial}


def load(path: str) -> dict:
    sheet = read(path, SheetError)
    if not isinstance(sheet, dict) or sheet.get("sheet") != SHEET_FORMAT or not isinstance(sheet.get("items"), list):
        raise SheetError(f"{path}: not a judging sheet (expected a mapping with sheet: {SHEET_FORMAT!r} and items)")
    return sheet


def verdict_of(item, path: str, position: int) -> str | None:
    """The item's verdict in full ("c", "p", "w" are accepted for correct, partial, wrong); None: not judged."""
    if not isinstance(item, dict) or item.get("type") not in JUDGED_TYPES:
        raise SheetError(f"{path}: item {position + 1} is not a sheet row (a mapping with a type of "
                         f"{', '.join(JUDGED_TYPES)})")
    verdict = str(item.get("verdict") or "").strip().lower()
    if not verdict:
        return None
    verdict = SHORT.get(verdict, verdict)
    if verdict not in VERDICTS:
        raise SheetError(f"{path}: item {position + 1} ({item.get('id')}): verdict {item.get('verdict')!r} is not "
                         f"one of {', '.join(VERDICTS)} (or c, p, w)")
    return verdict


def score(paths: list) -> dict:
    """Tally per node type over every sheet in `paths`."""
    tallies = {node_type: Tally() for node_type in JUDGED_TYPES}
    for path in paths:
        for position, item in enumerate(load(path)["items"]):
            verdict = verdict_of(item, path, position)
            tally = tallies[item["type"]]
            if verdict is None:
                tally.unjudged += 1
            else:
                setattr(tally, verdict, getattr(tally, verdict) + 1)
    return tallies


def report(tallies: dict) -> str:
    lines = [f"{'type':<12}{'judged':>7}{'correct':>9}{'partial':>9}{'wrong':>7}{'precision':>11}{'+½ partial':>12}"
             f"{'unjudged':>10}"]
    for node_type, tally in tallies.items():
        lines.append(f"{node_type:<12}{tally.judged:>7}{tally.correct:>9}{tally.partial:>9}{tally.wrong:>7}"
                     f"{_share(tally.precision):>11}{_share(tally.with_partial):>12}{tally.unjudged:>10}")
    return "\n".join(lines)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
