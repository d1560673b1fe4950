"""R2G extraction for one sentence, and the Episode-level summary and importance of a turn.

`extract(sentence)` is pure: no storage, no network, deterministic. It returns entities (deduplicated within the
sentence by normalised name and type), facts with their roles pointing at those entities (or at `times`), slot
facts (memctl/r2g/slots.py: holder, slot, value), preferences, concepts, keywords and the time expressions. The
builder turns these into nodes and edges. A clause a slot frame reads is that slot fact's: the language
analyser's facts inside it are left out, since they state the same thing with the attribute or holder lost
(我婶婶的电话号码是… → be(agent 电话号码)); a statement of a change keeps them ("we moved to Denver" is an
event as well).

    >>> result = extract("小明在公园里踢足球")
    >>> [(entity.name, entity.type) for entity in result.entities]
    [('小明', 'Person'), ('公园', 'Location'), ('足球', 'Object')]
    >>> result.facts[0].predicate, sorted(result.facts[0].roles)
    ('play_soccer', ['AGENT', 'LOCATION', 'PATIENT'])
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from memctl.language.lexicon import chinese_words, english_words, gazetteer, lexicon_cache, load_yaml, sentiment_lexicon
from memctl.language.timenorm import TimeExpr, find_times
from memctl.model import normalize_text
from memctl.r2g.lang import detect_language
from memctl.r2g.preferences import PreferenceHit, find_preferences, has_place_pronoun, is_instruction, with_place
from memctl.r2g.recent import Recent
from memctl.r2g.sentences import Sentence, split_sentences
from memctl.r2g.slots import SlotFact, find_slots
from memctl.r2g.structures import Analysis, Mention, RawFact

MAX_KEYWORDS = 16


@dataclass(slots=True)
class Entity:
    name: str  # as written in the sentence
    type: str
    start: int
    end: int
    normalized: str  # the deduplication key: canonical name, NFKC + case-folded
    canonical: str
    aliases: tuple[str, ...] = ()
    confidence: float = 0.7

    def to_dict(self) -> dict:
        return {"name": self.name, "type": self.type, "span": [self.start, self.end], "normalized": self.normalized,
                "canonical": self.canonical, "aliases": list(self.aliases), "confidence": self.confidence}


@dataclass(slots=True)
class RoleFiller:
    text: str
    start: int
    end: int
    entity: int | None = None  # index into Extraction.entities
    time: int | None = None  # index into Extraction.times
    pronoun: bool = False

    def to_dict(self) -> dict:
        return {"text": self.text, "span": [self.start, self.end], "entity": self.entity, "time": self.time,
                "pronoun": self.pronoun}


@dataclass(slots=True)
class Fact:
    predicate: str  # predicate.normalized
    raw: str  # the verb phrase as written
    start: int
    end: int
    negation: bool
    modality: str | None
    time: dict | None  # the first TIME filler's normalised time
    roles: dict[str, list[RoleFiller]]
    confidence: float
    from_lexicon: bool = False  # predicate.normalized is a lexicon id, not a "verb_object" fallback

    def to_dict(self) -> dict:
        return {"predicate": {"normalized": self.predicate, "raw": self.raw, "lexicon": self.from_lexicon},
                "span": [self.start, self.end],
                "negation": self.negation, "modality": self.modality, "time": self.time,
                "roles": {role: [filler.to_dict() for filler in fillers] for role, fillers in self.roles.items()},
                "confidence": self.confidence}


@dataclass(slots=True)
class ConceptHit:
    key: str
    labels: dict
    trigger: str
    start: int
    end: int

    def to_dict(self) -> dict:
        return {"key": self.key, "labels": self.labels, "trigger": self.trigger, "span": [self.start, self.end]}


@dataclass(slots=True)
class Extraction:
    text: str
    lang: str
    entities: list[Entity] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    slots: list[SlotFact] = field(default_factory=list)
    preferences: list[PreferenceHit] = field(default_factory=list)
    concepts: list[ConceptHit] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    times: list[TimeExpr] = field(default_factory=list)
    sentiment: dict = field(default_factory=lambda: {"valence": 0.0, "arousal": 0.0})

    def to_dict(self) -> dict:
        return {
            "text": self.text,
            "lang": self.lang,
            "entities": [entity.to_dict() for entity in self.entities],
            "facts": [fact.to_dict() for fact in self.facts],
            "slots": [slot.to_dict() for slot in self.slots],
            "preferences": [preference.to_dict() for preference in self.preferences],
            "concepts": [concept.to_dict() for concept in self.concepts],
            "keywords": list(self.keywords),
            "times": [time.to_dict() for time in self.times],
            "sentiment": dict(self.sentiment),
        }


def extract(sentence: str, lang: str | None = None, ref_time=None, speaker: str | None = None,
            memo: Recent | None = None) -> Extraction:
    """Analyse one sentence. `ref_time` (datetime, date or ISO string) resolves relative times; `speaker`, when
    given, is the Person that first-person pronouns (I, me, 我) refer to.

    `memo` (a memctl.r2g.recent.Recent the caller keeps) remembers the extractions of sentences without a time
    expression: those depend on the sentence, its language and the speaker only, and chat repeats them (12% of
    LoCoMo's sentences, 26% of MemDaily's). A remembered Extraction is shared: callers must not modify it.
    Whether a sentence holds a time expression depends on its words only, so a remembered one still has none."""
    lang = lang or detect_language(sentence)
    key = (sentence, lang, speaker)
    found = None if memo is None else memo.get(key)
    if found is not None:
        return found
    times = find_times(sentence, ref_time, lang)
    found = _extract(sentence, lang, times, speaker)
    if memo is not None and not times:
        memo.put(key, found)
    return found


def _extract(sentence: str, lang: str, times: list[TimeExpr], speaker: str | None) -> Extraction:
    analysis = _analyze(sentence, times, lang, speaker)
    result = Extraction(sentence, lang, times=times)
    result.preferences = find_preferences(sentence, lang)
    instruction = is_instruction(sentence, lang, result.preferences)
    entity_index: dict[tuple[str, str], int] = {}
    for mention in analysis.mentions:
        _entity(result, entity_index, mention)
    if not instruction:
        result.slots = _slots(result, entity_index, find_slots(sentence, lang, speaker, analysis.mentions, times))
        for raw_fact in analysis.facts:
            if not any(not slot.statement and slot.start <= raw_fact.start and raw_fact.end <= slot.end
                       for slot in result.slots):
                result.facts.append(_fact(result, entity_index, raw_fact, speaker, lang))
    _renumber(result)
    result.concepts = find_concepts(sentence, lang)
    result.keywords = _keywords(analysis, result)
    result.sentiment = sentiment(sentence, lang)
    return result


def _analyze(sentence: str, times: list[TimeExpr], lang: str, speaker: str | None) -> Analysis:
    if lang == "zh":
        from memctl.r2g import nlp_zh

        return nlp_zh.analyze(sentence, times, speaker)
    from memctl.r2g import nlp_en

    return nlp_en.analyze(sentence, times, speaker)


def _entity(result: Extraction, entity_index: dict, mention: Mention) -> int | None:
    if mention.entity_type is None or mention.pronoun or mention.time_index is not None:
        return None
    key = (mention.normalized, mention.entity_type)
    if key in entity_index:
        return entity_index[key]
    for index, entity in enumerate(result.entities):
        # A filler that is exactly a named mention's span reuses it ("Win11蓝牙" → the head name 蓝牙 is typed).
        if (entity.start, entity.end) == (mention.start, mention.end):
            entity_index[key] = index
            return index
    result.entities.append(Entity(mention.text, mention.entity_type, mention.start, mention.end, mention.normalized,
                                  mention.canonical, mention.aliases, mention.confidence))
    entity_index[key] = len(result.entities) - 1
    return entity_index[key]


def _fact(result: Extraction, entity_index: dict, raw: RawFact, speaker: str | None, lang: str) -> Fact:
    roles: dict[str, list[RoleFiller]] = {}
    for role, mentions in raw.roles.items():
        for mention in mentions:
            filler = RoleFiller(mention.text, mention.start, mention.end, pronoun=mention.pronoun)
            if mention.time_index is not None:
                filler.time = mention.time_index
            elif mention.pronoun and speaker and first_person(mention.text, lang):
                filler.entity = _entity(result, entity_index, Mention(
                    mention.text, mention.start, mention.end, "Person", speaker, confidence=0.8))
            else:
                filler.entity = _entity(result, entity_index, mention)
            roles.setdefault(role, []).append(filler)
    time = None
    if roles.get("TIME"):
        time = result.times[roles["TIME"][0].time].to_dict()
    return Fact(raw.predicate, raw.raw, raw.start, raw.end, raw.negation, raw.modality, time, roles, _confidence(raw),
                raw.from_lexicon)


def _slots(result: Extraction, entity_index: dict, slots: list[SlotFact]) -> list[SlotFact]:
    kept = []
    for slot in slots:
        slot.subject_entity = _entity(result, entity_index, slot.holder)
        if slot.subject_entity is None:
            continue
        if slot.value_mention is not None:
            slot.value_entity = _entity(result, entity_index, slot.value_mention)
        kept.append(slot)
    return kept


def first_person(text: str, lang: str) -> bool:
    names = gazetteer()
    return text in names.first_person_zh if lang == "zh" else text.lower() in ("i", "me", "myself")


def _confidence(raw: RawFact) -> float:
    """0.4, plus 0.25 when the predicate comes from the lexicon, 0.1 for an AGENT, 0.1 for a PATIENT or place,
    0.05 for a time: a rule-built fact with every slot filled is trusted more than a bare verb."""
    score = 0.4 + (0.25 if raw.from_lexicon else 0.0)
    score += 0.1 if raw.roles.get("AGENT") else 0.0
    score += 0.1 if raw.roles.get("PATIENT") or raw.roles.get("LOCATION") else 0.0
    score += 0.05 if raw.roles.get("TIME") else 0.0
    return round(min(score, 0.95), 2)


def _renumber(result: Extraction) -> None:
    """Order entities by position in the sentence and remap the facts' references to them."""
    order = sorted(range(len(result.entities)), key=lambda index: (result.entities[index].start, index))
    new_index = {old: new for new, old in enumerate(order)}
    result.entities = [result.entities[old] for old in order]
    for fact in result.facts:
        for fillers in fact.roles.values():
            for filler in fillers:
                if filler.entity is not None:
                    filler.entity = new_index[filler.entity]
    for slot in result.slots:
        slot.subject_entity = new_index[slot.subject_entity]
        if slot.value_entity is not None:
            slot.value_entity = new_index[slot.value_entity]


