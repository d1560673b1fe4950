"""Every kind of bad input is an InputError with a precise message and `where`, never a traceback."""

import json

import pytest

from engine.errors import InputError
from memctl.ingest.decode import decode
from memctl.ingest.detect import parse_document

from ingest_testkit import parse


def refused(data, name="in.txt", format=None, errors="strict", size_limit=64 << 20) -> InputError:
    with pytest.raises(InputError) as raised:
        if isinstance(data, str):
            data = data.encode("utf-8")
        parse_document(decode(data, name, errors, size_limit), name, format, errors)
    return raised.value


def test_binary_data_names_the_first_nul_byte():
    error = refused(b"PK\x03\x04abc\x00\x00def", "archive.zip")
    assert "binary data: NUL byte at offset 7" in str(error)
    assert error.where == "archive.zip"


def test_utf16_input_gets_a_hint():
    error = refused("hello".encode("utf-16"), "notes.txt")
    assert "UTF-16 byte order mark" in str(error)


def test_invalid_utf8_names_byte_offset_and_line():
    error = refused(b"fine line\nbad \xff\xfe here\n", "chat.txt")
    assert "invalid UTF-8 at byte offset 14 (line 2, bytes ff)" in str(error)
    assert "--errors replace" in str(error)
    assert error.where == "chat.txt"


def test_truncated_multibyte_sequence_is_invalid_utf8():
    error = refused("蓝牙".encode()[:-1], "cut.txt")
    assert "invalid UTF-8 at byte offset 3" in str(error)


def test_errors_replace_accepts_invalid_utf8_with_substitutions():
    format, conversations = parse_document(decode(b"Alice: caf\xe9\nBob: ok\n", "x.txt", "replace"), "x.txt",
                                           None, "replace")
    assert [turn.text for turn in conversations[0].turns] == ["caf\ufffd", "ok"]


def test_errors_mode_must_be_known():
    with pytest.raises(InputError, match="--errors must be one of strict, replace"):
        decode(b"x", "x", errors="ignore")


@pytest.mark.parametrize("data", [b"", b"   \n\t\r\n"])
def test_empty_input(data):
    error = refused(data, "empty.txt")
    assert "empty input" in str(error)
    assert error.where == "empty.txt"


@pytest.mark.parametrize("text, reason", [
    ("[]", "an empty JSON list"),
    (json.dumps([{"sample_id": "c", "conversation": {"session_1_date_time": "1:56 pm on 8 May, 2023"}}]),
     "no turns found (read as locomo)"),
    (json.dumps([{"role": "assistant", "content": None}]), "no turns found (read as messages)"),
])
def test_inputs_without_turns_are_empty(text, reason):
    error = refused(text, "e.json")
    assert f"empty input: {reason}" in str(error)


def test_input_above_the_size_limit():
    error = refused(b"x" * 101, "big.txt", size_limit=100)
    assert "input is 101 bytes, above the limit of 100 bytes per file" in str(error)
    assert error.where == "big.txt"


def test_malformed_json_names_line_and_column():
    text = '[\n  {"role": "user", "content": "hi"},\n  {"role": "user", "content": }\n]'
    error = refused(text, "chat.json")
    assert str(error) == "chat.json:3:31: malformed JSON: Expecting value"
    assert error.where == "chat.json:3:31"


def test_malformed_jsonl_names_the_line():
    lines = ['{"role": "user", "content": "one"}', '{"role": "user", "content": "two"}', "",
             '{"role": "user", "content": "three"']
    error = refused("\n".join(lines), "log.jsonl")
    assert "malformed JSON: Expecting ',' delimiter" in str(error)
    assert error.where == "log.jsonl:4:36"


