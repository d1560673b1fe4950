"""The tokenizer and BM25F parameters of the `index` settings, shared by `memctl search`, R2G's NodeIndex and
recall (which replaces the field weights with recall.field_weights)."""

from __future__ import annotations

from memctl.settings.effective import resolve


def text_settings(config=None):
    """(tokenizer, BM25 parameters) of the configuration; the defaults without one."""
    from engine.text.bm25 import BM25Parameters
    from engine.text.tokenizer import Tokenizer

    index = resolve(config).index
    parameters = BM25Parameters(k1=index.k1, b=index.b, delta=index.delta, field_weights=dict(index.field_weights))
    tokenizer = Tokenizer(stopwords_en=_word_list(index.stopwords_en, "index.stopwords_en"),
                          stopwords_zh=_word_list(index.stopwords_zh, "index.stopwords_zh"),
                          user_dictionary=index.user_dictionary)
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
