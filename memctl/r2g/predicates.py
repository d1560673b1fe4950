"""Predicate normalisation (seed R2G-4): verbs and verb-object phrases → ids from memctl/data/predicates.yaml.

Unknown verbs keep a normalised "verb_object" form: the English verb's lemma or the Chinese verb, joined by
"_" to the object's head noun when there is one ("knock_coffee", "开_咖啡店"), so the same event told twice
still gets the same predicate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from memctl.language.lexicon import english_words, lexicon_cache, load_yaml

DEFAULT_ROLE = "PATIENT"
_BETWEEN_VERB_AND_OBJECT = re.compile(r"[了过着]?(?:很多|好多|许多|一些|几[个张本部场次]?|[一二两三四五六七八九十0-9]+[个张本部场次杯瓶件只条台家顿首篇])?")
_FRAME_MARK = "…"
_SPACES = re.compile(r"\s+")
_NOT_WORD = re.compile(r"[^0-9a-z一-鿿]+")


@dataclass(frozen=True, slots=True)
class PredicateEntry:
    predicate: str
    role: str  # role of the pattern's object or prepositional phrase


@dataclass(frozen=True, slots=True)
class ChineseMatch:
    entry: PredicateEntry
    end: int  # character offset where the matched phrase ends
    object_start: int | None  # the object's span when the pattern has one ("踢 足球")
    object_end: int | None


@dataclass(frozen=True, slots=True)
class PredicateLexicon:
    zh_words: dict  # word → PredicateEntry
    zh_pairs: dict  # verb → [(object, PredicateEntry)], longest object first
    zh_frames: dict  # verb → [(preposition, PredicateEntry)]
    en_patterns: dict  # first lemma → [(lemmas tuple, PredicateEntry)], longest first
    en_pre_verb: dict  # (modal or negation word, verb lemma) → PredicateEntry, e.g. "can't stand"
    en_frames: dict  # predicate → predicate it becomes with a place: work + "at Google" → work_at

    def chinese_at(self, sentence: str, start: int, boundaries=None) -> ChineseMatch | None:
        """The longest lexicon phrase that starts at `start` and ends on one of `boundaries` (token ends):
        a verb-object pair ("踢 足球", 踢了足球), else a word, also when split by an aspect particle
        (打了电话 for 打电话: Chinese separable verbs)."""
        candidates: list[ChineseMatch] = []
        for verb, pairs in self._pairs_starting(sentence, start):
            # 拍了很多照片, 踢了一场球: an aspect particle and a quantity may sit between verb and object.
            position = _BETWEEN_VERB_AND_OBJECT.match(sentence, start + len(verb)).end()
            for object_text, entry in pairs:
                if sentence.startswith(object_text, position):
                    end = position + len(object_text)
                    candidates.append(ChineseMatch(entry, end, position, end))
        for length in range(min(6, len(sentence) - start), 0, -1):
            word = sentence[start : start + length]
            entry = self.zh_words.get(word)
            if entry is not None:
                candidates.append(ChineseMatch(entry, start + length, None, None))
            if length >= 2 and sentence[start + 1 : start + 2] in ("了", "过"):
                entry = self.zh_words.get(sentence[start] + sentence[start + 2 : start + length + 1])
                if entry is not None and start + length + 1 <= len(sentence):
                    candidates.append(ChineseMatch(entry, start + length + 1, None, None))
        candidates.sort(key=lambda match: match.end, reverse=True)
        for match in candidates:
            if boundaries is None or match.end in boundaries:
                return match
        return None

    def _pairs_starting(self, sentence: str, start: int):
        for length in (3, 2, 1):
            verb = sentence[start : start + length]
            if verb in self.zh_pairs:
                yield verb, self.zh_pairs[verb]

    def english_at(self, lemmas: list[str], index: int, skippable: frozenset) -> tuple[PredicateEntry, int] | None:
        """Match a pattern starting at the verb `lemmas[index]`; returns the entry and the index after it.
        Determiners and possessives in the sentence are skipped between the pattern's words."""
        for pattern, entry in self.en_patterns.get(lemmas[index], ()):
            position = index + 1
            matched = True
            for word in pattern[1:]:
                while position < len(lemmas) and lemmas[position] in skippable and lemmas[position] != word:
                    position += 1
                if position >= len(lemmas) or lemmas[position] != word:
                    matched = False
                    break
                position += 1
            if matched:
                return entry, position
        return None


