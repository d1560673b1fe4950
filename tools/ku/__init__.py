"""The knowledge-update proof sets of issue 19 and their scorers (tools/ku/README: generate, evaluate, changes)."""
