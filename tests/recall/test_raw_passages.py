"""W5 passages: long turns cut into sentence windows with exact byte spans; chunks r2g has not converted."""

from __future__ import annotations

from recall_testkit import build, fallbacks, open_memory, recall, write_jsonl

from engine.raw import RawStore

SENTENCES = [f"第{index}步：检查驱动和电源设置，然后重启电脑。" for index in range(1, 40)]
SENTENCES[20] = "第21步：事件查看器里出现错误 0x80070490，来源是 BTHUSB。"


def test_long_turns_are_cut_into_windows_with_exact_spans(tmp_path):
    long_turn = "".join(SENTENCES)
    path = write_jsonl(tmp_path / "long.jsonl", [
        {"id": "a1", "ts": "2025-01-02T10:00:00", "role": "用户", "content": "蓝牙又坏了，帮我看看。"},
        {"id": "a2", "ts": "2025-01-02T10:01:00", "role": "助手", "content": long_turn},
    ])
    home = tmp_path / "home"
    build(home, path)
    answer = recall(home, "0x80070490", allow_raw=True)
    assert "raw:pattern_tokens" in fallbacks(answer)
    top = answer["results"][0]
    citation = top["citations"][0]
    assert citation["source_id"] == "a2"
    assert "0x80070490" in citation["snippet"] and len(citation["snippet"]) < len(long_turn) // 2
    with open_memory(home) as memory:
        exact = RawStore(memory.store).read_span(citation["raw_id"], citation["offset"], citation["length"])
    assert exact.decode("utf-8") == citation["snippet"]
    # the Episode card also cites its whole turn after the passage
    assert len(top["citations"]) >= 1 and top["type"] == "Episode"


def test_unconverted_chunks_are_searched(tmp_path):
    home = tmp_path / "home"
    build(home, write_jsonl(tmp_path / "first.jsonl", [
        {"id": "b1", "ts": "2025-01-01T09:00:00", "role": "Ann", "content": "The garden needs water."}]))
    build(home, write_jsonl(tmp_path / "second.jsonl", [
        {"id": "c1", "ts": "2025-02-01T09:00:00", "role": "Ann", "content": "My new passport number is X1234567."}]),
        convert=False)
    answer = recall(home, "passport number", cite=True)
    assert "raw:requested" in fallbacks(answer)
    [passage] = [result for result in answer["results"] if result["type"] == "RawPassage"]
    assert passage["citations"][0]["source_id"] == "c1"
    assert passage["citations"][0]["snippet"] == "My new passport number is X1234567."
