"""The NodeIndex schema (seed 001 §4.y W2): which nodes are indexed, and the document each one becomes.

R2G writes these documents (memctl.r2g.nodeindex opens the index) and recall reads them (stage A weighs their
fields, `recall.field_weights`); the schema lives below both so that neither imports the other's code.

A document's key is its node key, its type the node type, its timestamp the node's recency (epoch seconds,
`epoch_seconds`: recall reads node and turn times with it too, so its time windows and recency agree with the
index's) and its tags the node's tags. Fields (their weights are the `index.field_weights` and
`recall.field_weights` settings):

    every indexed node   title, text, keywords, entities
    Episode, in addition turn      the raw turn's own words (summary-only indexing costs recall: see below)
                         speaker   who said it
                         date      the turn's date-time as words ("1:56 pm on 8 May, 2023",
                                   "2024年04月01日 周一 08:51")
                         caption   the captions (or alt texts) of what was shared with the turn, if any: its
                                   attachments' `caption`, as every ingest adapter stores them
                         context   text + caption of the previous and the next turn of the same session, each
                                   only when another speaker said it (the question a turn answers, or the answer
                                   it got)

Why these fields: a research result on LoCoMo dev (questions of categories 1-4, one index per conversation):
turn + speaker + date + caption at weight 1 and the reply context at 0.3 beat plain BM25 over turns by +0.13
Recall@10, while indexing a summary instead of the turn's words lost 0.11. Checked on this implementation
(Episode hits only, same tokenizer): Recall@10 0.727 against 0.592 for BM25+ over the bare turns; without the
context field 0.715; varying the title, keywords and entities weights moves it by less than 0.01. (Most
LoCoMo turns are short enough to be their own summary, so there dropping the turn field costs only 0.008.)
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache

INDEXED_TYPES = ("Episode", "Fact", "Preference", "Concept")

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_WEEKDAYS_ZH = "一二三四五六日"


def caption_of(turn: dict) -> str:
    """The captions of a turn's attachments, one a line ("" when none has one)."""
    return "\n".join(attachment["caption"] for attachment in turn.get("attachments") or ()
                     if attachment.get("caption"))


def date_text(ts: str | None, lang: str) -> str:
    """A turn time as the words a question may use: LoCoMo's English form or MemDaily's Chinese form."""
    if not ts:
        return ""
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return ts
    timed = "T" in ts
    if lang == "zh":
        day = f"{moment.year}年{moment.month:02d}月{moment.day:02d}日 周{_WEEKDAYS_ZH[moment.weekday()]}"
        return f"{day} {moment.hour:02d}:{moment.minute:02d}" if timed else day
    day = f"{moment.day} {_MONTHS[moment.month - 1]}, {moment.year}"
    if not timed:
        return day
    hour = moment.hour % 12 or 12
    return f"{hour}:{moment.minute:02d} {'am' if moment.hour < 12 else 'pm'} on {day}"


def context_text(turn: dict, neighbors, session_of) -> str:
    """Text and caption of the neighbouring turns (previous, next) of the same session by another speaker."""
    parts = []
    for neighbor in neighbors:
        if neighbor is None or neighbor.meta["speaker"] == turn["speaker"] or \
                session_of(neighbor.meta) != session_of(turn):
            continue
        parts.append(neighbor.text)
        caption = caption_of(neighbor.meta)
        if caption:
            parts.append(caption)
    return "\n".join(parts)


def node_document(key: str, node_type: str, props: dict, extra_fields: dict | None = None) -> dict:
    """The TextIndex document of a node: its common fields, plus `extra_fields` (an Episode's turn fields)."""
    fields = {"title": props.get("title") or "", "text": props.get("text") or "",
              "keywords": " ".join(props.get("keywords") or ()), "entities": " ".join(props.get("entities") or ())}
    if extra_fields:
        fields.update(extra_fields)
    return {"key": key, "type": node_type, "fields": {name: text for name, text in fields.items() if text},
            "timestamp": epoch_seconds(props.get("recency")), "tags": list(props.get("tags") or ())}


def episode_fields(turn: dict, text: str, lang: str, context: str) -> dict:
    return {"turn": text, "speaker": turn.get("speaker") or "", "date": date_text(turn.get("ts"), lang),
            "caption": caption_of(turn), "context": context}


@lru_cache(maxsize=1 << 16)  # turns of a session share their time
def epoch_seconds(ts: str | None) -> float | None:
    """An ISO time as epoch seconds; a time without a zone is read as UTC (as the graph does)."""
    if not ts:
        return None
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()
