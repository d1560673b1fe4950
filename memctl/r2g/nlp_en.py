"""English analysis by rules: a tokenizer, word classes from small lexicons, and the R2G-6 minimum rules.

No tagger model: a word is a verb when its lemma is in memctl/data/en_words.yaml and its neighbours allow it
(not after a determiner), a name when it is capitalised away from the sentence start (or known at the start),
and a noun otherwise. Per clause (split at punctuation and at conjunctions that start a new clause):
- the noun phrase, name or pronoun before the verb → AGENT ("Jake and I" → two);
- verb lemma (+ particle) → predicate through the lexicon, else "verb_object";
- the object noun phrase → PATIENT (or the lexicon's role: "move to X" → LOCATION); a person before a second
  object → RECIPIENT ("sent me a postcard");
- in/at/on/near/from + place → LOCATION, to + place after a verb of motion → LOCATION, to + person → RECIPIENT,
  for + person → BENEFICIARY, for + thing → PATIENT (or CAUSE once the verb has its object or place);
- time expressions (memctl.language.timenorm) → TIME; not/n't/never → negation; modals and catenatives (want to,
  going to, might) → modality; like/love/enjoy + activity → like, with the activity's object as PATIENT.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memctl.language.lexicon import aliases, english_words, gazetteer, lexicon_cache
from memctl.language.timenorm import TimeExpr
from memctl.model import normalize_text
from memctl.r2g.arguments_en import name_arguments
from memctl.r2g.predicates import english_lemmatizer, fallback_predicate, lexicon, noun_singular
from memctl.r2g.statements_en import stated_facts
from memctl.r2g.structures import Analysis, Mention, RawFact

_TOKEN = re.compile(
    r"(?:[A-Za-z]\.){2,}"  # U.S., e.g.
    r"|[A-Za-z]+['’]t\b"  # don't, can't
    r"|['’](?:s|re|ve|ll|d|m)\b"  # clitics: I'm → I + 'm
    r"|[A-Z]{2,}\+(?!\w)"  # LGBTQ+
    r"|[A-Za-z][A-Za-z\-]*[A-Za-z]|[A-Za-z]"
    r"|\d+(?:[.:,]\d+)*(?:st|nd|rd|th)?"
    r"|\S"
)
# Products and versions the capitalisation rule would miss or cut (iPhone 15, Windows 11, Ubuntu 22.04).
_PRODUCT = re.compile(
    r"\b(?:(?:Windows|Win)\s?\d{1,2}|iPhone(?:\s?\d{1,2})?(?:\s(?:Pro|Max|Plus|Mini|mini))*|iPad(?:\s(?:Pro|Air|mini))?|"
    r"MacBook(?:\s(?:Pro|Air))?|(?:macOS|iOS|Android|Ubuntu|Debian|Fedora|Python|Java|Node)(?:\s\d+(?:\.\d+)*)?|"
    r"Galaxy\s[A-Z]?\d+\w*|Pixel\s\d+\w*|PlayStation\s?\d|PS\d|Xbox(?:\sOne|\sSeries\s[XS])?|Nintendo Switch|"
    r"Wi-?Fi|Bluetooth|AirPods(?:\sPro)?|Kindle|Model\s[3SXY])\b"
)
_CLAUSE_PUNCTUATION = frozenset(",;:!?()\"“”—–")
_ALWAYS_SPLIT = frozenset({"because", "but", "so", "although", "though", "while", "when", "if", "unless", "whereas",
                           "yet", "then", "cause", "'cause", "where"})
_SPLIT_BEFORE_SUBJECT = frozenset({"after", "before", "since", "until", "till", "once", "and", "or", "plus"})
_MOTION_VERBS = frozenset({"go", "move", "travel", "fly", "drive", "come", "return", "head", "walk", "run", "ride",
                           "relocate", "get", "take", "bring", "send", "commute", "sail", "hike", "road"})
_DOUBLE_OBJECT_VERBS = frozenset({"give", "send", "tell", "show", "teach", "buy", "bring", "offer", "lend", "write",
                                  "make", "get", "cook", "bake", "pass", "hand", "mail", "text", "gift", "ask"})
_LOCATIVE = frozenset({"in", "at", "on", "inside", "near", "over", "under", "behind", "across", "around", "outside",
                       "by", "into", "onto", "off", "within", "throughout", "from", "along", "beside", "through"})
_POSSESSIVES = frozenset({"my", "your", "his", "her", "our", "their", "its"})
_DROPPED_ADJECTIVES = frozenset({"new", "old", "own", "best", "favorite", "favourite", "first", "last", "little", "big",
                                 "great", "good", "nice", "whole", "entire", "same", "other", "next", "few", "many",
                                 "lovely", "beautiful", "amazing", "awesome", "cute", "huge", "small", "tiny", "real",
                                 "local", "latest", "recent", "few", "special", "very", "really", "super", "pretty"})
# "some new dance routines": after one of these, a verb's form is a noun's
_ADJECTIVES_BEFORE_NOUNS = frozenset({"new", "old", "own", "best", "favorite", "favourite", "first", "last", "whole",
                                      "same", "other", "next", "few", "many", "local", "latest", "recent", "special"})
_NOT_VERBS_AFTER = frozenset({"a", "an", "the", "my", "your", "his", "her", "our", "their", "its", "this", "that",
                              "these", "those", "some", "any", "every", "each", "no", "another", "of", "'s"})
_COMPLEMENT_TAKERS = frozenset({"like", "dislike", "prefer", "learn"})
_COMMON_NOUN_ENDINGS = ("s", "ness", "ment", "tion", "sion", "ity", "ence", "ance", "ship", "dom", "ism", "ure", "age")
_QUOTED_TITLE = re.compile(r"[\"“](?P<title>[A-Z0-9][\w'’-]*(?:[ ][\w'’-]+){0,7})[.!?,]?[\"”]"
                           r"|(?:(?<=\s)|^)['‘](?P<single>[A-Z0-9][\w-]*(?:[ ][\w-]+){0,7})[.!?,]?['’](?=[\s,.!?;:]|$)")
_GROUP_BEFORE = re.compile(r"\b(?:group|team|band|club|organi[sz]ation|company|charity|foundation|choir|crew|"
                           r"community|society|association|startup|business)\W*$", re.IGNORECASE)
_TITLE_WORDS = frozenset({"of", "the", "a", "an", "and", "in", "on", "to", "for", "with", "at", "by", "from", "or"})
_EVENT_HEADS = frozenset({"month", "day", "week", "weekend", "festival", "fest", "parade", "fair", "conference",
                          "summit", "expo", "awards", "cup", "games", "marathon", "gala", "carnival", "night", "eve"})
_CLAUSE_TAKERS = frozenset({"realize", "realise", "think", "know", "learn", "feel", "believe", "hope", "notice",
                            "see", "find", "say", "remember", "understand", "guess", "mean", "love", "hate", "like",
                            "hear", "discover", "decide", "agree", "admit", "promise", "wish", "show", "prove"})
_PETS = r"(?:dog|dogs|cat|cats|puppy|pup|kitten|kitty|guinea pig|pig|hamster|rabbit|bunny|bird|parrot|fish|turtle|horse|pony|snake|lizard)"
_PET_BEFORE = re.compile(rf"\b{_PETS},?\s+$")
_PET_AFTER = re.compile(rf"^,?\s+(?:my|our|his|her|their|the)\s+(?:\w+\s+)?{_PETS}\b")
_WORK_WORDS = frozenset({"job", "work", "works", "worked", "working", "employed", "intern", "internship", "position",
                         "role", "career", "shift", "hired", "volunteer", "volunteering", "volunteered"})
# "grateful for the chance to share my story", "able to give": the deed is done, no purpose ahead
_CHANCES = frozenset({"chance", "opportunity", "time", "way", "courage", "strength", "able", "freedom", "right",
                      "power", "space", "push", "reason", "privilege", "honor", "pleasure", "lucky", "blessed"})
_PARTITIVES = frozenset({"group", "groups", "bunch", "couple", "piece", "pieces", "kind", "type", "set", "pair",
                         "series", "collection", "team", "cup", "bottle", "glass", "box", "bag", "pile", "member"})
_BARE_INFINITIVE_TAKERS = frozenset({"help", "let", "make", "see", "watch", "hear"})
_DURATION_NOUNS = frozenset({"second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks",
                             "month", "months", "year", "years", "decade", "decades", "ages", "while", "life", "ever"})
_LEAVING_VERBS = frozenset({"move", "relocate", "come", "return", "fly", "travel", "drive", "escape", "flee",
                            "immigrate", "emigrate", "leave"})
_WORKED_ON = frozenset({("work", "on"), ("focus", "on")})
_ANTICIPATION = frozenset({"excited", "eager", "ready", "keen", "determined", "thrilled", "psyched", "stoked"})
_WH_WORDS = frozenset({"what", "who", "whom", "which", "why", "how", "where", "when"})


@dataclass(slots=True)
class Token:
    text: str
    lower: str
    start: int
    end: int
    lemma: str = ""
    tag: str = "WORD"  # PUNCT NUM PRON DET PREP CONJ MODAL NEG AUX VERB PROPN ADV TIME WORD
    entity: int | None = None  # index into the sentence's named-entity spans
    time_index: int | None = None


@dataclass(slots=True)
class _Span:
    start: int  # token indices
    end: int
    mention: Mention


# ---------------------------------------------------------------------------------------------------------
# tokens and word classes


def tokenize(sentence: str) -> list[Token]:
    lemma = english_lemmatizer()
    tokens = []
    for match in _TOKEN.finditer(sentence):
        text = match.group()
        lower = text.lower().replace("’", "'")
        tokens.append(Token(text, lower, match.start(), match.end(), lemma(lower)))
    return tokens


def _tag(tokens: list[Token]) -> None:
    words = english_words()
    names = [token.text[0].isupper() and _capitalised_name(tokens, index) for index, token in enumerate(tokens)]
    for index, token in enumerate(tokens):
        lower = token.lower
        previous = tokens[index - 1].lower if index else ""
        if not token.text[0].isalnum() and (token.text[0] != "'" or len(token.text) == 1):
            token.tag = "PUNCT"
        elif token.text[0].isdigit():
            token.tag = "NUM"
        elif lower in words["interjections"] and (index == 0 or tokens[index - 1].tag in ("PUNCT", "INTJ")):
            token.tag = "INTJ"
        elif lower in words["negations"] and lower not in ("no", "nobody", "nothing", "neither", "nor"):
            token.tag = "NEG" if lower not in words["modals"] else "MODAL"
        elif lower in words["modals"] and (lower != "'d" or _would(tokens, index)):
            token.tag = "MODAL"
        elif lower in ("'s",) and index and tokens[index - 1].tag not in ("PRON",) and not _base_verb_at(tokens, index + 1, allow_participle=True):
            token.tag = "POSS"
        elif token.lemma in ("be", "have", "do") and lower not in words["prepositions"]:
            token.tag = "AUX"
        elif lower in words["pronouns"] and not (lower in ("that", "this", "these", "those") and index + 1 < len(tokens) and tokens[index + 1].tag == "WORD"):
            token.tag = "PRON"
        elif lower in words["determiners"]:
            token.tag = "DET"
        elif lower == "like":
            token.tag = "VERB" if _verb_like(tokens, index) else "PREP"
        elif lower in words["prepositions"]:
            token.tag = "PREP"
        elif lower in words["conjunctions"]:
            token.tag = "CONJ"
        elif lower == "last" and index + 1 < len(tokens) and (tokens[index + 1].text[0].isupper()
                                                               or tokens[index + 1].time_index is not None):
            token.tag = "ADV"  # "a poetry reading last Fri": a time's word, not the verb last
        elif (token.lemma in words["verbs"] and previous not in _NOT_VERBS_AFTER and previous not in _ADJECTIVES_BEFORE_NOUNS
              and not names[index]):
            token.tag = "VERB"
        elif _unknown_past_tense(tokens, index):
            token.tag = "VERB"
            token.lemma = _guess_lemma(lower)
        elif (lower.endswith("ly") and len(lower) > 4 and not names[index]) or lower in words["auxiliaries"]:
            token.tag = "ADV"
        elif index and tokens[index - 1].tag == "MODAL" and lower not in words["non_objects"] and token.text.islower():
            token.tag = "VERB"  # "I can express": whatever follows a modal is a verb, listed or not
        if token.tag in ("WORD", "VERB") and names[index]:
            token.tag = "PROPN"


def _would(tokens: list[Token], index: int) -> bool:
    """"I'd rather", "I'd go": 'd is would before rather/like/a base verb; otherwise had ("I'd been")."""
    return _next_lower(tokens, index) in ("rather", "like", "love", "prefer") or _base_verb_at(tokens, index + 1)


