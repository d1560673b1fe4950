"""Slot questions (issue 19): a question that asks for the value of a person's attribute, and when.

    parse("Which city does Maria live in now?", "en", times, reference, as_of=None)
      → SlotQuestion(slots=("residence", …), kind="current", moment=None, …)

What is read, with no graph (the subject is found later, by memctl.recall.versions):
- the slots: every slot of the slot lexicon (memctl/data/slots.yaml) whose nouns, or whose question forms
  (memctl/data/slot_questions.yaml: "live", "work for", "哪家公司", "养"), the question holds; best first by the
  total length of what matched, plus a bonus when the interrogative fits the slot's kind of value (where → a
  place, who → a person or organisation). All of them are kept: the first that has a chain for the subject wins.
- the temporal kind:
  when      "when did…", "what year…", "since when", 什么时候, 哪年, 何时: the change's evidence is wanted;
            `ending` tells an end ("when did Ann quit…", 什么时候辞职) from a start;
  previous  "before", "used to", "previously", 以前, 之前, 原来: the version before the one in force (or before
            the value the question names);
  past      a time in the question that ended before the reference day ("in 2021", "around March 2022",
            "2022年3月", 去年, "two years ago"), or --as-of T when the question names no time: the version
            valid then (`window`: the interval, seconds);
  current   anything else ("now", "currently", 现在, 目前, present tense): the version in force at the reference.
Only questions that ask for the value count: an English text needs an interrogative or a question mark, a
Chinese one a question word (哪, 什么, 谁, 几, 吗…) or a question mark; a "why" or "how" question (为什么) asks
something else, and so does an English question with more than CONTENT_ALLOWANCE content words besides the
subject (a capitalised name), the slot's words, its time and the words of question phrasing ("What does
Melanie think about Caroline's decision to adopt?" names a pet cue but asks for an opinion). A "when"
question is exempt from that count: its other words are the value it names. Anything else is no slot
question and recall is unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

KINDS = ("current", "past", "previous", "when")
PLACE_KINDS = ("place",)
AGENT_KINDS = ("person", "organisation")
FIT_BONUS = 2  # characters' worth: "where does Ann work" is the employer's "work", not a free "work location"
# LoCoMo dev: 42 questions chose a version, most of them asking something else ("What challenge did John
# encounter during pre-season training?" has 4 such words); the knowledge-update questions have at most one.
CONTENT_ALLOWANCE = 1

_EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_EN_WORD_CASED = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_EN_QUESTION = re.compile(r"\?|\b(?:what|which|who|whom|whose|where|when|how)\b|^(?:is|are|was|were|does|did|do|has|"
                          r"have|had)\b", re.IGNORECASE)
_ZH_QUESTION = re.compile(r"[?？]|哪|什么|谁|几|吗|呢|多少|何时|啥")
# "when" asks only at the head of a clause or after a verb of knowing ("do you know when…"); elsewhere it is a
# conjunction ("what does Maria feel when doing yoga?").
_EN_WHEN = re.compile(r"(?:^|[.?!;,]\s*)\W*(?:so |and |but |then )?when\b|"
                      r"\b(?:know|remember|recall|tell me|say) when\b|\bwhat (?:date|day|month|year|time)\b|"
                      r"\bwhich (?:date|day|month|year)\b|\bsince when\b|\bhow long ago\b", re.IGNORECASE)
_ZH_WHEN = re.compile(r"什么时候|什么时间|何时|几时|哪天|哪一天|哪年|哪一年|哪个月|几月|几号|哪一月")
_EN_PREVIOUS = re.compile(r"\bbefore\b|\bpreviously\b|\bformerly\b|\bused? to\b|\bprior\b|\bformer\b|\bearlier\b|"
                          r"\bprevious\b|\bback then\b", re.IGNORECASE)
_ZH_PREVIOUS = re.compile(r"以前|之前|原来|原先|先前|过去|曾经|此前|从前")
_EN_ENDING = re.compile(r"\b(?:quit|quits|leave|leaves|left|stop|stops|stopped|gave up|give up|given up|broke up|"
                        r"break up|split up|sold|sell|ended|end|resign|resigned|retire|retired|moved out|"
                        r"moved away|lost|lose|loses|divorced|dropped out|drop|drops|dropped|ditch|ditched|part with|"
                        r"parted with|rehome|rehomed|lose interest|lost interest)\b", re.IGNORECASE)
_ZH_ENDING = re.compile(r"辞职|离职|离开|不再|分手|离婚|卖掉|卖了|戒|退出|放弃|不养|搬离|搬出|不干|退学|不学|不练|不打|失去|"
                        r"丢了|送走|送人|退掉")
_EN_OTHER_ASK = re.compile(r"^\W*(?:why|how)\b", re.IGNORECASE)
_ZH_OTHER_ASK = re.compile(r"为什么|为何")
# Words a slot question holds besides its subject, slot and time: its temporal cues and light verbs.
_EN_FRAME = frozenset("now currently current these those days moment still today nowadays lately recently present "
                      "before previously formerly used use prior former earlier previous back then since ago around "
                      "have has having had get gets got start starts started starting begin began change changed "
                      "switch switched new".split())
_EN_WHERE = re.compile(r"\bwhere\b|\bwhich (?:city|town|country|place|state)\b", re.IGNORECASE)
_EN_WHO = re.compile(r"\bwho\b|\bwhom\b|\bwhich (?:company|firm|employer|school|university)\b", re.IGNORECASE)
_ZH_WHERE = re.compile(r"哪里|哪儿|在哪|住哪|哪座|哪个城市")
_ZH_WHO = re.compile(r"谁|哪家|哪个公司|哪所")
DAY = 86400.0


@dataclass(frozen=True)
class SlotQuestion:
    slots: tuple  # slot names, best first; () for a "when" question naming none (any chain, by its value)
    kind: str  # one of KINDS
    window: tuple | None = None  # past: (start, end) seconds since the epoch
    time_expression: str | None = None  # past: what named the time ("March 2022", "--as-of 2022-03-31")
    ending: bool = False  # when: the question asks when a value ended

    def describe(self) -> str:
        when = f" at {self.time_expression}" if self.time_expression else ""
        end = " (an end)" if self.ending else ""
        slots = " | ".join(self.slots[:3]) or "any, by the value named"
        return f"slot {slots} · {self.kind}{when}{end}"


def parse(text: str, language: str, times: list, reference: float, as_of: float | None = None) \
        -> SlotQuestion | None:
    """The slot question `text` asks, or None. `times`: the query's TimeConstraints (memctl.recall.query),
    resolved against `reference`; `as_of`: --as-of, seconds."""
    if not (_ZH_QUESTION if language == "zh" else _EN_QUESTION).search(text):
        return None
    slots = slots_named(text, language)
    zh = language == "zh"
    if (_ZH_WHEN if zh else _EN_WHEN).search(text):
        return SlotQuestion(slots, "when", ending=bool((_ZH_ENDING if zh else _EN_ENDING).search(text)))
    if not slots or (_ZH_OTHER_ASK if zh else _EN_OTHER_ASK).search(text):
        return None
    if not zh and len(_other_words(text, slots, times)) > CONTENT_ALLOWANCE:
        return None
    past = _past_window(times, reference)
    if past is not None:
        return SlotQuestion(slots, "past", past[0], past[1])
    if (_ZH_PREVIOUS if zh else _EN_PREVIOUS).search(text):
        return SlotQuestion(slots, "previous")
    if as_of is not None:
        return SlotQuestion(slots, "past", (as_of, as_of), "--as-of")
    return SlotQuestion(slots, "current")


def _past_window(times: list, reference: float) -> tuple | None:
    """((start, end), expression) of the first time of the question that ended before the reference day."""
    for constraint in times:
        if constraint.start is not None and constraint.end is not None and constraint.end < reference - DAY:
            return (constraint.start, constraint.end), constraint.expression
    return None


def _other_words(text: str, slots: tuple, times: list) -> set:
    """The English question's content words that are not its subject, slot forms, time or phrasing."""
    from memctl.language.question_words import ENGLISH

    slot_words = {word for forms in _matches(text, "en").values() for form in forms for word in form.split()}
    time_words = {word.casefold() for time in times for word in _EN_WORD_CASED.findall(time.expression)}
    ignored = ENGLISH | _stop_words() | _EN_FRAME | slot_words | time_words
    found = set()
    for match in _EN_WORD_CASED.finditer(text):
        word = match.group()
        if match.start() > 0 and word[0].isupper():
            continue  # a name: the subject, or a value the chain may hold
        folded = word.casefold().removesuffix("'s")
        if folded not in ignored:
            found.add(folded)
    return found


