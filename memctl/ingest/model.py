"""The uniform shape every input format is parsed into: conversations of turns."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Turn:
    """One utterance. `text` is exactly the text stored in the raw chunk and addressed by the turn's raw_ref.

    `ts` is ISO 8601 (the turn's own time, else its session's) or None. `source_id` is the input's own id for
    the turn (LoCoMo `D1:3`, a JSONL `id`) or its position (`<file>#<line>`). The generic fields each adapter
    fills where its input says so (its docstring tells from what), and everything after ingest reads instead of
    the input's own keys:

    - `session`: the input's own session or thread of the conversation (a str; None: the input has none). It
      also guides chunk boundaries.
    - `attachments`: what a reader can read about files shared with the turn, a tuple of dicts with a `kind`
      ("image", "file", …) and, where the input has them, `caption` (a caption or alt text), `name` and `url`,
      all str.
    - `reply_to`: the source_id of the turn this one answers, where the input says so.

    `extra` keeps the input's other keys of the turn, as they were.
    """

    conv_id: str
    speaker: str | None
    text: str
    ts: str | None
    source_id: str
    extra: dict = field(default_factory=dict)
    session: str | None = None
    attachments: tuple = ()
    reply_to: str | None = None


@dataclass(slots=True)
class Conversation:
    conv_id: str
    turns: list[Turn]


@dataclass(slots=True)
class Source:
    """One input: a file, stdin or a --text argument. `name` labels it in errors, conv_ids and source_ids."""

    name: str
    data: bytes
