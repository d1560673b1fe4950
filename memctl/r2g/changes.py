"""Statements of a slot's value and of its changes (issue 19): "I live in Boston" (set), "we moved to Denver last
weekend" (change), "I quit my job at Acme" (end), "we adopted a puppy" (add), "I gave up tennis" (stop), in
English and Chinese, from the phrases of memctl/data/changes.yaml (its schema in the file's header).

Clauses end at ，,；;：:。!?; a clause a generic frame of memctl/r2g/slots.py read for a lexicon slot is not read
again (a frame's free slot, "我现在是…" read as a slot 现在, yields to a statement of its clause). In the
others the phrases are looked for, slot by slot in the file's order; a phrase states something when what stands
before it in the clause is a holder followed by nothing but `between` words, negations and time expressions:

    holder                                   English                         Chinese
    the speaker                              I, we, my wife and I, nobody    我, 我们, 我家, 我和…, nobody
    the speaker's X (X a person slot noun)   my sister                       我姐姐, 我的上司, 姐姐
    a person the analyser named              Melanie                         陈梦婷

Kind and polarity: the phrase's kind (end and stop: polarity "ended"); the phrases that tell a change are tried
before those of a state. A negated set phrase is a negated fact ("I don't have a car", "I'm not vegan"); when the
clause says it holds no longer ("I don't work at Acme anymore", 不再…, 不养猫了) a negated set or add phrase ends
its value (end; stop on a multi-valued slot). Other negated phrases state nothing ("I didn't move"). A set phrase
tells a new value (change; add on a multi-valued slot) with "now", 现在, "since <time>", 从<time>起, and on a
single-valued slot in a Chinese clause ending in 了 (我住在杭州了; not after a duration: 吃素十几年了).

Not statements: a clause whose words before the phrase are no holder and between words ("I might move", "if we
moved", "when I lived in …"), with a Chinese not_a_change word before the phrase (打算, 如果, 以前) or a
not_in_clause word anywhere (next, "used to", 明年, 的时候); a holder that is someone else (he, you, 他); a value
that cannot be the slot's (the checks of memctl/r2g/slots.py, `values`, `excluded`, an English place or
organisation without a capital, a Chinese place the analyser does not know). One fact per slot and clause, and
words one statement read (phrase to value) are no other's: "I gave up squash" is a sport, not also a hobby.
Statements keep the clause's event facts (memctl/r2g/extract.py): "we moved to Denver" is an event as well.

Anchored statements: a slot with `anchors` is also stated by a first-person clause that names one of its listed
values (or matches its value pattern: a phone number) beside one of its cue words, whatever the verb ("my Korean
vocabulary", "every evening on the Spanish app", "save 555-0177 as my number"), unless a phrase stated the slot
in that clause, the clause names someone else (a person, "my classmate", he, your, 他) or holds a plan word.
A slot whose anchors say `span: name` finds its value by its syntax instead of a list, its cue anywhere in the
sentence: in English a capitalised name (the last one after to, at, in, for, with, under, by or as; else one
just before a cue word: "Anchorage residents"; else, for a person, one joined to the speaker: "Kai and I";
else the clause's only name beside a copula), in Chinese the words after 到, 在 (before a cue only), 去, 进,
归, 跟, 和, 是, 家在 up to a cue word, 的, 了 or the clause's end ("在云端通信干了", "跟思思好上了"); between
slots, the name nearest its cue wins ("I answer to Henrik Dahl at work": a manager). An anchored statement is a
change when its clause holds a word of `markers.<lang>.change_words`, else an end with an `end_words` word;
a name found by syntax is also a change with dated time words of its own ("came on board at Vantage Solar four
days ago"). A clause with no subject that opens with (English) or turns on (Chinese) a change word is the
speaker's: "Switched from X over to Y", "半个月前换到柳州生活了".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from memctl.language.lexicon import lexicon_cache, load_yaml
from memctl.language.slot_lexicon import SlotSpec, slot_lexicon
from memctl.r2g.slots import (
    ENDED,
    NEGATED,
    STATED,
    SlotFact,
    english_function_words,
    mention_at,
    relative_holder,
    slot_fact,
    speaker_holder,
    statement_time,
)
from memctl.r2g.structures import Mention

PHRASE_KINDS = ("set", "change", "end", "add", "stop")
ENDING_KINDS = ("end", "stop")
VALUE = "…"
MAX_ZH_VALUE_CHARS = 12
LANGUAGES = ("en", "zh")
MARKER_KEYS = ("lead", "holders_self", "people", "between", "negation", "no_longer", "now", "not_a_change",
               "not_in_clause", "value_ends", "plan", "change_words", "end_words")


@dataclass(frozen=True, slots=True)
class Phrase:
    spec: SlotSpec
    kind: str  # one of PHRASE_KINDS
    source: str  # the phrase as a regular expression, its value (when it has one) as the group "z"
    flags: int
    value: str | None  # the fact's value when the phrase fixes it ("" for none); None: the sentence's words
    value_last: bool  # the value runs to the clause's end (its words after the value are the clause's own)
    needs: frozenset | None  # words (Chinese: characters) one of which every match holds; None: unknown

    @property
    def pattern(self) -> re.Pattern:
        # compiled at first use: compiling all ~420 phrases cost every fresh process ~35 ms of CPU, where the
        # sentences of one exchange are candidates for a few dozen (see _candidates)
        return _compiled(self.source, self.flags)


_compiled = cache(re.compile)


@dataclass(frozen=True, slots=True)
class Anchor:
    spec: SlotSpec
    cues: tuple  # words (English: whole words, lower case; Chinese: substrings) one of which the clause holds
    value: re.Pattern | None  # what a value looks like, when the slot lists no values
    by_syntax: bool = False  # `span: name`: the value is a name found by the clause's syntax


@dataclass(frozen=True, slots=True)
class Rules:
    phrases: dict  # language → tuple of Phrase, in the file's order
    values: dict  # (slot, language) → tuple of words
    values_pattern: dict  # slot → the English values as one expression of whole words (compiled at first use)
    excluded: dict  # (slot, language) → tuple of words
    markers: dict  # language → {marker name: tuple of words, longest first}
    by_word: dict  # language → {word: indexes of the phrases that need it}
    unindexed: dict  # language → indexes of the phrases whose needs are unknown
    anchors: dict  # language → tuple of Anchor, in the file's order


def find_statements(state) -> list[SlotFact]:
    """The statement facts of the sentence slots.py's `state` holds, in the clauses no frame read for a slot of
    the lexicon; a frame's free slot (a name no lexicon knows: "我现在是…" read as a slot 现在) yields to a
    statement of its clause and is dropped."""
    rules = change_rules()
    found: list[SlotFact] = []
    anchored: list[SlotFact] = []
    for start, end in _clauses(state):
        framed = [fact for fact in state.found if fact.start < end and start < fact.end]
        if any(fact.lexicon for fact in framed):
            continue
        stated = _clause_statements(state, rules, start, end)
        read = _anchored_statements(state, rules, start, end, stated)
        if framed and (stated or read):  # "我现在是峰岭大学的学生了" is no slot named 现在
            state.found[:] = [fact for fact in state.found if fact not in framed]
        found.extend(stated)
        anchored.extend(read)
    for fact in anchored:
        if not _said_already(fact, found + state.found):
            found.append(fact)
    return found


def _said_already(fact: SlotFact, facts: list) -> bool:
    """Another clause of the sentence states the same (or a value holding it): "my company moved me to Toronto,
    so I live in Toronto", "公司把我调到了武汉分部，我现在住武汉"."""
    value = fact.value.casefold()
    return any(other.slot == fact.slot and other.value and (other.value.casefold() in value
                                                            or value in other.value.casefold())
               for other in facts)