def _verb_like(tokens: list[Token], index: int) -> bool:
    """"like" is a verb after its subject or an auxiliary ("I like", "would like", "don't like"), else a
    preposition ("a team like that", "is like second nature")."""
    if index == 0:
        return False
    previous = tokens[index - 1]
    if previous.lower in ("really", "also", "just", "always", "still"):
        # "I just like it", but "a teen just like me": the adverb needs a subject before it
        return index > 1 and _verb_like(tokens, index - 1)
    return (previous.tag in ("PRON", "PROPN", "MODAL", "NEG") and previous.lower not in ("it", "that", "this", "something", "anything", "nothing")
            or previous.lower in ("do", "does", "did", "to", "'d")
            or previous.lower in gazetteer().person_nouns_en)


def _unknown_past_tense(tokens: list[Token], index: int) -> bool:
    """A word the verb list lacks, ending in -ed right after its subject ("my cat knocked"), is a verb."""
    token = tokens[index]
    if not (token.lower.endswith("ed") and len(token.lower) > 4 and token.lower not in english_words()["non_objects"]):
        return False
    previous = tokens[index - 1] if index else None
    if previous is not None and previous.lemma in ("be", "get"):
        return True  # "got towed": a participle
    return previous is not None and previous.tag in ("PRON", "PROPN", "WORD") and previous.lower not in _POSSESSIVES


