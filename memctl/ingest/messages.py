"""A JSON list of OpenAI-style chat messages (`[{"role": ..., "content": ...}, ...]`), or an object holding
one under `messages`. Each message is read like a JSONL turn (memctl.ingest.jsonl, generic fields included:
session, attachments and image or file content parts, reply_to); its source_id is `<file>[<index>]` unless it has
an `id`."""

from __future__ import annotations

from engine.errors import InputError
from memctl.ingest.jsonl import group, turn_from_object
from memctl.ingest.model import Conversation

MESSAGES_KEY = "messages"


def message_list(value):
    """The messages of a parsed document, or None when it is not a message list."""
    if isinstance(value, dict) and isinstance(value.get(MESSAGES_KEY), list):
        value = value[MESSAGES_KEY]
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value[:100]):
        first = value[0]
        if ("role" in first or "speaker" in first) and ("content" in first or "text" in first):
            return value
    return None


def parse(value, name: str) -> list[Conversation]:
    messages = message_list(value)
    if messages is None:
        raise InputError(
            'not a chat message list: expected [{"role": ..., "content": ...}, ...] or {"messages": [...]}',
            where=name,
        )
    turns = []
    for index, message in enumerate(messages):
        turn = turn_from_object(message, name, where=f"{name}[{index}]", position=f"{name}[{index}]")
        if turn is not None:
            turns.append(turn)
    return group(turns)
