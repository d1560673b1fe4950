"""tools/eval_locomo.py --as jsonl: a LoCoMo conversation re-dressed as a plain JSONL chat log carries none of
LoCoMo's conventions, and the JSONL adapter reads from it the turns, sessions and captions the LoCoMo adapter
reads from the original (the eval's proof rests on this)."""

import json
import os

from tools.eval_locomo import OPAQUE_IDS, as_jsonl_log

from ingest_testkit import SAMPLES, turns_of


def test_a_redressed_conversation_gives_the_same_turns_through_the_jsonl_adapter():
    with open(os.path.join(SAMPLES, "xiaolin-life.locomo.json"), encoding="utf-8") as handle:
        [sample] = json.load(handle)
    log = as_jsonl_log(sample)
    assert "dia_id" not in log and "blip_caption" not in log and '"D1:' not in log and "session_" not in log
    original = turns_of(json.dumps([sample], ensure_ascii=False), "x.json", "locomo")
    redressed = turns_of(log, "x.jsonl", "jsonl")
    assert [(turn.conv_id, turn.speaker, turn.text, turn.ts, turn.attachments, turn.extra) for turn in redressed] \
        == [(turn.conv_id, turn.speaker, turn.text, turn.ts, turn.attachments, turn.extra) for turn in original]
    assert [OPAQUE_IDS[turn.source_id] for turn in redressed] == [turn.source_id for turn in original]
    assert any(turn.attachments for turn in original)
    sessions = dict(zip((turn.session for turn in redressed), (turn.session for turn in original)))
    assert len(sessions) == len(set(sessions.values())) > 1  # one opaque label per session, none shared
    assert [sessions[turn.session] for turn in redressed] == [turn.session for turn in original]
