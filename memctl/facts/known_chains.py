"""What a writer that commits batch after batch (r2g) knows of the chains it wrote, so that a batch touching a
chain reads its new claims only, not every claim of it again (a chain of a busy subject's slot grows to hundreds
of claims, and r2g touched it in nearly every batch).

Per chain: the chain record as committed and, for each claim, its Version (as a store read would give it back:
recorded to the whole second, versions.recorded_seconds) with its `fact resolve` decision and the chain
attributes it carries (maintain.chain_state). It holds for the writer that made it only while that writer holds
the store's lock, and a chain's entry is used only while the stored chain record is the one it was taken with;
what a batch learns counts once the batch has committed (committed()), so a failed batch leaves nothing behind.
Bounded: at most `limit` claims in all, the chains touched least recently forgotten first (read again when
touched again)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

# About 0.5 KB a claim: some 8 MB at most, for the chains a run touches again and again.
CLAIMS_KEPT = 16384


@dataclass(frozen=True, slots=True)
class Claim:
    version: object  # versions.Version
    decision: str | None  # "keep" | "reject" (facts.decision), None when undecided
    state: tuple  # maintain.chain_state of its props as committed
    shape: tuple  # maintain._shape: what that state was made from


class KnownChains:
    def __init__(self, limit: int = CLAIMS_KEPT):
        self.limit = limit
        self._chains: OrderedDict = OrderedDict()  # chain key → (record, {claim key: Claim})
        self._claims = 0
        self._pending: dict = {}

    def claims(self, chain: str, record: dict | None) -> dict | None:
        """{claim key: Claim} of the chain whose stored record is `record`, or None when not known."""
        found = self._chains.get(chain)
        if found is None or found[0] != record:
            return None
        self._chains.move_to_end(chain)
        return found[1]

    def stage(self, chain: str, record: dict, claims: dict) -> None:
        """What the chain is once the current batch commits."""
        self._pending[chain] = (record, claims)

    def committed(self) -> None:
        for chain, entry in self._pending.items():
            self._forget(chain)
            self._chains[chain] = entry
            self._claims += len(entry[1])
        self._pending = {}
        while self._claims > self.limit and self._chains:
            self._forget(next(iter(self._chains)))

    def _forget(self, chain: str) -> None:
        entry = self._chains.pop(chain, None)
        if entry is not None:
            self._claims -= len(entry[1])
