"""Compile jieba's dictionary (with a user dictionary, with words of our own) and HMM tables into the file
engine.text.chinese.compiled reads: about two seconds, once per jieba version, dictionary, user dictionary and
list of added words.

The prefix dictionary is built as jieba's `gen_pfdict` builds it (every word, then every prefix of a word at
frequency 0 unless it is a word itself; the total counts every line, repeated words included), the word
classes as `load_word_tag` reads them (the last line of a word wins). A user dictionary's words are then added
one by one as `load_userdict` adds them, through a Segmenter over the dictionary built so far: a word without a
frequency gets the one `suggest_freq` computes at that point, exactly as in jieba. Added words (R2G's lexicon
words with their classes) come last, each as `add_word(word, FREQ.get(word) or None, tag=class)`: a word
the dictionary has keeps its frequency, a new one gets the suggested one.
"""

from __future__ import annotations

import zlib
from array import array

from engine.errors import InputError
from engine.text.chinese import finalseg, jieba_files
from engine.text.chinese.cache import words_digest
from engine.text.chinese.dictionary import Dictionary
from engine.text.chinese.segmenter import Segmenter


def build(handle, package, user_dictionary: str | None = None, words: tuple = ()) -> None:
    """Write the compiled dictionary of `package` (jieba_files.Package), `user_dictionary` and `words` ((word,
    class) pairs) to `handle`. A user dictionary that cannot be read is an InputError; jieba's own files,
    jieba_files.JiebaMissing or ValueError."""
    from engine.text.chinese import compiled

    sources = {"jieba_version": package.version, "jieba_directory": package.directory,
               "dictionary": jieba_files.fingerprint(package.dictionary),
               "user_dictionary": None if user_dictionary is None else _user_fingerprint(user_dictionary),
               "words": words_digest(words)}
    dictionary = dictionary_tables(package, user_dictionary, words)
    description = {"sources": sources, "keys": len(dictionary.frequencies), "total": dictionary.total,
                   "force_split": sorted(dictionary.force_split)}
    sections = _dictionary_sections(dictionary.frequencies, dictionary.tags, description)
    start, transitions, emissions = finalseg_tables(package)
    description["finalseg"] = {"start": start, "transitions": transitions}
    sections["hmm_characters"] = "".join(emissions).encode("utf-8")
    sections["hmm_emissions"] = array("d", [value for row in emissions.values() for value in row])
    sections.update(_posseg_sections(posseg_tables(package)))
    compiled.write(handle, description, sections)


class Tables:
    """A complete dictionary: frequencies (jieba's FREQ), total, tags (word_tag_tab), force_split."""

    def __init__(self, frequencies: dict, total: int, tags: dict):
        self.frequencies = frequencies
        self.total = total
        self.tags = tags
        self.force_split: set = set()


def dictionary_tables(package, user_dictionary: str | None = None, words: tuple = ()) -> Tables:
    """jieba's dictionary, the user dictionary's words added as load_userdict adds them, then `words`."""
    frequencies, total, tags = _main_dictionary(package.dictionary)
    tables = Tables(frequencies, total, tags)
    if user_dictionary is None and not words:
        return tables
    dictionary = Dictionary(frequencies, total, tags)
    segmenter = Segmenter(dictionary)
    if user_dictionary is not None:
        for word, frequency, tag in jieba_files.user_dictionary_lines(user_dictionary):
            segmenter.add_word(word, frequency, tag)
    for word, word_class in words:
        segmenter.add_word(word, dictionary.frequency(word) or None, word_class)
    tables.total, tables.force_split = dictionary.total, dictionary.force_split
    return tables


def _user_fingerprint(path: str) -> dict:
    try:
        return jieba_files.fingerprint(path)
    except OSError as error:
        raise InputError(f"cannot read the user dictionary (setting index.user_dictionary): {error.strerror}",
                         where=path) from None


def _main_dictionary(path: str) -> tuple[dict, int, dict]:
    frequencies: dict = {}
    tags: dict = {}
    total = 0
    for word, frequency, tag in jieba_files.dictionary_lines(path):
        frequencies[word] = frequency
        tags[word] = tag
        total += frequency
        for end in range(1, len(word)):
            frequencies.setdefault(word[:end], 0)
    return frequencies, total, tags


