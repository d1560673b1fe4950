"""jieba's prefix dictionary and word classes, filled block by block from a compiled dictionary.

jieba keeps `Tokenizer.FREQ` (every word and every prefix of a word → frequency, 0 for a prefix that is no word),
`Tokenizer.total` (the sum of the word frequencies) and `POSTokenizer.word_tag_tab` (word → class) as dicts
of half a million entries, which cost it 0.6 s to load. Here they are the same dicts, but holding only the
blocks read so far: a block is every key that starts with one character, read from the compiled file the
first time a text holds that character. Every lookup of a key goes through the block of its first character,
so a dict restricted to the loaded blocks answers exactly as jieba's full one would.

Words added in the process (`add`, jieba's `add_word` once its frequency is chosen) are written over the
loaded block of their first character, as jieba writes them over its dict.

A block that fails its checksum (compiled.DamagedFile) is not served: `on_damage(error)` then hands over jieba's
complete dicts (frequencies, tags), the blocks loaded so far and the added words are laid over them, and the
dictionary stops reading the file.
"""

from __future__ import annotations

from engine.text.chinese.compiled import DamagedFile


class Dictionary:
    """frequencies/tags: the dicts (complete when `source` is None, else filled from the compiled dictionary
    `source`); total: the frequency sum; force_split: words the HMM must not return whole (frequency 0)."""

    def __init__(self, frequencies: dict, total: int, tags: dict, force_split=(), source=None, on_damage=None):
        self._frequencies = frequencies
        self._tags = tags
        self.total = total
        self.force_split = set(force_split)
        self._source = source
        self._on_damage = on_damage
        self._frequency_blocks: set = set()
        self._tag_blocks: set = set()

    @classmethod
    def compiled(cls, source, on_damage) -> "Dictionary":
        """An empty view of the compiled dictionary `source`: blocks load as texts need them."""
        return cls({}, source.total, {}, source.force_split, source, on_damage)

    def frequencies_for(self, text: str) -> dict:
        """The frequency dict, holding at least the blocks of every character of `text`."""
        return self._filled(text, self._frequencies, self._frequency_blocks, "block_frequencies")

    def tags_for(self, text: str) -> dict:
        """The word class dict, holding at least the blocks of every character of `text`."""
        return self._filled(text, self._tags, self._tag_blocks, "block_tags")

    def frequency(self, word: str, default=None):
        """jieba's `FREQ.get(word, default)`: the frequency, 0 for a prefix of a word, `default` for an unknown
        key."""
        return self.frequencies_for(word[:1]).get(word, default)

    def tag(self, word: str, default=None):
        """jieba's `word_tag_tab.get(word, default)`."""
        return self.tags_for(word[:1]).get(word, default)

    def add(self, word: str, frequency: int, tag: str | None = None) -> None:
        """jieba's `Tokenizer.add_word` once the frequency is known (and `makesure_userdict_loaded` for the tag):
        the word and its prefixes become keys, the total grows, frequency 0 forbids the HMM the whole word."""
        frequencies = self.frequencies_for(word[:1])
        frequencies[word] = frequency
        self.total += frequency
        if tag:
            self.tags_for(word[:1])[word] = tag
        for end in range(1, len(word) + 1):
            frequencies.setdefault(word[:end], 0)
        if frequency == 0:
            self.force_split.add(word)

    def _filled(self, text: str, table: dict, loaded: set, reader: str) -> dict:
        if self._source is None:
            return table
        missing = set(text).difference(loaded)
        if missing:
            read = getattr(self._source, reader)
            try:
                for character in missing:
                    table.update(read(character))
            except DamagedFile as error:
                self._replace_source(error)
                return table
            loaded.update(missing)
        return table

    def _replace_source(self, error: DamagedFile) -> None:
        """jieba's complete dicts under what was loaded (in place: callers may hold the dicts)."""
        frequencies, tags = self._on_damage(error)
        for table, complete, loaded in ((self._frequencies, frequencies, self._frequency_blocks),
                                        (self._tags, tags, self._tag_blocks)):
            for key, value in complete.items():
                if key[:1] not in loaded:
                    table[key] = value
        self._source = None


class LazyTable:
    """A read-only dict face (get, in, []) of a Dictionary's frequencies or tags, for callers written against
    jieba's `FREQ` and `word_tag_tab`."""

    def __init__(self, lookup):
        self._lookup = lookup
        self._absent = object()

    def get(self, word: str, default=None):
        value = self._lookup(word, self._absent)
        return default if value is self._absent else value

    def __contains__(self, word: str) -> bool:
        return self._lookup(word, self._absent) is not self._absent

    def __getitem__(self, word: str):
        value = self._lookup(word, self._absent)
        if value is self._absent:
            raise KeyError(word)
        return value
