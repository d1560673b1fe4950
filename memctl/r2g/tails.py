"""Where each conversation ends, so that converting a few new chunks (`memctl remember`) reads the chunks next to
them instead of listing every chunk of the store.

Table `r2g.conv`: conv_id → the raw ids of the conversation's last TAIL_CHUNKS chunks, in conversation order,
written with the batch that marks the last of them converted. Record `r2g.meta/converted_through`: how many
chunks with turns the store had stored (RawStore.turn_chunks_stored) when a run left every one of them
converted and every converted conversation with its tail; the chunks stored since are numbered from it (their
`seq`).

A run for some chunks takes the tails when they tell the whole story: the chunks stored since the last
complete run are exactly those of its input, and in each conversation they all sort after the tail. The chunk
list [tail…, new…] then walks as the whole conversation would (rawturns.walk decodes only the chunks within
its radius of a new one, which the tail holds; a conversation without a tail has no chunk converted). Otherwise
the run lists every conversation from the raw store, as `r2g` does.
"""

from __future__ import annotations

TAIL_TABLE = "r2g.conv"
CONVERTED_KEY = "converted_through"
TAIL_CHUNKS = 2  # rawturns.walk's radius


def tail_of(chunks: list) -> list[str]:
    """The tail to record of a conversation whose chunks, in order, are `chunks` (engine.raw.TurnChunk)."""
    return [info.raw_id for info in chunks[-TAIL_CHUNKS:]]


def after_tails(store, raw, meta_table: str, raw_ids: list) -> dict | None:
    """{conv_id: [TurnChunk in conversation order]}: each conversation of the chunks `raw_ids` as its tail
    followed by its chunks stored since the last complete run; None when the tails cannot tell (module doc)."""
    converted = store.get(meta_table, CONVERTED_KEY)
    if converted is None:
        return None
    given = {info.raw_id: info for info in raw.turn_chunks_of(sorted(set(raw_ids))) if info is not None}
    new = sorted((info for info in given.values() if info.seq >= converted), key=lambda info: info.order)
    if len(new) != raw.turn_chunks_stored() - converted:
        return None
    by_conversation: dict = {}
    for info in new:
        by_conversation.setdefault(info.conv_id, []).append(info)
    for (conv_id, chunks), tail_ids in zip(list(by_conversation.items()),
                                           store.get_many(TAIL_TABLE, list(by_conversation))):
        tail = raw.turn_chunks_of(tail_ids or [])
        if None in tail or (tail and chunks[0].order <= tail[-1].order):
            return None
        by_conversation[conv_id] = tail + chunks
    return by_conversation