_EN_WORDS = re.compile(r"['’]?[a-z0-9]+")  # "we've" → we, 've: a phrase may start with 've


def _candidates(rules: Rules, lang: str, words: frozenset) -> list[Phrase]:
    """The phrases a clause of these words could hold, in the file's order: those whose `needs` it has."""
    chosen = set(rules.unindexed[lang])
    by_word = rules.by_word[lang]
    for word in words:
        chosen.update(by_word.get(word, ()))
    phrases = rules.phrases[lang]
    return [phrases[index] for index in sorted(chosen)]


def _words(text: str, lang: str) -> frozenset:
    """What a phrase's `needs` are looked up in: the clause's words (its characters in Chinese)."""
    return frozenset(text) if lang == "zh" else frozenset(_EN_WORDS.findall(text.lower().replace("’", "'")))


_CLAUSE = {"zh": re.compile(r"(?:[^，,；;：:。！？!?\n]|(?<=\d)[:,](?=\d))+"),
           "en": re.compile(r"(?:[^;:!?.,—\n]|[.,](?=\S))+")}


def _clauses(state):
    for clause in _CLAUSE["zh" if state.lang == "zh" else "en"].finditer(state.text):
        text = clause.group()
        start = clause.start() + len(text) - len(text.lstrip())
        end = clause.start() + len(text.rstrip())
        if start < end:
            yield start, end


def _clause_statements(state, rules: Rules, start: int, end: int) -> list[SlotFact]:
    markers = rules.markers[state.lang]
    if _holds(state.text[start:end], markers["not_in_clause"], state.lang):
        return []
    found: list[SlotFact] = []
    read: list[tuple[int, int]] = []  # each statement's words, phrase to value: no other statement reads them
    for phrase in _candidates(rules, state.lang, _words(state.text[start:end], state.lang)):
        if any(fact.slot == phrase.spec.name for fact in found):
            continue
        position = start
        while (match := phrase.pattern.search(state.text, position, end)) is not None:
            position = match.start() + 1  # overlapping: "做完手术以后我就不打网球了" holds 做… and 打…
            if any(match.start() < read_end and read_start < match.end() for read_start, read_end in read):
                continue
            fact = _statement(state, rules, phrase, match, start, end)
            if fact is not None:
                found.append(fact)
                read.append((match.start(), max(fact.value_end, match.start("z")) if phrase.value_last
                             else match.end()))
                break
    return found


def _statement(state, rules: Rules, phrase: Phrase, match, start: int, end: int) -> SlotFact | None:
    markers = rules.markers[state.lang]
    reading = (_english_holder if state.lang != "zh" else _chinese_holder)(state, markers, start, match.start())
    if reading is None:
        return None
    holder, negated = reading
    if phrase.value is not None:
        if not _ends_clause(state, markers, match.end(), end):
            return None
        value_start, value_end = (match.start(), match.end()) if phrase.value else (match.end(), match.end())
    else:
        span = _fitting_value(state, rules, phrase.spec,
                              *_value_span(state, markers, match.start("z"), match.end("z")))
        if span is None:
            return None
        value_start, value_end = span
    # "I'm not vegan": a negation between the phrase's first word and its value
    negated = negated or _negated_within(state, markers, match.start(), max(value_start, match.start("z") if
                                                                           phrase.value is None else match.end()))
    # "I have a new car", "养了只新猫": a value said to be new replaces one (or joins the others)
    fresh = phrase.value is None and _NEW[state.lang].search(state.text[match.start("z"): value_start]) is not None
    kind, polarity = _kind_and_polarity(state, markers, phrase, negated, fresh, start, end)
    if kind is None:
        return None
    written = re.sub(r"\s+", " ", state.text[match.start(): match.start("z")] if phrase.value is None
                     else match.group()).strip()
    if phrase.value is not None:
        return SlotFact(holder, phrase.spec.name, written, True, phrase.value, value_start, value_end, polarity,
                        start, end, 0.8, time=statement_time(state, start, end, value_start, value_end), kind=kind,
                        statement=True)
    fact = slot_fact(state, holder, phrase.spec, written, value_start, value_end, start, end, polarity,
                     needs_person=phrase.spec.value_kind == "person", kind=kind)
    if fact is not None:
        fact.statement = True
    return fact