@lru_cache(maxsize=1)
def _stop_words() -> frozenset:
    """The index tokenizer's shipped stop words (English and Chinese)."""
    from engine.text.tokenizer import Tokenizer

    return frozenset(Tokenizer(cjk="bigram").stopwords)


def _matches(text: str, language: str) -> dict:
    """{slot: [its forms the question holds]}."""
    forms = question_forms()
    lowered = text.casefold()
    if language == "zh":
        return {slot: found for slot, words in forms["zh"].items()
                if (found := [form for form in words if form in lowered])}
    words = " " + " ".join(_EN_WORD.findall(lowered)) + " "
    return {slot: found for slot, phrases in forms["en"].items()
            if (found := [form for form in phrases if f" {form} " in words])}


def slots_named(text: str, language: str) -> tuple:
    """Slot names the question points at, best first (see the module's docstring)."""
    forms = question_forms()
    scores = {slot: sum(map(len, found)) for slot, found in _matches(text, language).items()}
    if not scores:
        return ()
    kinds = forms["value_kinds"]
    where = (_ZH_WHERE if language == "zh" else _EN_WHERE).search(text)
    who = (_ZH_WHO if language == "zh" else _EN_WHO).search(text)
    for slot in scores:
        if (where and kinds.get(slot) in PLACE_KINDS) or (who and kinds.get(slot) in AGENT_KINDS):
            scores[slot] += FIT_BONUS
    order = forms["order"]
    return tuple(sorted(scores, key=lambda slot: (-scores[slot], order.get(slot, len(order)))))


