"""Settings of a keyword search outside the command line: the tokenizer and BM25 parameters of the `index`
section of the configuration, and the time bounds that --since/--until/--now give as ISO text.

Shared by `memctl search`, `memctl recall` and the r2g node index, so none of them imports another's command.
"""

from __future__ import annotations


def text_settings(config):
    """The tokenizer and BM25 parameters of the `index` section of the configuration."""
    from engine.text.bm25 import BM25Parameters
    from engine.text.tokenizer import Tokenizer

    section = config.section("index")
    try:
        parameters = BM25Parameters(k1=section["k1"], b=section["b"], delta=section["delta"],
                                    field_weights=dict(section["field_weights"]))
    except ValueError as error:
        from engine.errors import InputError

        raise InputError(f"{error} (settings index.k1, index.b, index.delta, index.field_weights)") from None
    tokenizer = Tokenizer(stopwords_en=_word_list(section["stopwords_en"], "index.stopwords_en"),
                          stopwords_zh=_word_list(section["stopwords_zh"], "index.stopwords_zh"),
                          user_dictionary=section["user_dictionary"])
    return tokenizer, parameters


def _word_list(path: str | None, setting: str):
    """One word per line ('#' starts a comment line), or None to keep the packaged list."""
    if path is None:
        return None
    from engine.errors import InputError

    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError as error:
        raise InputError(f"cannot read the word list of {setting}: {error.strerror}", where=path) from None
    except UnicodeDecodeError as error:
        raise InputError(f"word list of {setting} is not UTF-8 (byte offset {error.start})", where=path) from None
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def parse_time(text: str, option: str, end_of_day: bool) -> float:
    """Seconds since the epoch of an ISO date or date-time; a bare date at --until means its last instant."""
    from datetime import date, datetime, timedelta

    from engine.errors import InputError

    cleaned = text.strip()
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        raise InputError(f"{text!r} is not an ISO date or date-time (examples: 2024-05-01, 2024-05-01T09:30, "
                         "2024-05-01T09:30:00+08:00)", where=option) from None
    try:
        date.fromisoformat(cleaned)
    except ValueError:
        return moment.timestamp()
    if end_of_day:
        return (moment + timedelta(days=1)).timestamp() - 1e-6
    return moment.timestamp()
