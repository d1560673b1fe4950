"""Each input format parses into conversations of turns with text, speaker, ts, source_id and extra."""

import json

from memctl.ingest.chunker import MAX_TOKENS, estimate_tokens
from memctl.ingest.decode import decode
from memctl.ingest.detect import parse_document

from ingest_testkit import LOCOMO_DEV, MEMDAILY_DEV, needs_locomo, parse, turns_of



def test_plain_text_splits_paragraphs_and_keeps_line_numbers():
    turns = turns_of("First paragraph,\nstill first.\n\n\nSecond one.\n  \nThird。\n", "notes.txt", "text")
    assert [turn.text for turn in turns] == ["First paragraph,\nstill first.", "Second one.", "Third。"]
    assert [turn.source_id for turn in turns] == ["notes.txt#1", "notes.txt#5", "notes.txt#7"]
    assert all(turn.speaker is None and turn.ts is None and turn.conv_id == "notes.txt" for turn in turns)


def test_plain_text_cuts_long_paragraphs_at_sentence_ends_within_the_chunk_size():
    sentence = "这是一个关于蓝牙驱动的很长的句子，用来测试切分。"
    text = sentence * 300
    turns = turns_of(text, "long.txt", "text")
    assert len(turns) > 1
    assert "".join(turn.text for turn in turns) == text
    assert all(turn.text.endswith("。") for turn in turns[:-1])
    assert all(estimate_tokens(turn.text) <= MAX_TOKENS for turn in turns)
    assert turns[0].source_id == "long.txt#1"
    assert turns[1].source_id == f"long.txt#1:{len(turns[0].text) + 1}"


def test_transcript_lines_speakers_and_timestamps():
    text = (
        "[2025-09-15 10:35] 用户：我的蓝牙打不开了\n"
        "助手: 请问是什么系统？\n"
        "用户: Win11\n"
        "and it says 0x8007045D\n"
        "\n"
        "[2025-09-16 08:00:30] Alice: morning\n"
    )
    fmt, conversations = parse(text, "chat.txt")
    turns = conversations[0].turns
    assert fmt == "transcript"
    assert [(turn.speaker, turn.text) for turn in turns] == [
        ("用户", "我的蓝牙打不开了"),
        ("助手", "请问是什么系统？"),
        ("用户", "Win11\nand it says 0x8007045D"),
        ("Alice", "morning"),
    ]
    assert [turn.ts for turn in turns] == ["2025-09-15T10:35:00"] * 3 + ["2025-09-16T08:00:30"]
    assert [turn.source_id for turn in turns] == ["chat.txt#1", "chat.txt#2", "chat.txt#3", "chat.txt#6"]


def test_transcript_keeps_narration_after_a_blank_line_without_speaker():
    turns = turns_of("Bob: hi\nAlice: hello\n\n(they leave)\nBob: bye\n", "t.txt", "transcript")
    assert [(turn.speaker, turn.text) for turn in turns] == [
        ("Bob", "hi"), ("Alice", "hello"), (None, "(they leave)"), ("Bob", "bye")]


def test_jsonl_turns_with_ids_timestamps_and_extra():
    lines = [
        {"id": "m1", "role": "user", "content": "hello", "ts": "2025-01-02T03:04:05Z", "lang": "en"},
        {"speaker": "Bot", "text": "hi there", "timestamp": 1700000000},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "user", "content": [{"type": "text", "text": "part one"}, {"type": "image_url"},
                                     {"type": "text", "text": "part two"}]},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    fmt, conversations = parse(text, "log.jsonl")
    turns = conversations[0].turns
    assert fmt == "jsonl"
    assert [(turn.speaker, turn.text) for turn in turns] == [
        ("user", "hello"), ("Bot", "hi there"), ("user", "part one\npart two")]
    assert turns[0].source_id == "m1" and turns[1].source_id == "log.jsonl#2" and turns[2].source_id == "log.jsonl#4"
    assert turns[0].ts == "2025-01-02T03:04:05+00:00"
    assert turns[1].ts == "2023-11-14T22:13:20+00:00"
    assert turns[0].extra == {"lang": "en"}


def test_jsonl_groups_lines_by_conversation_id():
    text = "\n".join(json.dumps({"conv_id": conv, "role": "user", "content": str(index)})
                     for index, conv in enumerate(["a", "b", "a"]))
    conversations = parse(text, "x.jsonl")[1]
    assert [(conversation.conv_id, [turn.text for turn in conversation.turns]) for conversation in conversations] \
        == [("a", ["0", "2"]), ("b", ["1"])]


def test_openai_messages_list_and_wrapped_object():
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "你好 😀"},
                {"role": "assistant", "content": "你好！", "name": "helper"}]
    for document in (messages, {"model": "x", "messages": messages}):
        fmt, conversations = parse(json.dumps(document, ensure_ascii=False, indent=1), "chat.json")
        turns = conversations[0].turns
        assert fmt == "messages"
        assert [(turn.speaker, turn.text) for turn in turns] == [
            ("system", "be brief"), ("user", "你好 😀"), ("assistant", "你好！")]
        assert [turn.source_id for turn in turns] == ["chat.json[0]", "chat.json[1]", "chat.json[2]"]
        assert turns[2].extra == {"name": "helper"}


