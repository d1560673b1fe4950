"""The NodeIndex schema both R2G (writing) and recall (reading) rely on: fields, dates as words, timestamps."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from memctl.node_documents import caption_of, context_text, date_text, episode_fields, epoch_seconds, node_document


@pytest.mark.parametrize("ts, lang, words", [
    ("2023-05-08T13:56:00", "en", "1:56 pm on 8 May, 2023"),
    ("2023-05-08T00:05:00", "en", "12:05 am on 8 May, 2023"),
    ("2023-05-08", "en", "8 May, 2023"),
    ("2024-04-01T08:51:00", "zh", "2024年04月01日 周一 08:51"),
    ("2024-04-07", "zh", "2024年04月07日 周日"),
    ("spring 2023", "en", "spring 2023"),  # not ISO: kept as written
    (None, "en", ""),
])
def test_date_text_writes_a_turn_time_as_questions_say_it(ts, lang, words):
    assert date_text(ts, lang) == words


def test_epoch_seconds_reads_a_time_without_zone_as_utc():
    assert epoch_seconds("2023-05-08T13:56:00") == datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc).timestamp()
    assert epoch_seconds("2023-05-08T13:56:00+08:00") == epoch_seconds("2023-05-08T05:56:00")
    assert epoch_seconds("not a time") is None and epoch_seconds(None) is None


def test_a_node_document_keeps_non_empty_fields_and_the_recency_as_timestamp():
    props = {"title": "Tom plays soccer", "text": "", "keywords": ["soccer", "park"], "recency": "2023-05-10",
             "tags": ["sport"]}
    document = node_document("F1", "Fact", props, {"turn": "Tom played soccer.", "caption": ""})
    assert document == {"key": "F1", "type": "Fact",
                        "fields": {"title": "Tom plays soccer", "keywords": "soccer park", "turn": "Tom played soccer."},
                        "timestamp": epoch_seconds("2023-05-10"), "tags": ["sport"]}


def test_episode_fields_and_the_reply_context_of_another_speaker_in_the_same_session():
    turn = {"speaker": "Ann", "ts": "2023-05-08T13:56:00", "session": 1,
            "attachments": [{"kind": "image", "caption": "a red bike"}]}
    fields = episode_fields(turn, "Look at my bike", "en", "Nice!")
    assert fields == {"turn": "Look at my bike", "speaker": "Ann", "date": "1:56 pm on 8 May, 2023",
                      "caption": "a red bike", "context": "Nice!"}

    def neighbor(speaker, session, text, caption=None):
        return SimpleNamespace(meta={"speaker": speaker, "session": session,
                                     "attachments": [{"kind": "image", "caption": caption}] if caption else []},
                               text=text)

    neighbors = [neighbor("Bob", 1, "What did you buy?", "a shop"), neighbor("Ann", 1, "It is red."),
                 neighbor("Bob", 2, "Hi again"), None]
    assert context_text(turn, neighbors, lambda meta: meta["session"]) == "What did you buy?\na shop"


def test_the_caption_is_every_attachment_caption_and_nothing_of_extra():
    """Captions come from the generic attachments only: an input's own caption key left in extra is not read."""
    turn = {"attachments": [{"kind": "image", "caption": "a cat"}, {"kind": "file", "name": "notes.pdf"},
                            {"kind": "image", "caption": "a dog", "url": "https://example.org/dog.png"}],
            "extra": {"caption": "not this", "blip_caption": "nor this"}}
    assert caption_of(turn) == "a cat\na dog"
    assert caption_of({"extra": {"blip_caption": "a cat"}}) == "" and caption_of({"attachments": []}) == ""