# ---------------------------------------------------------------------------------------------------------
# concepts, keywords, sentiment


@dataclass(frozen=True, slots=True)
class _ConceptTable:
    word_to_key: dict  # normalised topic word or phrase → concept key
    han_lengths: dict  # first character of a Chinese topic word → the word lengths it starts, longest first
    phrase_lengths: dict  # first word of an English topic phrase → the phrase lengths (in words) it starts
    groups: dict  # key → list of word groups that must each occur
    labels: dict


@lexicon_cache
def _concept_table() -> _ConceptTable:
    word_to_key: dict[str, str] = {}
    groups: dict[str, list] = {}
    labels: dict[str, dict] = {}
    for key, spec in load_yaml("concepts.yaml").items():
        labels[key] = spec["labels"]
        for word in spec.get("words", []):
            word_to_key.setdefault(normalize_text(str(word)), key)
        if "all_of" in spec:
            groups[key] = [[normalize_text(str(word)) for word in group] for group in spec["all_of"]]
    han_lengths: dict[str, set] = {}
    for word in word_to_key:
        if _han(word):
            han_lengths.setdefault(word[0], set()).add(len(word))
    phrase_lengths: dict[str, set] = {}
    for word in word_to_key:
        if not _han(word) and " " in word:
            phrase_lengths.setdefault(word.split()[0], set()).add(len(word.split()))
    lengths = {first: tuple(sorted(sizes, reverse=True)) for first, sizes in phrase_lengths.items()}
    han = {first: tuple(sorted(sizes, reverse=True)) for first, sizes in han_lengths.items()}
    return _ConceptTable(word_to_key, han, lengths, groups, labels)


