"""Turn analyses ahead of the writer: `memctl r2g --jobs N` (issue 20).

Half of a conversion's CPU is `analyze_turn` (sentence split, NLP, slot and preference rules), a pure function
of a turn's text, time and speaker; the other half (emitting nodes, SAME_AS lookups, the text index, the
commit) reads and writes the store and stays in the one writer process. With N > 1 jobs, N worker processes
analyse the turns the writer will reach next while it emits and commits the ones before: the writer consumes
the analyses in the walk's own order, so the graph is the one a single process builds, byte for byte.

Workers are started with "spawn", never "fork": the writer may have a background thread (engine.background)
holding a lock at the moment of a fork. A worker imports only what analysing needs (about 0.3 s) and keeps its
own memo of repeated sentences. Turns travel in groups of GROUP_TURNS (one pickle each way per group: about
1.3 KB and 0.09 ms per turn against 0.9 ms of analysis) and at most LOOKAHEAD_GROUPS groups per worker are in
flight, so memory stays bounded however long the run. Workers start with the run's first conversation and stop
at its end; since starting them costs more than a small run's analyses, one job (inline) is the default.
"""

from __future__ import annotations

from collections import deque

GROUP_TURNS = 16
LOOKAHEAD_GROUPS = 8  # per worker
# extract's memo of sentences without times, the writer's or a worker's: 8,192 recent ones keep 87% of the repeats
# a whole-run memo finds on a 4 MiB generated transcript (LoCoMo dev: all), at a twelfth of its memory.
MEMO_ENTRIES = 8192


def turn_analyses(jobs: int, memo, lexicon_directory: str | None):
    """What analyses a run's turns: inline (`memo`: the writer's memo) for one job, else a pool of `jobs`
    workers, started at its first use and stopped when the run leaves its `with` block."""
    return Inline(memo) if jobs <= 1 else Pool(jobs, lexicon_directory)


class Inline:
    def __init__(self, memo):
        self.memo = memo

    def __enter__(self) -> Inline:
        return self

    def __exit__(self, *exc) -> None:
        pass

    def analyzed(self, items):
        """(item, analysis) for each item of a with_neighbors stream, in order; analysis is None except for a
        new turn's (previous, turn, following) triple."""
        from memctl.r2g.extract import analyze_turn

        for item in items:
            turn = _new_turn(item)
            if turn is None:
                yield item, None
            else:
                meta = turn.meta
                yield item, analyze_turn(turn.text, meta["ts"], speaker=meta["speaker"], memo=self.memo)


def _new_turn(item):
    if isinstance(item, tuple) and item[1].new:
        return item[1]
    return None


class Pool:
    def __init__(self, jobs: int, lexicon_directory: str | None):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.jobs = jobs
        self.executor = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=_start_worker, initargs=(lexicon_directory,))

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc) -> None:
        # An interrupted run (an error in the writer, Ctrl-C) must not wait for analyses nobody will read.
        self.executor.shutdown(wait=exc[0] is None, cancel_futures=True)

    def analyzed(self, items):
        """As Inline.analyzed: groups of new turns are submitted as the walk reaches them, and each item is
        yielded once its group is analysed and LOOKAHEAD_GROUPS × jobs groups are in flight behind it."""
        waiting: deque = deque()  # (item, group, index in group): the walk's order
        groups: deque = deque()  # submitted groups, oldest first: [future, analyses or None]
        group_items: list = []
        for item in items:
            turn = _new_turn(item)
            if turn is None:
                waiting.append((item, None, 0))
                continue
            if not group_items:
                groups.append([None, None, group_items])
            waiting.append((item, groups[-1], len(group_items)))
            meta = turn.meta
            group_items.append((turn.text, meta["ts"], meta["speaker"]))
            if len(group_items) == GROUP_TURNS:
                self._submit(groups[-1])
                group_items = []
            while len(groups) > LOOKAHEAD_GROUPS * self.jobs:
                yield from self._release(waiting, groups)
        if group_items:
            self._submit(groups[-1])
        while waiting:
            yield from self._release(waiting, groups)

    def _submit(self, group: list) -> None:
        group[0] = self.executor.submit(_analyze_group, group[2])
        group[2] = None

    @staticmethod
    def _release(waiting: deque, groups: deque):
        """Yield the waiting items up to and including the oldest group's turns, then forget that group."""
        oldest = groups[0] if groups else None
        while waiting:
            item, group, index = waiting[0]
            if group is not None and group is not oldest:
                break
            waiting.popleft()
            if group is None:
                yield item, None
                continue
            if group[1] is None:
                group[1] = group[0].result()
            yield item, group[1][index]
            if index == len(group[1]) - 1:
                groups.popleft()
                return


_worker_memo = None


def _start_worker(lexicon_directory: str | None) -> None:
    global _worker_memo
    from memctl.language.lexicon import use_directory
    from memctl.r2g.recent import Recent

    use_directory(lexicon_directory)
    _worker_memo = Recent(MEMO_ENTRIES)


def _analyze_group(turns: list) -> list:
    from memctl.r2g.extract import analyze_turn

    return [analyze_turn(text, ts, speaker=speaker, memo=_worker_memo) for text, ts, speaker in turns]
