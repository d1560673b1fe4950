"""Which format an input is in, and parsing it into checked conversations.

Detection, in order: text starting with `[` or `{` that parses as JSON is LoCoMo (a list of samples with a
`conversation`) or chat messages (a list of role/content objects, or `{"messages": [...]}`); other JSON is refused
as unknown. Text that is not one JSON document but whose first line is a JSON object is JSONL. Then a
`Speaker: text` transcript when most lines are turns, else plain text.
"""

from __future__ import annotations

import codecs

from engine.errors import InputError
from memctl.ingest import jsonparse, locomo, transcript
from memctl.ingest.chunker import MAX_TOKENS
from memctl.ingest.decode import clean_string
from memctl.ingest.model import Conversation

FORMATS = ("text", "transcript", "jsonl", "messages", "locomo")
ALIASES = {"auto": None, "plain": "text", "txt": "text", "openai": "messages", "memdaily": "locomo"}
JSON_FORMATS = ("messages", "locomo")
EXTRA_MAX_DEPTH = 32
INT64 = range(-(2**63), 2**64)
NOT_JSON = object()
HEAD_LINE_BYTES = 64 << 10  # of a line, what detection reads


def normalize_format(format: str | None) -> str | None:
    if format is None:
        return None
    name = ALIASES.get(format.lower(), format.lower())
    if name is not None and name not in FORMATS:
        raise InputError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)} (or auto)")
    return name


def parse_document(text: str, name: str, format: str | None = None, errors: str = "strict",
                   max_tokens: int = MAX_TOKENS) -> tuple[str, list]:
    """(format, conversations) of one decoded input; refuses an input that holds no turn. Plain text
    paragraphs are cut to at most `max_tokens`."""
    format = normalize_format(format)
    value = NOT_JSON
    if format is None:
        format, value = detect(text, name)
    elif format in JSON_FORMATS:
        value = jsonparse.load(text, name)
    if format == "locomo":
        conversations = locomo.parse(value, name)
    elif format == "messages":
        from memctl.ingest import messages

        conversations = messages.parse(value, name)
    elif format == "jsonl":
        from memctl.ingest import jsonl

        conversations = jsonl.parse(text, name)
    elif format == "transcript":
        conversations = transcript.parse(text, name)
    else:
        from memctl.ingest import plain  # imported when needed: its regexes cost a cold process 3 ms

        conversations = plain.parse(text, name, max_tokens)
    _refuse_no_turns(conversations, format, name)
    if format in ("jsonl", *JSON_FORMATS):
        _clean(conversations, errors)
    return format, conversations


def parse_bytes(data: bytes, name: str, format: str | None = None, errors: str = "strict",
                max_tokens: int = MAX_TOKENS) -> tuple[str, list]:
    """parse_document of UTF-8 bytes without byte order mark and with \\n newlines (decode.normalized_bytes).
    Plain text is read from the bytes a paragraph or window at a time (memctl.ingest.plain), never decoded whole;
    the other formats are decoded, then parsed."""
    format = normalize_format(format)
    if not _reads_as_text(data, format, errors):
        return parse_document(data.decode("utf-8", errors), name, format, errors, max_tokens)
    from memctl.ingest import plain

    conversations = plain.parse_bytes(data, name, errors, max_tokens)
    _refuse_no_turns(conversations, "text", name)
    return "text", conversations


def _reads_as_text(data: bytes, format: str | None, errors: str) -> bool:
    """Whether parse_document would read `data` as plain text (False: let it decide), from the lines
    transcript.looks_like samples. A line above HEAD_LINE_BYTES is judged by its head: the same verdict unless
    spaces fill that head up to its colon; a line whose head is blank leaves the verdict to parse_document."""
    if format is not None:
        return format == "text"
    lines = []
    position = 0
    while len(lines) < transcript.DETECT_SAMPLE_LINES and position <= len(data):
        end = data.find(b"\n", position)
        end = len(data) if end < 0 else end
        stop = min(end, position + HEAD_LINE_BYTES)
        lines.append(codecs.getincrementaldecoder("utf-8")(errors).decode(data[position:stop], final=stop == end))
        if stop < end and not lines[-1].strip():
            return False
        position = end + 1
    head = "\n".join(lines)
    return head.strip() != "" and head.lstrip()[:1] not in ("[", "{") and not transcript.looks_like(head)


def _refuse_no_turns(conversations: list, format: str, name: str) -> None:
    if not any(conversation.turns for conversation in conversations):
        raise InputError(f"empty input: no turns found (read as {format})", where=name)


def detect(text: str, name: str) -> tuple[str, object]:
    """(format, the parsed JSON value or NOT_JSON)."""
    if text.lstrip()[:1] in ("[", "{"):
        try:
            value = jsonparse.load(text, name)
        except InputError:
            return _not_one_json_document(text, name)
        return _json_format(value, text, name), value
    return ("transcript" if transcript.looks_like(text) else "text"), NOT_JSON


def _not_one_json_document(text: str, name: str) -> tuple[str, object]:
    """JSONL, or text that merely starts with a bracket ("[2025-09-15 10:35] Alice: hi"), or broken JSON."""
    stripped = text.lstrip()
    opener, follower = stripped[:1], stripped[1:].lstrip()[:1]
    first_line = stripped.split("\n", 1)[0]
    if opener == "{":
        try:
            first = jsonparse.load(first_line, name)
        except InputError:
            first = None
        if isinstance(first, dict):
            return "jsonl", NOT_JSON
    if transcript.looks_like(text):
        return "transcript", NOT_JSON
    if opener == "{" or follower in ("{", "[", '"', "]", ""):
        jsonparse.load(text, name)  # raises the malformed-JSON error with its line and column
    return "text", NOT_JSON


def _json_format(value, text: str, name: str) -> str:
    if locomo.is_locomo(value):
        return "locomo"
    from memctl.ingest import messages

    if messages.message_list(value) is not None:
        return "messages"
    if isinstance(value, dict) and "\n" not in text.strip():
        return "jsonl"
    if isinstance(value, list) and not value:
        raise InputError("empty input: an empty JSON list", where=name)
    raise InputError(
        "unknown format: JSON that is neither LoCoMo samples nor chat messages "
        '([{"role": ..., "content": ...}] or {"messages": [...]}); pass --format to force one',
        where=name,
    )


def _clean(conversations: list[Conversation], errors: str) -> None:
    """Make every string of JSON-sourced turns encodable and every extra value storable (msgpack: 64-bit ints,
    bounded nesting)."""
    for conversation in conversations:
        conversation.conv_id = clean_string(conversation.conv_id, conversation.conv_id, errors)
        for turn in conversation.turns:
            where = turn.source_id
            turn.conv_id = conversation.conv_id
            turn.source_id = clean_string(turn.source_id, where, errors)
            turn.text = clean_string(turn.text, where, errors)
            if turn.speaker is not None:
                turn.speaker = clean_string(turn.speaker, where, errors)
            turn.extra = _clean_value(turn.extra, where, errors, 0)


def _clean_value(value, where: str, errors: str, depth: int):
    if depth > EXTRA_MAX_DEPTH:
        raise InputError(f"a turn's extra fields nest deeper than {EXTRA_MAX_DEPTH} levels", where=where)
    if isinstance(value, str):
        return clean_string(value, where, errors)
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        return value if value in INT64 else str(value)
    if isinstance(value, list):
        return [_clean_value(item, where, errors, depth + 1) for item in value]
    return {clean_string(key, where, errors): _clean_value(item, where, errors, depth + 1)
            for key, item in value.items()}