def _han(text: str) -> bool:
    return _HAN_RUN.search(text) is not None


def find_concepts(sentence: str, lang: str) -> list[ConceptHit]:
    """Topics the sentence is about, from memctl/data/concepts.yaml (one hit per concept, first trigger)."""
    table = _concept_table()
    folded = normalize_text(sentence)
    hits: dict[str, ConceptHit] = {}
    # NFKC + casefold keep Chinese and ASCII lengths, so spans in `folded` are spans in `sentence`.
    aligned = len(folded) == len(sentence)
    for start, end in _candidate_spans(folded, table):
        word = folded[start:end]
        key = table.word_to_key.get(word) or (table.word_to_key.get(word[:-1]) if word.endswith("s") else None)
        if key is None or key in hits or (len(word) == 1 and not _single_word(folded, end)):
            continue
        hits[key] = ConceptHit(key, table.labels[key], sentence[start:end] if aligned else word,
                               start if aligned else 0, end if aligned else 0)
    for hit in find_group_concepts(sentence, folded):
        hits.setdefault(hit.key, hit)
    return sorted(hits.values(), key=lambda hit: hit.start)


def find_group_concepts(text: str, folded: str | None = None) -> list[ConceptHit]:
    """The concepts whose `all_of` word groups each occur in `text` (a turn may spread them over sentences:
    "升级到 Win11 之后。蓝牙打不开了")."""
    table = _concept_table()
    folded = normalize_text(text) if folded is None else folded
    aligned = len(folded) == len(text)
    hits = []
    for key, word_groups in table.groups.items():
        if all(any(word in folded for word in group) for group in word_groups):
            first = next(word for word in word_groups[0] if word in folded)
            start = folded.index(first)
            hits.append(ConceptHit(key, table.labels[key], text[start : start + len(first)] if aligned else first,
                                   start if aligned else 0, start + len(first) if aligned else 0))
    return hits


