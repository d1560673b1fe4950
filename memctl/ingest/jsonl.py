"""JSON Lines: one turn object per line. Also home of `turn_from_object`, shared with the messages format.

A turn object has its text in `content` (a string, or OpenAI content parts) or `text`; its speaker in `speaker`,
`role` or `name`; optional `ts` / `timestamp` (ISO 8601 or epoch), `id` (its source_id) and `conv_id` /
`conversation_id` / `session_id` (grouping lines into conversations). A turn whose text is null or empty (a tool
call, say) is skipped; a turn with no text key at all is an error.

Generic fields:
- session: `session` (a string or number), else `session_id` when `conv_id` or `conversation_id` names the
  conversation (otherwise `session_id` names the conversation, as it always has);
- attachments: `attachments`, a list of objects, each read as kind from `kind` or `type` (default "file"),
  caption from `caption`, `alt`, `alt_text` or `description`, name from `name` or `filename`, and `url` (an
  attachment's other keys are not kept: the turn holds what a reader can read about the file); and the image
  and file parts of OpenAI content (`image_url` / `input_image` → an image with its url unless it is a data:
  URL, `file` / `input_file` → a file with its filename);
- reply_to: `reply_to`, `in_reply_to` or `parent_id` (a string or number: the source id of the turn answered).
Other keys are kept as the turn's extra.
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
SESSION_KEYS = ("session", "session_id")
REPLY_KEYS = ("reply_to", "in_reply_to", "parent_id")
ATTACHMENTS_KEY = "attachments"
ATTACHMENT_KEYS = {"kind": ("kind", "type"), "caption": ("caption", "alt", "alt_text", "description"),
                   "name": ("name", "filename"), "url": ("url",)}
GENERIC_KEYS = frozenset((*SESSION_KEYS, *REPLY_KEYS, ATTACHMENTS_KEY))
DEFAULT_ATTACHMENT_KIND = "file"
IMAGE_PARTS = ("image_url", "input_image")
FILE_PARTS = ("file", "input_file")


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
    session_key = reply_key = None
    attachments = ()
    if not value.keys().isdisjoint(GENERIC_KEYS):  # most lines have none: one set operation rules them out
        session_key = next((key for key in SESSION_KEYS if value.get(key) is not None and key != conversation_key),
                           None)
        reply_key = next((key for key in REPLY_KEYS if value.get(key) is not None), None)
        attachments = attachments_of(value.get(ATTACHMENTS_KEY), where)
    if type(value[text_key]) is list:
        attachments += _content_attachments(value[text_key])
    used = {text_key, speaker_key, time_key, conversation_key, ID_KEY, session_key, reply_key, ATTACHMENTS_KEY}
    return Turn(
        conv_id=str(value[conversation_key]) if conversation_key else name,
        speaker=value[speaker_key] if speaker_key else None,
        text=text,
        ts=_timestamp(value[time_key], where) if time_key else None,
        source_id=str(value[ID_KEY]) if value.get(ID_KEY) is not None else position,
        extra={key: item for key, item in value.items() if key not in used},
        session=_label(value[session_key], session_key, where) if session_key else None,
        attachments=attachments,
        reply_to=_label(value[reply_key], reply_key, where) if reply_key else None,
    )


def attachments_of(items, where: str | None) -> tuple:
    """The generic attachments of an `attachments` value (None: none)."""
    if items is None:
        return ()
    if not isinstance(items, list):
        raise InputError(f"'{ATTACHMENTS_KEY}' must be a list of objects, found {_kind(items)}", where=where)
    return tuple(_attachment(item, f"'{ATTACHMENTS_KEY}'[{index}]", where) for index, item in enumerate(items))


def _attachment(item, name: str, where: str) -> dict:
    if not isinstance(item, dict):
        raise InputError(f"{name} must be an object, found {_kind(item)}", where=where)
    attachment = {"kind": DEFAULT_ATTACHMENT_KIND}
    for field, keys in ATTACHMENT_KEYS.items():
        key = next((key for key in keys if item.get(key) is not None), None)
        if key is None:
            continue
        if not isinstance(item[key], str):
            raise InputError(f"{name}.{key} must be a string, found {_kind(item[key])}", where=where)
        if item[key]:
            attachment[field] = item[key]
    return attachment


def generic_fields_of_format_3(extra: dict) -> dict:
    """What this adapter writes today for a turn that a version-3 store holds (for `memctl migrate`): version 3
    kept a line's session, attachments and reply keys in extra. Returns the fields found ("session",
    "attachments", "reply_to") with "extra" the rest; a value this adapter would refuse stays in extra."""
    fields: dict = {"extra": dict(extra)}
    for field, keys in (("session", SESSION_KEYS), ("reply_to", REPLY_KEYS), ("attachments", (ATTACHMENTS_KEY,))):
        key = next((key for key in keys if extra.get(key) is not None), None)
        if key is None:
            continue
        try:
            fields[field] = attachments_of(extra[key], None) if key == ATTACHMENTS_KEY else _label(extra[key], key)
        except InputError:
            continue
        del fields["extra"][key]
    return fields


def _content_attachments(content: list) -> tuple:
    """Images and files among OpenAI content parts (their text parts are the turn's text)."""
    found = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in IMAGE_PARTS:
            image = part.get(kind)
            url = image.get("url") if isinstance(image, dict) else image
            found.append({"kind": "image", **({"url": url} if isinstance(url, str) and url
                                              and not url.startswith("data:") else {})})
        elif kind in FILE_PARTS:
            file = part.get(kind)
            name = (file if isinstance(file, dict) else part).get("filename")
            found.append({"kind": "file", **({"name": name} if isinstance(name, str) and name else {})})
    return tuple(found)


def _label(value, key: str, where: str | None = None) -> str | None:
    """A session or a replied-to id: a string or a number, as text (an empty string: none)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(f"'{key}' must be a string or a number, found {_kind(value)}", where=where)
    return str(value) or None


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