def _guess_lemma(word: str) -> str:
    """The base form of an -ed word the verb list lacks: knocked → knock, named → name, stopped → stop."""
    if word.endswith("ied"):
        return word[:-3] + "y"
    stem = word[:-2]
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        return stem[:-1]
    vowels = "aeiou"
    if len(stem) >= 3 and stem[-1] not in vowels + "wxy" and stem[-2] in vowels and stem[-3] not in vowels:
        return stem + "e"  # a silent e dropped before -ed
    return stem


def _next_lower(tokens: list[Token], index: int) -> str:
    return tokens[index + 1].lower if index + 1 < len(tokens) else ""


def _base_verb_at(tokens: list[Token], index: int, allow_participle: bool = False) -> bool:
    words = english_words()
    while index < len(tokens) and tokens[index].lower in words["auxiliaries"] and tokens[index].lemma not in ("be", "have", "do"):
        index += 1
    if index >= len(tokens):
        return False
    token = tokens[index]
    if token.lemma not in words["verbs"]:
        return False
    return allow_participle or token.lower == token.lemma or token.lemma in ("be", "have")


def _capitalised_name(tokens: list[Token], index: int) -> bool:
    token = tokens[index]
    if not token.text[0].isupper() or token.lower == "i":
        return False
    if token.lower in gazetteer().not_names:
        # "pride parade" is no name, but "Pride Month" is one: the next word, capitalised, carries it
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        return (not _sentence_initial(tokens, index) and following is not None and following.text[0].isupper()
                and following.lower not in gazetteer().not_names and following.lower not in gazetteer().given_names)
    names = gazetteer()
    if _sentence_initial(tokens, index):
        known = (token.lower in names.given_names or token.lower in names.locations or token.lower in names.organizations
                 or aliases().lookup(token.text) is not None)
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if known or following is None:
            return known
        # "Go Jon!", "Setbacks are …", "Life's too short": an unknown capitalised word starting a sentence is a
        # name only as the first word of a longer one ("Becoming Nicole"), never a verb or a common noun's form.
        return (_unknown_word(token) and not _common_noun_form(token.lower) and following.text[0].isupper()
                and following.lower not in names.not_names)
    return True


def _unknown_word(token: Token) -> bool:
    words = english_words()
    lower = token.lower
    return not (lower in words["verbs"] or token.lemma in words["verbs"] or lower in words["pronouns"]
                or lower in words["determiners"] or lower in words["prepositions"] or lower in words["conjunctions"]
                or lower in words["non_objects"] or lower in words["auxiliaries"] or lower in words["modals"]
                or lower in words["light_nouns"]
                or lower in gazetteer().person_nouns_en or lower in gazetteer().place_nouns_en
                or lower in _concept_words() or lower.endswith(("ly", "ing", "ed", "tion", "ness", "ment")))


def _common_noun_form(lower: str) -> bool:
    """A plural or a word with a common noun's suffix: at the start of a sentence, not taken for a name."""
    return lower.endswith(_COMMON_NOUN_ENDINGS) and not lower.endswith("ss")


@lexicon_cache
def _concept_words() -> frozenset:
    """Topic words of memctl/data/concepts.yaml: common nouns ("Art is …"), never names."""
    from memctl.language.lexicon import load_yaml

    return frozenset(str(word).lower() for spec in load_yaml("concepts.yaml").values() for word in spec.get("words", []))


def _sentence_initial(tokens: list[Token], index: int) -> bool:
    position = index - 1
    while position >= 0 and tokens[position].tag == "PUNCT" and tokens[position].text in "\"'“‘([":
        position -= 1
    return position < 0 or tokens[position].text in ".!?:\"“"


# ---------------------------------------------------------------------------------------------------------
# named entities


def _named_spans(sentence: str, tokens: list[Token]) -> list[_Span]:
    spans: list[_Span] = []
    by_start = {token.start: index for index, token in enumerate(tokens)}
    by_end = {token.end: index for index, token in enumerate(tokens)}
    for match in _PRODUCT.finditer(sentence):
        first, last = by_start.get(match.start()), by_end.get(match.end())
        if first is None or last is None:
            continue
        text = match.group()
        entry = aliases().lookup(text)
        canonical = entry.canonical if entry else text
        spans.append(_Span(first, last + 1, Mention(text, match.start(), match.end(), "Product", canonical,
                                                   entry.aliases if entry else (), 0.9)))
    spans.extend(_quoted_titles(sentence, tokens, by_start, by_end, spans))
    taken = {index for span in spans for index in range(span.start, span.end)}
    index = 0
    while index < len(tokens):
        if tokens[index].tag != "PROPN" or index in taken:
            index += 1
            continue
        end = index + 1
        while end < len(tokens) and end not in taken:
            if tokens[end].tag == "PROPN" or (tokens[end].tag == "NUM" and tokens[end - 1].tag == "PROPN"):
                end += 1
            elif tokens[end].lower in ("of", "de", "&") and end + 1 < len(tokens) and tokens[end + 1].tag == "PROPN":
                end += 2
            else:
                break
        spans.append(_Span(index, end, _typed_name(sentence, tokens, index, end)))
        index = end
    spans.sort(key=lambda span: span.start)
    for number, span in enumerate(spans):
        for position in range(span.start, span.end):
            tokens[position].entity = number
    return spans


