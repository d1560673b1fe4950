"""Dataset check (opt-in): the evaluation files parse and ingest as tools/eval_locomo.py relies on.

    python tools/check_datasets.py --locomo ../shared/locomo/locomo-dev.json \
                                   --memdaily ../shared/locomo/zh-memdaily-dev.json

The files are not in the repository (LoCoMo's licence allows evaluation only; see shared/locomo/README.md), so
the test suite checks the LoCoMo and MemDaily formats on small inputs of its own (tests/ingest/test_formats.py)
and this script checks the real dev files: conversation and turn counts, times, sessions, image captions as
attachments, MemDaily's place and time, and every stored turn's span reading back as its text. Prints one line
per check; exit 0 when all hold, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.raw import RawStore  # noqa: E402
from engine.store import Store  # noqa: E402
from memctl.ingest.decode import decode  # noqa: E402
from memctl.ingest.detect import parse_document  # noqa: E402
from memctl.ingest.pipeline import ingest  # noqa: E402


def parsed(path: str) -> tuple[str, list]:
    """(format, conversations) as ingest reads the file."""
    name = Path(path).name
    return parse_document(decode(Path(path).read_bytes(), name), name)


def ingested(path: str, work: Path) -> tuple[dict, list, list]:
    """(ingest summary, turn records, the text each record's span reads back) of the file in a new store."""
    with Store.open(str(work / Path(path).stem)) as store:
        summary = ingest(store, [path])
        raw = RawStore(store)
        records = list(raw.iter_turns())
        spans = [raw.read_span(record["raw_ref"]["raw_id"], record["raw_ref"]["offset"],
                               record["raw_ref"]["length"]).decode("utf-8") for record in records]
    return summary, records, spans


def locomo_checks(path: str, work: Path) -> dict:
    fmt, conversations = parsed(path)
    turns = [turn for conversation in conversations for turn in conversation.turns]
    with open(path, encoding="utf-8") as handle:
        texts = [turn["text"] for sample in json.load(handle) for key, session in sample["conversation"].items()
                 if key.startswith("session_") and isinstance(session, list) for turn in session]
    summary, records, spans = ingested(path, work)
    return {
        "read as the locomo format": fmt == "locomo",
        "five conversations, conv-26 to conv-43": [conversation.conv_id for conversation in conversations] == [
            "conv-26", "conv-30", "conv-41", "conv-42", "conv-43"],
        "2,760 turns, each with a time of this century": len(turns) == 2760 and all(
            turn.ts and turn.ts[:2] == "20" for turn in turns),
        "the first turn: D1:1 by Caroline at 2023-05-08T13:56": (
            turns[0].source_id, turns[0].speaker, turns[0].ts) == ("D1:1", "Caroline", "2023-05-08T13:56:00"),
        "602 turns with an image caption as an attachment": sum(bool(turn.attachments) for turn in turns) == 602,
        "no extra fields": all(turn.extra == {} for turn in turns),
        "128 sessions (the non-empty session_N lists)": len({(turn.conv_id, turn.session) for turn in turns}) == 128,
        "one turn per dia_id": len({(turn.conv_id, turn.source_id) for turn in turns}) == 2760,
        "ingest stores 5 conversations and 2,760 turns": (summary["conversations"], summary["turns"]) == (5, 2760),
        "every stored span reads back as a turn's text": sorted(spans) == sorted(texts),
        "602 stored image attachments": sum(record["attachments"][0]["kind"] == "image"
                                            for record in records if record["attachments"]) == 602,
        "stored in less than 0.6 of the text's bytes": summary["bytes_stored"] < 0.6 * sum(
            len(text.encode()) for text in texts),
    }


def memdaily_checks(path: str, work: Path) -> dict:
    fmt, conversations = parsed(path)
    turns = [turn for conversation in conversations for turn in conversation.turns]
    summary, records, spans = ingested(path, work)
    return {
        "read as the locomo format": fmt == "locomo",
        "591 conversations, 5,188 turns": (len(conversations), len(turns)) == (591, 5188),
        "every turn by 用户 at a time to the second": all(turn.speaker == "用户" and len(turn.ts) == 19
                                                      for turn in turns),
        "place kept as an extra field, time made the turn's time": all(
            "place" in turn.extra and "time" not in turn.extra for turn in turns),
        "ingest stores 591 conversations and 5,188 turns": (summary["conversations"], summary["turns"]) == (
            591, 5188),
        "every stored turn by 用户 with its place": len(records) == 5188 and all(
            record["speaker"] == "用户" and "place" in record["extra"] for record in records),
        "every stored span reads back as a turn's text": sorted(spans) == sorted(turn.text for turn in turns),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", metavar="FILE", help="LoCoMo dev (locomo-dev.json)")
    parser.add_argument("--memdaily", metavar="FILE", help="MemDaily dev (zh-memdaily-dev.json)")
    options = parser.parse_args(argv)
    if not (options.locomo or options.memdaily):
        parser.error("give --locomo FILE, --memdaily FILE or both")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="memctl-datasets-") as work:
        for path, checks in ((options.locomo, locomo_checks), (options.memdaily, memdaily_checks)):
            if path is None:
                continue
            for name, held in checks(path, Path(work)).items():
                print(f"{'ok  ' if held else 'FAIL'} {Path(path).name}: {name}")
                failed += not held
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
