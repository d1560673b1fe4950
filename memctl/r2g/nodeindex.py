"""R2G's side of the NodeIndex: the store's `text:nodes` index opened with the configured tokenizer, keeping tokens only.
What a document holds is memctl.node_documents'.

Only tokens are stored (TextIndex store_text=False): the node's text lives in the graph and the turn's in its
raw chunk, so the index does not hold a third copy.
"""

from __future__ import annotations


def open_index(store, config=None):
    """The store's node index (memctl.indexes.NODES) configured by the `index` settings, keeping tokens only."""
    from engine.text.index import TextIndex
    from memctl.indexes import NODES
    from memctl.settings.text_index import text_settings

    tokenizer, parameters = text_settings(config)
    return TextIndex(store, CachingTokenizer(tokenizer), parameters, store_text=False, owner=NODES)


class CachingTokenizer:
    """The configured tokenizer, remembering the index tokens of each line it analysed: R2G indexes every
    sentence several times (as the turn, in its summary, in the facts it states, in its neighbours' context).

    A text is analysed line by line (a line break separates words in every script, so only the positions
    differ: each line starts one unit after the last position of the line before). Everything else is the
    wrapped tokenizer's, including the signature queries are checked against."""

    LIMIT = 50_000

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self._lines: dict = {}

    def __getattr__(self, name):
        return getattr(self.tokenizer, name)

    def forget(self) -> None:
        """Drop the remembered lines (the repeats are within a batch: memory stays a batch's worth)."""
        self._lines = {}

    def index_tokens(self, text: str) -> tuple[list, list]:
        if "\n" not in text:
            return self._line(text)
        terms: list = []
        positions: list = []
        for line in text.split("\n"):
            line_terms, line_positions = self._line(line)
            if line_terms:
                start = positions[-1] + 1 if positions else 0
                terms.extend(line_terms)
                positions.extend(position + start for position in line_positions)
        return terms, positions

    def _line(self, line: str) -> tuple[list, list]:
        found = self._lines.get(line)
        if found is None:
            if len(self._lines) >= self.LIMIT:
                self._lines.clear()
            found = self._lines[line] = self.tokenizer.index_tokens(line)
        return found
