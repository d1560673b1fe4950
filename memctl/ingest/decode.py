"""Bytes to text, refusing what is not text: oversized, empty, binary or invalid UTF-8 input.

Every refusal is an InputError naming the source, so a bad file stops the whole ingest before anything is
written (DESIGN invariant 5).
"""

from __future__ import annotations

import codecs
import re

from engine.errors import InputError

DEFAULT_SIZE_LIMIT = 64 * 1024 * 1024
ERROR_MODES = ("strict", "replace")
UTF8_BOM = codecs.BOM_UTF8
CHECK_BYTES = 4 << 20  # UTF-8 checked at once
SURROGATE = re.compile("[\ud800-\udfff]")


def check_errors_mode(errors: str) -> None:
    if errors not in ERROR_MODES:
        raise InputError(f"--errors must be one of {', '.join(ERROR_MODES)}, not {errors!r}")


def check_size(size: int, name: str, size_limit: int) -> None:
    if size > size_limit:
        raise InputError(
            f"input is {size:,} bytes, above the limit of {size_limit:,} bytes per file; "
            "split it or raise the size limit",
            where=name,
        )


def decode(data: bytes, name: str, errors: str = "strict", size_limit: int = DEFAULT_SIZE_LIMIT) -> str:
    """Return the text of `data`: UTF-8 without BOM, newlines normalized to \\n.

    errors="replace" turns invalid UTF-8 into U+FFFD instead of refusing it; binary data is refused always.
    """
    return normalized_bytes(checked(data, name, errors, size_limit)).decode("utf-8", errors)


def checked(data: bytes, name: str, errors: str = "strict", size_limit: int = DEFAULT_SIZE_LIMIT) -> bytes:
    """`data`, once it has passed decode's checks; with errors="strict" it is valid UTF-8. The check decodes
    CHECK_BYTES at a time and keeps nothing: a 50 MB line decoded whole is a str of up to 200 MB."""
    check_errors_mode(errors)
    check_size(len(data), name, size_limit)
    if not data or data.isspace():
        raise InputError("empty input: nothing to ingest", where=name)
    _refuse_binary(data, name)
    if errors == "strict":
        _check_utf8(data, name)
    return data


def normalized_bytes(data: bytes) -> bytes:
    """UTF-8 `data` without its byte order mark, newlines normalized to \\n: what decode's text encodes (CR is
    never part of a UTF-8 sequence, valid or not, so normalizing the bytes is normalizing the text)."""
    data = data.removeprefix(UTF8_BOM)
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data


def _check_utf8(data: bytes, name: str) -> None:
    view = memoryview(data)
    position = 0
    while position < len(data):
        stop = min(position + CHECK_BYTES, len(data))
        try:
            position += codecs.utf_8_decode(view[position:stop], "strict", stop == len(data))[1]
        except UnicodeDecodeError as error:
            start = position + error.start
            line = data.count(b"\n", 0, start) + 1
            bad = data[start: position + error.end].hex(" ")
            raise InputError(
                f"invalid UTF-8 at byte offset {start} (line {line}, bytes {bad}): {error.reason}; "
                "pass --errors replace to accept it with U+FFFD substitutions",
                where=name,
            ) from None


def _refuse_binary(data: bytes, name: str) -> None:
    offset = data.find(b"\x00")
    if offset < 0:
        return
    hint = ""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        hint = " (it starts with a UTF-16 byte order mark: convert it to UTF-8)"
    raise InputError(f"binary data: NUL byte at offset {offset}{hint}; only UTF-8 text is accepted", where=name)


def clean_string(value: str, where: str, errors: str) -> str:
    """Refuse (or with errors="replace" substitute) unpaired surrogates, which JSON escapes such as \\ud800
    can produce and which UTF-8 cannot encode."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        if errors != "replace":
            raise InputError(
                f"text holds an unpaired surrogate {value[error.start]!a} at character {error.start} "
                "(from a JSON \\u escape); pass --errors replace to accept it",
                where=where,
            ) from None
        return SURROGATE.sub("\ufffd", value)
    return value
