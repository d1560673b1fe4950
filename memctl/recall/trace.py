"""--trace: what each stage did, as data (in --json) and as a rich tree (on stderr-free stdout).

Data shape: {"total_ms", "variant", "lambda", "fallbacks": [{"name", "reason"}],
"stages": [{"name", "ms", "candidates", "top": [[id, score], …], "notes": {…}}]}.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

TOP_SHOWN = 3


class Trace:
    def __init__(self):
        self.started = time.perf_counter()
        self.stages: list = []
        self.fallbacks: list = []
        self.variant: str | None = None
        self.lambdas: dict = {}

    @contextmanager
    def stage(self, name: str):
        entry = {"name": name, "ms": 0.0, "candidates": 0, "top": [], "notes": {}}
        started = time.perf_counter()
        try:
            yield entry
        finally:
            entry["ms"] = round((time.perf_counter() - started) * 1000, 3)
            self.stages.append(entry)

    def fallback(self, name: str, reason: str) -> None:
        self.fallbacks.append({"name": name, "reason": reason})

    def as_dict(self) -> dict:
        return {"total_ms": round((time.perf_counter() - self.started) * 1000, 3), "variant": self.variant,
                "lambda": {stage: round(value, 4) for stage, value in self.lambdas.items()},
                "fallbacks": list(self.fallbacks), "stages": list(self.stages)}


def top_scores(scored, count: int = TOP_SHOWN) -> list:
    """[[id, score]] of the best `count` of an iterable of (id, score)."""
    best = sorted(scored, key=lambda item: (-item[1], item[0]))[:count]
    return [[key, round(float(score), 4)] for key, score in best]


def render(trace: dict, query: str):
    """A rich Tree of a trace dict."""
    from rich.markup import escape
    from rich.tree import Tree

    lambdas = ", ".join(f"{stage} {value:g}" for stage, value in trace.get("lambda", {}).items())
    root = Tree(f"[bold]recall[/bold] {escape(query)!s}  [dim]{trace['total_ms']:.1f} ms · variant "
                f"{trace.get('variant')} · λ {lambdas}[/dim]")
    if trace["fallbacks"]:
        branch = root.add("[yellow]fallbacks[/yellow]")
        for entry in trace["fallbacks"]:
            branch.add(f"[yellow]{escape(entry['name'])}[/yellow]: {escape(entry['reason'])}")
    for stage in trace["stages"]:
        node = root.add(f"[bold cyan]{escape(stage['name'])}[/bold cyan]  {stage['ms']:.2f} ms · "
                        f"{stage['candidates']} candidates")
        for name, value in stage["notes"].items():
            node.add(f"[dim]{escape(str(name))}[/dim]: {escape(_short(value))}")
        for key, score in stage["top"]:
            node.add(f"{score:.4f}  {escape(str(key))}")
    return root


def _short(value, limit: int = 160) -> str:
    text = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
