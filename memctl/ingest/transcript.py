"""`Speaker: text` transcripts, one turn per line, with an optional leading `[2025-09-15 10:35]` stamp.

A line that is not `Speaker: text` continues the turn above it; after a blank line (or before the first turn) it
becomes a turn without a speaker. A stamp holds for the following turns until the next stamp (it is the session
time when only the first line of a session carries one). Full-width colons (`用户：…`) are accepted.

Generic fields: none. A transcript marks no session (R2G then takes a turn's day for it, from its stamp), no
attachment and no reply.
"""

from __future__ import annotations

import re

from engine.errors import InputError
from memctl.ingest import dates
from memctl.ingest.model import Conversation, Turn

STAMP = r"\[(?P<stamp>\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?)\]"
# A speaker is a short name: up to 40 characters and 4 words, no colon or bracket, not a bare number.
SPEAKER = r"(?P<speaker>[^\s:：\[\]()（）#*>|-][^:：\[\]\n]{0,39}?)"
LINE = re.compile(rf"[ \t]*(?:{STAMP}[ \t]*)?{SPEAKER}[ \t]*[:：](?![/\\])[ \t]?(?P<text>.*)")
# Detection: most non-blank lines must be turns, by at most a few speakers or by speakers who each speak more
# than once on average (prose with a few "Note: …" lines is not a transcript).
DETECT_MIN_TURNS = 2
DETECT_MIN_FRACTION = 0.6
DETECT_FEW_SPEAKERS = 3
DETECT_SAMPLE_LINES = 2000


def match_turn(line: str) -> re.Match | None:
    match = LINE.fullmatch(line)
    if not match:
        return None
    speaker = match["speaker"].strip()
    if speaker.isdigit() or len(speaker.split()) > 4:
        return None
    return match


def looks_like(text: str) -> bool:
    lines = [line for line in text.split("\n", DETECT_SAMPLE_LINES)[:DETECT_SAMPLE_LINES] if line.strip()]
    speakers = [match["speaker"].strip() for line in lines if (match := match_turn(line))]
    return (
        len(speakers) >= DETECT_MIN_TURNS
        and len(speakers) >= DETECT_MIN_FRACTION * len(lines)
        and (len(set(speakers)) <= DETECT_FEW_SPEAKERS or len(set(speakers)) * 2 <= len(speakers))
    )


def parse(text: str, name: str) -> list[Conversation]:
    turns: list[Turn] = []
    stamp: str | None = None
    continues = False
    for line_number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continues = False
            continue
        match = match_turn(line)
        if match is None and continues:
            turns[-1].text += "\n" + line.rstrip()
            continue
        source_id = f"{name}#{line_number}"
        if match is None:
            turns.append(Turn(name, None, line.strip(), stamp, source_id))
        else:
            if match["stamp"]:
                stamp = _stamp(match["stamp"], name, line_number)
            turns.append(Turn(name, match["speaker"].strip(), match["text"].rstrip(), stamp, source_id))
        continues = True
    if not any(turn.speaker for turn in turns):
        raise InputError("no 'Speaker: text' lines found; is this a transcript?", where=name)
    return [Conversation(name, turns)]


def _stamp(stamp: str, name: str, line_number: int) -> str:
    try:
        return dates.parse_numeric(stamp)
    except ValueError as error:
        raise InputError(f"bad timestamp: {error}", where=f"{name}:{line_number}") from None
