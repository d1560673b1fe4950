"""Which English facts a sentence states: the precision rules of issue 18 applied to nlp_en's raw facts.

Chat is mostly reactions, greetings and advice; read literally they become events nobody stated ("Way to go,
Jon!" → go(agent Way)). A fact is kept when
- the sentence is a statement, not a question;
- its predicate has content of its own: not a copula, light verb or phatic verb (en_words.yaml
  content_free_predicates), except be or have with a named place or a place noun ("I'll be in Chicago");
- it has a holder: the speaker (I), a named person, or a person the speaker's or a named person's ("my sister",
  "Tim's mom"; not a group: "my team", "my students") or a thing of the speaker's that opens the sentence, with a
  lexicon verb ("my laptop won't connect"); never the person addressed ("Hey Maria, hope you're well"), nor a
  capitalised word at the start of the sentence that no lexicon knows as a name ("Challenges will come");
- its verb's subject is its holder: the speaker is not also the verb's "me" ("the joy that dancing brings me");
  live_in, work_at and move_to name their place ("I'm living my dream" is no residence);
- liking is no reaction to what was just shown ("I love the theme", "I love your painting") nor a wish to see or
  hear of it ("I'd love to see another painting of yours");
- it states what its holder did or holds: a further argument (an object, place, recipient) that is not a
  pronoun nor the complement a light verb's predicate already carries ("stay_positive(patient positive)"), or,
  with no argument at all, a phrasal verb ("passed away") or a lexicon verb with its time ("went hiking last
  week").
"""

from __future__ import annotations

import re

from memctl.language.lexicon import english_words, gazetteer
from memctl.r2g.arguments_en import named_through_holder
from memctl.r2g.structures import Mention, RawFact

_SPEAKER = frozenset({"i", "me", "myself"})  # "we" names nobody R2G can resolve: its facts would show no holder
_KNOWN_NAME = 0.85  # nlp_en's confidence for a name found in the gazetteer, the alias lexicon or after a title
_SENTENCE_START = re.compile(r"(?:^|[,;:!?.(\"“—–-])\s*$")
_AFTER_VOCATIVE = re.compile(r"^\s*(?:[,;:!?.)\"”—–-]|$)")
_OWNED = re.compile(r"(?:\b(?:my|our)|\b[A-Z][a-z]+['’]s)\s+(?:[\w-]+\s+){0,2}$", re.IGNORECASE)
# "My laptop won't connect": the speaker's thing opens the sentence (not "tracks my achievements and helps me …")
_MINE = re.compile(r"^\W*(?:(?:and|but|so|oh|well|yeah|also|now|then|plus|ugh|sadly|unfortunately)\W+)*my\s+"
                   r"(?:[\w-]+\s+){0,2}$", re.IGNORECASE)
# "I'd love to see …", "I'd love to help", "I'd love to join in": wishes and offers to the other person
_OFFERED_DEEDS = re.compile(r"(?:see|hear|read|watch|check|know|learn|help|join|chat|talk|meet|catch|come|try|be|get|"
                        r"go|do|make)\b", re.IGNORECASE)
_SHOWN = re.compile(r"\b(?:the|your|this|that|these|those|his|her|their)\s+(?:[\w-]+\s+){0,3}$", re.IGNORECASE)
_POSSESSIONS = frozenset({"Object", "Product"})
_PLACE_COPULAS = frozenset({"be", "have"})
# Lexicon predicates that say where someone is: without the place, "living my dream" and "working hard" are no
# residence or workplace.
_PLACE_PREDICATES = frozenset({"live_in", "work_at", "move_to"})


def stated_facts(sentence: str, facts: list[RawFact]) -> list[RawFact]:
    """The facts of `facts` (one English sentence's) that pass the rules above, their holders and arguments
    trimmed to the ones that qualify."""
    if sentence.rstrip().endswith("?"):
        return []
    content_free = english_words()["content_free_predicates"]
    kept = []
    for fact in facts:
        if fact.predicate in content_free and not (fact.predicate in _PLACE_COPULAS and _named_place(fact)):
            continue
        holder_role = "PATIENT" if fact.passive else "AGENT"
        holders = [mention for mention in fact.roles.get(holder_role, ()) if _holder(sentence, mention)]
        if not holders:
            continue
        fact.roles[holder_role] = holders
        if (_self_object(fact, holder_role) or fact.predicate in _PLACE_PREDICATES and "LOCATION" not in fact.roles
                or _reaction(sentence, fact)):
            continue
        _drop_echoes(fact, content_free)
        # The holder echoed the light verb's complement ("you're doing my hometown" → do_hometown(patient
        # hometown)): nothing is left that the sentence says of anyone.
        if holder_role in fact.roles and _has_content(fact, holder_role):
            kept.append(fact)
    return kept


