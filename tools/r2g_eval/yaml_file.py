"""Reading the YAML files the R2G measurements take (judged sheets, labelled attribute sets)."""

from __future__ import annotations


def read(path: str, error: type[Exception]):
    """The file's data; `error` (naming the file and, for bad YAML, the line) when it cannot be read."""
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            return yaml.safe_load(handle)
    except OSError as problem:
        raise error(f"{path}: cannot read it ({problem.strerror})") from None
    except yaml.YAMLError as problem:
        mark = getattr(problem, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else path
        raise error(f"{where}: not YAML ({getattr(problem, 'problem', None) or problem})") from None