def _anchored_statements(state, rules: Rules, start: int, end: int, stated: list) -> list[SlotFact]:
    """A first-person clause that names a value of an anchored slot next to one of its cues ("my Spanish class
    moved to Tuesdays", "每天在App上打卡练日语", "save 555-0199 as my number") states that value, whatever its
    verb: one fact per slot, none in a clause a phrase read for that slot, none in a plan, wish or question."""
    clause = state.text[start:end]
    markers = rules.markers[state.lang]
    if not (_FIRST_PERSON[state.lang].search(clause) or _subject_dropped_change(state, markers, start, end)) or \
            _THIRD_PERSON[state.lang].search(clause) or _holds(clause, markers["not_in_clause"] + markers["plan"],
                                                              state.lang):
        return []
    found = []
    taken = {fact.slot for fact in stated}
    for anchor, span in _anchored_spans(state, rules, start, end):
        if anchor.spec.name in taken or any(fact.value_start < span[1] and span[0] < fact.value_end
                                            for fact in found + stated):
            continue
        if _names_someone(state, rules, start, end, _value_region(state, span, start)):
            continue  # the value names no one else: "I'm under Colin Byrne now", "the owner of an Audi A4"
        phrase = _syntax_phrase(state, markers, anchor, span, start, end)
        # an end word may hold its own negation (不干了, no longer): it ends the value, it denies nothing
        negated = phrase.kind not in ENDING_KINDS and _holds(clause, markers["negation"], state.lang)
        kind, polarity = _kind_and_polarity(state, markers, phrase, negated, _NEW[state.lang].search(clause) is not None,
                                            start, end)
        if kind is None:
            continue
        holder = speaker_holder(state, start, 0)
        fact = slot_fact(state, holder, anchor.spec, anchor.spec.label(state.lang), *span, start, end, polarity,
                         kind=kind) or _cued_person(state, markers, holder, anchor, span, start, end, polarity, kind)
        if fact is not None:
            fact.statement = True
            taken.add(anchor.spec.name)
            found.append(fact)
    return found


_PERSON_NAME = {"en": re.compile(r"[A-Z][a-z'’-]+(?: [A-Z][a-z'’-]+){0,2}"), "zh": re.compile("[\u4e00-\u9fff]{2,3}")}


def _cued_person(state, markers, holder, anchor: Anchor, span: tuple, start: int, end: int, polarity: str,
                 kind: str):
    """A person's name found by syntax beside a cue of a person slot ("I answer to Henrik Dahl at work", "跟小雨在
    一起了") is a person even when the analyser typed it otherwise (a place, or no name: a nickname without a
    surname) unless it is a word for people (同事): the fact, else None."""
    value = state.text[span[0]:span[1]]
    if not anchor.by_syntax or anchor.spec.value_kind != "person" or not _PERSON_NAME[state.lang].fullmatch(value) \
            or _person_noun(value, markers, state.lang):
        return None
    return SlotFact(holder, anchor.spec.name, anchor.spec.label(state.lang), True, value, *span, polarity, start, end,
                    0.8, value_mention=Mention(value, *span, "Person", confidence=0.7),
                    time=statement_time(state, start, end, *span), kind=kind, statement=True)


def _anchored_spans(state, rules: Rules, start: int, end: int) -> list:
    """[(Anchor, value span)] of the clause, in the order they are tried: anchors of listed values and value
    patterns first, in the file's order; then names found by syntax, the best cued first (a cue word just before
    the name: "I answer to Henrik Dahl at work" is a manager before it is an employer; then a cue in the clause;
    then one elsewhere in the sentence: "I've been at Meridian Pharma since the spring, new job"), the file's
    order between equals."""
    clause = state.text[start:end]
    words, sentence_words = _words(clause, state.lang), _words(state.text, state.lang)
    ranked = []
    for order, anchor in enumerate(rules.anchors[state.lang]):
        # a listed value's slot is also cued by a change word: "上礼拜我下定决心改成蛋奶素了"
        in_clause = _cued(state.lang, anchor.cues, clause, words) or (
            not anchor.by_syntax and anchor.value is None and _holds(clause, rules.markers[state.lang]["change_words"],
                                                                     state.lang))
        sentence_cue = anchor.by_syntax or anchor.value is not None  # a name, or a phone number's own shape
        if not (in_clause or sentence_cue and _cued(state.lang, anchor.cues, state.text, sentence_words)):
            continue
        span = _anchored_value(state, rules, anchor, start, end)
        if span is None:
            continue
        strength = 9 if not anchor.by_syntax else 2 * _cued(
            state.lang, anchor.cues, *_just_before(state, start, span[0])) + in_clause
        ranked.append((-strength, order, anchor, span))
    return [(anchor, span) for _, _, anchor, span in sorted(ranked, key=lambda item: item[:2])]


def _cued(lang: str, cues: tuple, text: str, words) -> bool:
    if lang == "zh":
        return any(cue in text for cue in cues)
    return any(cue in words or " " in cue and cue in text.lower() for cue in cues)


def _just_before(state, start: int, position: int) -> tuple:
    """(text, words) of what stands just before a value: three English words, four Chinese characters."""
    if state.lang == "zh":
        text = state.text[max(start, position - 4): position]
        return text, _words(text, "zh")
    text = " ".join(_EN_TOKEN.findall(state.text[start:position])[-3:])
    return text, _words(text, "en")


_FIRST_PERSON = {"en": re.compile(r"\b(?:i|i'm|i've|i'd|me|my|mine|we|we're|we've|our|us)\b", re.IGNORECASE),
                 "zh": re.compile("我")}
# someone else's ("my sister's Spanish class", 他的车, "someone still rings my old number", 有人打…): the clause
# is not the speaker's alone
_THIRD_PERSON = {"en": re.compile(r"\b(?:he|she|they|his|her|their|him|them|you|your|someone|somebody|people)\b|'s\b",
                                  re.IGNORECASE),
                 "zh": re.compile("[他她你]|有人|别人|人家")}


def _value_region(state, span: tuple, start: int) -> tuple:
    """The value's span, in Chinese from a 从 before it ("从天盾安保跳到凯旋资本": the old value is a name too)."""
    origin = state.text.rfind("从", start, span[0]) if state.lang == "zh" else -1
    return (origin, span[1]) if origin >= 0 else span


def _subject_dropped_change(state, markers, start: int, end: int) -> bool:
    """A clause with no subject that tells a change or an end is the speaker's, as a phrase's is: in English one
    that opens with a change or end word ("Switched from X over to Y…", "Traded in the X for a Y"); in Chinese
    one with nothing but time, lead and between words (or a 把/从 phrase) before its change word ("半个月前换到
    柳州生活了", "上个周末把号码换成了…"; "公司搬到了上海" is the company's). One that names no change could be
    anyone's state."""
    changes = markers["change_words"] + markers["end_words"]
    if state.lang != "zh":
        tokens = [(word.lower(), 0, 0) for word in _EN_TOKEN.findall(_without_times(state, start, end))]
        words = [word for word, _, _ in tokens[_skip_words(tokens, 0, markers["lead_words"]):]]
        return any(words[:len(word.split())] == word.split() for word in changes)
    clause = state.text[start:end]
    positions = [clause.find(word) for word in changes if word in clause]
    if not positions:
        return False
    before = clause[:min(positions)]
    for time in state.times:
        before = before.replace(time.expression, "")
    return "把" in before or before.startswith("从") or bool(
        markers["lead_pattern"].fullmatch(before) or markers["between_pattern"].fullmatch(before))


