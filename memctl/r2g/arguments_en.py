"""Which arguments of English facts are entities (issue 18): names, not the common nouns that fill most roles.

A fact's filler becomes an Entity node only when it names something: a name the analyser found (its named spans:
people, places, organisations, products, titles), a phrase of the alias lexicon, a language, or a person named
through a holder ("my sister" is the speaker's sister, "Caroline's mom" Caroline's). Every other noun phrase ("pottery
class", "investors", "the studio", "the kids") stays a word of its fact: it keeps its role and its text (the
Fact's title, arguments and keywords), but it is no entity, since "studio" in one turn and "studio" in another
are not one thing, and an Entity per common noun was most of the English graph's wrong nodes.
"""

from __future__ import annotations

import re

from memctl.language.lexicon import aliases, gazetteer
from memctl.r2g.predicates import noun_singular
from memctl.r2g.slots import DEFAULT_HOLDER
from memctl.r2g.structures import Mention, RawFact

_SPEAKERS_OWN = re.compile(r"\b(?:my|our)\s+(?:[\w-]+\s+){0,2}$", re.IGNORECASE)
# groups and anyone: "my team", "my customers", "my students" name no one in particular
_NOT_NAMED_THROUGH_HOLDER = frozenset({"family", "team", "people", "everyone", "someone", "guy", "guys", "stranger",
                                       "customers", "clients", "students", "fans", "followers", "neighbors",
                                       "coworkers", "colleagues", "classmates", "teammates", "friends", "teachers"})
_NAMES_OWN = re.compile(r"\b(?P<owner>[A-Z][a-z]+)['’]s\s+(?:[\w-]+\s+){0,2}$")


def name_arguments(sentence: str, facts: list[RawFact], names: list[Mention], speaker: str | None) -> None:
    """Turn, in place, the fillers of `facts` that are no name of `names` (the sentence's named spans) into
    words (entity_type None), or into the holder-named person they are ("<speaker>'s sister")."""
    named = {id(mention) for mention in names}
    for fact in facts:
        for role, fillers in fact.roles.items():
            fact.roles[role] = [_argument(sentence, filler, named, speaker) for filler in fillers]


def _argument(sentence: str, filler: Mention, named: set, speaker: str | None) -> Mention:
    if id(filler) in named or filler.pronoun or filler.time_index is not None or filler.entity_type is None:
        return filler
    if aliases().lookup(filler.text) is not None or filler.text.lower() in gazetteer().languages:
        return filler  # a phrase the alias lexicon names ("New York"), a language ("learning Spanish")
    owner = _owner(sentence[: filler.start], speaker)
    if owner is not None and named_through_holder(filler.text):
        # Named as the slot facts name a relative (memctl/r2g/slots.relative_holder), not as written: "sister"
        # would become an alias of every speaker's sister.
        name = f"{owner}'s {filler.text.lower()}"
        return Mention(name, filler.start, filler.end, "Person", name, confidence=filler.confidence)
    return Mention(filler.text, filler.start, filler.end, None, confidence=filler.confidence)


def _owner(before: str, speaker: str | None) -> str | None:
    if _SPEAKERS_OWN.search(before):
        return speaker or DEFAULT_HOLDER["en"]  # as the slot facts name a turn's holder without a speaker
    owned = _NAMES_OWN.search(before)
    return owned["owner"] if owned else None


def named_through_holder(text: str) -> bool:
    """A noun of people that names someone through its holder: "my sister", "Jon's students"; not a group
    ("my team", "our family") nor anyone ("people"), and not an occupation ("a nurse")."""
    head = text.lower().split()[-1]
    nouns = gazetteer().person_nouns_en
    return (head in nouns or noun_singular(head) in nouns) and head not in _NOT_NAMED_THROUGH_HOLDER
