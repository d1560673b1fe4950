"""LoCoMo files and MemDaily (Chinese, converted to the same shape).

A JSON list of samples: `sample_id` (the conv_id) and `conversation` with `session_N` (a list of turns) and
`session_N_date_time` ("1:56 pm on 8 May, 2023" or "2024年04月01日 周一"). A turn has `speaker`, `dia_id` (its
source_id), `text`, and optional keys. The turn's ts is its own `time` when present (MemDaily: "2024年04月01日
周一 08:51"), else its session's date; `time` itself is not kept, since ts holds it exactly (minute precision;
the weekday follows from the date). Date keys without a session (conv-26) are ignored, as are `qa` and the
summaries.

Generic fields: the session is N of `session_N` (as a string: "3"; MemDaily's sessions are its days);
`blip_caption` (LoCoMo: the caption of an image the speaker shared, which is all of the image the file holds)
becomes an image attachment with that caption; no turn says which it replies to. LoCoMo's `img_url` and
`query` (where and by which search the dataset's builders found the image) and `re-download` record how the
dataset was made, not what was said, and are dropped: with them the turn rows of locomo-dev.json take twice the
space. Other keys (MemDaily's `place` and `mid`) are kept as the turn's extra.
"""

from __future__ import annotations

import re

from engine.errors import InputError
from memctl.ingest import dates
from memctl.ingest.model import Conversation, Turn

SESSION_KEY = re.compile(r"session_(\d+)")
TURN_KEYS = ("speaker", "dia_id", "text")
TURN_TIME_KEY = "time"
CAPTION_KEY = "blip_caption"
DATASET_KEYS = ("img_url", "query", "re-download")
# A dia_id: D<session number>:<turn number> (version-3 stores kept no session: see generic_fields_of_format_3).
DIALOG_ID = re.compile(r"D(\d+):\d+")


def is_locomo(value) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and isinstance(value[0], dict)
        and isinstance(value[0].get("conversation"), dict)
    )


def parse(value, name: str) -> list[Conversation]:
    if not is_locomo(value):
        raise InputError("not a LoCoMo file: expected a list of samples with 'sample_id' and 'conversation'",
                         where=name)
    return [_sample(sample, name, f"{name}[{index}]") for index, sample in enumerate(value)]


def _sample(sample, name: str, where: str) -> Conversation:
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        raise InputError("a LoCoMo sample needs a 'conversation' object", where=where)
    conv_id = sample.get("sample_id")
    if not isinstance(conv_id, str) or not conv_id:
        raise InputError("a LoCoMo sample needs a 'sample_id' string", where=where)
    conversation = sample["conversation"]
    sessions = sorted(
        (int(match[1]), key)
        for key in conversation
        if (match := SESSION_KEY.fullmatch(key)) and isinstance(conversation[key], list)
    )
    turns = []
    for number, key in sessions:
        session_where = f"{name}: {conv_id} {key}"
        session_ts = _date(conversation.get(f"{key}_date_time"), f"{session_where}_date_time")
        for index, turn in enumerate(conversation[key]):
            turns.append(_turn(turn, conv_id, str(number), session_ts, f"{session_where}[{index}]"))
    return Conversation(conv_id, turns)


def _turn(turn, conv_id: str, session: str, session_ts: str | None, where: str) -> Turn:
    if not isinstance(turn, dict):
        raise InputError("a LoCoMo turn must be an object", where=where)
    for key in TURN_KEYS:
        if not isinstance(turn.get(key), str):
            raise InputError(f"a LoCoMo turn needs a '{key}' string", where=where)
    ts = session_ts
    if turn.get(TURN_TIME_KEY) is not None:
        ts = _date(turn[TURN_TIME_KEY], f"{where}.{TURN_TIME_KEY}")
    extra = {key: value for key, value in turn.items()
             if key not in TURN_KEYS and key not in DATASET_KEYS and key != TURN_TIME_KEY}
    return Turn(
        conv_id=conv_id,
        speaker=turn["speaker"],
        text=turn["text"],
        ts=ts,
        source_id=turn["dia_id"],
        extra=extra,
        session=session,
        attachments=_attachments(extra),
    )


def _attachments(extra: dict) -> tuple:
    """The image attachment of a caption, taken out of `extra` (a caption that is not text stays there)."""
    caption = extra.get(CAPTION_KEY)
    if not isinstance(caption, str) or not caption:
        return ()
    del extra[CAPTION_KEY]
    return ({"kind": "image", "caption": caption},)


def generic_fields_of_format_3(source_id: str, extra: dict) -> dict:
    """What this adapter writes today for a turn that a version-3 store holds (for `memctl migrate`): the session
    of a dia_id ("D3:7" → "3"; version-3 R2G derived sessions this way from any source id of that form,
    whichever adapter wrote it) and the image attachment of a caption kept in extra. Returns the fields found
    ("session", "attachments") with "extra" the rest of extra; {"extra": extra} when there are none."""
    fields: dict = {"extra": dict(extra)}
    match = DIALOG_ID.fullmatch(source_id)
    if match:
        fields["session"] = match[1]
    attachments = _attachments(fields["extra"])
    if attachments:
        fields["attachments"] = attachments
    return fields


def _date(value, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError("a date must be a string", where=where)
    try:
        return dates.parse_any(value)
    except ValueError as error:
        raise InputError(f"bad date: {error}", where=where) from None
