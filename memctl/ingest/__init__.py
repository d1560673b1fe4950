"""Raw conversation ingest: parse inputs into conversations of turns, chunk them, store them as RawChunks.

Modules: `decode` (bytes to checked text), one parser per input format (`plain`, `transcript`, `jsonl`,
`messages`, `locomo`), `detect` (format detection and dispatch), `dates`, `chunker`, `sources` (files, globs,
stdin) and `pipeline` (the one atomic ingest). Nothing here is imported on the CLI's start-up path.
"""
