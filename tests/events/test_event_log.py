"""The event log: sequence numbers, events written with the change they describe, what NodeCreated and
EdgeCreated name, and the reader's filters."""

from __future__ import annotations

import json

import pytest
from events_testkit import FIRST, SECOND, memctl, node_keys, open_memory, remember

from engine.errors import InputError
from memctl import event_log


def events(home, **options) -> list:
    with open_memory(home, writable=False) as memory:
        return memory.events(**options)


def test_r2g_logs_the_nodes_and_edges_it_created_once_per_commit(isolated_home):
    remember(isolated_home, FIRST)
    logged = events(isolated_home, keys=True)
    # The commit that created Alice's residence and employer facts also put them in force (memctl/facts).
    assert [(event["seq"], event["type"]) for event in logged] == [
        (1, "NodeCreated"), (2, "EdgeCreated"), (3, "FactPromoted"), (4, "FactPromoted")]
    assert sorted(event["payload"]["slot"] for event in logged[2:]) == ["employer", "residence"]
    assert set(logged[0]["payload"]["keys"]) == node_keys(isolated_home)
    with open_memory(isolated_home, writable=False) as memory:
        assert len(logged[1]["payload"]["keys"]) == sum(1 for _ in memory.graph._graph().iter_edges())


def test_a_later_commit_logs_only_what_it_created_not_what_it_updated(isolated_home):
    remember(isolated_home, FIRST)
    before = node_keys(isolated_home)
    remember(isolated_home, SECOND)  # mentions Alice and Denver again: merged, not created
    created = events(isolated_home, after=4, types=["NodeCreated"], keys=True)
    assert len(created) == 1
    assert set(created[0]["payload"]["keys"]) == node_keys(isolated_home) - before
    assert created[0]["seq"] == 5


def test_converting_nothing_new_logs_nothing(isolated_home):
    remember(isolated_home, FIRST)
    with open_memory(isolated_home) as memory:
        memory.r2g()
    assert len(events(isolated_home)) == 4


def test_sequence_numbers_follow_each_other_across_processes(isolated_home):
    assert memctl(isolated_home, "ingest", "--text", FIRST).returncode == 0
    assert memctl(isolated_home, "r2g").returncode == 0
    key = sorted(node_keys(isolated_home))[0]
    assert memctl(isolated_home, "feedback", key, "--pin").returncode == 0
    assert memctl(isolated_home, "feedback", key, "--down").returncode == 0
    listed = memctl(isolated_home, "events", "--json")
    assert listed.returncode == 0, listed.stderr
    lines = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [line["seq"] for line in lines] == [1, 2, 3, 4, 5, 6]
    assert [line["type"] for line in lines] == ["NodeCreated", "EdgeCreated", "FactPromoted", "FactPromoted",
                                                "WeightUpdated", "WeightUpdated"]
    assert [line["payload"]["action"] for line in lines[4:]] == ["pin", "down"]


def test_an_event_is_durable_with_its_batch_or_not_at_all(store):
    with store.batch() as batch:
        batch.put("notes.table", "a", 1)
        assert event_log.append(batch, "Archived", {"ids": ["a"]}, at=10.0) == 1
    with pytest.raises(RuntimeError):
        with store.batch() as batch:
            batch.put("notes.table", "b", 2)
            event_log.append(batch, "Archived", {"ids": ["b"]}, at=11.0)
            raise RuntimeError("the change fails")
    assert store.get("notes.table", "b") is None
    assert [(event.sequence, event.payload) for event in event_log.read(store)] == [(1, {"ids": ["a"]})]
    with store.batch() as batch:
        assert event_log.append(batch, "Archived", {"ids": ["c"]}, at=12.0) == 2


def test_an_unknown_event_type_is_refused(store):
    with pytest.raises(ValueError, match="unknown event type"):
        event_log.append(store.batch(), "NodeMade", {})
    with pytest.raises(InputError, match="unknown event type 'NodeMade'"):
        event_log.check_types(["NodeCreated", "NodeMade"])


