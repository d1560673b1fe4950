"""Stores for the recall tests: conversations through the real ingest + r2g path, or graphs built by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memctl.ingest.api import ingest_paths
from memctl.memory import Memory
from memctl.recall.pipeline import Recaller, Request

TENANT = "default"
SAMPLES = Path(__file__).resolve().parents[2] / "samples"

# Two sessions between Ann and Bob. The answer to Bob's question is Ann's reply, which shares no word with it.
DIALOGUE = [
    {"id": "t1", "ts": "2024-03-01T09:00:00", "role": "Bob", "content": "Which city did you move to last spring?"},
    {"id": "t2", "ts": "2024-03-01T09:01:00", "role": "Ann", "content": "Lisbon, close to the river and the old tram."},
    {"id": "t3", "ts": "2024-03-01T09:02:00", "role": "Bob", "content": "My sister keeps bees in her garden."},
    {"id": "t4", "ts": "2024-03-01T09:03:00", "role": "Bob", "content": "Honey from her bees tastes of lavender."},
    {"id": "t5", "ts": "2024-06-10T18:00:00", "role": "Ann", "content": "The printer shows error 0x8007045D again."},
    {"id": "t6", "ts": "2024-06-10T18:01:00", "role": "Bob", "content": "Restart the spooler service and retry."},
    {"id": "t7", "ts": "2024-06-10T18:02:00", "role": "Ann",
     "content": "I adopted a cat called Miso from the shelter."},
]


def open_memory(home, writable: bool = False) -> Memory:
    return Memory.open(home=str(home), tenant=TENANT, writable=writable, holder="recall test")


def write_jsonl(path: Path, turns: list) -> Path:
    path.write_text("".join(json.dumps(turn, ensure_ascii=False) + "\n" for turn in turns), encoding="utf-8")
    return path


def build(home, *paths, convert: bool = True, config_file: str | None = None) -> None:
    """Ingest `paths` into the store at `home`, then (unless told not to) run r2g."""
    with Memory.open(home=str(home), tenant=TENANT, config_file=config_file, writable=True,
                     holder="recall test") as memory:
        ingest_paths(memory.store, [str(path) for path in paths], config=memory.config)
        if convert:
            memory.r2g()


def samples_store(tmp_path_factory) -> Path:
    """A store of samples/, ingested and converted: for module-scoped fixtures."""
    home = tmp_path_factory.mktemp("samples") / "home"
    build(home, SAMPLES)
    return home


@pytest.fixture(scope="module")
def samples_home(tmp_path_factory) -> Path:
    """The samples store of a test module (import this fixture with `recall_command`)."""
    return samples_store(tmp_path_factory)


@pytest.fixture(name="recall")
def recall_command(cli, samples_home):
    """`memctl recall ARGS…` on the samples store, through CliRunner (the fixture `recall`)."""
    return lambda *arguments, input=None: cli("--home", str(samples_home), "recall", *arguments, input=input)


def dialogue_store(tmp_path: Path, convert: bool = True) -> Path:
    home = tmp_path / "home"
    build(home, write_jsonl(tmp_path / "dialogue.jsonl", DIALOGUE), convert=convert)
    return home


def recall(home, q: str, config_file: str | None = None, **options) -> dict:
    with Memory.open(home=str(home), tenant=TENANT, config_file=config_file, holder="recall test") as memory:
        return Recaller(memory.store, memory.config, memory.tenant).recall(Request(q=q, **options))


def sources(answer: dict) -> list:
    """Per result, the source ids it cites."""
    return [[citation["source_id"] for citation in result["citations"]] for result in answer["results"]]


def first_sources(answer: dict) -> list:
    return [cited[0] if cited else None for cited in sources(answer)]


def fallbacks(answer: dict) -> list:
    return [entry["name"] for entry in answer["trace"]["fallbacks"]]


def config_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "override.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)
