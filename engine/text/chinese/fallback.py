"""jieba's own tokenizer and tagger, for when the compiled dictionary can be neither read nor built.

Importing this module imports jieba (0.2 s), and the first cut loads its dictionary (0.6-1.0 s).
"""

from __future__ import annotations

import logging

import jieba
import jieba.posseg

from engine.text.chinese import jieba_files

jieba.setLogLevel(logging.WARNING)


def tokenizer(user_dictionary: str | None):
    """jieba.dt, or a Tokenizer of its own with the user dictionary loaded (read first by our rules, so that a
    bad line is the same InputError as on the compiled path)."""
    if user_dictionary is None:
        return jieba.dt
    for _entry in jieba_files.user_dictionary_lines(user_dictionary):
        pass
    own = jieba.Tokenizer()
    own.load_userdict(user_dictionary)
    return own


def private_tagger(words=()):
    """A POSTokenizer over a copy of jieba.dt's dictionary with `words` ((word, class) pairs) added as
    engine.text.chinese.pos_tagger adds them: they never reach jieba.dt. Copying the dicts shares their keys and
    values instead of loading the dictionary file a second time (a second and 100+ MB); the word → class table
    is copied from jieba.posseg's own tagger likewise."""
    shared = jieba.dt
    shared.check_initialized()
    own = jieba.Tokenizer(shared.dictionary)
    own.FREQ, own.total = dict(shared.FREQ), shared.total
    own.initialized = True
    tagger = jieba.posseg.POSTokenizer.__new__(jieba.posseg.POSTokenizer)
    tagger.tokenizer = own
    tagger.word_tag_tab = dict(jieba.posseg.dt.word_tag_tab)
    for word, word_class in words:
        own.add_word(word, own.FREQ.get(word) or None, tag=word_class)
    tagger.makesure_userdict_loaded()  # jieba keeps added classes apart until its next cut
    return tagger