_ENGLISH_WORD = re.compile(r"[a-z0-9][a-z0-9'+\-]*")
_ENGLISH_LETTERS = re.compile(r"[a-z']+")
_HAN_RUN = re.compile(r"[\u3400-\u9fff]+")


def _candidate_spans(folded: str, table: _ConceptTable):
    """Every span that could be a topic word: English words and phrases of up to the longest topic phrase, and
    Chinese substrings of up to the longest topic word, longest first at each position."""
    words = [(match.start(), match.end()) for match in _ENGLISH_WORD.finditer(folded)]
    for index, (start, end) in enumerate(words):
        for length in table.phrase_lengths.get(folded[start:end], ()):
            if index + length <= len(words):
                yield start, words[index + length - 1][1]
        yield start, end
    for run in _HAN_RUN.finditer(folded):
        for start in range(run.start(), run.end()):
            for length in table.han_lengths.get(folded[start], ()):
                if start + length <= run.end():
                    yield start, start + length


def _single_word(text: str, end: int) -> bool:
    """A one-character Chinese topic word (狗, 猫) counts only when no Han character follows to extend it into
    another word (书包 is not about books); a particle after it is fine (猫的)."""
    following = text[end : end + 1]
    return not following or not _han(following) or following in "的了和与跟也都很"


def _keywords(analysis: Analysis, result: Extraction) -> list[str]:
    stop = chinese_words()["stop_words"] if result.lang == "zh" else _english_stop_words()
    keywords: list[str] = []
    for entity in result.entities:
        keywords.append(entity.canonical)
    for text, word_class in analysis.tokens:
        if word_class not in ("noun", "verb", "name"):
            continue
        word = text if result.lang == "zh" else text.lower()
        if word in stop or (result.lang == "zh" and len(word) < 2 and word_class != "name") or len(word) < 2:
            continue
        keywords.append(word)
    seen: dict[str, str] = {}
    for keyword in keywords:
        seen.setdefault(normalize_text(keyword), keyword)
    return list(seen.values())[:MAX_KEYWORDS]


@lexicon_cache
def _english_stop_words() -> frozenset:
    words = english_words()
    return (words["pronouns"] | words["determiners"] | words["prepositions"] | words["conjunctions"]
            | words["auxiliaries"] | frozenset(words["modals"]) | words["negations"] | words["non_objects"]
            | frozenset({"be", "have", "do", "get", "got", "go", "going", "went", "thing", "things", "stuff", "lot",
                         "yeah", "yes", "oh", "wow", "hey", "hi", "thanks", "thank", "really", "just"}))


