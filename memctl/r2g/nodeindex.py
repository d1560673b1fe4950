"""The NodeIndex (seed 001 §4.y W2): Episodes, Facts, Preferences and Concepts in the store's `text:nodes` index.

A document's key is its node key, its type the node type, its timestamp the node's recency (epoch seconds) and
its tags the node's tags. Fields (weights come from the `index.field_weights` setting at query time, see
FIELD_WEIGHTS):

    every indexed node   title, text, keywords, entities
    Episode, in addition turn      the raw turn's own words (summary-only indexing costs recall: see below)
                         speaker   who said it
                         date      the turn's date-time as words ("1:56 pm on 8 May, 2023",
                                   "2024年04月01日 周一 08:51")
                         caption   the caption of an image shared with the turn, if any
                         context   text + caption of the previous and the next turn of the same session, each
                                   only when another speaker said it (the question a turn answers, or the answer
                                   it got)

Why these fields: a research result on LoCoMo dev (questions of categories 1-4, one index per conversation):
turn + speaker + date + caption at weight 1 and the reply context at 0.3 beat plain BM25 over turns by +0.13
Recall@10, while indexing a summary instead of the turn's words lost 0.11. Checked on this implementation
(Episode hits only, same tokenizer): Recall@10 0.727 against 0.592 for BM25+ over the bare turns; without the
context field 0.715; varying the title, keywords and entities weights moves it by less than 0.01. (Most
LoCoMo turns are short enough to be their own summary, so there dropping the turn field costs only 0.008.)

Only tokens are stored (TextIndex store_text=False): the node's text lives in the graph and the turn's in its
raw chunk, so the index does not hold a third copy.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache

# Defaults for the `index.field_weights` setting (title/text/keywords/entities are the engine's own defaults).
FIELD_WEIGHTS = {"title": 2.0, "text": 1.0, "keywords": 1.5, "entities": 1.5,
                 "turn": 1.0, "speaker": 1.0, "date": 1.0, "caption": 1.0, "context": 0.3}
INDEXED_TYPES = ("Episode", "Fact", "Preference", "Concept")
CAPTION_KEY = "blip_caption"  # LoCoMo's caption of an image shared with a turn (kept by ingest as turn extra)

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_WEEKDAYS_ZH = "一二三四五六日"


def open_index(store, config=None):
    """The store's node index (memctl.indexes.NODES) configured by the `index` settings, keeping tokens only."""
    from engine.text.index import TextIndex
    from memctl.indexes import NODES

    tokenizer, parameters = text_settings(config)
    return TextIndex(store, CachingTokenizer(tokenizer), parameters, store_text=False, owner=NODES)


class CachingTokenizer:
    """The configured tokenizer, remembering the index tokens of each line it analysed: R2G indexes every
    sentence several times (as the turn, in its summary, in the facts it states, in its neighbours' context).

    A text is analysed line by line (a line break separates words in every script, so only the positions
    differ: each line starts one unit after the last position of the line before). Everything else is the
    wrapped tokenizer's, including the signature queries are checked against."""

    LIMIT = 50_000

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self._lines: dict = {}

    def __getattr__(self, name):
        return getattr(self.tokenizer, name)

    def forget(self) -> None:
        """Drop the remembered lines (the repeats are within a batch: memory stays a batch's worth)."""
        self._lines = {}

    def index_tokens(self, text: str) -> tuple[list, list]:
        if "\n" not in text:
            return self._line(text)
        terms: list = []
        positions: list = []
        for line in text.split("\n"):
            line_terms, line_positions = self._line(line)
            if line_terms:
                start = positions[-1] + 1 if positions else 0
                terms.extend(line_terms)
                positions.extend(position + start for position in line_positions)
        return terms, positions

    def _line(self, line: str) -> tuple[list, list]:
        found = self._lines.get(line)
        if found is None:
            if len(self._lines) >= self.LIMIT:
                self._lines.clear()
            found = self._lines[line] = self.tokenizer.index_tokens(line)
        return found


def text_settings(config):
    """(tokenizer, BM25 parameters) of the configuration; the engine's defaults without one."""
    if config is None:
        from engine.text.bm25 import BM25Parameters
        from engine.text.tokenizer import Tokenizer

        return Tokenizer(), BM25Parameters(field_weights={**FIELD_WEIGHTS})
    from memctl.search_settings import text_settings as configured

    tokenizer, parameters = configured(config)
    # Settings files written before these fields existed still weigh them as measured.
    missing = {name: weight for name, weight in FIELD_WEIGHTS.items() if name not in parameters.field_weights}
    if missing:
        from dataclasses import replace

        parameters = replace(parameters, field_weights={**missing, **parameters.field_weights})
    return tokenizer, parameters


def caption_of(turn: dict) -> str:
    caption = (turn.get("extra") or {}).get(CAPTION_KEY)
    return caption if isinstance(caption, str) else ""


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
