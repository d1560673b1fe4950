"""English slot facts in the first-person forms the generic frames (memctl/r2g/slots.py) and the statements of
memctl/r2g/changes.py do not read (issue 18):

    my sister Anna, my best friend Sarah      the speaker   the person slot of the noun   Anna
    I'm from Sweden, I'm originally from …    the speaker   hometown                      Sweden
    I grew up in Ohio, my home country, Sweden
    I play (the) clarinet, learning the piano the speaker   hobby                         clarinet
    (an instrument of en_words.yaml's `instruments`)
    I wanna / plan to / hope to / I'm gonna /  the speaker   plan                          the deed
    I'm thinking of / ready to <deed>
    (the deed: a verb of en_words.yaml, not a light or phatic one: "I want to say …", "I hope to see you")

The clause's event facts stay beside them (memctl/r2g/extract.py): "I wanna start a dance studio" is a plan and
an intended event. Read in the clauses no other statement read, except the apposition, which names a relative
beside whatever the clause says of them ("my sister Anna lives in Paris" is also Anna's residence). A place or a
name must be written with a capital; questions were left out before (slots.find_slots).
"""

from __future__ import annotations

import re
from functools import cache

from memctl.language.lexicon import lexicon_cache, load_yaml
from memctl.language.slot_lexicon import slot_lexicon
from memctl.r2g.slots import STATED, SlotFact, slot_fact, speaker_holder

_NAME = r"[A-Z][a-z]+(?:[ -][A-Z][a-z]+){0,2}"
_CLAUSE = re.compile(r"(?:[^;:!?.,—\n]|[.,](?=\S))+")
_PLACE_LEAD = r"(?:^|\b(?:and|but|so|yeah|well|oh|actually)\s+)"


@cache
def _frames() -> tuple:
    """(slot, pattern) of the clause frames; the value is the group "z"."""
    # longest first ("acoustic guitar" before "guitar"), then alphabetical: the same expression in every process
    # (a set's order follows the string hash, which differs per process), so memctl/language/compiled_patterns.py
    # finds it compiled
    instruments = "|".join(sorted(_instruments(), key=lambda word: (-len(word), word)))
    return (
        ("hometown", re.compile(rf"{_PLACE_LEAD}I(?:'m| am) (?:originally |also )?from (?P<z>{_NAME})$")),
        ("hometown", re.compile(rf"{_PLACE_LEAD}I grew up in (?P<z>{_NAME})$")),
        ("plan", re.compile(rf"{_PLACE_LEAD}(?:{_PLAN_TRIGGER})(?: to| on)? (?P<z>[a-z].+)$", re.IGNORECASE)),
        ("hobby", re.compile(rf"{_PLACE_LEAD}(?:I (?:also |still )?play|(?:I(?:'m| am) )?(?:just |still |also )?"
                             rf"learning(?: to play)?) (?:the |my )?(?P<z>{instruments})$", re.IGNORECASE)),
    )


@lexicon_cache
def _instruments() -> frozenset:
    return frozenset(load_yaml("en_words.yaml")["instruments"])


_PLAN_TRIGGER = (r"I(?:'m| am) (?:really |also |still |now |so |just )?(?:planning|hoping|aiming|ready|eager|keen|"
                 r"thinking of|thinking about|looking to|going to|gonna)|I (?:really |also |still )?(?:plan|hope|"
                 r"want|intend|aim|wanna|dream of)|(?:I'?m )?gonna")
# "I want to say …", "I hope to see you": wishes toward the other person, no plan of the speaker's
_NOT_PLANS = frozenset({"say", "thank", "let", "know", "see", "hear", "tell", "ask", "check", "talk", "wish", "remind",
                        "be", "get", "go", "do", "make", "keep", "give", "stay", "have", "try"})
_APPOSITION = re.compile(rf"\b[Mm]y (?P<y>(?:best |little |big |older |younger |baby |twin )?[a-z]+) (?P<z>{_NAME})\b")
_HOME_COUNTRY = re.compile(rf"\b[Mm]y home (?:country|town|state),? (?P<z>{_NAME})\b")


def english_statements(state) -> list[SlotFact]:
    """The slot facts of the forms above in the sentence slots.py's `state` holds; `state.found` holds the
    sentence's other slot facts."""
    found = [fact for fact in map(lambda match: _apposition(state, match), _APPOSITION.finditer(state.text)) if fact]
    for match in _HOME_COUNTRY.finditer(state.text):
        fact = slot_fact(state, speaker_holder(state, match.start()), slot_lexicon().slots["hometown"], "home",
                         match.start("z"), match.end("z"), match.start(), match.end(), STATED)
        found.extend([fact] if fact is not None else [])
    for clause in _CLAUSE.finditer(state.text):
        start, end = clause.start(), clause.end()
        if any(fact.start < end and start < fact.end for fact in state.found):
            continue
        text = clause.group().rstrip()
        for slot, pattern in _frames():
            match = pattern.search(text.strip())
            if match is not None and (slot != "plan" or _planned_deed(match["z"])):
                offset = start + len(text) - len(text.lstrip())
                fact = slot_fact(state, speaker_holder(state, offset + match.start()), slot_lexicon().slots[slot],
                                 slot, offset + match.start("z"), offset + match.end("z"), start, end, STATED)
                if fact is not None:
                    fact.statement = True  # "I wanna start a studio" is the plan and the intended event both
                    found.append(fact)
                    break
    return found


def _planned_deed(value: str) -> bool:
    """A plan names a deed of the speaker: "working with trans people", "continue my edu"; "be a mom" is one too
    when be has its noun."""
    from memctl.r2g.predicates import english_lemmatizer
    from memctl.language.lexicon import english_words

    words = value.split()
    lemma = english_lemmatizer()(words[0].lower())
    if lemma == "be":
        return len(words) > 1 and words[1].lower() in ("a", "an")
    return lemma in english_words()["verbs"] and lemma not in _NOT_PLANS


def _apposition(state, match) -> SlotFact | None:
    noun = match["y"]
    lexicon = slot_lexicon()
    if not lexicon.person_noun(noun, "en") and not lexicon.person_noun(noun.split()[-1], "en"):
        return None
    spec = lexicon.named_by(noun, "en") or lexicon.named_by(noun.split()[-1], "en")
    return slot_fact(state, speaker_holder(state, match.start()), spec, noun.split()[-1], match.start("z"),
                     match.end("z"), match.start(), match.end(), STATED, needs_person=True)
