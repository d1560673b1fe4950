"""ingest_paths: the entry point `memctl ingest` and the Python API share."""

import os
from contextlib import contextmanager

import pytest

from engine.errors import InputError
from engine.raw import RawStore
from engine.store import Store
from memctl.settings import load
from memctl.ingest.api import ingest_paths

from ingest_testkit import SAMPLES


def test_paths_and_texts_into_an_open_store(store):
    transcript = os.path.join(SAMPLES, "win11-bluetooth.transcript.txt")
    summary = ingest_paths(store, [transcript], ["以后优先中文回答"])
    assert (summary["conversations"], summary["turns"], summary["chunks_new"]) == (2, 39, 2)
    texts = [turn["text"] for turn in RawStore(store).iter_turns(text=True)]
    assert "以后优先中文回答" in texts and any("0x8007045D" in text for text in texts)
    assert ingest_paths(store, [], ["以后优先中文回答"])["chunks_duplicate"] == 1


def test_an_opener_is_called_only_after_every_input_passed(tmp_path):
    opened = []

    @contextmanager
    def opener():
        opened.append(True)
        with Store.open(str(tmp_path / "store")) as store:
            yield store

    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"caf\xe9")
    with pytest.raises(InputError, match="invalid UTF-8 at byte offset 3"):
        ingest_paths(opener, [os.path.join(SAMPLES, "journal.txt"), str(bad)])
    assert opened == [] and not os.path.exists(tmp_path / "store")
    summary = ingest_paths(opener, [str(bad)], errors="replace", format="text")
    assert opened == [True] and summary["turns"] == 1


def test_config_limits_apply(store, tmp_path):
    settings = tmp_path / "memctl.yaml"
    settings.write_text("ingest:\n  max_file_bytes: 10\n")
    config = load(None, str(settings))
    with pytest.raises(InputError, match="above the limit of 10 bytes"):
        ingest_paths(store, [], ["eleven bytes"], config=config)


def test_an_ingest_leaves_the_collector_no_backlog_of_its_objects(store):
    """The ingest's turns, chunks and records are freed while the cyclic collector is paused: ending the pause
    with them alive would start a collection that scans every one of them."""
    import gc

    started = []

    def note(phase, info):
        if phase == "start":
            started.append(info["generation"])

    text = "\n".join(f"A: turn number {index} about the bluetooth switch" for index in range(3000))
    config = load()
    ingest_paths(store, [], ["A: a first ingest imports what ingesting needs"], config=config)
    gc.collect()
    gc.callbacks.append(note)
    try:
        summary = ingest_paths(store, [], [text], config=config)
    finally:
        gc.callbacks.remove(note)
    assert summary["turns"] == 3000 and started == []
