"""W5 passages: long turns cut into sentence windows with exact byte spans; every stored chunk searched, whether
r2g converted it or not and whatever its age."""

from __future__ import annotations

import json

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


def _filler(conversation: int, turns: int) -> list:
    """Turns of small talk, none of them about a password or a locker."""
    return [{"id": f"c{conversation}-{index}", "ts": f"2024-{1 + conversation % 12:02d}-{1 + index % 28:02d}T10:00:00",
             "role": "Ann" if index % 2 else "Bo",
             "content": f"Conversation {conversation}, turn {index}: the weather was mild and we walked to the "
                        f"bakery on street number {index * 7 + conversation} for bread and coffee."}
            for index in range(turns)]


def test_a_large_ingest_without_r2g_finds_a_turn_in_its_oldest_chunk(tmp_path, cli):
    """The issue's scenario: a password said early in a large ingest, r2g never run, is found by
    `recall --allow-raw password` whatever the number of chunks ingested with or after it."""
    secret = {"id": "c0-secret", "ts": "2023-12-31T23:00:00", "role": "Ann",
              "content": "The password of the storage locker is tulip-42, write it down."}
    first = write_jsonl(tmp_path / "first.jsonl", [secret] + _filler(0, 40))
    later = write_jsonl(tmp_path / "later.jsonl", [turn for number in range(1, 160) for turn in _filler(number, 40)])
    home = str(tmp_path / "home")
    assert cli("--home", home, "ingest", "--raw", str(first), "--quiet").exit_code == 0
    assert cli("--home", home, "ingest", "--raw", str(later), "--quiet").exit_code == 0
    listed = json.loads(cli("--home", home, "raw", "ls", "--json").stdout)
    assert len(listed) > 64  # more chunks than the fallback searched without a graph (the 8 × 8 most recent)
    result = cli("--home", home, "recall", "--allow-raw", "password", "--json")
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)
    top = answer["results"][0]
    assert top["type"] == "RawPassage" and top["citations"][0]["source_id"] == "c0-secret"
    assert top["citations"][0]["snippet"] == secret["content"]
    [stage] = [stage for stage in answer["trace"]["stages"] if stage["name"] == "W5: raw passages"]
    assert stage["notes"]["passages"] == 1 + 40 + 159 * 40


def test_a_time_window_is_applied_before_the_best_passages_are_taken(tmp_path):
    """since/until filter the passage search itself: with more newer passages matching better than the fallback
    returns (recall.raw.top), an old one inside the window is still found."""
    home = tmp_path / "home"
    old = {"id": "old", "ts": "2020-01-05T10:00:00", "role": "Ann",
           "content": "We spent the whole afternoon talking about the garden, the neighbours, the long winter, "
                      "the new tram line, the price of apples at the market and, only once, the bakery."}
    build(home, write_jsonl(tmp_path / "chat.jsonl", [old] + _filler(1, 150)), convert=False)
    since, until = 1577836800.0, 1580515200.0  # January 2020
    answer = recall(home, "bakery", allow_raw=True, since=since, until=until, top=3)
    assert [result["citations"][0]["source_id"] for result in answer["results"]] == ["old"]
