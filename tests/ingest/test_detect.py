"""Automatic format detection, forcing a format, and format names."""

import json

import pytest

from engine.errors import InputError
from memctl.ingest.detect import normalize_format

from ingest_testkit import parse

MESSAGES = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
LOCOMO = [{"sample_id": "c1", "conversation": {"session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "x"}]}}]


@pytest.mark.parametrize("text, expected", [
    ("Just a note about my day.\n\nAnother paragraph.", "text"),
    ("Alice: hi\nBob: hello\nAlice: how are you?\n", "transcript"),
    ("[2025-09-15 10:35] 用户：蓝牙打不开\n助手：请问是什么系统？\n", "transcript"),
    ("用户：你好\n助手：你好！有什么可以帮你？\n用户：以后优先中文回答\n", "transcript"),
    ('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}\n', "jsonl"),
    ('{"role": "user", "content": "only one line"}', "jsonl"),
    (json.dumps(MESSAGES, indent=2), "messages"),
    (json.dumps({"messages": MESSAGES}), "messages"),
    (json.dumps(LOCOMO, indent=1), "locomo"),
    ("[citation needed] is a common wiki tag.\n\nMore prose.", "text"),
    ("Note: this is prose.\nIt has one label line and then\nlots of ordinary sentences without labels.\n"
     "Warning: another label.\nAnd more prose that goes on.\nThe end of it all.\n", "text"),
])
def test_detects_format(text, expected):
    assert parse(text)[0] == expected


def test_a_utf8_bom_and_crlf_line_ends_do_not_change_detection():
    text = "\ufeffAlice: hi\r\nBob: hello\r\n"
    format, conversations = parse(text)
    assert format == "transcript"
    assert [turn.text for turn in conversations[0].turns] == ["hi", "hello"]


def test_forcing_a_format_overrides_detection():
    format, conversations = parse("Alice: hi\nBob: hello\n", format="text")
    assert format == "text"
    assert [turn.text for turn in conversations[0].turns] == ["Alice: hi\nBob: hello"]
    assert parse('{"role": "user", "content": "hi"}', format="text")[0] == "text"


@pytest.mark.parametrize("alias, name", [
    ("auto", None), (None, None), ("TEXT", "text"), ("plain", "text"), ("openai", "messages"),
    ("memdaily", "locomo"), ("jsonl", "jsonl"), ("transcript", "transcript")])
def test_format_names_and_aliases(alias, name):
    assert normalize_format(alias) == name


def test_unknown_format_name_lists_the_choices():
    with pytest.raises(InputError, match="unknown format 'xml'; choose one of text, transcript, jsonl, messages, "
                                         "locomo"):
        normalize_format("xml")


@pytest.mark.parametrize("text", ["[1, 2, 3]", '{\n  "name": "not a chat"\n}', '[{"name": "x"}]'])
def test_json_of_no_known_shape_is_an_unknown_format(text):
    with pytest.raises(InputError, match="unknown format: JSON that is neither LoCoMo samples nor chat messages") \
            as raised:
        parse(text, "data.json")
    assert raised.value.where == "data.json"


def test_forcing_a_json_format_on_the_wrong_shape_says_what_was_expected():
    with pytest.raises(InputError, match="not a LoCoMo file"):
        parse(json.dumps(MESSAGES), "m.json", format="locomo")
    with pytest.raises(InputError, match="not a chat message list"):
        parse(json.dumps(LOCOMO), "l.json", format="messages")
    with pytest.raises(InputError, match="no 'Speaker: text' lines found"):
        parse("plain prose only", "p.txt", format="transcript")