def _syntax_phrase(state, markers, anchor: Anchor, span: tuple, start: int, end: int) -> Phrase:
    """The phrase an anchored statement is read as: a change when the clause holds a change word, else an end
    when it holds an end word, else for a name found by syntax a change when it has dated time words of its own
    ("I came on board at Vantage Solar four days ago", "we gave up our flat in Omaha"), else a state."""
    multi, kind = anchor.spec.multi_valued, "set"
    clause = state.text[start:end]
    own = statement_time(state, start, end, *span)
    if _holds(clause, markers["change_words"], state.lang):
        kind = "add" if multi else "change"
    elif _holds(clause, markers["end_words"], state.lang):
        kind = "stop" if multi else "end"
    elif anchor.by_syntax and own is not None and state.times[own].value:
        kind = "add" if multi else "change"
    return Phrase(anchor.spec, kind, "(?!)", 0, None, False, None)


def _names_someone(state, rules: Rules, start: int, end: int, value: tuple | None = None) -> bool:
    """The clause names a person ("my old classmate Luis drives a Honda Civic now") or a relative (my sister, 我姐),
    outside the `value` span when one is given."""
    if any(start <= mention.start < end and mention.entity_type == "Person" and not mention.pronoun
           and not (value and value[0] <= mention.start < value[1]) for mention in state.mentions):
        return True
    clause = state.text[start:end]
    if state.lang == "zh":
        owners = [index + (2 if clause.startswith("我的", index) else 1) for index, character in enumerate(clause)
                  if character == "我"]
        return any(_person_noun(clause[owner: owner + width], rules.markers["zh"], "zh")
                   for owner in owners for width in range(1, 5) if owner + width <= len(clause))
    words = [word.lower() for word in _EN_TOKEN.findall(clause)]
    return any(word in ("my", "our") and any(_person_noun(noun, rules.markers["en"], "en") for noun in (
        " ".join(words[index + 1: index + 3]), *words[index + 1: index + 4])) for index, word in enumerate(words))


def _anchored_value(state, rules: Rules, anchor: Anchor, start: int, end: int) -> tuple[int, int] | None:
    if anchor.by_syntax:
        candidates = (_zh_name_spans if state.lang == "zh" else _en_name_spans)(state, anchor, start, end)
        return next((span for span in candidates if _fitting_value(state, rules, anchor.spec, *span) == span), None)
    if anchor.value is not None:
        match = anchor.value.search(state.text, start, end)
        return None if match is None else (match.start(), match.end())
    if (anchor.spec.name, state.lang) not in rules.values:
        return None
    return _listed_span(state, rules, anchor.spec, start, end, last=True)


# A capitalised name: words with a capital (or digits after the first), joined by "of", "and", "&"
_EN_NAME = re.compile(r"(?<![\w'’-])[A-Z][\w'’&.-]*(?:\s+(?:(?:of|and|&|the|de)\s+)?(?:[A-Z][\w'’&.-]*|\d[\w-]*))*")
_EN_NAME_PREPOSITIONS = frozenset("to at in for with under by as into joined".split())
_EN_NAME_FILLERS = frozenset("the a an our my new".split())
_EN_NOT_NAMES = frozenset("i i'm i've i'd i'll".split())


def _en_name_spans(state, anchor: Anchor, start: int, end: int) -> list:
    """The clause's capitalised names that may be the anchored slot's value, best first: the last after a
    preposition, then one just before a cue word ("Anchorage residents"), then, for a person, one joined to the
    speaker ("Kai and I"), then the clause's only name beside a copula when the clause holds a cue word."""
    clause = state.text[start:end]
    lead = len(clause) - len(clause.lstrip())
    names = []
    for match in _EN_NAME.finditer(clause):
        first = start + match.start()
        text = match.group().removesuffix("'s").removesuffix("’s")
        # "Me and Elliot", "Kai and I": the speaker joined to a name is no part of it
        speaker_first = re.match(r"(?:me|i)\s+and\s+", text, re.IGNORECASE)
        if speaker_first:
            first, text = first + speaker_first.end(), text[speaker_first.end():]
        text = re.sub(r"\s+and\s+(?:I|Me)$", "", text)
        last = first + len(text)
        if text.lower() in _EN_NOT_NAMES or text == state.speaker or any(
                time.start < last and first < time.end for time in state.times):
            continue
        if match.start() == lead and " " not in text and mention_at(state, first, last) is None:
            continue  # a sentence's capitalised first word ("Finally got the keys…")
        names.append((first, last))
    after_preposition = []
    for first, last in reversed(names):
        before = [word.lower() for word in _EN_TOKEN.findall(state.text[start:first])]
        while before and before[-1] in _EN_NAME_FILLERS:
            before.pop()
        if before and before[-1] in _EN_NAME_PREPOSITIONS:
            after_preposition.append((first, last))
    before_cue = [(first, last) for first, last in names if _starts_with_cue(state.text[last:end], anchor.cues)]
    # a name joined to the speaker ("Kai and I decided…", "me and Jude got together"): a person's slot
    with_speaker = [(first, last) for first, last in names if anchor.spec.value_kind == "person" and (
        re.match(r"\s+and\s+(?:i|me)\b", state.text[last:end], re.IGNORECASE)
        or re.search(r"\b(?:me|i)\s+and\s+$", state.text[start:first], re.IGNORECASE))]
    # the clause's only name, a copula's other side, in a clause with a cue: "Home for me is Leeds"
    alone = [(first, last) for first, last in names if len(names) == 1
             and (_EN_TOKEN.findall(state.text[start:first].lower())[-1:] in (["is"], ["'s"], ["are"])
                  or _EN_TOKEN.findall(state.text[last:end].lower())[:1] in (["is"], ["are"]))
             and _cued("en", anchor.cues, clause, _words(clause, "en"))]
    return after_preposition + before_cue + with_speaker + alone


def _starts_with_cue(text: str, cues: tuple) -> bool:
    """The words right after a name are one of the cues ("Anchorage residents", "Elliot asked me out")."""
    words = " ".join(_EN_TOKEN.findall(text.lower())[:4]) + " "
    return any(words.startswith(cue + " ") for cue in cues)


_ZH_NAME_LEAD = re.compile("家在|到|在|去|进|归|跟|和|是|落脚|定居|入职|加入")
_ZH_NAME_STOPS = ("的", "了", "啦", "，", "。", "！", "？", "、", " ")