@pytest.mark.parametrize("failpoint, logged", [("wal.append.mid_write", False), ("wal.append.after_fsync", True)])
def test_a_crash_keeps_the_change_and_its_event_together(isolated_home, failpoint, logged):
    remember(isolated_home, FIRST)
    key = sorted(node_keys(isolated_home))[0]
    crashed = memctl(isolated_home, "feedback", key, "--pin", failpoint=failpoint)
    assert crashed.returncode == -9
    with open_memory(isolated_home) as memory:  # a writer: recovers the WAL
        pinned = bool(memory.graph._graph().node(key).props.get("pinned"))
        updates = memory.events(types=["WeightUpdated"])
    assert pinned is logged
    assert len(updates) == (1 if logged else 0)
    from memctl.memory import Memory

    assert Memory.check(home=str(isolated_home))["clean"]


def test_a_crashed_r2g_leaves_neither_nodes_nor_events(isolated_home):
    with open_memory(isolated_home) as memory:
        memory.ingest(texts=[FIRST])
    crashed = memctl(isolated_home, "r2g", failpoint="wal.append.mid_write")
    assert crashed.returncode == -9
    assert node_keys(isolated_home) == set()
    assert events(isolated_home) == []


def test_since_a_sequence_number_a_time_and_type_filters(isolated_home, cli):
    remember(isolated_home, FIRST)
    with open_memory(isolated_home) as memory:
        key = sorted(node_keys(isolated_home))[0]
        memory.feedback(key, "pin", now=2_000_000_000.0)  # 2033-05-18T03:33:20Z
    result = cli("events", "--since", "3", "--json")
    assert [json.loads(line)["seq"] for line in result.stdout.splitlines()] == [4, 5]
    result = cli("events", "--since", "2033-05-18", "--json")
    assert [json.loads(line)["seq"] for line in result.stdout.splitlines()] == [5]
    result = cli("events", "--type", "EdgeCreated,WeightUpdated", "--json")
    assert [json.loads(line)["type"] for line in result.stdout.splitlines()] == ["EdgeCreated", "WeightUpdated"]
    result = cli("events", "--type", "NodeCreated")
    assert result.exit_code == 0 and result.stdout.split()[:1] == ["1"] and "NodeCreated" in result.stdout
    assert len(result.stdout.splitlines()) == 1


@pytest.mark.parametrize("arguments, message", [(["--type", "Created"], "unknown event type 'Created'"),
                                                (["--since", "yesterday"], "not an ISO date")])
def test_bad_filters_exit_2(isolated_home, cli, arguments, message):
    remember(isolated_home, FIRST)
    result = cli("events", *arguments)
    assert result.exit_code == 2
    assert message in result.stderr


def test_a_cold_events_command_loads_no_writer_nor_heavy_module(isolated_home):
    from cli_testkit import cold_modules, unexpected

    remember(isolated_home, FIRST)
    modules = cold_modules(isolated_home, "events", "--json", "--keys")
    assert unexpected(modules, "memctl.cli.events_cmd") == []


def test_graph_writes_and_imports_log_what_they_created(isolated_home, cli, tmp_path):
    assert cli("graph", "node", "add", "Concept:bluetooth", "Episode:e1").exit_code == 0
    assert cli("graph", "edge", "add", "Episode:e1", "ABOUT", "Concept:bluetooth").exit_code == 0
    lines = tmp_path / "graph.jsonl"
    lines.write_text('{"kind": "node", "id": "Episode:e2", "type": "Episode"}\n'
                     '{"kind": "node", "id": "Concept:bluetooth", "type": "Concept"}\n'
                     '{"kind": "edge", "src": "Episode:e2", "type": "ABOUT", "dst": "Concept:bluetooth"}\n',
                     encoding="utf-8")
    assert cli("graph", "import", str(lines)).exit_code == 0
    logged = [(event["type"], event["payload"]["keys"]) for event in events(isolated_home, keys=True)]
    assert logged == [("NodeCreated", ["Concept:bluetooth", "Episode:e1"]),
                      ("EdgeCreated", ['["Episode:e1","ABOUT","Concept:bluetooth"]']),
                      ("NodeCreated", ["Episode:e2"]),
                      ("EdgeCreated", ['["Episode:e2","ABOUT","Concept:bluetooth"]'])]