def _quoted_titles(sentence: str, tokens: list[Token], by_start: dict, by_end: dict, spans: list[_Span]) -> list[_Span]:
    """A title in quotes ("Charlotte's Web", "The Lean Startup", "Finding Freedom."): one name of a work, typed
    Other, not its capitalised words read one by one as people."""
    found = []
    taken = {index for span in spans for index in range(span.start, span.end)}
    for match in _QUOTED_TITLE.finditer(sentence):
        group = "title" if match["title"] else "single"
        words = match[group].split()
        if not all(word[0].isupper() or word[0].isdigit() or word.lower() in _TITLE_WORDS for word in words):
            continue
        first, last = by_start.get(match.start(group)), by_end.get(match.end(group))
        if first is None or last is None or taken & set(range(first, last + 1)):
            continue
        text = match[group]
        for token in tokens[first : last + 1]:
            token.tag = "PROPN"  # "Becoming Nicole": no verb inside a title
        # "Our group, 'Connected LGBTQ Activists'": the name of a group is an organisation's, not a work's
        kind = "Organization" if _GROUP_BEFORE.search(sentence[: match.start()]) else "Other"
        found.append(_Span(first, last + 1, Mention(text, match.start(group), match.end(group), kind,
                                                   confidence=0.75)))
    return found


def _typed_name(sentence: str, tokens: list[Token], start: int, end: int) -> Mention:
    text = sentence[tokens[start].start : tokens[end - 1].end]
    mention = Mention(text, tokens[start].start, tokens[end - 1].end, "Other", confidence=0.6)
    if start > 0 and tokens[start - 1].text in "\"“'‘" or tokens[start - 1].lower in ("called", "named", "titled") if start > 0 else False:
        return mention  # a quoted or named title ("Finding Home"), a pet's or a work's name: Other
    if _pet_name(sentence, tokens, start, end):
        return mention  # "my guinea pig Oscar", "Oscar, my guinea pig": a pet's name, Other
    entry = aliases().lookup(text)
    if entry is not None:
        mention.entity_type, mention.canonical, mention.aliases, mention.confidence = (
            entry.entity_type, entry.canonical, entry.aliases, 0.9)
        return mention
    names = gazetteer()
    folded = normalize_text(text)
    first, last = tokens[start].lower, tokens[end - 1].lower.rstrip(".")
    before = _previous_word(tokens, start)
    if folded in names.locations:
        mention.entity_type, mention.confidence = "Location", 0.85
    elif folded in names.organizations or last in names.organization_heads:
        mention.entity_type, mention.confidence = "Organization", 0.8
    elif last in names.location_heads:
        mention.entity_type, mention.confidence = "Location", 0.8
    elif last in _EVENT_HEADS:
        mention.confidence = 0.7  # "Pride Month", "Harvest Festival": a named event, Other
    elif first in names.given_names or before in names.person_titles:
        mention.entity_type, mention.confidence = "Person", 0.85
    elif before in ("at", "for") and _previous_word(tokens, _previous_index(tokens, start)) in _WORK_WORDS:
        mention.entity_type, mention.confidence = "Organization", 0.7  # "lost my job at Door Dash"
    elif before in ("in", "at", "from", "to", "near", "visit", "visited", "visiting", "into", "around"):
        mention.entity_type, mention.confidence = "Location", 0.65
    elif end - start <= 2 and not (end < len(tokens) and tokens[end].tag == "WORD"):
        # an unknown name before a common noun names that thing ("Perseid meteor shower"), not a person
        mention.entity_type, mention.confidence = "Person", 0.6
    return mention


def _pet_name(sentence: str, tokens: list[Token], start: int, end: int) -> bool:
    before = sentence[: tokens[start].start].lower()
    after = sentence[tokens[end - 1].end :].lower()
    return _PET_BEFORE.search(before) is not None or _PET_AFTER.match(after) is not None


def _previous_index(tokens: list[Token], index: int) -> int:
    position = index - 1
    while position >= 0 and tokens[position].tag == "DET":
        position -= 1
    return position


def _previous_word(tokens: list[Token], index: int) -> str:
    position = index - 1
    while position >= 0 and tokens[position].tag == "DET":
        position -= 1
    return tokens[position].lower if position >= 0 else ""


# ---------------------------------------------------------------------------------------------------------
# noun phrases


def _noun_phrase(sentence: str, tokens: list[Token], index: int, end: int, spans: list[_Span], role: str | None,
                 subject: bool = False):
    """The noun phrase at `index`: (Mention or None, index after it). Determiners, possessives, numbers and a
    few evaluative adjectives are dropped; "Tim's band" → band; "my Windows 11 laptop" → laptop; a named span
    alone is taken whole. Outside subject position a verb-like word inside the phrase is a noun ("a coffee shop
    in Brooklyn"); in a subject it starts the predicate ("my son plays")."""
    words = english_words()
    position = index
    while position < end and (tokens[position].tag in ("DET", "NUM") or tokens[position].lower in _POSSESSIVES
                              or tokens[position].lower in _DROPPED_ADJECTIVES or tokens[position].tag == "ADV"):
        position += 1
    if position < end and tokens[position].tag == "PRON":
        token = tokens[position]
        return Mention(token.text, token.start, token.end, None, pronoun=True, confidence=0.8), position + 1
    first = position
    while position < end:
        token = tokens[position]
        if token.entity is not None:
            span = spans[token.entity]
            if position + 1 < end and span.end < end and tokens[span.end].tag == "POSS":
                position = span.end + 1  # "Tim's band": the owner is a mention of its own, the head follows
                first = position
                continue
            following = tokens[span.end] if span.end < end else None
            if first == position and span.start == position and not (
                following is not None and following.entity is None and following.time_index is None
                and (following.tag == "WORD" or following.tag == "VERB" and not subject
                     and _nominal_verb(tokens, span.end, end, subject))  # "a LGBTQ support group"
            ):
                return span.mention, span.end
            position = span.end
            if first == span.start:
                first = position  # the name modifies the head noun that follows
            continue
        if token.tag == "POSS" and position + 1 < end:
            position += 1
            first = position
            continue
        if token.tag in ("WORD", "VERB") and token.time_index is None and token.lower not in words["non_objects"]:
            if token.tag == "VERB" and position > first and not _nominal_verb(tokens, position, end, subject):
                break
            if (token.tag == "VERB" and position == first and token.lower.endswith("s") and position + 1 < end
                    and tokens[position + 1].tag == "PRON"):
                break  # "painting helps me": a verb followed by its own object does not start a noun phrase
            position += 1
            continue
        break
    if position == first:
        return None, index
    while position - 1 > first and tokens[position - 1].lower in words["non_objects"]:
        position -= 1
    if (position + 1 < end and tokens[position].lower == "of" and tokens[position - 1].lower in _PARTITIVES
            and tokens[position + 1].tag in ("WORD", "DET", "PROPN")):
        # "a group of religious conservatives": the group is named by what it is of
        _, position = _noun_phrase(sentence, tokens, position + 1, end, spans, role)
    head_tokens = tokens[first:position]
    text = sentence[head_tokens[0].start : head_tokens[-1].end]
    return Mention(text, head_tokens[0].start, head_tokens[-1].end, _common_type(head_tokens, role), confidence=0.7), position


