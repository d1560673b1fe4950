"""Chinese word segmentation and word classes: jieba's results without jieba's dictionary load.

jieba (0.42) spends 0.6-1.0 s of every process that cuts Chinese loading its dictionary, and 0.2 s importing
itself. Here its algorithm (segmenter: DAG, route, finalseg's HMM; posseg: word classes and the class HMM)
runs over a compiled copy of its data (build, compiled, cache: a checksummed file in the user's cache, mapped
and read block by block; dictionary: jieba's dicts filled as texts need them), built at the first use after
jieba or a user dictionary changes. The results are jieba's, word for word and class for class
(tools/check_segmentation.py compares them on 100k+ sentences).

jieba stays the reference and the fallback: when the compiled file can be neither read nor built (no writable
cache directory, say), these functions return jieba's own objects, and `notes()` says why. Nothing here imports
jieba otherwise.
"""

from __future__ import annotations

from functools import lru_cache

_notes: list = []


def tokenizer(user_dictionary: str | None = None):
    """The process's tokenizer for `user_dictionary` (an absolute path, or None): cut, cut_for_search, tokenize,
    add_word as jieba.Tokenizer's (a Segmenter, or jieba's own). InputError when the user dictionary cannot be
    read."""
    return _shared_segmenter(user_dictionary)


def pos_tagger(words=()):
    """A word class tagger of its own (jieba.posseg.POSTokenizer's cut and word_tag_tab, its `tokenizer`'s cut
    and FREQ) over the main dictionary with `words` ((word, class) pairs) added: a word the dictionary has keeps
    its frequency, a new one gets the frequency jieba suggests for keeping it whole. The words are compiled into
    a dictionary file of their own (adding R2G's 650 words at run time reads 400 blocks: 0.25 s), and never
    reach `tokenizer()`."""
    words = tuple(words)
    compiled = _compiled(None, words)
    if compiled is None:
        from engine.text.chinese import fallback

        return fallback.private_tagger(words)
    from engine.text.chinese.posseg import Model, PosTagger

    tables = _checked(compiled, compiled.posseg_tables, lambda: _build_module().posseg_tables(_package()))
    return PosTagger(_segmenter(compiled, None, words), Model(tables))


def notes() -> list:
    """Why this process cuts Chinese with jieba itself, or read part of jieba's files again (empty when it uses
    the compiled dictionary alone or has cut nothing)."""
    return list(_notes)


def forget() -> None:
    """Drop the process's tokenizers and notes: the next call finds the compiled file again (after
    XDG_CACHE_HOME or jieba's files changed)."""
    _compiled.cache_clear()
    _shared_segmenter.cache_clear()
    _notes.clear()


def state(user_dictionary: str | None = None) -> dict:
    """The compiled dictionary's file and readiness, without building it (for `memctl stats`)."""
    from engine.text.chinese import cache

    return cache.state(user_dictionary)


@lru_cache(maxsize=None)
def _shared_segmenter(user_dictionary: str | None):
    compiled = _compiled(user_dictionary, ())
    if compiled is None:
        from engine.text.chinese import fallback

        return fallback.tokenizer(user_dictionary)
    return _segmenter(compiled, user_dictionary, ())


def _segmenter(compiled, user_dictionary: str | None, words: tuple):
    from engine.text.chinese.dictionary import Dictionary
    from engine.text.chinese.finalseg import Model
    from engine.text.chinese.segmenter import Segmenter

    def complete_tables():
        tables = _build_module().dictionary_tables(_package(), user_dictionary, words)
        return tables.frequencies, tables.tags

    dictionary = Dictionary.compiled(compiled, lambda error: _fall_back(compiled, error, complete_tables))
    finalseg = compiled.description["finalseg"]
    emissions = _checked(compiled, compiled.hmm_emissions, lambda: _build_module().finalseg_tables(_package())[2])
    return Segmenter(dictionary, Model(finalseg["start"], finalseg["transitions"], emissions))


@lru_cache(maxsize=None)
def _compiled(user_dictionary: str | None, words: tuple):
    """The compiled dictionary, or None (noted) when it can be neither read nor built."""
    from engine.text.chinese import cache

    try:
        return cache.load(user_dictionary, words)
    except cache.Unavailable as error:
        _notes.append(f"Chinese segmentation fell back to jieba: {error}")
        return None


def _checked(compiled, read, reread):
    """A loader: `read()` from the compiled file, or `reread()` from jieba's files when that part is damaged."""
    from engine.text.chinese.compiled import DamagedFile

    def load():
        try:
            return read()
        except DamagedFile as error:
            return _fall_back(compiled, error, reread)

    return load


def _fall_back(compiled, error, reread):
    """A part of the compiled file failed its checksum: noted, the file removed (the next process builds it
    again), the part read from jieba's files."""
    from engine.text.chinese import cache

    _notes.append(f"{error}: read from jieba's files instead; the file is built again by the next process")
    cache.discard(compiled.path)
    return reread()


def _build_module():
    from engine.text.chinese import build

    return build


def _package():
    from engine.text.chinese import jieba_files

    return jieba_files.locate()
