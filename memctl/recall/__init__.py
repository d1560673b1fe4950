"""Recall (seed 001 §4.y W3–W6, §5): query → NodeIndex BM25 (stage A) → raw fallback (W5) → graph (stage C) →
ranking → budget packing with verified citations. `pipeline.Recaller` is the entry point; the CLI and
`Memory.recall` are thin layers over it."""
