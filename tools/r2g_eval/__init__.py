"""What tools/eval_r2g.py measures R2G with, beyond its gold set: the tune / held-out split of the dev data
(split), the judging sheets drawn from a built graph (sheet) and their scores (verdicts), the labelled
attribute sentences scored against the slot facts R2G extracts (attributes), and how their YAML files are
read (yaml_file)."""