def _zh_name_spans(state, anchor: Anchor, start: int, end: int) -> list:
    """The words after 到/在/去/进/归/跟/和/是/家在 (and a 了 after it) up to a cue word, 的, 了 or the clause's end
    (after 在: up to a cue word only), of two characters or more and no time words, the last first."""
    clause = state.text[start:end]
    stops = anchor.cues + _ZH_NAME_STOPS
    found = []
    for lead in _ZH_NAME_LEAD.finditer(clause):
        first = lead.end() + 1 if clause.startswith("了", lead.end()) else lead.end()
        if clause.startswith(anchor.cues, first):
            continue  # 在工作群里…: the lead's object is the cue's own word, no name
        last = min((position for stop in stops if (position := clause.find(stop, first)) > first),
                   default=len(clause))
        last = min(last, first + MAX_ZH_VALUE_CHARS)
        if lead.group() == "在" and not clause.startswith(anchor.cues, last):
            continue  # 在 names where something happens; only 在X上班 / 在X住 names the slot's X
        if last - first >= 2 and not any(start + first < time.end and time.start < start + last
                                         for time in state.times):
            found.append((start + first, start + last))
    return found[::-1]


def _negated_within(state, markers, start: int, end: int) -> bool:
    if state.lang == "zh":
        return False  # a Chinese negation stands before the verb (不养猫了): the holder's reading finds it
    return any(word.lower().replace("’", "'") in markers["negation_words"]
               for word in _EN_TOKEN.findall(state.text[start:end]))


_NEW = {"en": re.compile(r"\bnew\b", re.IGNORECASE), "zh": re.compile("新")}


def _kind_and_polarity(state, markers, phrase: Phrase, negated: bool, fresh: bool, start: int, end: int) -> tuple:
    """(kind, polarity) of a phrase read in the clause, (None, None) when the clause states nothing."""
    multi = phrase.spec.multi_valued
    if negated:
        if phrase.kind not in ("set", "add"):
            return None, None
        clause = state.text[start:end]
        if _holds(clause, markers["no_longer"], state.lang) or (
                state.lang == "zh" and _ZH_ENDS_IN_LE.search(clause)):
            return ("stop" if multi else "end"), ENDED
        return ("set", NEGATED) if phrase.kind == "set" else (None, None)
    if phrase.kind in ("end", "stop"):
        return phrase.kind, ENDED
    if phrase.kind == "set" and (fresh or _new_state(state, markers, start, end, multi)):
        return ("add" if multi else "change"), STATED
    return phrase.kind, STATED


def _new_state(state, markers, start: int, end: int, multi: bool) -> bool:
    """A state the clause says is new: "… now", "since March …", 现在…, 从三月份起…, and on a single-valued slot
    …了 (我住在杭州了; 我今天打篮球了 tells a game, not a new pastime)."""
    clause = state.text[start:end]
    if _holds(clause, markers["now"], state.lang) or (
            state.lang == "zh" and not multi and _ZH_ENDS_IN_LE.search(clause)
            and not _ZH_DURATION_LE.search(clause)):
        return True
    return any(start <= time.start < end and _SINCE[state.lang].search(state.text[start: time.start])
               for time in state.times)


_SINCE = {"en": re.compile(r"\bsince\s+$", re.IGNORECASE), "zh": re.compile(r"(?:从|自从|自)$")}


_ZH_ENDS_IN_LE = re.compile(r"[了啦][。！!～~…\s]*$")
_ZH_DURATION_LE = re.compile(r"[0-9一二两三四五六七八九十几多]+个?(?:年|月|天|星期|周)了[。！!～~…\s]*$")  # 吃素十几年了: a state


def _ends_clause(state, markers, position: int, end: int) -> bool:
    rest = _without_times(state, position, end).strip()
    if state.lang == "zh":
        return _ZH_PARTICLES.fullmatch(rest) is not None
    words = _EN_TOKEN.findall(rest.lower())
    return not words or words[0] in markers["value_ends"] or rest[:1] in "—-("


_ZH_PARTICLES = re.compile(r"[了啦呢吧啊哦呀嘛～~…！!。\s]*")


# ---------------------------------------------------------------------------------------------------------
# holders


