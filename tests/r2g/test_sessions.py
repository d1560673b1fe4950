"""R2G reads a turn's session and captions from the generic fields ingest stored, whatever the input format:
a JSONL log with opaque ids and explicit sessions builds the reply context and TEMPORAL_NEXT flags a LoCoMo
file of the same conversation builds, and without its sessions it builds another."""

from __future__ import annotations

import json

from r2g_testkit import convert, dump, ingest, nodes_of_type, write_jsonl

# Two sessions on one afternoon: only the input's own session tells them apart (the day would join them).
SESSIONS = [
    ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00", [
        ("Ann", "I adopted a puppy named Biscuit.", "a corgi puppy on a blanket"),
        ("Ben", "Congrats! What breed is Biscuit?", None),
    ]),
    ("4:10 pm on 8 May, 2023", "2023-05-08T16:10:00", [
        ("Ann", "We walked along the beach today.", None),
        ("Ben", "Did he like the sand?", "a dog running on sand"),
    ]),
]


def locomo_file(path):
    conversation = {"speaker_a": "Ann", "speaker_b": "Ben"}
    for number, (date, _, turns) in enumerate(SESSIONS, start=1):
        conversation[f"session_{number}_date_time"] = date
        conversation[f"session_{number}"] = [
            {"speaker": speaker, "dia_id": f"D{number}:{index}", "text": text,
             **({"blip_caption": caption} if caption else {})}
            for index, (speaker, text, caption) in enumerate(turns, start=1)]
    path.write_text(json.dumps([{"sample_id": "c1", "conversation": conversation}]), encoding="utf-8")
    return path


def jsonl_file(path, with_sessions: bool = True):
    lines = []
    for number, (_, ts, turns) in enumerate(SESSIONS, start=1):
        for index, (speaker, text, caption) in enumerate(turns, start=1):
            lines.append({"conversation_id": "c1", "id": f"m{number * 7919 + index * 104729:x}q", "speaker": speaker,
                          "content": text, "timestamp": ts,
                          **({"session": f"s-{'kx'[number - 1]}"} if with_sessions else {}),
                          **({"attachments": [{"kind": "image", "caption": caption}]} if caption else {})})
    return write_jsonl(path, lines)


def built(home, path) -> dict:
    ingest(home, path)
    convert(home)
    graph = dump(home)
    episodes = sorted(nodes_of_type(home, "Episode").values(), key=lambda episode: episode["key"])
    return {"documents": graph["documents"],
            "temporal": sorted((edge[0], edge[2], tuple(sorted(edge[5].items())))
                               for edge in graph["edges"].values() if edge[1] == "TEMPORAL_NEXT"),
            "captions": [episode["props"]["attributes"].get("caption") for episode in episodes],
            "sessions": [episode["props"]["attributes"]["session"] for episode in episodes]}


def test_a_jsonl_log_with_sessions_builds_what_the_locomo_file_builds(tmp_path):
    from_locomo = built(tmp_path / "locomo", locomo_file(tmp_path / "c.json"))
    from_jsonl = built(tmp_path / "jsonl", jsonl_file(tmp_path / "c.jsonl"))
    assert from_jsonl["documents"] == from_locomo["documents"]
    assert from_jsonl["temporal"] == from_locomo["temporal"]
    assert from_jsonl["captions"] == from_locomo["captions"] and sorted(filter(None, from_locomo["captions"])) == [
        "a corgi puppy on a blanket", "a dog running on sand"]
    assert sorted(set(from_locomo["sessions"])) == ["1", "2"] and sorted(set(from_jsonl["sessions"])) == ["s-k", "s-x"]
    flags = [dict(props) for _, _, props in from_locomo["temporal"]]
    assert sorted(flag["same_session"] for flag in flags) == [False, True, True]


def test_without_its_sessions_the_log_is_one_session_a_day(tmp_path):
    from_locomo = built(tmp_path / "locomo", locomo_file(tmp_path / "c.json"))
    unsessioned = built(tmp_path / "jsonl", jsonl_file(tmp_path / "c.jsonl", with_sessions=False))
    assert set(unsessioned["sessions"]) == {"2023-05-08"}
    assert all(dict(props)["same_session"] for _, _, props in unsessioned["temporal"])
    assert unsessioned["documents"] != from_locomo["documents"]  # the boundary turns now see each other