def _nominal_verb(tokens: list[Token], position: int, end: int, subject: bool) -> bool:
    following = tokens[position + 1] if position + 1 < end else None
    if tokens[position].lower.endswith("ing") and following is not None and following.tag == "WORD":
        return True  # running shoes
    if subject:
        return False
    if following is not None and following.tag == "WORD":
        # "a LGBTQ support group yesterday": a verb's form inside a compound noun that ends the phrase
        after = tokens[position + 2] if position + 2 < end else None
        return after is None or after.tag in ("PREP", "PUNCT", "CONJ", "TIME")
    return following is None or following.tag in ("PREP", "PUNCT", "CONJ", "TIME", "ADV")


def _common_type(head_tokens: list[Token], role: str | None) -> str:
    names = gazetteer()
    head = head_tokens[-1].lower
    phrase = " ".join(token.lower for token in head_tokens)
    alias = aliases().lookup(phrase)
    if alias is not None:
        return alias.entity_type
    if head in names.person_nouns_en or noun_singular(head) in names.person_nouns_en:
        return "Person"
    if role == "LOCATION":
        return "Location"
    if head in names.languages:
        return "Other"
    if head in names.organization_heads and head_tokens[-1].text[0].isupper():
        return "Organization"
    return "Object"


def _is_place(mention: Mention) -> bool:
    names = gazetteer()
    if mention.entity_type in ("Location", "Organization"):
        return True
    head = mention.text.lower().split()[-1] if mention.text else ""
    return head in names.place_nouns_en or mention.text.lower() in names.place_nouns_en


# ---------------------------------------------------------------------------------------------------------
# clauses


@dataclass(slots=True)
class _State:
    subjects: list[Mention]
    negation: bool = False
    modality: str | None = None
    complement_of: RawFact | None = None
    pivot: Mention | None = None  # "asked me to finish": the person who does the next verb


def analyze(sentence: str, times: list[TimeExpr], speaker: str | None = None) -> Analysis:
    """`speaker`, when known, owns the people the sentence names as "my X" (memctl/r2g/arguments_en.py)."""
    tokens = tokenize(sentence)
    for number, expr in enumerate(times):
        for token in tokens:
            if token.start < expr.end and expr.start < token.end:
                token.time_index = number
    _tag(tokens)
    for token in tokens:
        if token.time_index is not None:
            token.tag = "TIME"
    spans = _named_spans(sentence, tokens)
    facts: list[RawFact] = []
    subjects: list[Mention] = []
    modality = None
    for start, end in _clauses(tokens):
        state = _State(subjects=[])
        clause_facts, clause_times = _clause(sentence, tokens, start, end, spans, state)
        if start > 0 and tokens[start - 1].lower in ("and", "or") and not state.subjects:
            # "I'm excited to guide and mentor dancers", "ready to be a mom and share my love": the verb joined
            # by "and" shares the first one's modality
            for fact in clause_facts:
                fact.modality = fact.modality or modality
        modality = next((fact.modality for fact in clause_facts if fact.modality), None) if clause_facts else modality
        # "…, which is what dance studios use": a clause a wh-word opens has a subject of its own, not the
        # sentence's speaker ("I learned how to paint" keeps it: an infinitive's subject is the main clause's)
        inherited = [] if _opened_by_wh(tokens, start, end) else subjects
        for fact in clause_facts:
            if "AGENT" not in fact.roles or fact.passive:
                for subject in state.subjects or inherited:
                    fact.add_role("PATIENT" if fact.passive else "AGENT", subject)
            for index in clause_times:
                expr = times[index]
                fact.add_role("TIME", Mention(expr.expression, expr.start, expr.end, None, time_index=index, confidence=0.9))
        subjects = state.subjects or subjects
        facts.extend(fact for fact in clause_facts if _informative(fact))
    facts = stated_facts(sentence, facts)
    name_arguments(sentence, facts, [span.mention for span in spans], speaker)
    _attach_loose_times(facts, tokens, times)
    _drop_vague_times(facts, times)
    word_classes = [(token.text, _word_class(token)) for token in tokens]
    return Analysis([span.mention for span in spans], facts, word_classes)


def _opened_by_wh(tokens: list[Token], start: int, end: int) -> bool:
    return start > 0 and tokens[start - 1].lower in _WH_WORDS and tokens[start].lower != "to"


def _informative(fact: RawFact) -> bool:
    """"It was great" is an opinion, not a fact: a copula needs a noun, place or time after it."""
    return fact.predicate != "be" or any(role in fact.roles for role in ("PATIENT", "LOCATION", "TIME"))


def _attach_loose_times(facts: list[RawFact], tokens: list[Token], times: list[TimeExpr]) -> None:
    """A time in a clause without a verb ("..., last Friday") belongs to the sentence's facts."""
    used = {mention.time_index for fact in facts for mention in fact.roles.get("TIME", ())}
    for index, expr in enumerate(times):
        if index not in used:
            for fact in facts:
                fact.add_role("TIME", Mention(expr.expression, expr.start, expr.end, None, time_index=index, confidence=0.8))


def _drop_vague_times(facts: list[RawFact], times: list[TimeExpr]) -> None:
    """"a few weeks ago", "lately": a time without a value dates nothing and would be an Entity without one."""
    for fact in facts:
        kept = [mention for mention in fact.roles.get("TIME", ()) if times[mention.time_index].value is not None]
        if kept:
            fact.roles["TIME"] = kept
        else:
            fact.roles.pop("TIME", None)


def _word_class(token: Token) -> str:
    if token.tag == "TIME":
        return "time"
    if token.entity is not None or token.tag == "PROPN":
        return "name"
    if token.tag == "VERB":
        return "verb"
    if token.tag == "WORD":
        return "noun"
    return "other"