def _dictionary_sections(frequencies: dict, tags: dict, description: dict) -> dict:
    """Keys grouped by first character (blocks in code point order, keys sorted within a block)."""
    if any("\n" in key or not key for key in frequencies):
        raise ValueError("a dictionary word is empty or holds a line break")
    tag_names = sorted(set(tags.values()))
    if len(tag_names) >= 1 << 16:
        raise ValueError(f"{len(tag_names)} word classes: the compiled dictionary holds at most 65535")
    tag_numbers = {name: number for number, name in enumerate(tag_names, 1)}
    blocks: dict = {}
    for key in sorted(frequencies):
        blocks.setdefault(key[0], []).append(key)
    block_keys, block_bytes, block_checksums = array("I", [0]), array("I", [0]), array("I")
    encoded, all_frequencies, all_tags = bytearray(), array("Q"), array("H")
    for keys in blocks.values():
        data = "\n".join(keys).encode("utf-8")
        block_frequencies = array("Q", [frequencies[key] for key in keys])
        block_tags = array("H", [tag_numbers.get(tags.get(key), 0) for key in keys])
        block_checksums.append(zlib.crc32(block_tags, zlib.crc32(block_frequencies, zlib.crc32(data))))
        encoded.extend(data)
        all_frequencies.extend(block_frequencies)
        all_tags.extend(block_tags)
        block_keys.append(len(all_frequencies))
        block_bytes.append(len(encoded))
    description.update(blocks=len(blocks), tags=tag_names)
    return {"first_characters": "".join(blocks).encode("utf-8"), "block_keys": block_keys,
            "block_bytes": block_bytes, "block_checksums": block_checksums, "keys": encoded,
            "frequencies": all_frequencies, "tags": all_tags}


def finalseg_tables(package) -> tuple[dict, dict, dict]:
    """finalseg's (start, transitions, emissions): state → log P, state → {state: log P}, and character →
    (B, M, E, S) log P in code point order (MIN_FLOAT where jieba's table has no entry)."""
    start = package.model_table("finalseg", "prob_start")
    transitions = package.model_table("finalseg", "prob_trans")
    emissions = package.model_table("finalseg", "prob_emit")
    characters = sorted({character for state in finalseg.STATES for character in emissions[state]})
    if any(len(character) != 1 for character in characters):
        raise ValueError("jieba's finalseg emission table has a key that is not one character")
    return ({state: start[state] for state in finalseg.STATES},
            {state: dict(transitions[state]) for state in finalseg.STATES},
            {character: tuple(emissions[state].get(character, finalseg.MIN_FLOAT) for state in finalseg.STATES)
             for character in characters})


def posseg_tables(package) -> dict:
    """The posseg HMM's tables as engine.text.chinese.posseg.Model reads them (states numbered in tuple order)."""
    start = package.model_table("posseg", "prob_start")
    transitions = package.model_table("posseg", "prob_trans")
    emissions = package.model_table("posseg", "prob_emit")
    characters = package.model_table("posseg", "char_state_tab")
    states = sorted(transitions)
    number = {state: index for index, state in enumerate(states)}
    by_character: dict = {}
    for state in states:
        for character, probability in emissions[state].items():
            by_character.setdefault(character, {})[number[state]] = probability
    return {"states": [list(state) for state in states], "start": [start[state] for state in states],
            "transitions": [[[number[following], probability] for following, probability in transitions[state].items()]
                            for state in states],
            "characters": {character: tuple(number[state] for state in seen) for character, seen in characters.items()},
            "emissions": by_character}


def _posseg_sections(tables: dict) -> dict:
    """The posseg tables as compiled.py lays them out: the small ones (states, start, transitions) as JSON, the
    per-character ones (26,000 rows) as sorted arrays a process decodes a character at a time."""
    import json

    sections = {"posseg": json.dumps({name: tables[name] for name in ("states", "start", "transitions")},
                                     ensure_ascii=False).encode("utf-8")}
    seen = tables["characters"]
    sections.update(_character_rows("posseg_seen", {character: seen[character] for character in sorted(seen)}))
    emitted = tables["emissions"]
    rows = {character: emitted[character] for character in sorted(emitted)}
    sections.update(_character_rows("posseg_emission", {character: tuple(row) for character, row in rows.items()}))
    sections["posseg_emission_values"] = array("d", [value for row in rows.values() for value in row.values()])
    return sections


def _character_rows(prefix: str, rows: dict) -> dict:
    """`rows` (character → state numbers, characters in code point order) as three sections."""
    offsets = array("I", [0])
    states = array("H")
    for row in rows.values():
        states.extend(row)
        offsets.append(len(states))
    return {f"{prefix}_characters": "".join(rows).encode("utf-8"), f"{prefix}_offsets": offsets,
            f"{prefix}_states": states}