LOCOMO_SAMPLE = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "Look!", "blip_caption": "a photo of a cat",
             "img_url": ["http://x/y.jpg"], "query": "cat photo", "re-download": True},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Cute."},
        ],
        "session_2_date_time": "10:04 am on 19 June, 2023",
        "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "Hi again"}],
        "session_3_date_time": "9:00 am on 1 July, 2023",
    },
    "qa": [{"question": "ignored?", "answer": "yes", "evidence": ["D1:1"], "category": 4}],
}]


def test_locomo_sessions_dates_captions_and_missing_sessions():
    fmt, conversations = parse(json.dumps(LOCOMO_SAMPLE), "locomo.json")
    assert fmt == "locomo"
    [conversation] = conversations
    assert conversation.conv_id == "conv-x"
    turns = conversation.turns
    assert [(turn.source_id, turn.speaker, turn.text) for turn in turns] == [
        ("D1:1", "Ann", "Look!"), ("D1:2", "Ben", "Cute."), ("D2:1", "Ben", "Hi again")]
    assert [turn.ts for turn in turns] == ["2023-05-08T13:56:00", "2023-05-08T13:56:00", "2023-06-19T10:04:00"]
    # The caption is an image attachment; no traces of how the dataset was built; no other key, no extra.
    assert [turn.attachments for turn in turns] == [({"kind": "image", "caption": "a photo of a cat"},), (), ()]
    assert [turn.extra for turn in turns] == [{}, {}, {}]
    assert [turn.session for turn in turns] == ["1", "1", "2"]
    assert [turn.reply_to for turn in turns] == [None, None, None]


def test_locomo_sessions_are_ordered_numerically():
    sample = json.loads(json.dumps(LOCOMO_SAMPLE))
    conversation = sample[0]["conversation"]
    conversation["session_10"] = [{"speaker": "Ann", "dia_id": "D10:1", "text": "ten"}]
    turns = turns_of(json.dumps(sample), "l.json")
    assert [turn.source_id for turn in turns] == ["D1:1", "D1:2", "D2:1", "D10:1"]


def test_memdaily_chinese_dates_and_turn_time_and_place():
    sample = [{"sample_id": "md-1", "conversation": {
        "speaker_a": "用户", "speaker_b": "助手",
        "session_1_date_time": "2024年04月01日 周一",
        "session_1": [{"speaker": "用户", "dia_id": "D1:1", "text": "我将要参加模型艺术盛宴。", "mid": 0,
                       "time": "2024年04月01日 周一 08:51", "place": "广东深圳"},
                      {"speaker": "用户", "dia_id": "D1:2", "text": "没有具体时间的一条。"}],
    }, "qa": []}]
    turns = turns_of(json.dumps(sample, ensure_ascii=False), "md.json")
    assert turns[0].ts == "2024-04-01T08:51:00"
    assert turns[1].ts == "2024-04-01"
    assert turns[0].extra == {"mid": 0, "place": "广东深圳"}  # `time` became ts
    assert [(turn.session, turn.attachments, turn.reply_to) for turn in turns] == [("1", (), None)] * 2


@needs_locomo
def test_real_locomo_dev_file():
    with open(LOCOMO_DEV, "rb") as handle:
        data = handle.read()
    fmt, conversations = parse_document(decode(data, "locomo-dev.json"), "locomo-dev.json")
    assert fmt == "locomo"
    assert [conversation.conv_id for conversation in conversations] == [
        "conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]
    turns = [turn for conversation in conversations for turn in conversation.turns]
    assert len(turns) == 2760
    assert all(turn.ts and turn.ts[:2] == "20" for turn in turns)
    first = conversations[0].turns[0]
    assert (first.source_id, first.speaker, first.ts) == ("D1:1", "Caroline", "2023-05-08T13:56:00")
    assert sum(bool(turn.attachments) for turn in turns) == 602
    assert all(turn.extra == {} for turn in turns)
    assert len({(turn.conv_id, turn.session) for turn in turns}) == 128  # the file's non-empty session_N lists
    assert len({(turn.conv_id, turn.source_id) for turn in turns}) == 2760


@needs_locomo
def test_real_memdaily_dev_file():
    with open(MEMDAILY_DEV, "rb") as handle:
        data = handle.read()
    fmt, conversations = parse_document(decode(data, "zh-memdaily-dev.json"), "zh-memdaily-dev.json")
    assert fmt == "locomo"
    assert len(conversations) == 591
    turns = [turn for conversation in conversations for turn in conversation.turns]
    assert len(turns) == 5188
    assert all(turn.speaker == "用户" and len(turn.ts) == 19 for turn in turns)
    assert all("place" in turn.extra and "time" not in turn.extra for turn in turns)