def _clauses(tokens: list[Token]):
    start = 0
    seen_verb = False
    for index, token in enumerate(tokens):
        split = False
        if token.tag == "PUNCT" and token.text in _CLAUSE_PUNCTUATION and not _title_quote(tokens, index):
            split = True
        elif token.lower in _ALWAYS_SPLIT and token.tag in ("CONJ", "ADV", "PREP", "WORD") or token.lower in _WH_WORDS and index > start:
            split = True
        elif token.lower in _SPLIT_BEFORE_SUBJECT and seen_verb and _starts_clause(tokens, index + 1):
            split = True  # "Jake and I are" is one subject; "... and I left" starts a clause
        seen_verb = seen_verb or token.tag in ("VERB", "AUX", "MODAL")
        if split:
            if index > start:
                yield start, index
            start = index + 1
            seen_verb = False
    if start < len(tokens):
        yield start, len(tokens)


def _title_quote(tokens: list[Token], index: int) -> bool:
    """A quote mark of a quoted title ("I loved "Becoming Nicole""): the title is the clause's object."""
    if tokens[index].text not in "\"“”":
        return False
    return any(0 <= position < len(tokens) and tokens[position].entity is not None and tokens[position].tag != "PUNCT"
               for position in (index - 1, index + 1))


def _starts_clause(tokens: list[Token], index: int) -> bool:
    """After "and": a verb ("... and played soccer") or a subject followed by a verb ("... and I left")."""
    if index >= len(tokens):
        return False
    token = tokens[index]
    if token.tag in ("VERB", "MODAL"):
        return True
    if token.tag in ("PRON", "PROPN") and index + 1 < len(tokens):
        return tokens[index + 1].tag in ("VERB", "AUX", "MODAL", "NEG", "ADV")
    return False


def _clause(sentence: str, tokens: list[Token], start: int, end: int, spans: list[_Span], state: _State):
    words = english_words()
    table = lexicon()
    lemmas = [token.lemma for token in tokens]
    skippable = words["determiners"] | _POSSESSIVES | {"'s", "not", "n't", "never", "really", "so", "big", "huge"}
    facts: list[RawFact] = []
    times = list(dict.fromkeys(token.time_index for token in tokens[start:end] if token.time_index is not None))
    index = start
    while index < end:
        token = tokens[index]
        if token.time_index is not None:
            index += 1
            continue
        if token.tag == "NEG" and _negates_verb(tokens, index, end) or token.lower in ("no", "never") and _verb_ahead(tokens, index + 1, end):
            state.negation = True
            index += 1
            continue
        if token.tag == "MODAL":
            state.modality = words["modals"][token.lower]
            state.negation = state.negation or token.lower.endswith("n't") or token.lower == "cannot"
            pre = table.en_pre_verb.get((token.lower.replace("'d", "would"), lemmas[index + 1] if index + 1 < end else ""))
            if pre is not None:
                fact, index = _verb(sentence, tokens, index + 1, end, spans, state, (pre, index + 2))
                state.negation = False if pre.predicate in ("dislike", "prefer", "fail_to_connect") else state.negation
                fact.negation = state.negation
                facts.append(fact)
                continue
            index += 1
            continue
        if token.lower in _ANTICIPATION and _next_lower(tokens, index) == "to" and _base_verb_at(tokens, index + 2):
            state.modality = "intention"  # "I'm excited to meet …": the meeting is ahead, not done
            index += 2
            continue
        if token.tag == "AUX" and _verb_ahead(tokens, index + 1, end):
            if token.lemma == "have" and _next_lower(tokens, index) == "to":
                state.modality = "necessity"
            index += 1
            continue
        if token.tag == "VERB" and facts and token.lower.endswith("ing") and tokens[index - 1].tag == "WORD":
            index += 1  # "I got some promotions going on my store": a participle of the noun, not the subject's verb
            continue
        if token.tag in ("VERB", "AUX") or (token.lemma in words["verbs"] and state.subjects and not facts and token.tag == "WORD"):
            if _going_to(tokens, index, end):
                state.modality = "future"
                index += 2
                continue
            catenative = _catenative(tokens, index, end)
            if catenative is not None:
                modality, after = catenative
                if modality is not None:
                    state.modality = modality
                index = after
                continue
            match = table.english_at(lemmas, index, skippable)
            passive = _passive(tokens, index, start)
            purpose = (index > start + 1 and tokens[index - 1].lower == "to" and tokens[index - 2].tag == "WORD"
                       and tokens[index - 2].lower not in _CHANCES
                       and tokens[index - 2].lower not in words["non_objects"])  # "so happy to see": a feeling
            fact, index = _verb(sentence, tokens, index, end, spans, state, match)
            if fact is not None:
                fact.passive = passive
                if purpose:
                    fact.modality = fact.modality or "intention"  # "a place to open my studio": not opened yet
                if state.pivot is not None:
                    fact.add_role("AGENT", state.pivot)
                    state.pivot = None
                state.pivot = _pivot(tokens, index, end, fact, token.lemma)
                index += 1 if state.pivot is not None and tokens[index].lower == "to" else 0
                facts.append(fact)
            continue
        after_that = bool(facts) and index > start and (tokens[index - 1].lower == "that"
                                                         or _subject_ahead(tokens, index, end))
        if (not facts or after_that) and token.tag in ("PRON", "PROPN", "WORD", "DET") or token.entity is not None and not facts:
            mention, after = _noun_phrase(sentence, tokens, index, end, spans, None, subject=True)
            if mention is not None and after > index:
                if token.lower in _WH_WORDS or token.lower in ("here", "there"):
                    index = after
                    continue
                if after_that:
                    # "I love that you chose pottery": the that-clause has its own subject; the facts before
                    # it keep the main clause's
                    _hold(facts, state.subjects)
                joined = index > start and tokens[index - 1].lower in ("and", "or", "&")
                if state.subjects and not joined:
                    state.subjects.clear()  # "That way I can ...": the earlier phrase was not the subject
                state.subjects.append(mention)
                index = after
                continue
        index += 1
    return facts, times


def _negates_verb(tokens: list[Token], index: int, end: int) -> bool:
    """"they're not alone by sharing my story": a negated copula's complement denies no later verb; "I'm not a
    fan of" is the pattern's own (it finds the negation inside its match)."""
    following = tokens[index + 1] if index + 1 < end else None
    return following is None or following.tag not in ("WORD", "ADV") or _verb_ahead(tokens, index + 1, end)