_EN_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z]+)*(?:['’][a-z]+)?|['’][a-z]+", re.IGNORECASE)


def _english_holder(state, markers, start: int, phrase_start: int) -> tuple | None:
    """(holder, negated) when what stands before the phrase is a holder and nothing but between words,
    negations and times; None otherwise. After a conjunction ("I left Acme and joined Atlas") the phrase's
    clause starts anew, its holder the first one unless it names its own."""
    tokens = [(match.group().lower().replace("’", "'"), start + match.start(), start + match.end())
              for match in _EN_TOKEN.finditer(_without_times(state, start, phrase_start))]
    index = _skip_words(tokens, 0, markers["lead_words"])
    holder, index = _english_subject(state, markers, tokens, index, start)
    if holder is None:
        return None
    conjunctions = [position for position in range(index, len(tokens)) if tokens[position][0] in _EN_CONJUNCTIONS]
    if conjunctions:
        index = conjunctions[-1] + 1
        own, after = _english_subject(state, markers, tokens, index, start, pro_drop=False)
        if own is not None:
            holder, index = own, after
    negation = markers["negation_words"]
    rest = [word for word, _, _ in tokens[index:]]
    if not all(word in markers["between_words"] or word in negation for word in rest):
        return None
    return holder, any(word in negation for word in rest)


_EN_CONJUNCTIONS = frozenset({"and", "but", "then", "so"})


def _english_subject(state, markers, tokens: list, index: int, start: int, pro_drop: bool = True) -> tuple:
    """(holder, index after it) of the words from `index`; (None, index) when they name none."""
    between = markers["between_words"] | markers["negation_words"]
    if index == len(tokens) or tokens[index][0] in between:
        # "Got a job at Acme!", "Finally moved to Denver": the speaker
        return (speaker_holder(state, start, 0), index) if pro_drop else (None, index)
    after_self = _skip_words(tokens, index, markers["holders_self_words"], once=True)
    if after_self > index:
        return speaker_holder(state, tokens[index][1], 0), after_self
    if tokens[index][0] == "my":
        return _english_relative(state, markers, tokens, index)
    return _english_name(state, tokens, index)


def _english_relative(state, markers, tokens: list, index: int) -> tuple:
    """"my sister" (the speaker's sister), "my coworker Raj" (Raj)."""
    for width in (2, 1):
        noun = " ".join(word for word, _, _ in tokens[index + 1: index + 1 + width])
        if index + width < len(tokens) and _person_noun(noun, markers, "en"):
            after = index + 1 + width
            named, named_end = _english_name(state, tokens, after) if after < len(tokens) else (None, after)
            if named is not None:
                return named, named_end
            return relative_holder(state, noun, tokens[index][1], tokens[after - 1][2], person=True), after
    return None, index


def _english_name(state, tokens: list, index: int) -> tuple:
    """A person named at `index`: the analyser's, or up to three capitalised words that are no function
    words ("Raj", which the analyser missed)."""
    named = _person_at(state, tokens[index][1])
    end = index
    if named is None:
        while (end < len(tokens) and end - index < 3 and state.text[tokens[end][1]].isupper()
               and tokens[end][0] not in english_function_words() and tokens[end][0].partition("'")[0] != "i"):
            end += 1
        if end == index:
            return None, index
        text = state.text[tokens[index][1]: tokens[end - 1][2]]
        return Mention(text, tokens[index][1], tokens[end - 1][2], "Person", text, confidence=0.6), end
    while end < len(tokens) and tokens[end][2] <= named.end:
        end += 1
    return named, end


def _person_noun(noun: str, markers, lang: str) -> bool:
    return slot_lexicon().person_noun(noun, lang) or noun in markers["people"]


def _skip_words(tokens: list, index: int, phrases: dict, once: bool = False) -> int:
    """The index after the marker phrases (`phrases`: first word → the phrases' words, longest first) at
    `index`: one when `once`, else as many as follow each other."""
    while index < len(tokens):
        for words in phrases.get(tokens[index][0], ()):
            if tuple(word for word, _, _ in tokens[index: index + len(words)]) == words:
                index += len(words)
                break
        else:
            return index
        if once:
            return index
    return index


def _by_first_word(phrases: tuple) -> dict:
    found: dict = {}
    for phrase in phrases:  # longest first
        words = tuple(phrase.split())
        found.setdefault(words[0], []).append(words)
    return found


def _chinese_holder(state, markers, start: int, phrase_start: int) -> tuple | None:
    text = _without_times(state, start, phrase_start)
    lead = markers["lead_pattern"].match(text)
    skip = lead.end() if lead else 0
    if _holds(text, markers["not_a_change"], "zh"):
        return None
    for holder, rest in _chinese_subjects(state, markers, text[skip:], start + skip):
        if markers["between_pattern"].fullmatch(rest):
            return holder, any(word in rest for word in markers["negation"])
    return None


def _chinese_subjects(state, markers, text: str, start: int):
    """The readings of `text` as a holder and what follows it, the likeliest first."""
    for word in markers["holders_self"]:
        if text.startswith(word):
            yield speaker_holder(state, start, 0), text[len(word):]
    if text.startswith(("我和", "我跟")):
        for width in range(1, 5):
            yield speaker_holder(state, start, 0), text[2 + width:]
    if text.startswith("我"):
        mine = 2 if text.startswith("我的") else 1
        yield from _chinese_relatives(state, markers, text, start, mine)
        yield speaker_holder(state, start, 0), text[mine:]  # 我的狗去世了: the speaker's
    yield from _chinese_relatives(state, markers, text, start, 0)
    named = _person_at(state, start)
    if named is not None:
        yield named, text[named.end - named.start:]
    yield speaker_holder(state, start, 0), text  # 辞职了: the speaker


def _chinese_relatives(state, markers, text: str, start: int, mine: int):
    """我姐 (the speaker's 姐), 我同事老刘 (老刘): a relative written at `mine`, then maybe their name."""
    for width in range(4, 0, -1):
        noun = text[mine: mine + width]
        if len(noun) < width or not _person_noun(noun, markers, "zh"):
            continue
        after = mine + width
        named = _person_at(state, start + after)
        nickname = _ZH_NICKNAME.match(text, after)
        if named is not None:
            yield named, text[after + named.end - named.start:]
        elif nickname is not None:  # 我朋友小敏: a name the analyser missed
            yield (Mention(nickname.group(), start + after, start + nickname.end(), "Person", nickname.group(),
                           confidence=0.6), text[nickname.end():])
        yield relative_holder(state, noun, start, start + after, person=True), text[after:]


_ZH_NICKNAME = re.compile(r"[小老阿][\u4e00-\u9fff]")


def _person_at(state, start: int):
    return next((mention for mention in state.mentions if mention.start == start and not mention.pronoun
                 and mention.entity_type == "Person"), None)


def _without_times(state, start: int, end: int) -> str:
    """The sentence from `start` to `end` with its time expressions blanked out."""
    characters = list(state.text[start:end])
    for time in state.times:
        for position in range(max(time.start, start), min(time.end, end)):
            characters[position - start] = " "
    return "".join(characters)


def _holds(text: str, words: tuple, lang: str) -> bool:
    if lang == "zh":
        return any(word in text for word in words)
    padded = " " + " ".join(_EN_TOKEN.findall(text.lower().replace("’", "'"))) + " "
    return any(f" {word} " in padded for word in words)


# ---------------------------------------------------------------------------------------------------------
# values


_EN_VALUE_LEAD = re.compile(r"^(?:(?:a|an|the|my|our|his|her|their|some|new|brand[ -]new|another)\s+)+",
                            re.IGNORECASE)
_ZH_VALUE_LEAD = re.compile(r"^(?:了|到|一?(?:只|条|个|辆|台|部|位|所|款)|一家|新的?|个)+")
_ZH_VALUE_TAIL = re.compile(r"(?:去|来|住|玩|那边|这边)+$")


def _value_span(state, markers, start: int, end: int) -> tuple[int, int]:
    """Where the value the phrase left from `start` to `end` lies: up to the clause's first time expression
    and (English) the first word that ends a value, without a leading article or classifier."""
    end = min([end] + [time.start for time in state.times if start <= time.start < end])
    text = state.text[start:end]
    if state.lang == "zh":
        cut = min([len(text)] + [text.find(word) for word in markers["value_ends"] if word in text])
        text = text[:cut]
        lead = _ZH_VALUE_LEAD.match(text)
        skip = lead.end() if lead else 0
        trimmed = _ZH_VALUE_TAIL.sub("", _zh_particles_trimmed(text[skip:]))
        return start + skip, start + skip + len(trimmed)
    words = list(_EN_TOKEN.finditer(text))
    for word in words:
        if word.group().lower() in markers["value_ends"] and word.start() > 0:
            text = text[: word.start()]
            break
    text = text.rstrip(" .,!\"'”’)-")
    lead = _EN_VALUE_LEAD.match(text)
    skip = lead.end() if lead else 0
    return start + skip, start + len(text)


def _zh_particles_trimmed(text: str) -> str:
    return re.sub(r"[了啦呢吧啊哦呀嘛。！!～~…\s]+$", "", text)


def _fitting_value(state, rules: Rules, spec: SlotSpec, start: int, end: int) -> tuple[int, int] | None:
    """The span of the value the slot takes from the sentence's `start`…`end`, None when it takes none: a
    slot with `values` takes the listed word (Chinese: the longest; English: the first, with the capitalised
    words after it, Ford Ranger)."""
    value = state.text[start:end]
    if not value or (state.lang == "zh" and (len(value) > MAX_ZH_VALUE_CHARS or value.startswith(_ZH_NO_VALUE))):
        return None  # 住在的那个…: no value follows; 我家的狗去世了: the holder is no value
    excluded = rules.excluded.get((spec.name, state.lang), ())
    if value.endswith(excluded) if state.lang == "zh" else any(
            f" {word} " in " " + " ".join(value.lower().split()) + " " for word in excluded):
        return None
    if (spec.name, state.lang) in rules.values:
        found = _listed_span(state, rules, spec, start, end)
        if found is None:
            return None
        start, end = found
        value = state.text[start:end]
    if state.lang == "zh":
        return (start, end) if _zh_kind_fits(state, spec, start, end) else None
    if spec.value_kind in ("place", "organisation") and not (
            value[:1].isupper() or value[:1].isdigit()
            or (spec.value_kind == "organisation" and state.text[:start].lower().endswith(("at the ", "for the ")))):
        return None  # "moved to a bigger place", "left the party"; but "my job at the bakery" names one
    return start, end


def _listed_span(state, rules: Rules, spec: SlotSpec, start: int, end: int, last: bool = False) \
        -> tuple[int, int] | None:
    """The listed value in `start`…`end` (Chinese: the longest; English: the first, or the `last` one: "traded
    in the Peugeot 208 for a Citroen C3" names the new one last), with the capitalised words after it ("Renault
    Clio" is one value, though clio is listed too)."""
    value = state.text[start:end]
    if state.lang == "zh":
        listed = rules.values[(spec.name, "zh")]
        words = [word for word in listed if word in value]
        if not words:
            return None
        if last:  # the word that ends last, the longest of those (从侍酒师转成了社工: 社工)
            word = max(words, key=lambda word: (value.rindex(word) + len(word), len(word)))
            return start + value.rindex(word), start + value.rindex(word) + len(word)
        word = max(words, key=len)
        return start + value.index(word), start + value.index(word) + len(word)
    spans: list = []  # each listed word with the capitalised words after it, none inside an earlier one
    for found in _compiled(rules.values_pattern[spec.name], re.IGNORECASE).finditer(value):
        if not spans or found.start() >= spans[-1][1]:
            spans.append((found.start(), _EN_CAPITALISED.match(value, found.end()).end()))
    if not spans:
        return None
    first, after = spans[-1] if last else spans[0]
    return start + first, start + after


_EN_CAPITALISED = re.compile(r"(?:\s+(?:[A-Z][\w-]*|\d[\w-]*))*")


_ZH_NO_VALUE = ("的", "我", "你", "他", "她", "它", "咱")
_ZH_PLACE_ENDS = ("市", "省", "区", "县", "镇", "村", "州", "小区", "花园", "家园", "公寓")


def _zh_kind_fits(state, spec: SlotSpec, start: int, end: int) -> bool:
    """A Chinese place is one the analyser named as a place (or ends like one); an employer is no place."""
    places = [mention for mention in state.mentions if mention.entity_type == "Location"
              and start <= mention.start and mention.end <= end]
    if spec.value_kind == "place":
        return bool(places) or state.text[start:end].endswith(_ZH_PLACE_ENDS)
    if spec.value_kind == "organisation":
        return not any((mention.start, mention.end) == (start, end) for mention in places)
    return True


# ---------------------------------------------------------------------------------------------------------
# the rules file


@lexicon_cache
def change_rules() -> Rules:
    data = load_yaml("changes.yaml")
    if not isinstance(data, dict) or not isinstance(data.get("statements"), dict) or not isinstance(
            data.get("markers"), dict):
        _refuse(None, "a mapping with `markers:` and `statements:` (see the shipped file's header)")
    markers = {lang: _markers(data["markers"].get(lang), lang) for lang in LANGUAGES}
    phrases: dict = {lang: [] for lang in LANGUAGES}
    written: list = []  # (where, the phrase as written, Phrase): for the check that each compiles
    values: dict = {}
    excluded: dict = {}
    lexicon = slot_lexicon()
    for name, entry in data["statements"].items():
        spec = lexicon.slots.get(name)
        if spec is None or not isinstance(entry, dict):
            _refuse(f"statements.{name}", "a slot of slots.yaml mapped to its phrases")
        for lang in LANGUAGES:
            # the kinds that tell a change first: 养了一只猫 is an addition before it is a state (养…)
            for kind, listed in sorted((entry.get(lang) or {}).items(), key=lambda item: _kind_order(item[0])):
                where = f"statements.{name}.{lang}.{kind}"
                for item in _word_list(listed, where, True):
                    written.append((where, item, _phrase(spec, kind, item, lang, where)))
                    phrases[lang].append(written[-1][2])
        for key, table in (("values", values), ("excluded", excluded)):
            for lang, words in (entry.get(key) or {}).items():
                table[(name, lang)] = tuple(word if lang == "zh" else word.lower()
                                            for word in _word_list(words, f"statements.{name}.{key}.{lang}"))
    _check_compiles(written)
    anchors = {lang: tuple(_anchor(lexicon.slots[name], entry["anchors"], lang, f"statements.{name}.anchors")
                           for name, entry in data["statements"].items() if entry.get("anchors", {}).get(lang))
               for lang in LANGUAGES}
    by_word: dict = {lang: {} for lang in LANGUAGES}
    unindexed: dict = {lang: [] for lang in LANGUAGES}
    for lang, found in phrases.items():
        for index, phrase in enumerate(found):
            if phrase.needs is None:
                unindexed[lang].append(index)
            for word in phrase.needs or ():
                by_word[lang].setdefault(word, []).append(index)
    values_pattern = {name: rf"(?<![\w-])(?:{'|'.join(map(re.escape, sorted(words, key=len, reverse=True)))})(?![\w-])"
                      for (name, lang), words in values.items() if lang == "en"}
    return Rules({lang: tuple(found) for lang, found in phrases.items()}, values, values_pattern, excluded, markers,
                 by_word, unindexed, anchors)


def _anchor(spec: SlotSpec, entry, lang: str, where: str) -> Anchor:
    if not isinstance(entry, dict):
        _refuse(where, "{en: [cue words], zh: [cue words], value: a regular expression (optional), span: name "
                       "(optional)}")
    if entry.get("span") not in (None, "name"):
        _refuse(f"{where}.span", "name (the value is a name found by the clause's syntax), or no span")
    cues = tuple(cue if lang == "zh" else cue.lower() for cue in _word_list(entry[lang], f"{where}.{lang}"))
    pattern = entry.get("value")
    try:
        return Anchor(spec, cues, re.compile(pattern) if pattern else None, entry.get("span") == "name")
    except (re.error, TypeError) as error:
        _refuse(f"{where}.value", f"a regular expression ({error})")


def _kind_order(kind) -> int:
    return ("change", "end", "add", "stop", "set").index(kind) if kind in PHRASE_KINDS else -1


def _markers(entry, lang: str) -> dict:
    if not isinstance(entry, dict):
        _refuse(f"markers.{lang}", f"a mapping of {', '.join(MARKER_KEYS)} to word lists")
    found = {key: tuple(sorted(_word_list(entry.get(key) or [], f"markers.{lang}.{key}"), key=len, reverse=True))
             for key in MARKER_KEYS}
    if lang == "en" and "i" not in found["holders_self"]:
        found["holders_self"] += ("i",)  # the speaker, always
    found["lead_words"] = _by_first_word(found["lead"])
    found["holders_self_words"] = _by_first_word(found["holders_self"])
    found["between_words"] = frozenset(word for phrase in found["between"] for word in phrase.split())
    found["negation_words"] = frozenset(word for phrase in found["negation"] for word in phrase.split())
    if lang == "zh":  # Chinese lead and between entries are regular expressions
        try:
            found["lead_pattern"] = re.compile(f"(?:{'|'.join(found['lead'])}|\\s)*")
            found["between_pattern"] = re.compile(f"(?:{'|'.join(found['between'] + found['negation'])}|\\s)*")
        except re.error as error:
            _refuse(f"markers.{lang}", f"lead and between entries that are regular expressions ({error})")
    return found


def _phrase(spec: SlotSpec, kind: str, item, lang: str, where: str) -> Phrase:
    if kind not in PHRASE_KINDS:
        _refuse(where, f"a kind among {', '.join(PHRASE_KINDS)}")
    fixed = None
    if isinstance(item, dict):
        if set(item) != {"phrase", "value"} or not isinstance(item["phrase"], str) or not isinstance(
                item["value"], str) or VALUE in item["phrase"]:
            _refuse(where, "{phrase: …, value: …}, a phrase without … and the value it states")
        item, fixed = item["phrase"], item["value"]
    before, _, after = item.partition(VALUE)
    if fixed is None and not _:
        fixed = ""
    if fixed is not None:
        source = before
    elif after:
        source = f"{before}\\s*(?P<z>.+?){after}"
    else:
        source = f"{before}\\s*(?P<z>.+)"
    if lang == "en":
        source = rf"(?:(?<=\w)(?=['’])|(?<![\w'’]))(?:{source})" + (r"(?![\w'’])" if fixed is not None else "")
    return Phrase(spec, kind, source, _flags(lang), fixed, fixed is None and not after, _leading(before or after, lang))


def _check_compiles(written: list) -> None:
    """Refuse a phrase that is no regular expression. Compiling them all costs ~35 ms of CPU, so a set of phrases that
    compiled is remembered across processes (memctl.language.parsed_lexicons), the check's identity being every
    phrase's expression and flags: an edited file, or an edit of how _phrase writes expressions, is checked anew."""
    from memctl.language.parsed_lexicons import remembered

    def compile_all() -> bool:
        for where, item, phrase in written:
            try:
                _compiled(phrase.source, phrase.flags)
            except re.error as error:
                _refuse(where, f"a regular expression ({error}): {item!r}")
        return True

    remembered("changes-phrases", "\0".join(f"{phrase.flags}:{phrase.source}" for _, _, phrase in written),
               compile_all)


def _leading(source: str, lang: str) -> frozenset | None:
    """The words (Chinese: characters) one of which starts every match of the expression `source`: the first
    word, or the first words of a group's alternatives ("(?:moved|relocated) to" → moved, relocated); None when
    the start is optional or more than a word or group ("新?添了")."""
    source = source.lstrip()
    if source.startswith(("(?:", "(?=")):
        close = _closing(source)
        if close is None or source[close + 1: close + 2] in ("?", "*", "{"):
            return None
        found: set = set()
        for alternative in _alternatives(source[3:close]):
            words = _leading(alternative, lang)
            if words is None:
                return None
            found |= words
        return frozenset(found)
    word = re.match(r"[\u4e00-\u9fff]" if lang == "zh" else r"['’]?[A-Za-z0-9]+", source)
    if word is None or source[word.end(): word.end() + 1] in ("?", "*", "{", "|", "["):
        return None
    return frozenset({word.group() if lang == "zh" else word.group().lower().replace("’", "'")})


def _closing(source: str) -> int | None:
    depth = 0
    for index, character in enumerate(source):
        if character == "\\":
            continue
        depth += {"(": 1, ")": -1}.get(character, 0)
        if depth == 0:
            return index
    return None


def _alternatives(source: str) -> list[str]:
    """`source` split at its top-level |."""
    parts, depth, last = [], 0, 0
    for index, character in enumerate(source):
        depth += {"(": 1, ")": -1}.get(character, 0)
        if character == "|" and depth == 0:
            parts.append(source[last:index])
            last = index + 1
    return parts + [source[last:]]


def _flags(lang: str) -> int:
    return re.IGNORECASE if lang == "en" else 0


def _word_list(value, where: str, phrases: bool = False) -> list:
    if not isinstance(value, list) or not all(
            (isinstance(item, str) and item) or (phrases and isinstance(item, dict)) for item in value):
        _refuse(where, "a list of strings")
    return value


def _refuse(where: str | None, expected: str):
    from engine.errors import InputError

    path = "changes.yaml" if where is None else f"changes.yaml: {where}"
    raise InputError(f"invalid change statements: expected {expected}", where=path)
