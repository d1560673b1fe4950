"""What R2G reads from raw storage: the chunks of each conversation in order, their turns, and turn texts.

Order is the one `RawStore.iter_turns` documents: conversations by conv_id; inside one, chunks by their first
turn's time (untimed chunks last), ties in storing order; turns in chunk order. Only the chunks near a new one
are decoded, and a chunk's blob is read (and verified) only when one of its turn texts is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.raw import TurnChunk

def conversations(raw) -> dict:
    """{conv_id: [engine.raw.TurnChunk in conversation order]} of every chunk stored with turns."""
    chunks: dict = {}
    for chunk in raw.turn_chunks():
        chunks.setdefault(chunk.conv_id, []).append(chunk)
    return chunks


def session_of(turn: dict) -> str:
    """The session a turn belongs to: the one its input named (stored with the turn by its ingest adapter), else
    the turn's day, else one session for an untimed conversation. Only turns of one conversation are compared."""
    session = turn.get("session")
    if session is not None:
        return session
    ts = turn.get("ts")
    return ts[:10] if ts else ""


class ChunkText:
    """A chunk's bytes, read from its blob on first use."""

    __slots__ = ("raw", "raw_id", "_data")

    def __init__(self, raw, raw_id: str):
        self.raw = raw
        self.raw_id = raw_id
        self._data = None

    def span(self, offset: int, length: int) -> str:
        if self._data is None:
            self._data = self.raw.read(self.raw_id)
        return self._data[offset: offset + length].decode("utf-8")


class Turn:
    """One stored turn: its decoded row (`meta`: turn_id, conv_id, speaker, ts, source_id, raw_ref, extra, session,
    attachments, reply_to),
    whether this run converts it, and its text (read lazily)."""

    __slots__ = ("meta", "new", "chunk", "_text")

    def __init__(self, meta: dict, new: bool, chunk: ChunkText):
        self.meta = meta
        self.new = new
        self.chunk = chunk
        self._text = None

    @property
    def text(self) -> str:
        if self._text is None:
            ref = self.meta["raw_ref"]
            self._text = self.chunk.span(ref["offset"], ref["length"])
        return self._text


@dataclass(frozen=True, slots=True)
class ChunkStart:
    """Marks that the following turns come from `info`'s chunk."""

    info: TurnChunk
    new: bool
    turns: int


GAP = object()  # chunks left out of the walk: the turns on either side are not neighbours


def walk(raw, chunks: list, new_ids: set, radius: int = 2):
    """ChunkStart markers, Turns and GAPs of one conversation, decoding only the new chunks and the `radius`
    chunks on either side of each (their turns are the new turns' neighbours, and those neighbours' own)."""
    new_positions = [index for index, info in enumerate(chunks) if info.raw_id in new_ids]
    near = {position for index in new_positions for position in range(index - radius, index + radius + 1)}
    gap_open = False
    for index, info in enumerate(chunks):
        if index not in near:
            if not gap_open:
                yield GAP
                gap_open = True
            continue
        gap_open = False
        new = info.raw_id in new_ids
        metas = raw.chunk_turns(info)
        yield ChunkStart(info, new, len(metas))
        text = ChunkText(raw, info.raw_id)
        for meta in metas:
            yield Turn(meta, new, text)


def with_neighbors(stream):
    """(previous, turn, next) for each Turn of `stream` (None across a GAP or at an end); ChunkStart markers
    pass through once every turn before them has been yielded."""
    previous = current = None
    held: list = []
    for item in stream:
        if item is GAP:
            if current is not None:
                yield previous, current, None
            previous = current = None
            yield from held
            held = []
        elif isinstance(item, ChunkStart):
            held.append(item)
        else:
            if current is not None:
                yield previous, current, item
            yield from held
            held = []
            previous, current = current, item
    if current is not None:
        yield previous, current, None
    yield from held