@lexicon_cache
def lexicon() -> PredicateLexicon:
    zh_words: dict = {}
    zh_pairs: dict = {}
    zh_frames: dict = {}
    en_patterns: dict = {}
    en_pre_verb: dict = {}
    en_frames: dict = {}
    lemma = english_lemmatizer()
    for predicate, spec in load_yaml("predicates.yaml").items():
        entry = PredicateEntry(predicate, spec.get("role", DEFAULT_ROLE))
        for form in spec.get("zh", []):
            if _FRAME_MARK in form:
                preposition, verb = form.split(_FRAME_MARK)
                zh_frames.setdefault(verb, []).append((preposition, entry))
            elif " " in form:
                verb, object_text = form.split(" ", 1)
                zh_pairs.setdefault(verb, []).append((object_text, entry))
            else:
                zh_words.setdefault(form, entry)
        for verb_predicate in spec.get("en_frame", []):
            en_frames[verb_predicate] = predicate
        for form in spec.get("en", []):
            words = form.split()
            if words[0] in ("can't", "cannot", "won't", "would"):
                en_pre_verb[(words[0], lemma(words[1]))] = entry
                continue
            lemmas = tuple(lemma(word) for word in words)
            en_patterns.setdefault(lemmas[0], []).append((lemmas, entry))
    for pairs in zh_pairs.values():
        pairs.sort(key=lambda pair: len(pair[0]), reverse=True)
    for patterns in en_patterns.values():
        patterns.sort(key=lambda item: len(item[0]), reverse=True)
    return PredicateLexicon(zh_words, zh_pairs, zh_frames, en_patterns, en_pre_verb, en_frames)


def chinese_surface_words() -> list[str]:
    """Every multi-character Chinese verb form of the lexicon, for the Chinese tokenizer's dictionary."""
    table = lexicon()
    words = set(table.zh_words) | set(table.zh_frames)
    for verb, pairs in table.zh_pairs.items():
        words.add(verb)
        words.update(verb + object_text for object_text, _ in pairs)
    return sorted(word for word in words if len(word) >= 2)


_IRREGULAR_PLURALS = {"children": "child", "people": "person", "men": "man", "women": "woman", "feet": "foot",
                      "teeth": "tooth", "mice": "mouse", "geese": "goose"}


@lexicon_cache
def english_lemmatizer():
    words = english_words()
    lemma_of = words["lemma_of"]
    verbs = words["verbs"]

    @cache
    def lemma(word: str) -> str:
        lower = word.lower().replace("’", "'")
        if lower in lemma_of:
            return lemma_of[lower]
        if lower in verbs:
            return lower
        for candidate in _verb_candidates(lower):
            if candidate in verbs:
                return candidate
        return noun_singular(lower)

    return lemma


def _verb_candidates(word: str):
    if word.endswith("ing") and len(word) > 4:
        stem = word[:-3]
        yield stem
        yield stem + "e"
        if len(stem) > 2 and stem[-1] == stem[-2]:
            yield stem[:-1]
    if word.endswith("ied"):
        yield word[:-3] + "y"
    if word.endswith("ed") and len(word) > 3:
        stem = word[:-2]
        yield stem
        yield word[:-1]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            yield stem[:-1]
    if word.endswith("ies"):
        yield word[:-3] + "y"
    if word.endswith("es"):
        yield word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        yield word[:-1]


def noun_singular(word: str) -> str:
    if word in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def fallback_predicate(verb: str, object_head: str | None) -> str:
    """The predicate of a verb the lexicon does not know: "verb_object" or the verb alone."""
    verb = _SPACES.sub("_", verb.strip().lower())
    if object_head:
        return f"{verb}_{_NOT_WORD.sub('_', object_head.strip().lower()).strip('_')}"
    return verb
