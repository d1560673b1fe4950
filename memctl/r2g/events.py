"""Candidates for SAME_AS between Facts (R2G-5), persisted so that later runs link to earlier events.

Table `r2g.event`: key "<predicate>\\x1f<negation 0/1>\\x1f<normalised agent>" (one entry per agent; "" for an
event without one) → up to MAX_ENTRIES [fact key, first day ordinal, last day ordinal, patients, agents], the
latest days kept. A new Fact is compared (linking.same_event: same predicate and polarity, a common AGENT,
a common PATIENT when both name one, days within ±same_event_days) with the entries under each of its agents.
Facts without a day (no resolved time and an untimed turn) are never merged, so they are not recorded.
"""

from __future__ import annotations

import bisect
from datetime import date
from itertools import islice

from memctl.r2g.linking import EventSignature, same_event
from memctl.r2g.recent import Recent
from memctl.r2g.seen import SeenKeys

EVENT_TABLE = "r2g.event"
MAX_ENTRIES = 64
KEYS_REMEMBERED = 32768  # most keys hold one or two entries


class EventIndex:
    def __init__(self, store, tolerance_days: int = 1, empty: bool = False):
        """empty: the table is known to be empty (no graph node was ever made: no Fact recorded here)."""
        self.store = store
        self.tolerance_days = tolerance_days
        self.pending: dict = {}  # index key → (entries, their fact keys), written with the batch
        # Entries written by earlier batches of this run: a busy key (the speaker's everyday verbs) is read
        # again in most batches, and a store read probes one segment per flushed batch.
        self.recent = Recent(KEYS_REMEMBERED)
        # The keys written since this index was made, when the table was empty then: no lookup for the others.
        self.written: SeenKeys | None = SeenKeys() if empty else None

    def same_events(self, fact_key: str, event: EventSignature) -> list:
        """Keys of recorded facts that are the same event as `event`; records `fact_key` for later ones."""
        if event.first_day is None:
            return []
        matches = []
        entry = [fact_key, event.first_day.toordinal(), event.last_day.toordinal(), sorted(event.patients),
                 sorted(event.agents)]
        first, last = entry[1], entry[2]
        for agent in sorted(event.agents) or [""]:
            index_key = f"{event.predicate}\x1f{int(event.negation)}\x1f{agent}"
            entries, recorded = self._pending(index_key)
            # Entries are ordered by their last day: those ending too early for the window are a prefix.
            for other in islice(entries, bisect.bisect_left(entries, first - self.tolerance_days, key=_last_day),
                                None):
                if other[1] - last > self.tolerance_days or other[0] == fact_key:
                    continue
                if other[0] not in matches and same_event(event, _signature(event, other), self.tolerance_days):
                    matches.append(other[0])
            if fact_key not in recorded:
                bisect.insort(entries, entry, key=_latest)
                recorded.add(fact_key)
                for dropped in entries[:-MAX_ENTRIES]:
                    recorded.discard(dropped[0])
                del entries[:-MAX_ENTRIES]
        return matches

    def _pending(self, index_key: str) -> tuple[list, set]:
        """The batch's own copy of the entries under `index_key` (changed in place until the batch is written;
        the stored and remembered lists are never changed), and the fact keys they hold."""
        found = self.pending.get(index_key)
        if found is None:
            entries = list(self._entries(index_key))
            found = self.pending[index_key] = (entries, {other[0] for other in entries})
        return found

    def _entries(self, index_key: str) -> list:
        if self.written is not None and index_key not in self.written:
            return []
        entries = self.recent.get(index_key)
        return (self.store.get(EVENT_TABLE, index_key) or []) if entries is None else entries

    def flush(self, draft) -> None:
        """Hand the changed entries to the batch being committed, and keep them at hand (the next batch copies
        them before it changes them)."""
        for index_key, (entries, _) in self.pending.items():
            draft.record(EVENT_TABLE, index_key, entries)
            self.recent.put(index_key, entries)
        if self.written is not None:
            self.written.add_all(self.pending)
        self.pending = {}


def _latest(entry: list) -> tuple:
    return entry[2], entry[0]


def _last_day(entry: list) -> int:
    return entry[2]


def _signature(event: EventSignature, entry: list) -> EventSignature:
    _key, first, last, patients, agents = entry
    return EventSignature(event.predicate, event.negation, frozenset(agents), frozenset(patients),
                          date.fromordinal(first), date.fromordinal(last))
