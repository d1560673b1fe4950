"""Standard input as a command's input file ("-"), or a clear error when the process has none.

A process started with its standard input closed (`memctl ingest --raw - <&-`) gets no sys.stdin at all:
Python sets it to None. Reading "-" there is a usage mistake (exit 2), not a traceback.
"""

from __future__ import annotations

import sys

from engine.errors import InputError

STDIN_ARGUMENT = "-"


def binary_stdin():
    """The process's standard input as a binary stream; InputError when it is closed."""
    stream = sys.stdin
    if stream is None or stream.closed:
        raise InputError(f"{STDIN_ARGUMENT} reads standard input, which is closed: pipe the input in, or give a file")
    return stream.buffer
