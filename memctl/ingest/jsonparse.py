"""JSON parsing whose every failure is an InputError, with `where` = "<file>:<line>:<column>" for syntax
errors, including inputs that exhaust Python's recursion (10k-deep nesting) or its integer-digit limit."""

from __future__ import annotations

import json

from engine.errors import InputError


def load(text: str, name: str, line_offset: int = 0):
    """Parse one JSON document; `line_offset` shifts reported lines when `text` is one line of a larger file."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        line = error.lineno + line_offset
        raise InputError(f"malformed JSON: {error.msg}", where=f"{name}:{line}:{error.colno}") from None
    except RecursionError:
        where = f"{name}:{line_offset + 1}" if line_offset else name
        raise InputError("JSON nested too deeply to parse (thousands of levels)", where=where) from None
    except ValueError as error:  # e.g. an integer of more than 4300 digits
        where = f"{name}:{line_offset + 1}" if line_offset else name
        reason = str(error).split(";")[0]  # drop Python's advice about sys.set_int_max_str_digits
        raise InputError(f"malformed JSON: {reason}", where=where) from None