def sentiment(text: str, lang: str) -> dict:
    """Valence (mean of the affect words found, -1..1) and arousal (their maximum, 0..1); a negation word before
    an affect word within three words flips its valence ("not happy")."""
    lexicon = sentiment_lexicon().get(lang, {})
    hits: list[tuple[float, float]] = []
    if lang == "zh":
        for word, (valence, arousal) in lexicon.items():
            position = text.find(word)
            if position >= 0:
                negated = position > 0 and text[position - 1] in "不没别"
                hits.append((-valence if negated else valence, arousal))
    else:
        words = _ENGLISH_LETTERS.findall(text.lower())
        for index, word in enumerate(words):
            if word in lexicon:
                valence, arousal = lexicon[word]
                negated = any(previous in ("not", "never", "don't", "didn't", "isn't", "wasn't", "no")
                              for previous in words[max(0, index - 3) : index])
                hits.append((-valence if negated else valence, arousal))
    if not hits:
        return {"valence": 0.0, "arousal": 0.0}
    return {"valence": round(sum(valence for valence, _ in hits) / len(hits), 3),
            "arousal": round(max(arousal for _, arousal in hits), 3)}


# ---------------------------------------------------------------------------------------------------------
# turns: Episode summary and importance


@dataclass(slots=True)
class TurnAnalysis:
    text: str
    lang: str
    sentences: list[tuple[Sentence, Extraction]]


def analyze_turn(text: str, ref_time=None, lang: str | None = None, speaker: str | None = None,
                 memo: Recent | None = None) -> TurnAnalysis:
    """Split a turn into sentences and extract each (`memo`: see extract); sentence spans index into `text`."""
    lang = lang or detect_language(text)
    sentences = [(sentence, extract(sentence.text, detect_language(sentence.text), ref_time, speaker, memo))
                 for sentence in split_sentences(text)]
    return TurnAnalysis(text, lang, _places_named(sentences))


def _places_named(sentences: list) -> list:
    """儿童公园真不错……我每天经过那: a Chinese preference that points to a place with 那/那里 names the place the
    turn named last before it. The extraction may be shared (memo): a changed one is a copy."""
    place = None
    named = []
    for sentence, extraction in sentences:
        if place is not None and extraction.lang == "zh" and any(map(has_place_pronoun, extraction.preferences)):
            extraction = replace(extraction, preferences=[with_place(hit, place) for hit in extraction.preferences])
        place = next((entity.name for entity in reversed(extraction.entities) if entity.type == "Location"), place)
        named.append((sentence, extraction))
    return named


SHORT_TURN_CHARS = {"en": 160, "zh": 60}
SUMMARY_CAP_CHARS = {"en": 240, "zh": 100}
_PHATIC = re.compile(
    r"^(?:(?:hi|hey|hello|wow|oh|aw+|haha|lol|omg|yeah|yep|yes|no|ok(?:ay)?|sure|thanks?(?: you)?(?: so much)?|"
    r"congrats|congratulations|awesome|cool|great|nice|amazing|sounds (?:great|good|fun|amazing)|that's (?:great|awesome|"
    r"amazing|cool)|bye|take care|talk soon|see you)\b[\s,!.\w']{0,24}|哈+|好的|嗯+|谢谢.{0,4}|哇.{0,4}|你好.{0,4})[!！.。~～]*$",
    re.IGNORECASE,
)


