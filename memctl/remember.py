"""`memctl remember`: what an agent does after every exchange. The input is ingested and converted to the memory
graph in one process and ONE commit (one WAL record, one fsync: engine.store.Store.transaction), so a crash
leaves either nothing of it or all of it, raw chunks and graph together.

The store then holds what `ingest` followed by `r2g` would have made of the same input: the same pipeline
(memctl.ingest.pipeline) and the same Builder run. Its cost does not grow with the store: the run reads only
the new chunks and the ones before them in their conversations (memctl/r2g/tails.py), unless earlier `ingest`
commands left chunks unconverted, which it then converts too, listing the store as `r2g` does.
"""

from __future__ import annotations


def remember(memory, paths=(), texts=(), format: str = "auto", errors: str = "strict", stdin=None) -> dict:
    """Every input is read and checked before the store is opened: bad input (InputError, exit 2) changes
    nothing. Returns {"chunks": [raw ids stored new], "chunks_duplicate", "turns", "conversations",
    "nodes": [{"key", "type"}] created, "edges_written", "documents", "sequence": the store batch committed
    (None when nothing was new)}."""
    from engine.collector import paused

    # Most of what a remember makes lives to its end, and in a `memctl remember` process so does every module it
    # imports: the collector would only rescan them (engine/collector.py), so it is off from the first import.
    with paused():
        from memctl.ingest.pipeline import prepare, write
        from memctl.ingest.sources import collect
        from memctl.r2g.builder import Builder

        config = memory.config
        size_limit = config.get("ingest.max_file_bytes")
        prepared = prepare(collect(paths, texts, size_limit=size_limit, stdin=stdin), format, errors, size_limit,
                           config.get("ingest.chunk_min_tokens"), config.get("ingest.chunk_max_tokens"))
        store = memory.store
        stored: list = []
        sequence = store.sequence
        with store.transaction():
            ingested = write(store, prepared, config.get("ingest.max_blob_bytes"), stored=stored)
            built = Builder(store, memory.tenant, config).run(chunks=[result.raw_id for result in stored])
        del prepared
    return {"chunks": [result.raw_id for result in stored if result.new],
            "chunks_duplicate": ingested["chunks_duplicate"], "turns": ingested["turns"],
            "conversations": ingested["conversations"],
            "nodes": [{"key": key, "type": node_type} for key, node_type in built["created"]],
            "edges_written": sum(built["edges_written"].values()), "documents": built["documents"],
            "sequence": store.sequence if store.sequence != sequence else None}
