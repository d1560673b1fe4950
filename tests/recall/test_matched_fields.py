"""A recall card's path says what its node matched in the query's own words ("Favourite", not the stem
"favourit") and in which field: a turn found through the question it answers says `context`, not `turn`."""

from __future__ import annotations

import json

import pytest

CONVERSATION = "Alice: What is your favourite book?\nBob: Dune, without a doubt.\nAlice: I prefer gardening magazines.\n"
QUERY = "Favourite books?"


@pytest.fixture
def conversation(cli, tmp_path):
    source = tmp_path / "chat.txt"
    source.write_text(CONVERSATION, encoding="utf-8")
    assert cli("ingest", "--raw", str(source), "--quiet").exit_code == 0
    return source


def seed_paths(cli, *options) -> dict:
    """{card title: its one-step path entry} of the cards stage A or the raw fallback found themselves."""
    answer = json.loads(cli("recall", QUERY, "--json", *options).stdout)
    return {card["title"]: card["path"][0] for card in answer["results"] if len(card["path"]) == 1}


def test_index_hits_name_the_field_and_the_query_words(cli, conversation):
    assert cli("r2g", "--quiet").exit_code == 0
    paths = seed_paths(cli)
    asked = paths["Alice: What is your favourite book?"]
    assert asked["matched"] == ["book", "favourit"]  # the index terms, as before
    assert asked["words"] == ["Favourite", "books"]
    assert asked["fields"]["turn"] == ["Favourite", "books"]
    answered = paths["Bob: Dune, without a doubt."]
    assert answered["words"] == ["Favourite", "books"]
    assert answered["fields"] == {"context": ["Favourite", "books"]}  # Bob said neither word


def test_the_card_text_says_where_the_words_matched(cli, conversation):
    assert cli("r2g", "--quiet").exit_code == 0
    printed = cli("recall", QUERY).stdout
    assert "path: matched turn: Favourite, books; " in printed
    assert "path: matched context: Favourite, books\n" in printed
    assert "favourit" not in printed.replace("favourite", "")


def test_graph_filter_hits_name_the_node_properties(cli, conversation):
    assert cli("r2g", "--quiet").exit_code == 0
    asked = seed_paths(cli, "--graph-only")["Alice: What is your favourite book?"]
    assert asked["words"] == ["Favourite", "books"]
    assert set(asked["fields"]) <= {"keywords", "tags", "entities", "title", "aliases"}
    assert asked["fields"]["keywords"] == ["Favourite", "books"]


def test_raw_passages_matched_the_turn(cli, conversation):
    [passage] = [entry for entry in seed_paths(cli).values() if entry["title"].endswith("chat.txt#1")]
    assert passage["type"] == "RawPassage"
    assert passage["fields"] == {"turn": ["Favourite", "books"]}