def episode_summary(turn, ref_time=None, lang: str | None = None) -> str:
    """An extractive summary of a turn for Episode.text (seed R2G-2: 摘要, 不放原文).

    Heuristic: a turn of at most SHORT_TURN_CHARS (160 English / 60 Chinese characters) is kept whole, white
    space collapsed: it is already a summary of itself. A longer turn is cut to a budget of 40% of its length,
    at least the short limit and at most SUMMARY_CAP_CHARS (240 / 100). Sentences are scored by content —
    2 per fact (slot facts included), 1.5 per named entity, 1 per resolved time, 2 per preference, 0.5 per
    concept, 0.5 for the first sentence, -2 for a phatic sentence ("Wow, thanks!") and -0.5 for a question —
    and the best are taken in their original order while they fit; the first one that does not fit is cut at a
    word boundary with "…" when nothing has been taken yet. A long turn's summary is therefore always shorter
    than the turn.
    """
    analysis = turn if isinstance(turn, TurnAnalysis) else analyze_turn(turn, ref_time, lang)
    lang = analysis.lang
    joiner = "" if lang == "zh" else " "
    collapsed = " ".join(analysis.text.split())
    if len(collapsed) <= SHORT_TURN_CHARS.get(lang, 160):
        return collapsed
    budget = min(max(SHORT_TURN_CHARS.get(lang, 160), int(0.4 * len(collapsed))), SUMMARY_CAP_CHARS.get(lang, 240))
    ranked = sorted(range(len(analysis.sentences)), key=lambda index: -_sentence_score(index, *analysis.sentences[index]))
    chosen: list[int] = []
    used = 0
    for index in ranked:
        text = " ".join(analysis.sentences[index][0].text.split())
        if used + len(text) + (len(joiner) if chosen else 0) <= budget:
            chosen.append(index)
            used += len(text) + (len(joiner) if chosen else 0)
        elif not chosen:
            return _cut(text, budget, lang)
    chosen.sort()
    return joiner.join(" ".join(analysis.sentences[index][0].text.split()) for index in chosen)


def _sentence_score(index: int, sentence: Sentence, extraction: Extraction) -> float:
    named = sum(1 for entity in extraction.entities if entity.type in ("Person", "Location", "Organization", "Product"))
    resolved = sum(1 for time in extraction.times if time.granularity != "unspecified")
    score = (2 * (len(extraction.facts) + len(extraction.slots)) + 1.5 * named + resolved
             + 2 * len(extraction.preferences) + 0.5 * len(extraction.concepts) + (0.5 if index == 0 else 0.0))
    if _PHATIC.match(sentence.text.strip()):
        score -= 2
    if sentence.text.rstrip().endswith(("?", "？")):
        score -= 0.5
    return score


def _cut(text: str, budget: int, lang: str) -> str:
    if lang == "zh":
        return text[: budget - 1] + "…"
    cut = text[: budget - 1]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(",;: ") + "…"


def importance(turn, ref_time=None, lang: str | None = None, parameters: dict | None = None) -> float:
    """Initial Episode importance in [floor, 1] (seed R2G-2 leaves it to the summariser; this is ours). With the
    default `parameters` (the r2g.importance settings):

        0.3 base
      + 0.2 when the turn states a preference or instruction (they steer every later answer)
      + 0.1 per fact whose predicate (or slot) is in the lexicon (lexicon_fact), at most 0.2 (lexicon_fact_cap)
      + 0.1 when it names a person, place, organisation or product (named)
      + 0.1 when it dates something: a resolved time expression (dated)
      + 0.1 × the strongest emotion's arousal (arousal)
      + 0.05 for a long turn, over 200 characters (long_turn, long_turn_chars)
      - 0.2 when it is small talk only: no fact, no entity, no preference (small_talk)
      at least 0.05 (floor)
    """
    if parameters is None:
        from memctl.settings import defaults

        parameters = defaults().r2g.importance
    analysis = turn if isinstance(turn, TurnAnalysis) else analyze_turn(turn, ref_time, lang)
    extractions = [extraction for _, extraction in analysis.sentences]
    score = parameters["base"]
    if any(extraction.preferences for extraction in extractions):
        score += parameters["preference"]
    lexicon_facts = sum(sum(1 for fact in extraction.facts if fact.from_lexicon)
                        + sum(1 for slot in extraction.slots if slot.lexicon) for extraction in extractions)
    score += min(parameters["lexicon_fact"] * lexicon_facts, parameters["lexicon_fact_cap"])
    if any(entity.type in ("Person", "Location", "Organization", "Product")
           for extraction in extractions for entity in extraction.entities):
        score += parameters["named"]
    if any(time.granularity != "unspecified" for extraction in extractions for time in extraction.times):
        score += parameters["dated"]
    score += parameters["arousal"] * max((extraction.sentiment["arousal"] for extraction in extractions), default=0.0)
    if len(analysis.text) > parameters["long_turn_chars"]:
        score += parameters["long_turn"]
    if not any(extraction.facts or extraction.slots or extraction.entities or extraction.preferences
               for extraction in extractions):
        score += parameters["small_talk"]
    return round(min(max(score, parameters["floor"]), 1.0), 3)
