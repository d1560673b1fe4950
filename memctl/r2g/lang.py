"""Language of a sentence: Chinese when Han characters are a real part of it, English otherwise."""

from __future__ import annotations

import re

_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")


def detect_language(text: str) -> str:
    """'zh' or 'en'. Mixed text such as "我的Win11蓝牙打不开了" is Chinese: its grammar is Chinese and product
    names in Latin letters are handled by the Chinese extractor's own patterns. A stray Han character in a long
    English sentence does not make it Chinese: Han characters must be at least a fifth of the letters+words."""
    han = len(_HAN.findall(text))
    if han == 0:
        return "en"
    latin_words = len(_LATIN_WORD.findall(text))
    return "zh" if han >= 0.2 * (han + latin_words) else "en"
