"""JSON Lines: one turn object per line. Also home of `turn_from_object`, shared with the messages format.

A turn object has its text in `content` (a string, or OpenAI content parts) or `text`; its speaker in `speaker`,
`role` or `name`; optional `ts` / `timestamp` (ISO 8601 or epoch), `id` (its source_id) and `conv_id` /
`conversation_id` / `session_id` (grouping lines into conversations). Other keys are kept as the turn's extra.
A turn whose text is null or empty (a tool call, say) is skipped; a turn with no text key at all is an error.
"""

from __future__ import annotations

from engine.errors import InputError
from memctl.ingest import dates, jsonparse
from memctl.ingest.model import Conversation, Turn

TEXT_KEYS = ("content", "text")
SPEAKER_KEYS = ("speaker", "role", "name")
TIME_KEYS = ("ts", "timestamp")
CONVERSATION_KEYS = ("conv_id", "conversation_id", "session_id")
ID_KEY = "id"


def parse(text: str, name: str) -> list[Conversation]:
    turns = []
    for line_number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        value = jsonparse.load(line, name, line_offset=line_number - 1)
        turn = turn_from_object(value, name, where=f"{name}:{line_number}", position=f"{name}#{line_number}")
        if turn is not None:
            turns.append(turn)
    return group(turns)


def group(turns: list[Turn]) -> list[Conversation]:
    """Conversations in order of first appearance, each with its turns in input order."""
    conversations: dict[str, Conversation] = {}
    for turn in turns:
        conversations.setdefault(turn.conv_id, Conversation(turn.conv_id, [])).turns.append(turn)
    return list(conversations.values())


def turn_from_object(value, name: str, where: str, position: str) -> Turn | None:
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON object for a turn, found {_kind(value)}", where=where)
    text_key = next((key for key in TEXT_KEYS if key in value), None)
    if text_key is None:
        raise InputError(f"a turn needs a 'content' or 'text' key; found keys {sorted(value)[:10]}", where=where)
    text = _text(value[text_key], where)
    if not text:
        return None
    speaker_key = next((key for key in SPEAKER_KEYS if isinstance(value.get(key), str)), None)
    time_key = next((key for key in TIME_KEYS if value.get(key) is not None), None)
    conversation_key = next((key for key in CONVERSATION_KEYS if value.get(key) is not None), None)
    used = {text_key, speaker_key, time_key, conversation_key, ID_KEY}
    return Turn(
        conv_id=str(value[conversation_key]) if conversation_key else name,
        speaker=value[speaker_key] if speaker_key else None,
        text=text,
        ts=_timestamp(value[time_key], where) if time_key else None,
        source_id=str(value[ID_KEY]) if value.get(ID_KEY) is not None else position,
        extra={key: item for key, item in value.items() if key not in used},
    )


def _text(content, where: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):  # OpenAI content parts: keep the text parts, in order
        parts = [part.get("text") for part in content if isinstance(part, dict) and part.get("type") == "text"]
        return "\n".join(part for part in parts if isinstance(part, str))
    raise InputError(f"turn text must be a string or a list of content parts, found {_kind(content)}", where=where)


def _timestamp(value, where: str) -> str:
    try:
        return dates.parse_timestamp(value)
    except ValueError as error:
        raise InputError(f"bad timestamp: {error}", where=where) from None


def _kind(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(type(value), "a number")