def _subject_ahead(tokens: list[Token], index: int, end: int) -> bool:
    """"the day my youngest took her first steps": a possessed noun right before a verb starts a clause of its own."""
    if tokens[index].lower not in _POSSESSIVES - {"its"}:
        return False
    position = index + 1
    while position < end and tokens[position].tag == "WORD":
        position += 1
    return position > index + 1 and position < end and tokens[position].tag == "VERB"


def _hold(facts: list[RawFact], subjects: list[Mention]) -> None:
    for fact in facts:
        if "AGENT" not in fact.roles and not fact.passive:
            for subject in subjects:
                fact.add_role("AGENT", subject)


def _passive(tokens: list[Token], index: int, start: int) -> bool:
    """"was held", "got towed": a participle after a form of be or get."""
    token = tokens[index]
    if token.lower.endswith("ing"):
        return False  # "I'm going": a progressive, not a passive
    if not (token.lower.endswith("ed") or token.lower in english_words()["irregular_forms"] and token.lower != token.lemma):
        return False
    position = index - 1
    while position >= start and tokens[position].tag in ("ADV", "NEG"):
        position -= 1
    return position >= start and tokens[position].lemma in ("be", "get") and tokens[position].lower not in ("have", "has", "had")


def _pivot(tokens: list[Token], index: int, end: int, fact: RawFact, verb: str) -> Mention | None:
    """ask/tell/want/help someone to do something: that someone is the AGENT of the next verb; so is whatever
    follows help/let/make/see/watch before a bare verb ("help dancers reach …", "seeing their eyes light up")."""
    patient = next(iter(fact.roles.get("PATIENT", ())), None)
    if (verb in _BARE_INFINITIVE_TAKERS and patient is not None and index < end and tokens[index].lower != "to"
            and tokens[index].tag == "VERB" and _base_verb_at(tokens, index)):
        return patient
    if index + 1 >= end or tokens[index].lower != "to" or not _base_verb_at(tokens, index + 1):
        return None
    if patient is not None and (patient.pronoun or patient.entity_type == "Person"):
        return patient
    return None


def _verb_ahead(tokens: list[Token], index: int, end: int) -> bool:
    words = english_words()
    while index < end and (tokens[index].tag in ("ADV", "NEG") or tokens[index].lower in words["auxiliaries"]
                           and tokens[index].tag != "AUX"):
        index += 1
    return index < end and (tokens[index].tag in ("VERB", "AUX") or tokens[index].lemma in words["verbs"] and tokens[index].tag == "WORD")


def _going_to(tokens: list[Token], index: int, end: int) -> bool:
    return (tokens[index].lower in ("going", "gonna") and index + 1 < end
            and (tokens[index].lower == "gonna" or tokens[index + 1].lower == "to" and _base_verb_at(tokens, index + 2)))


def _catenative(tokens: list[Token], index: int, end: int):
    """want to / plan to / started Ving / thinking about Ving: returns (modality, index of the complement verb).
    Verbs of liking are not catenative here: they make their own fact (see _verb)."""
    words = english_words()
    lemma = tokens[index].lemma
    thinking = lemma == "think"  # "thinking about learning Spanish": an intention, the event is the learning
    if not thinking and words["catenatives"].get(lemma) is None:
        return None
    position = index + 1
    while position < end and tokens[position].tag == "ADV":
        position += 1
    linker = tokens[position].lower if position + 1 < end else ""
    if thinking and linker not in ("about", "of"):
        return None
    if linker in ("to", "about", "of"):
        position += 1
    elif lemma in ("have", "get", "go", "use"):
        return None  # have/get/go/use are catenative only with "to" (have to, used to)
    complement = tokens[position] if position < end else None
    if complement is None or complement.lemma not in words["verbs"]:
        return None
    if complement.tag != "VERB" and not _base_verb_at(tokens, position, allow_participle=True):
        return None
    return words["catenatives"].get(lemma) or "intention", position


def _verb(sentence: str, tokens: list[Token], index: int, end: int, spans: list[_Span], state: _State, match):
    """The fact headed by the verb at `index`; returns (fact or None, index after its phrase)."""
    words = english_words()
    token = tokens[index]
    if match is not None:
        entry, after = match
        predicate, role, from_lexicon = entry.predicate, entry.role, True
    else:
        predicate, role, from_lexicon, after = None, "PATIENT", False, index + 1
        if after < end and tokens[after].lower in words["particles"] and tokens[after].tag != "PREP" or (
            after < end and tokens[after].lower in ("up", "down", "out", "off", "away", "back") and tokens[after + 1 if after + 1 < end else after].tag in ("PREP", "PUNCT", "TIME", "CONJ", "DET")
        ):
            after += 1
    raw = sentence[token.start : tokens[after - 1].end]
    phrasal = "_".join([token.lemma] + [tokens[position].lower for position in range(index + 1, after)])
    fact = RawFact(predicate or phrasal, raw, token.start, tokens[after - 1].end, state.negation, state.modality, from_lexicon)
    if any(tokens[position].tag == "NEG" for position in range(index + 1, after)):
        fact.negation = True  # "I'm not a fan of": the pattern skipped over the negation
    pattern_ends_in_preposition = from_lexicon and tokens[after - 1].tag == "PREP"
    last = tokens[after - 1]
    if from_lexicon and after - index > 1 and last.tag in ("WORD", "VERB") and last.lower not in words["particles"] \
            and last.lemma not in words["verbs"]:
        # "played soccer", "quit his job": the pattern's object word is the PATIENT
        fact.add_role("PATIENT", Mention(last.text, last.start, last.end, _common_type([last], "PATIENT"), confidence=0.8))
    if state.complement_of is not None:
        owner = state.complement_of
        object_mention, after = _object(sentence, tokens, after, end, spans, "PATIENT")
        object_mention = object_mention or next(iter(fact.roles.get("PATIENT", ())), None)
        # "I love swimming": the activity fills PATIENT but is not a thing (no entity); "I love running my own
        # studio": the activity with its object, unless that object is a name ("love visiting Paris")
        if object_mention is not None and not object_mention.pronoun and object_mention.entity_type not in (
                None, "Person", "Location", "Organization", "Product", "Other") or object_mention is None:
            end_at = object_mention.end if object_mention is not None else token.end
            object_mention = Mention(sentence[token.start:end_at], token.start, end_at, "Object", confidence=0.5)
        elif _typed_common(object_mention, spans):
            object_mention = Mention(sentence[token.start:object_mention.end], token.start, object_mention.end,
                                     "Object", confidence=0.5)
        owner.add_role("PATIENT", object_mention)
        _prepositions(sentence, tokens, after, end, spans, owner, token.lemma)
        return None, end
    if predicate in _COMPLEMENT_TAKERS and after < end and (tokens[after].tag == "VERB" and tokens[after].lower.endswith("ing")
                                                          or tokens[after].lower == "to" and _base_verb_at(tokens, after + 1)):
        state.complement_of = fact
        return fact, after + (1 if tokens[after].lower == "to" else 0)
    object_role = role if pattern_ends_in_preposition or token.lemma in _MOTION_VERBS and role == "LOCATION" else "PATIENT"
    if from_lexicon and not pattern_ends_in_preposition and role == "LOCATION":
        object_role = "LOCATION" if token.lemma in ("visit", "tour") else "PATIENT"
    if _that_clause(tokens, after, end, token.lemma):
        return fact, after  # "I've learned that this biz is no cakewalk": a clause, not an object
    object_mention, after = _object(sentence, tokens, after, end, spans, object_role)
    if object_mention is not None and object_role == "LOCATION" and object_mention.entity_type == "Person":
        object_role = "PATIENT"  # visited her grandparents
    if object_mention is not None:
        second, after_second = (None, after)
        if token.lemma in _DOUBLE_OBJECT_VERBS and (object_mention.pronoun or object_mention.entity_type == "Person"):
            second, after_second = _object(sentence, tokens, after, end, spans, "PATIENT")
        if second is not None:
            fact.add_role("RECIPIENT", object_mention)
            fact.add_role("PATIENT", second)
            after = after_second
        elif pattern_ends_in_preposition or object_mention.pronoun is False or object_role == "PATIENT":
            fact.add_role(object_role, object_mention)
        if predicate is None and not object_mention.pronoun:
            fact.predicate = fallback_predicate(phrasal, noun_singular(object_mention.text.lower().split()[-1]))
    after = _prepositions(sentence, tokens, after, end, spans, fact, token.lemma)
    framed = lexicon().en_frames.get(fact.predicate)
    if framed is not None and fact.roles.get("LOCATION"):
        fact.predicate, fact.from_lexicon = framed, True  # "works as a nurse at Mercy Hospital" → work_at
    return fact, after