def _self_object(fact: RawFact, holder_role: str) -> bool:
    """"… the joy that dancing brings me", "it teaches me": the speaker as holder and as "me" of one verb means
    the verb's own subject was missed (the speaker was carried over from another clause)."""
    if not all(mention.pronoun and mention.text.lower() in _SPEAKER for mention in fact.roles[holder_role]):
        return False
    return any(mention.pronoun and mention.text.lower() in ("i", "me") for role, mentions in fact.roles.items()
               if role != holder_role for mention in mentions)


def _named_place(fact: RawFact) -> bool:
    """"I'll be in Chicago", "we were at the beach": a place, not "got into an accident"."""
    places = gazetteer().place_nouns_en
    return any(mention.text[:1].isupper() or mention.text.lower().split()[-1] in places
               for mention in fact.roles.get("LOCATION", ()))


def _reaction(sentence: str, fact: RawFact) -> bool:
    """"I love the self-acceptance theme", "I love your painting": liking what was just shown or said, as the
    preferences read it (memctl/r2g/preferences.py), is no standing taste."""
    if fact.predicate != "like":
        return False
    patients = fact.roles.get("PATIENT", ())
    # "I'd love to see another painting of yours": a wish about the other's news, no taste of the speaker's
    if fact.modality == "conditional" and any(_OFFERED_DEEDS.match(mention.text) for mention in patients):
        return True
    return any(_SHOWN.search(sentence[: mention.start]) for mention in patients)


def _holder(sentence: str, mention: Mention) -> bool:
    if mention.pronoun:
        return mention.text.lower() in _SPEAKER
    if mention.entity_type is None or _vocative(sentence, mention):
        return False
    before = sentence[: mention.start]
    if mention.entity_type in _POSSESSIONS and _MINE.search(before):
        return True  # "My laptop won't connect": what happens to the speaker's things is said of them
    if mention.entity_type != "Person":
        return False
    if _OWNED.search(before):
        return named_through_holder(mention.text)  # "my sister", not "my team" nor "my students"
    if not mention.text[:1].isupper():
        return False
    return mention.confidence >= _KNOWN_NAME or not _SENTENCE_START.search(sentence[: mention.start])


def _vocative(sentence: str, mention: Mention) -> bool:
    """A name standing alone between the sentence's edges, commas or an interjection: "Hey Maria, …",
    "Wow, Mel, …", "… so proud of you, Jon!"."""
    before = sentence[: mention.start].rstrip()
    words = before.split()
    after_interjection = bool(words) and words[-1].lower().strip(",!") in english_words()["interjections"]
    opened = after_interjection or _SENTENCE_START.search(before) is not None
    return opened and _AFTER_VOCATIVE.match(sentence[mention.end :]) is not None


def _drop_echoes(fact: RawFact, content_free: frozenset) -> None:
    """A light verb's compound predicate carries its complement ("stay_positive", "keep_chasing", "take_look"):
    the complement repeated as a filler is no argument. A content verb's object stays ("play_soccer(patient
    soccer)")."""
    verb, _, complement = fact.predicate.partition("_")
    if verb not in content_free or not complement:
        return
    for role, mentions in list(fact.roles.items()):
        remaining = [mention for mention in mentions if mention.text.lower() not in complement.split("_")]
        if remaining:
            fact.roles[role] = remaining
        else:
            del fact.roles[role]


def _has_content(fact: RawFact, holder_role: str) -> bool:
    arguments = [mention for role, mentions in fact.roles.items() if role not in (holder_role, "TIME")
                 for mention in mentions]
    # "My boss asked me to …": the speaker's own pronoun resolves to the speaker, an argument like a name.
    if any(mention.entity_type is not None and not mention.pronoun or mention.pronoun and
           mention.text.lower() in _SPEAKER for mention in arguments):
        return True
    # "I painted it": a verb whose only argument is a pronoun nobody resolves lost what it hinges on. Without
    # any argument, a phrasal verb names an event ("passed away"), a lexicon verb only with its time ("I went
    # hiking last week"), and what happens to the speaker's thing is news about it ("my phone keeps crashing");
    # "I love to", "I won't give up" state nothing.
    if arguments:
        return False
    holders_are_things = all(mention.entity_type in _POSSESSIONS for mention in fact.roles[holder_role])
    return holders_are_things and fact.from_lexicon or _phrasal(fact.predicate) or fact.from_lexicon and "TIME" in fact.roles


def _phrasal(predicate: str) -> bool:
    """"passed away", "broke up": a verb with its particle names the event by itself."""
    verb, _, particle = predicate.partition("_")
    return particle in english_words()["particles"]