def question_forms() -> dict:
    """{"en": {slot: (phrases)}, "zh": {slot: (substrings)}, "value_kinds": {slot: kind}, "order": {slot: n}}:
    the question forms of slot_questions.yaml with the slot lexicon's nouns (Chinese ones of two or more
    characters: 家 or 车 alone are part of too many other words). The lexicon modules are imported only here:
    a query that is no question never loads them."""
    global _forms
    if _forms is None:
        from memctl.language.lexicon import lexicon_cache

        _forms = lexicon_cache(_read_forms)
    return _forms()


_forms = None


def _read_forms() -> dict:
    from memctl.language.lexicon import load_yaml_layers
    from memctl.language.slot_lexicon import slot_lexicon

    lexicon = slot_lexicon()
    found: dict = {"en": {}, "zh": {}}
    for name, spec in lexicon.slots.items():
        found["en"][name] = {noun.casefold() for noun in spec.nouns.get("en", ())}
        found["zh"][name] = {noun for noun in spec.nouns.get("zh", ()) if len(noun) > 1}
    for path, data in load_yaml_layers("slot_questions.yaml"):
        for name, entry in _entries(path, data, lexicon.slots):
            for language in ("en", "zh"):
                found[language][name] |= {form.casefold() for form in entry.get(language, ())}
    return {"en": {name: tuple(forms) for name, forms in found["en"].items() if forms},
            "zh": {name: tuple(forms) for name, forms in found["zh"].items() if forms},
            "value_kinds": {name: spec.value_kind for name, spec in lexicon.slots.items()},
            "order": {name: index for index, name in enumerate(lexicon.slots)}}


def _entries(path, data, known: dict):
    from engine.errors import InputError

    if not isinstance(data, dict) or not isinstance(data.get("slots"), dict):
        raise InputError("invalid slot question forms: expected a mapping with `slots:`", where=str(path))
    for name, entry in data["slots"].items():
        if name not in known:
            raise InputError(f"invalid slot question forms: {name!r} is no slot of slots.yaml", where=str(path))
        if not isinstance(entry, dict) or set(entry) - {"en", "zh"} or not all(
                isinstance(forms, list) and all(isinstance(form, str) and form for form in forms)
                for forms in entry.values()):
            raise InputError("invalid slot question forms: expected {en: [words…], zh: [words…]}",
                             where=f"{path}: slot {name}")
        yield name, entry
