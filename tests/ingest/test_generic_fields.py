"""Each ingest adapter maps its input's own keys onto the generic turn fields (session, attachments, reply_to);
what it does not map stays in extra, and a version-3 row's fields are recovered by asking the adapters."""

import json

import pytest

from engine.errors import InputError
from memctl.ingest import jsonl, locomo
from memctl.ingest.format3 import generic_fields

from ingest_testkit import turns_of


def jsonl_turns(*lines):
    return turns_of("\n".join(json.dumps(line) for line in lines) + "\n", "log.jsonl", "jsonl")


def test_jsonl_reads_session_attachments_and_reply_to_and_keeps_other_keys():
    [first, second] = jsonl_turns(
        {"id": "u1", "conversation_id": "c", "session": "evening", "role": "user", "content": "look",
         "attachments": [{"type": "image", "alt": "a red bike", "url": "https://x/bike.png", "size": 9},
                         {"filename": "route.gpx"}], "mood": "happy"},
        {"id": "a1", "conversation_id": "c", "session": 2, "role": "assistant", "content": "nice",
         "in_reply_to": "u1"})
    assert (first.session, first.reply_to, first.extra) == ("evening", None, {"mood": "happy"})
    assert first.attachments == ({"kind": "image", "caption": "a red bike", "url": "https://x/bike.png"},
                                 {"kind": "file", "name": "route.gpx"})  # an attachment's other keys are not kept
    assert (second.session, second.reply_to, second.attachments, second.extra) == ("2", "u1", (), {})


@pytest.mark.parametrize("key", jsonl.REPLY_KEYS)
def test_every_reply_key_names_the_turn_answered(key):
    [turn] = jsonl_turns({"role": "user", "content": "yes", key: 17})
    assert turn.reply_to == "17" and turn.extra == {}


def test_session_id_names_the_conversation_unless_another_key_does():
    [alone] = jsonl_turns({"session_id": "s1", "role": "user", "content": "a"})
    assert (alone.conv_id, alone.session, alone.extra) == ("s1", None, {})
    [both] = jsonl_turns({"conv_id": "c", "session_id": "s1", "role": "user", "content": "a"})
    assert (both.conv_id, both.session, both.extra) == ("c", "s1", {})


def test_image_and_file_content_parts_are_attachments():
    [turn] = jsonl_turns({"role": "user", "content": [
        {"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
        {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
        {"type": "file", "file": {"filename": "a.pdf", "file_data": "AAAA"}}]})
    assert turn.text == "see"
    assert turn.attachments == ({"kind": "image", "url": "https://x/a.png"}, {"kind": "image"},
                                {"kind": "file", "name": "a.pdf"})  # no data: URL is stored


def test_chat_messages_map_like_jsonl_lines():
    messages = [{"role": "user", "content": "hi", "id": "m1", "session": "s"},
                {"role": "assistant", "content": "hello", "parent_id": "m1", "name": "helper"}]
    turns = turns_of(json.dumps(messages), "chat.json", "messages")
    assert [(turn.session, turn.reply_to, turn.extra) for turn in turns] == [
        ("s", None, {}), (None, "m1", {"name": "helper"})]


@pytest.mark.parametrize("text, name, fmt", [("Bob: hi\nAnn: hello\n", "t.txt", "transcript"),
                                             ("One paragraph.\n\nAnother.\n", "n.txt", "text")])
def test_transcripts_and_plain_text_have_no_generic_fields(text, name, fmt):
    turns = turns_of(text, name, fmt)
    assert turns and all((turn.session, turn.attachments, turn.reply_to, turn.extra) == (None, (), None, {})
                         for turn in turns)


@pytest.mark.parametrize("line, message", [
    ({"attachments": "cat.png"}, "'attachments' must be a list of objects, found a string"),
    ({"attachments": ["cat.png"]}, "'attachments'[0] must be an object, found a string"),
    ({"attachments": [{"kind": "image", "caption": ["a"]}]}, "'attachments'[0].caption must be a string, found a list"),
    ({"session": {"n": 1}}, "'session' must be a string or a number, found an object"),
    ({"reply_to": True}, "'reply_to' must be a string or a number, found a number"),
])
def test_bad_generic_fields_name_their_line_and_key(line, message):
    text = '{"role": "user", "content": "ok"}\n' + json.dumps({"role": "user", "content": "hi", **line}) + "\n"
    with pytest.raises(InputError) as raised:
        turns_of(text, "log.jsonl", "jsonl")
    assert message in str(raised.value) and raised.value.where == "log.jsonl:2"


# --- version-3 rows (memctl migrate) ------------------------------------------------------------------------


@pytest.mark.parametrize("source_id, extra, expected", [
    ("D3:7", {"blip_caption": "a cat", "place": "杭州"},
     {"session": "3", "attachments": ({"kind": "image", "caption": "a cat"},), "reply_to": None,
      "extra": {"place": "杭州"}}),
    ("m-9", {"session": "s", "in_reply_to": "m-8", "attachments": [{"type": "file", "name": "a.pdf"}], "k": 1},
     {"session": "s", "attachments": ({"kind": "file", "name": "a.pdf"},), "reply_to": "m-8", "extra": {"k": 1}}),
    ("D1:2", {"session": "evening"}, {"session": "evening", "attachments": (), "reply_to": None, "extra": {}}),
    ("notes.txt#3", {}, {"session": None, "attachments": (), "reply_to": None, "extra": {}}),
    ("x", {"attachments": "not a list", "blip_caption": 5},
     {"session": None, "attachments": (), "reply_to": None, "extra": {"attachments": "not a list", "blip_caption": 5}}),
])
def test_a_version_3_row_gets_the_fields_its_adapter_writes_today(source_id, extra, expected):
    assert generic_fields(source_id, extra) == expected


def test_a_migrated_locomo_row_equals_a_fresh_ingest():
    sample = [{"sample_id": "c", "conversation": {"session_2_date_time": "1:56 pm on 8 May, 2023", "session_2": [
        {"speaker": "Ann", "dia_id": "D2:1", "text": "Look!", "blip_caption": "a cat", "img_url": ["u"]}]}}]
    [turn] = turns_of(json.dumps(sample), "l.json", "locomo")
    assert generic_fields(turn.source_id, {"blip_caption": "a cat"}) == {
        "session": turn.session, "attachments": turn.attachments, "reply_to": turn.reply_to, "extra": turn.extra}
    assert locomo.generic_fields_of_format_3("D2:1", {}) == {"session": "2", "extra": {}}
