"""TermTable: a writer's vocabulary coded by numba kernels (engine.text.term_kernels) instead of a dict.

Coding a batch's terms is one dict operation per token with engine.text.pieces.Vocabulary: about 140 ns a
token even at C speed (1.45 million tokens of a 100k-document build: 0.2 s, a sixth of the build). Here the
batch's terms arrive as one UTF-8 string and a kernel hashes and looks them up byte by byte, ten times
faster. A writer that asked for the numba kernels (TextIndex(kernels="numba"), or "auto" with numba loaded)
uses it; both vocabularies give a build the same terms, so the segments are byte for byte the same.

Codes are dense: the n-th new term gets code n. A large batch is coded on a thread of its own (the kernel
runs without the GIL), while the writer packs and commits the batch: `code` returns the codes array at once,
and whatever reads the codes or the table first waits for that thread (`wait`).
"""

from __future__ import annotations

import numpy as np

from engine.text import stored
from engine.text import term_kernels

SEPARATOR_BYTE = ord(stored.SEPARATOR)
INITIAL_TERMS = 1 << 12
THREAD_MIN_TOKENS = 1 << 16  # below this, a thread costs more than the coding it would overlap


class TermTable:
    def __init__(self):
        self.slots = np.full(2 * INITIAL_TERMS, -1, dtype=np.int32)
        self.hashes = np.zeros(INITIAL_TERMS, dtype=np.uint64)
        self.offsets = np.zeros(INITIAL_TERMS + 1, dtype=np.int64)
        self.term_bytes = np.zeros(16 * INITIAL_TERMS, dtype=np.uint8)
        self.term_count = 0
        self._decoded: list = []  # the terms as str, decoded as entries() needs them
        self._worker = None  # an engine.background.Background coding the last batch, until waited for

    @property
    def code_space(self) -> int:
        self.wait()
        return self.term_count

    def code(self, runs, total: int) -> np.ndarray:
        """The codes (int32) of the `total` terms of `runs` (engine.text.pieces.TermRuns), filled by the time
        `wait` returns; ValueError, with the table unchanged, when a term is empty or holds the separator."""
        self.wait()
        data = runs.all_joined().encode("utf-8", "surrogatepass")  # lone surrogates round-trip, as in a dict
        if total == 0 and not data:
            return np.zeros(0, dtype=np.int32)
        if not data or data.count(SEPARATOR_BYTE) != total - 1 or data[0] == SEPARATOR_BYTE \
                or data[-1] == SEPARATOR_BYTE or b"  " in data:
            raise ValueError("index terms must be non-empty, hold no spaces and have one position each")
        array = np.frombuffer(data, dtype=np.uint8)
        codes = np.empty(total, dtype=np.int32)
        if total < THREAD_MIN_TOKENS:
            self._fill(array, codes)
        else:
            from engine.background import Background

            self._worker = Background(self._fill, array, codes, name="memctl-terms")
        return codes

    def wait(self) -> None:
        """Until the last batch is coded; raises what stopped its coding (once)."""
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.result()

    def _fill(self, array: np.ndarray, codes: np.ndarray) -> None:
        token = cursor = 0
        while True:
            status, token, cursor, self.term_count = term_kernels.code_terms(
                array, SEPARATOR_BYTE, codes, token, cursor, self.slots, self.hashes, self.offsets,
                self.term_bytes, self.term_count)
            if status == term_kernels.STATUS_DONE:
                return
            self._grow(array.size - cursor)

    def _grow(self, remaining_bytes: int) -> None:
        """Room for at least one more term of up to `remaining_bytes` bytes (sizes double, as a list's do)."""
        count = self.term_count
        if 2 * (count + 1) > self.slots.size:
            self.slots = np.full(2 * self.slots.size, -1, dtype=np.int32)
            term_kernels.fill_slots(self.slots, self.hashes, count)
        if count + 2 > self.offsets.size:
            self.hashes = _resized(self.hashes, 2 * self.hashes.size)
            self.offsets = _resized(self.offsets, 2 * self.offsets.size - 1)
        needed = int(self.offsets[count]) + remaining_bytes + 1
        if needed > self.term_bytes.size:
            self.term_bytes = _resized(self.term_bytes, max(needed, 2 * self.term_bytes.size))

    def entries(self) -> tuple[np.ndarray, list]:
        """Every code and its term, in code order."""
        self.wait()
        known = len(self._decoded)
        if known < self.term_count:
            data = self.term_bytes[self.offsets[known]: self.offsets[self.term_count]].tobytes()
            self._decoded += data.decode("utf-8", "surrogatepass").split(stored.SEPARATOR)[:-1]
        return np.arange(self.term_count, dtype=np.int64), self._decoded


def _resized(array: np.ndarray, size: int) -> np.ndarray:
    grown = np.zeros(size, dtype=array.dtype)
    grown[:array.size] = array
    return grown
