"""The knowledge-update proof sets of issue 19: generate.py writes the set, evaluate.py measures recall on it,
changes.py scores change detection on data/changes.yaml."""
