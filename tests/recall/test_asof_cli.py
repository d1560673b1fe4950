"""`memctl recall --as-of T` and slot questions on the command line: --json cards, --trace, bad values."""

from __future__ import annotations

import json

import pytest

from asof_testkit import NOW, chain_store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return chain_store(tmp_path_factory.mktemp("chains-cli"))


@pytest.fixture
def run(cli, store):
    return lambda *arguments, input=None: cli("--home", str(store[0]), "recall", *arguments, input=input)


def _json(result) -> dict:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_as_of_with_json(run, store):
    boston, denver = store[1][("Maria", "residence")]
    answer = _json(run("Where does Maria live?", "--as-of", "2022-06-01", "--now", NOW, "--json"))
    card = answer["results"][0]
    assert card["id"] == boston and card["version"]["current"] is False and card["title"].startswith("formerly: ")
    assert all(result["id"] != denver for result in answer["results"])
    assert _json(run("Where does Maria live?", "--now", NOW, "--json"))["results"][0]["id"] == denver
    # A date-time works as well; without --now, T is the reference time.
    assert _json(run("Where does Maria live?", "--as-of", "2023-06-01T08:00", "--json"))["results"][0]["id"] == denver


def test_trace_shows_the_chain(run):
    result = run("Which company was Maria working for around March 2022?", "--now", NOW, "--trace")
    assert result.exit_code == 0, result.stderr
    assert "V: version chain" in result.stdout and "Acme Robotics: valid at March 2022" in result.stdout
    assert "formerly: Maria · employer: Acme Robotics" in result.stdout


@pytest.mark.parametrize("value", ["last year", "2022-13-01", "June 2022"])
def test_bad_as_of_is_exit_2_naming_the_option_and_the_forms(run, value):
    result = run("Where does Maria live?", "--as-of", value)
    assert result.exit_code == 2 and result.stdout == ""
    assert "--as-of" in result.stderr and "ISO date or date-time" in result.stderr and "2024-05-01" in result.stderr


def test_batch_lines_take_as_of(run, store, tmp_path):
    boston, denver = store[1][("Maria", "residence")]
    batch = tmp_path / "q.jsonl"
    batch.write_text('{"id": "then", "q": "Where does Maria live?", "as_of": "2022-06-01"}\n'
                     '{"id": "now", "q": "Where does Maria live?"}\n', encoding="utf-8")
    lines = run("batch", str(batch), "--now", NOW, "--json").stdout.splitlines()
    assert [json.loads(line)["results"][0]["id"] for line in lines] == [boston, denver]
    batch.write_text('{"id": 1, "q": "Where does Maria live?", "as_of": "soon"}\n', encoding="utf-8")
    result = run("batch", str(batch))
    assert result.exit_code == 2 and f"{batch}:1: --as-of" in result.stderr