def _typed_common(mention: Mention, spans: list[_Span]) -> bool:
    """A noun phrase typed by its head (a person noun, a place noun), not one of the sentence's names."""
    return not mention.pronoun and all(span.mention is not mention for span in spans)


def _that_clause(tokens: list[Token], index: int, end: int, verb: str) -> bool:
    """"learned that this biz …", "realize that self-care is …": a clause, not the object "that"."""
    if not (index + 1 < end and tokens[index].lower == "that"):
        return False
    return (verb in _CLAUSE_TAKERS or tokens[index + 1].tag in ("PRON", "PROPN", "DET")
            or tokens[index + 1].entity is not None)


def _object(sentence: str, tokens: list[Token], index: int, end: int, spans: list[_Span], role: str):
    while index < end and (tokens[index].tag == "ADV" or _title_quote(tokens, index)):
        index += 1
    if index >= end or tokens[index].tag in ("PREP", "CONJ", "PUNCT", "MODAL", "NEG") and tokens[index].lower not in _POSSESSIVES:
        return None, index
    if tokens[index].tag == "AUX" or tokens[index].time_index is not None:
        return None, index
    return _noun_phrase(sentence, tokens, index, end, spans, role)


def _prepositions(sentence: str, tokens: list[Token], index: int, end: int, spans: list[_Span], fact: RawFact, verb: str) -> int:
    """Prepositional phrases after the verb and its object, until the next verb."""
    while index < end:
        token = tokens[index]
        if token.tag == "TIME" or token.tag == "ADV" or token.tag == "PUNCT":
            index += 1
            continue
        if token.tag != "PREP" and not (token.lower == "because" and _next_lower(tokens, index) == "of"):
            if token.tag in ("WORD", "DET") and token.lower not in english_words()["non_objects"] and not _subject_ahead(tokens, index, end):
                index += 1  # an object's trailing words ("a postcard from Rome" after "sent me")
                continue
            break
        preposition = token.lower
        position = index + 2 if preposition == "because" else index + 1
        if position < end and tokens[position].time_index is not None:
            index = position + 1
            continue
        if preposition == "to" and position < end and tokens[position].tag == "VERB" and _base_verb_at(tokens, position):
            break  # "… to try and bring in customers": an infinitive, not a destination
        mention, after = _noun_phrase(sentence, tokens, position, end, spans, None)
        if mention is None:
            break
        possessed = position < end and tokens[position].lower in _POSSESSIVES
        if not (preposition == "for" and (mention.text.lower().split()[-1] in _DURATION_NOUNS
                                          or possessed and mention.entity_type != "Person" and not mention.pronoun
                                          and ("PATIENT" in fact.roles or "LOCATION" in fact.roles))):
            # "for 4 years" is how long; "a campaign for my store" is for its good: neither is a cause
            _preposition_role(preposition, mention, fact, verb)
        index = after
    return index


def _preposition_role(preposition: str, mention: Mention, fact: RawFact, verb: str) -> None:
    place = _is_place(mention)
    person = mention.pronoun or mention.entity_type == "Person"
    if (verb, preposition) in _WORKED_ON:
        fact.add_role("PATIENT", mention)  # "working on my online store": what the work is about, not a workplace
    elif preposition == "from" and verb in _LEAVING_VERBS:
        return  # "since I moved from my home country": where from, not where to
    elif preposition in _LOCATIVE and place:
        if mention.entity_type == "Object" or (mention.entity_type == "Organization" and mention.text.islower()):
            mention.entity_type = "Location"
        fact.add_role("LOCATION", mention)
    elif preposition in ("to", "into", "toward", "towards"):
        if person:
            fact.add_role("RECIPIENT", mention)
        elif place or verb in _MOTION_VERBS and not mention.text.lower().endswith("ing"):
            # "took the first step towards becoming a mom": an activity, no destination
            if mention.entity_type in ("Object", "Person", "Other"):
                mention.entity_type = "Location"
            fact.add_role("LOCATION", mention)
    elif preposition == "for":
        if person:
            fact.add_role("BENEFICIARY", mention)
        elif "PATIENT" in fact.roles or "LOCATION" in fact.roles:
            fact.add_role("CAUSE", mention)
        else:
            fact.add_role("PATIENT", mention)
    elif preposition == "because":
        fact.add_role("CAUSE", mention)
    elif preposition in ("with", "using") and not person and mention.entity_type == "Product":
        fact.add_role("INSTRUMENT", mention)