@pytest.mark.parametrize("line, message", [
    ('[1, 2]', "expected a JSON object for a turn, found a list"),
    ('{"role": "user", "body": "hi"}', "a turn needs a 'content' or 'text' key"),
    ('{"role": "user", "content": 42}', "turn text must be a string or a list of content parts, found a number"),
    ('{"role": "user", "content": "hi", "ts": "yesterday"}', "bad timestamp: unrecognised date 'yesterday'"),
])
def test_bad_jsonl_turns_name_their_line(line, message):
    text = '{"role": "user", "content": "ok"}\n' + line + "\n"
    error = refused(text, "log.jsonl", format="jsonl")
    assert message in str(error)
    assert error.where == "log.jsonl:2"


def test_bad_transcript_timestamp_names_the_line():
    error = refused("Alice: hi\n[2025-13-45 10:35] Bob: hello\nAlice: bye\n", "t.txt")
    assert "bad timestamp" in str(error) and "month must be in 1..12" in str(error)
    assert error.where == "t.txt:2"


def test_bad_locomo_date_and_turn_name_their_place():
    sample = {"sample_id": "conv-9", "conversation": {
        "session_1_date_time": "sometime in May",
        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "x"}]}}
    error = refused(json.dumps([sample]), "l.json")
    assert "bad date: unrecognised date 'sometime in May'" in str(error)
    assert error.where == "l.json: conv-9 session_1_date_time"
    sample["conversation"]["session_1_date_time"] = "1:56 pm on 8 May, 2023"
    sample["conversation"]["session_1"].append({"speaker": "B", "dia_id": "D1:2"})
    error = refused(json.dumps([sample]), "l.json")
    assert "a LoCoMo turn needs a 'text' string" in str(error)
    assert error.where == "l.json: conv-9 session_1[1]"


@pytest.mark.parametrize("text", [
    "[" * 10000 + "]" * 10000,
    '{"a": ' * 10000 + "1" + "}" * 10000,
    '[{"role": "user", "content": "x", "deep": ' + "[" * 10000 + "]" * 10000 + "}]",
])
def test_ten_thousand_deep_json_is_refused_not_a_crash(text):
    error = refused(text, "deep.json")
    assert "JSON nested too deeply to parse" in str(error)
    assert error.where == "deep.json"


def test_ten_thousand_deep_jsonl_line_names_the_line():
    text = '{"role": "user", "content": "x"}\n{"content": "y", "deep": ' + "[" * 10000 + "]" * 10000 + "}\n"
    error = refused(text, "deep.jsonl")
    assert "JSON nested too deeply to parse" in str(error)
    assert error.where == "deep.jsonl:2"


def test_extra_fields_nesting_deeper_than_storable_are_refused():
    text = json.dumps([{"role": "user", "content": "x", "deep": json.loads("[" * 100 + "]" * 100)}])
    error = refused(text, "d.json")
    assert "extra fields nest deeper than 32 levels" in str(error)
    assert error.where == "d.json[0]"


def test_number_too_long_to_parse():
    error = refused('{"role": "user", "content": "x", "n": ' + "9" * 5000 + "}", "n.jsonl")
    assert "malformed JSON: Exceeds the limit (4300 digits)" in str(error)
    assert "set_int_max_str_digits" not in str(error)


def test_integers_beyond_64_bits_are_kept_as_strings():
    format, conversations = parse('{"role": "user", "content": "x", "n": 123456789012345678901234567890}')
    assert conversations[0].turns[0].extra == {"n": "123456789012345678901234567890"}


def test_unpaired_surrogate_from_a_json_escape():
    text = '{"role": "user", "content": "bad \\ud800 here"}'
    error = refused(text, "s.jsonl")
    assert "unpaired surrogate '\\ud800'" in str(error)
    assert error.where == "s.jsonl#1"
    format, conversations = parse_document(text, "s.jsonl", None, "replace")
    assert conversations[0].turns[0].text == "bad \ufffd here"


def test_a_valid_surrogate_pair_escape_is_one_character():
    format, conversations = parse('{"role": "user", "content": "\\ud83d\\ude00"}')
    assert conversations[0].turns[0].text == "😀"
