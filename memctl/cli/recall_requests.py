"""The fields of a recall request (Memory.recall's options) from recall's command-line options, and from the
lines of a `recall batch` file: every value checked, a bad one named (option, or file:line) with exit 2."""

from __future__ import annotations

from engine.errors import InputError

OPTIONS = ("top", "budget", "k_hop", "types", "since", "until", "graph_only", "allow_raw", "cite", "mvp", "now",
           "as_of")
COUNTS = ("top", "budget", "k_hop")
SWITCHES = ("graph_only", "allow_raw", "cite", "mvp")
TIMES = ("since", "until", "now", "as_of")


def request_fields(given: dict, where: str | None = None) -> dict:
    """Memory.recall options from those of OPTIONS' names in `given` (counts, switches, --types values, ISO
    times as text); an option left out keeps recall's default."""
    fields = {name: given[name] for name in COUNTS if name in given}
    fields.update({name: bool(given[name]) for name in SWITCHES if name in given})
    if "types" in given:
        fields["types"] = _types(given["types"], where)
    return {**fields, **_times(given, where)}


def _times(given: dict, where: str | None) -> dict:
    from memctl.isotime import parse_time

    since, until, now, as_of = (given.get(name) for name in TIMES)
    window = (parse_time(since, _label("--since", where), end_of_day=False) if since else None,
              parse_time(until, _label("--until", where), end_of_day=True) if until else None)
    if window[0] is not None and window[1] is not None and window[0] > window[1]:
        raise InputError(f"--since {since} is after --until {until}", where)
    return {"since": window[0], "until": window[1],
            "now": parse_time(now, _label("--now", where), end_of_day=False) if now else None,
            "as_of": parse_time(as_of, _label("--as-of", where), end_of_day=True) if as_of else None}


def _label(option: str, where) -> str:
    return f"{where}: {option}" if where else option


def _types(values, where) -> tuple | None:
    if not values:
        return None
    if isinstance(values, str):
        values = [values]
    from memctl.model import NodeType
    from memctl.recall.pipeline import RAW_PASSAGE

    names = [name.strip() for value in values for name in str(value).split(",") if name.strip()]
    known = [node_type.value for node_type in NodeType] + [RAW_PASSAGE]
    bad = [name for name in names if name not in known]
    if bad:
        raise InputError(f"--types: {bad[0]!r} is not a node type (known: {', '.join(known)})", where)
    return tuple(dict.fromkeys(names)) or None


def read_batch(path: str, base: dict) -> list:
    """[(id, query, request fields)] of every line of the JSONL file `path` ("-": stdin), all checked before
    any query runs; a line's own options override `base`."""
    batch = []
    name, text = _read_text(path)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        item = _line_object(line, where)
        given = {option: item[option] for option in OPTIONS if option in item}
        batch.append((item.get("id", number), item["q"], _merge_line(base, given, where) if given else dict(base)))
    return batch


def _read_text(path: str) -> tuple[str, str]:
    if path == "-":
        from memctl.standard_input import binary_stdin

        name, data = "<stdin>", binary_stdin().read()
    else:
        name = path
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            raise InputError("no such file", path) from None
        except IsADirectoryError:
            raise InputError("is a directory, not a JSONL file", path) from None
    try:
        return name, data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 (byte offset {error.start})", name) from None


def _line_object(line: str, where: str) -> dict:
    import json

    try:
        item = json.loads(line)
    except ValueError as error:
        raise InputError(f"not JSON ({error.msg})", where) from None
    if not isinstance(item, dict) or not isinstance(item.get("q"), str) or not item["q"].strip():
        raise InputError('each line must be an object with a non-empty "q"', where)
    unknown = sorted(set(item) - set(OPTIONS) - {"id", "q"})
    if unknown:
        raise InputError(f"unknown option {unknown[0]!r} (known: {', '.join(sorted(OPTIONS))})", where)
    return item


def _merge_line(base: dict, given: dict, where: str) -> dict:
    for name in COUNTS:
        value = given.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise InputError(f"{name} must be a non-negative whole number", where)
    for name in SWITCHES:
        if name in given and not isinstance(given[name], bool):
            raise InputError(f"{name} must be true or false", where)
    for name in TIMES:
        if given.get(name) is not None and not isinstance(given[name], str):
            raise InputError(f"{name} must be an ISO date or date-time text", where)
    if given.get("top") == 0:
        raise InputError("top must be at least 1", where)
    merged = {**base, **{name: value for name, value in given.items() if name in COUNTS and value is not None}}
    for name in SWITCHES:
        if name in given:
            merged[name] = given[name]
    if "types" in given:
        merged["types"] = _types(given["types"], where)
    timed = _times(given, where)
    for name in TIMES:
        if given.get(name) is not None:
            merged[name] = timed[name]
    return merged
