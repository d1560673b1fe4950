"""One turn → its Episode, and the Entities, Facts, Preferences and Concepts its sentences state (R2G-2…4).

Node keys are the deterministic ids of memctl.model, so a rebuild regenerates the same keys:
- Episode  episode_id(tenant, raw_id, offset, offset + length): one per turn;
- Entity   entity_id(tenant, canonical name, type), aliases gathered (Win11 = Windows 11); a resolved time is
           an Entity of type Time keyed by its ISO value;
- Fact     node_id(Fact, tenant, fingerprint(statement, Fact, day)): the statement is the predicate with its
           negation, modality and role fillers, the day the event's (else the turn's), so the same event said
           twice on a day is one node whose frequency rises (R2G-4). A predicate with no participant but a
           time (a bare "inspiring") is no Fact: the Episode keeps its words;
- slot Fact node_id(Fact, tenant, "slot", subject entity key, slot, normalised value, polarity): an attribute
           statement (memctl/r2g/slots.py), one node per claim however often and whenever it is made; props
           attributes {subject, subject_type, slot, slot_surface, lexicon, value, value_entity?, polarity,
           kind (set | change | end | add | stop: memctl/r2g/changes.py), time?}, title "<subject> <slot as written>: <value>" ("formerly"/"not" before a value ended or
           denied), keywords the slot as written and the value;
- Preference  fingerprint(holder | polarity | object), without a time bucket: a standing wish repeated later is
           the same preference;
- Concept  concept_id(tenant, lexicon key);
- RawChunk the raw_id itself: the node that stands for a stored chunk (type "RawChunk", props conv_id, turns,
           ts), target of DERIVED_FROM.

Edges (weight = 0.5·conf + 0.3·source_trust + 0.2·recency_boost, R2G-4; recency_boost is 1 for evidence with a
timestamp and `untimed_recency_boost` without one: decay with age is recall's business (§6.1), so stored
weights do not depend on the day a conversion ran):
- Episode → RawChunk DERIVED_FROM {offset, length}, → Entity MENTIONS, → Concept ABOUT;
- Fact → Entity AGENT/PATIENT/LOCATION/TIME/… and MENTIONS (each filler but times), → Episode and → RawChunk
  DERIVED_FROM, → Concept ABOUT, → Fact SAME_AS (events.py); a filler that is no entity nor time (a common
  noun: 农民, 手机, "pottery class"; an activity, "swimming") is a word of the Fact: in its title, roles and
  keywords, with no edge;
- slot Fact → Entity SUBJECT (the holder) and VALUE (the entity or time its value names, if any), each with
  MENTIONS, → Time TIME (the statement's own time words), DERIVED_FROM and ABOUT as a Fact. Not AGENT and
  PATIENT: the holder of a state does nothing (用户的婶婶 does not act in "my aunt's phone is …"), and role
  edges of their own let "every attribute of X" be X's incoming SUBJECT edges, apart from the events X took
  part in, while SAME_AS (which compares AGENT and PATIENT) never joins an attribute to an event;
- Preference → Episode and → RawChunk DERIVED_FROM, → Concept ABOUT (only from speakers that are not the
  assistant: its "以后优先用中文回答你" echoes the user's wish; an instruction only in a turn next to no other
  person's: "Keep me posted!" between friends instructs no assistant);
- Episode → Episode TEMPORAL_NEXT {same_session, speaker_change} and SIMILAR_TO {score} (the builder's).

Props follow seed 001 §2.3; a field equal to its default (memctl.model.Node's) is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from memctl.language.lexicon import english_words, gazetteer, lexicon_cache
from memctl.language.timenorm import time_interval
from memctl.model import (
    NodeType,
    concept_id,
    edge_weight,
    entity_id,
    episode_id,
    fingerprint,
    node_id,
    normalize_text,
)
from memctl.node_documents import caption_of, context_text, episode_fields, epoch_seconds, node_document
from memctl.r2g.extract import episode_summary, find_group_concepts, importance
from memctl.r2g.linking import signature
from memctl.r2g.merge import evidence_key
from memctl.r2g.rawturns import session_of
from memctl.settings import View

CREATOR = "r2g"  # provenance.creator of what the rules build; `--rebuild` removes these nodes
EXTERNAL_CREATOR = "external"  # ... and these, which it then replays from the recorded JSONL imports
VERSION = 1
RAW_CHUNK = "RawChunk"
MAX_KEYWORDS = 16
TITLE_CHARS = {"zh": 24, "en": 60}
CLAUSE_BREAKS = "，,；;。！？!?\n"
ROLE_RANK = {role: rank for rank, role in enumerate(("AGENT", "PATIENT", "RECIPIENT", "LOCATION", "TIME", "INSTRUMENT",
                                                     "MANNER", "CAUSE", "BENEFICIARY"))}
CONCEPT_CONFIDENCE = 0.7  # a lexicon word hit says little about how central the topic is
ASSISTANT_SPEAKERS = frozenset({"assistant", "助手", "助理", "ai", "bot", "system", "model", "gpt", "chatgpt", "claude"})
PREFERENCE_IMPORTANCE = {"instruction": 0.8, "taste": 0.6, "habit": 0.5}


@dataclass
class TurnResult:
    episode: str
    keywords: set
    timed: bool


def props(tenant: str, *, title: str, text: str, raw_refs: list, keywords=(), entities=(), sentiment=None,
          importance_value: float = 0.5, confidence: float = 1.0, recency: str | None = None, tags=(),
          attributes: dict | None = None, creator: str = CREATOR) -> dict:
    """A node's props in the shape of seed 001 §2.3 (raw_refs with raw_id, offset, length, source_id, ts).
    Keywords, entities, tags and sentiment equal to their defaults (memctl.model.Node: empty, valence and arousal
    0) are left out, and so is privacy, which R2G never sets: every stored byte is written twice (WAL, segment),
    and most nodes have no sentiment, tags or privacy flags of their own."""
    node = {"title": title, "text": text, "raw_refs": raw_refs, "importance": round(importance_value, 3),
            "confidence": round(confidence, 3), "recency": recency, "frequency": 1,
            "provenance": {"creator": creator, "version": VERSION}, "tenant": tenant, "attributes": attributes or {}}
    if keywords:
        node["keywords"] = list(keywords)
    if entities:
        node["entities"] = list(entities)
    if tags:
        node["tags"] = list(tags)
    if sentiment and (sentiment["valence"] or sentiment["arousal"]):
        node["sentiment"] = sentiment
    return node


class TurnEmitter:
    def __init__(self, draft, tenant: str, settings: View, events):
        self.draft = draft
        self.tenant = tenant
        self.settings = settings
        self.events = events
        self._weights: dict = {}  # (confidence, timed) → weight: a few confidences recur across all edges

    def weight(self, confidence: float, timed: bool) -> float:
        found = self._weights.get((confidence, timed))
        if found is None:
            found = self._weights[confidence, timed] = _weight(
                confidence, self.settings.source_trust, 1.0 if timed else self.settings.untimed_recency_boost,
                self.settings.edge_weight)
        return found

    def _edge(self, source: str, edge_type: str, target: str, confidence: float, timed: bool, ts: float | None,
              properties: dict | None = None) -> None:
        self.draft.edge(source, edge_type, target, self.weight(confidence, timed), confidence, ts, properties)

    # --- chunks and episodes -------------------------------------------------------------------------

    def chunk(self, raw_id: str, conv_id: str, turns: int, ts: str | None) -> None:
        self.draft.node(raw_id, RAW_CHUNK, {"conv_id": conv_id, "turns": turns, "ts": ts, "tenant": self.tenant})

    def episode_key(self, meta: dict) -> str:
        ref = meta["raw_ref"]
        return episode_id(self.tenant, ref["raw_id"], ref["offset"], ref["offset"] + ref["length"])

    def temporal(self, previous, current, remove_from=None) -> None:
        """TEMPORAL_NEXT previous → current; `remove_from`: the turn whose edge into `current` this replaces."""
        source, target = self.episode_key(previous.meta), self.episode_key(current.meta)
        same_session = session_of(previous.meta) == session_of(current.meta)
        speaker_change = previous.meta["speaker"] != current.meta["speaker"]
        ts = epoch_seconds(current.meta["ts"])
        self._edge(source, "TEMPORAL_NEXT", target, 1.0, ts is not None, ts,
                   {"same_session": same_session, "speaker_change": speaker_change})
        if remove_from is not None:
            self.draft.remove_edge(self.episode_key(remove_from.meta), "TEMPORAL_NEXT", target)

    def reindex(self, turn, previous, following) -> None:
        """Index an already converted turn again: a new neighbour changed its context field."""
        key = self.episode_key(turn.meta)
        stored = self.draft.props(key)
        if stored is None:
            return
        lang = stored.get("attributes", {}).get("lang", "en")
        context = context_text(turn.meta, (previous, following), session_of)
        self.draft.document(node_document(key, "Episode", stored, episode_fields(turn.meta, turn.text, lang, context)))

    def turn(self, turn, analysis, previous, following) -> TurnResult:
        meta = turn.meta
        ref = meta["raw_ref"]
        key = self.episode_key(meta)
        ts = meta["ts"]
        seconds = epoch_seconds(ts)
        timed = seconds is not None
        episode_ref = _ref(meta, ref["offset"], ref["length"])
        entity_names: dict = {}
        concept_hits: dict = {}
        keywords: dict = {}
        to_person = _between_people(meta, previous, following)
        for sentence, extraction in analysis.sentences:
            base = ref["offset"] + sentence.byte_start
            sentence_ref = _ref(meta, base, sentence.byte_end - sentence.byte_start)
            sentence_text = _non_ascii(sentence.text)
            context = _SentenceContext(meta, key, sentence, extraction, sentence_ref, base, sentence_text, timed,
                                       seconds)
            entity_keys = [self._entity(context, entity) for entity in extraction.entities]
            time_keys: dict = {}  # time index → (key, name), made when a fact's TIME role needs it
            concepts = [self._concept(context, hit, extraction.lang) for hit in extraction.concepts]
            for fact in extraction.facts:
                self._fact(context, fact, entity_keys, time_keys, concepts)
            for slot in extraction.slots:
                self._slot_fact(context, slot, entity_keys, time_keys, concepts)
            if not _assistant(meta["speaker"]):
                for hit in extraction.preferences:
                    if hit.kind != "instruction" or not to_person:
                        self._preference(context, hit, concepts)
            for entity, entity_key in zip(extraction.entities, entity_keys):
                entity_names.setdefault(entity_key, entity.canonical)
            for concept_key, hit in zip(concepts, extraction.concepts):
                concept_hits.setdefault(concept_key, hit)
            for keyword in extraction.keywords:
                keywords.setdefault(normalize_text(keyword), keyword)
        if len(analysis.sentences) > 1:
            # Topics that need words from two sentences ("Win11 … 。蓝牙 …") belong to the turn as a whole.
            context = _SentenceContext(meta, key, None, None, episode_ref, ref["offset"], _non_ascii(turn.text),
                                       timed, seconds)
            for hit in find_group_concepts(turn.text):
                concept_key = concept_id(self.tenant, hit.key)
                if concept_key not in concept_hits:
                    concept_hits[concept_key] = hit
                    self._concept(context, hit, analysis.lang)
        self._episode(turn, analysis, key, episode_ref, entity_names, concept_hits, keywords, previous, following)
        return TurnResult(key, set(keywords), timed)

    def _episode(self, turn, analysis, key, episode_ref, entity_names, concept_hits, keywords, previous,
                 following) -> None:
        meta = turn.meta
        ts = meta["ts"]
        seconds = epoch_seconds(ts)
        summary = episode_summary(analysis)
        attributes = {"conv_id": meta["conv_id"], "speaker": meta["speaker"], "source_id": meta["source_id"],
                      "session": session_of(meta), "lang": analysis.lang, "turn_id": meta["turn_id"]}
        caption = caption_of(meta)
        if caption:
            attributes["caption"] = caption
        sentiments = [extraction.sentiment for _, extraction in analysis.sentences]
        node = props(self.tenant, title=_episode_title(meta["speaker"], summary, analysis.lang), text=summary,
                     raw_refs=[episode_ref], keywords=list(keywords.values())[:MAX_KEYWORDS],
                     entities=list(dict.fromkeys(entity_names.values()))[:MAX_KEYWORDS],
                     sentiment=max(sentiments, key=lambda value: value["arousal"], default=None),
                     importance_value=importance(analysis, parameters=self.settings.importance), recency=ts,
                     attributes=attributes)
        self.draft.node(key, "Episode", node)
        timed = seconds is not None
        self._edge(key, "DERIVED_FROM", episode_ref["raw_id"], 1.0, timed, seconds,
                   {"offset": episode_ref["offset"], "length": episode_ref["length"]})
        for entity_key in entity_names:
            self._edge(key, "MENTIONS", entity_key, 0.9, timed, seconds)
        for concept_key in concept_hits:
            self._edge(key, "ABOUT", concept_key, CONCEPT_CONFIDENCE, timed, seconds)
        context = context_text(meta, (previous, following), session_of)
        self.draft.document(node_document(key, "Episode", node, episode_fields(meta, turn.text, analysis.lang,
                                                                               context)))

    # --- sentence-level nodes ------------------------------------------------------------------------

    def _entity(self, context, entity) -> str:
        key = entity_id(self.tenant, entity.canonical, entity.type)
        aliases = set(entity.aliases)
        if normalize_text(entity.name) != entity.normalized and not _pronoun(entity.name):
            aliases.add(entity.name)
        aliases.discard(entity.canonical)
        node = props(self.tenant, title=entity.canonical, text=f"{entity.canonical} ({entity.type})",
                     raw_refs=[context.span_ref(entity.start, entity.end)], keywords=[entity.canonical],
                     confidence=entity.confidence, recency=context.meta["ts"],
                     attributes={"entity_type": entity.type, "canonical": entity.canonical,
                                 "aliases": sorted(aliases), "first_seen": context.first_seen(entity.start)})
        self.draft.node(key, "Entity", node)
        return key

    def _time(self, context, time) -> tuple[str, str]:
        name = time.value or time.expression
        key = entity_id(self.tenant, name, "Time")
        node = props(self.tenant, title=name, text=f"{name} ({time.granularity})",
                     raw_refs=[context.span_ref(time.start, time.end)], keywords=[time.expression],
                     confidence=0.9 if time.value else 0.5, recency=context.meta["ts"],
                     attributes={"entity_type": "Time", "value": time.value, "granularity": time.granularity,
                                 "expressions": [time.expression], "first_seen": context.first_seen(time.start)})
        self.draft.node(key, "Entity", node)
        return key, name

    def _concept(self, context, hit, lang: str) -> str:
        key = concept_id(self.tenant, hit.key)
        # The label in the language that hit it: an English store never holds Chinese labels (indexing them
        # would load jieba's dictionary for a handful of words); keywords gather the labels of every language.
        label = str(hit.labels.get(lang) or hit.labels.get("en") or hit.key)
        node = props(self.tenant, title=label, text=label, raw_refs=[context.sentence_ref],
                     keywords=[hit.trigger, label], confidence=CONCEPT_CONFIDENCE,
                     recency=context.meta["ts"],
                     attributes={"key": hit.key, "labels": hit.labels, "triggers": [hit.trigger],
                                 "first_seen": context.first_seen(hit.start)})
        self.draft.node(key, "Concept", node)
        return key

    def _fact(self, context, fact, entity_keys, time_keys, concepts) -> None:
        if not any(filler.entity is not None or not filler.pronoun for role, fillers in fact.roles.items()
                   if role != "TIME" for filler in fillers):
            return  # a verb with no participant found ("inspiring", "说") states no event worth a node
        roles: dict = {}
        for role, fillers in fact.roles.items():
            for filler in fillers:
                if filler.entity is not None:
                    target = (entity_keys[filler.entity], context.extraction.entities[filler.entity].canonical)
                elif filler.time is not None:
                    target = self._time_key(context, time_keys, filler.time)
                elif not filler.pronoun:
                    target = (None, filler.text)  # a word of the fact (农民, "pottery class"): no entity, no edge
                else:
                    continue  # a pronoun nobody resolved
                if target not in roles.setdefault(role, []):
                    roles[role].append(target)
        roles = {role: roles[role] for role in _ordered(roles)}
        bucket = _day_bucket(fact.time, context.meta["ts"])
        statement = _statement(fact, roles)
        key = node_id(NodeType.FACT, self.tenant, fingerprint(statement, NodeType.FACT, bucket))
        names = list(dict.fromkeys(name for fillers in roles.values() for target, name in fillers if target))
        words = list(dict.fromkeys(name for fillers in roles.values() for target, name in fillers if not target))
        predicate = {"normalized": fact.predicate, "raw": fact.raw, "lexicon": fact.from_lexicon}
        node = props(self.tenant, title=_fact_title(fact, roles), text=context.sentence.text,
                     raw_refs=[context.sentence_ref], keywords=[fact.predicate, *words], entities=names,
                     confidence=fact.confidence, recency=context.meta["ts"],
                     sentiment=context.extraction.sentiment,
                     attributes={"predicate": predicate, "negation": fact.negation, "modality": fact.modality,
                                 "time": fact.time, "time_bucket": bucket,
                                 "roles": {role: [name for _, name in fillers] for role, fillers in roles.items()},
                                 "first_seen": context.first_seen(fact.start)})
        created = self.draft.node(key, "Fact", node)
        for role, fillers in roles.items():
            for target, _name in fillers:
                if target is not None:
                    self._argument(context, key, role, target, fact.confidence)
        self._evidence(context, key, concepts)
        if created:
            for other in self.events.same_events(key, signature(fact, context.extraction, context.meta["ts"])):
                self._edge(key, "SAME_AS", other, 0.8, context.timed, context.seconds)

    def _argument(self, context, key: str, role: str, target: str, confidence: float) -> None:
        """A role edge from a fact, and MENTIONS of the entity it points to (not of a time): each entity the fact
        refers to, not every entity of its sentence (facts × entities per sentence would be most of the graph's
        edges on long turns)."""
        self._edge(key, role, target, confidence, context.timed, context.seconds)
        if role != "TIME":
            self._edge(key, "MENTIONS", target, confidence, context.timed, context.seconds)

    def _evidence(self, context, key: str, concepts) -> None:
        """DERIVED_FROM the turn's Episode and its raw chunk, ABOUT the sentence's concepts."""
        timed, seconds = context.timed, context.seconds
        self._edge(key, "DERIVED_FROM", context.episode, 1.0, timed, seconds)
        self._edge(key, "DERIVED_FROM", context.sentence_ref["raw_id"], 1.0, timed, seconds)
        for concept_key in concepts:
            self._edge(key, "ABOUT", concept_key, CONCEPT_CONFIDENCE, timed, seconds)

    def _slot_fact(self, context, slot, entity_keys, time_keys, concepts) -> None:
        """A slot fact (memctl/r2g/slots.py): its key is the claim, subject + slot + value + polarity, so the
        same statement made again is the same node (its frequency and raw_refs grow) and another value is
        another node. No day in the key: a standing attribute is not an event of a day."""
        extraction = context.extraction
        subject_key = entity_keys[slot.subject_entity]
        subject = extraction.entities[slot.subject_entity]
        value_target = None
        if slot.value_entity is not None:
            value_target = (entity_keys[slot.value_entity], extraction.entities[slot.value_entity].canonical)
        elif slot.value_time is not None:
            value_target = self._time_key(context, time_keys, slot.value_time)
        time_target = None if slot.time is None else self._time_key(context, time_keys, slot.time)
        key = node_id(NodeType.FACT, self.tenant, "slot", subject_key, slot.slot, normalize_text(slot.value),
                      slot.polarity)
        attributes = {"subject": subject.canonical, "subject_type": subject.type, "slot": slot.slot,
                      "slot_surface": slot.slot_surface, "lexicon": slot.lexicon, "value": slot.value,
                      "polarity": slot.polarity, "kind": slot.kind, "first_seen": context.first_seen(slot.start)}
        if value_target is not None:
            attributes["value_entity"] = value_target[1]
        if slot.time is not None:
            attributes["time"] = extraction.times[slot.time].to_dict()
        names = [subject.canonical] + ([value_target[1]] if value_target is not None else [])
        node = props(self.tenant, title=_slot_title(slot, subject.canonical), text=context.sentence.text,
                     raw_refs=[context.sentence_ref],
                     keywords=list(dict.fromkeys(word for word in (slot.slot_surface, slot.value) if word)),
                     entities=list(dict.fromkeys(names)), confidence=slot.confidence, recency=context.meta["ts"],
                     sentiment=extraction.sentiment, attributes=attributes)
        self.draft.node(key, "Fact", node)
        for edge_type, target in (("SUBJECT", subject_key), ("VALUE", value_target and value_target[0]),
                                  ("TIME", time_target and time_target[0])):
            if target is not None:
                self._argument(context, key, edge_type, target, slot.confidence)
        self._evidence(context, key, concepts)

    def _time_key(self, context, time_keys: dict, index: int) -> tuple[str, str]:
        if index not in time_keys:
            time_keys[index] = self._time(context, context.extraction.times[index])
        return time_keys[index]

    def _preference(self, context, hit, concepts) -> None:
        holder = context.meta["speaker"] or "user"
        statement = f"{normalize_text(holder)}|{hit.polarity}|{normalize_text(hit.object)}"
        key = node_id(NodeType.PREFERENCE, self.tenant, fingerprint(statement, NodeType.PREFERENCE, None))
        clause = _clause(context.sentence.text, hit.start, hit.end)
        node = props(self.tenant, title=clause, text=context.sentence.text, raw_refs=[context.sentence_ref],
                     keywords=context.extraction.keywords[:MAX_KEYWORDS],
                     entities=[entity.canonical for entity in context.extraction.entities],
                     importance_value=PREFERENCE_IMPORTANCE.get(hit.kind, 0.6), confidence=hit.confidence,
                     recency=context.meta["ts"],
                     attributes={"polarity": hit.polarity, "object": hit.object, "kind": hit.kind,
                                 "trigger": hit.trigger, "holder": holder,
                                 "first_seen": context.first_seen(hit.start)})
        self.draft.node(key, "Preference", node)
        self._evidence(context, key, concepts)


@dataclass
class _SentenceContext:
    meta: dict
    episode: str
    sentence: object
    extraction: object
    sentence_ref: dict
    base: int  # byte offset of the sentence in the chunk
    text: str | None  # the sentence (or turn) when it is not ASCII: characters and bytes differ
    timed: bool
    seconds: float | None

    def byte(self, character: int) -> int:
        return self.base + (len(self.text[:character].encode("utf-8")) if self.text else character)

    def span_ref(self, start: int, end: int) -> dict:
        first = self.byte(start)
        return _ref(self.meta, first, self.byte(end) - first)

    def first_seen(self, character: int) -> list:
        return evidence_key(self.meta["ts"], self.meta["raw_ref"]["raw_id"], self.byte(character))


def _weight(confidence: float, trust: float, boost: float, weights: tuple) -> float:
    return edge_weight(min(max(confidence, 0.0), 1.0), trust, boost, weights)


def _ref(meta: dict, offset: int, length: int) -> dict:
    return {"raw_id": meta["raw_ref"]["raw_id"], "offset": offset, "length": length,
            "source_id": meta["source_id"], "ts": meta["ts"]}


def _non_ascii(text: str) -> str | None:
    return None if text.isascii() else text


def _ordered(roles: dict) -> list:
    return sorted(roles, key=lambda role: ROLE_RANK.get(role, len(ROLE_RANK)))


def _statement(fact, roles: dict) -> str:
    """The normalised text of a fact for its fingerprint: what happened, to what, where; not when (the time
    bucket holds that) and not how it was worded. `roles` in ROLE_RANK order."""
    fillers = ";".join(f"{role}={','.join(sorted(normalize_text(name) for _, name in targets))}"
                       for role, targets in roles.items() if role != "TIME")
    return f"{'not ' if fact.negation else ''}{fact.predicate}|{fact.modality or ''}|{fillers}"


def _fact_title(fact, roles: dict) -> str:
    """`roles` in ROLE_RANK order."""
    parts = [f"{role.lower()} {', '.join(name for _, name in targets)}" for role, targets in roles.items()]
    head = f"{'not ' if fact.negation else ''}{fact.modality + ' ' if fact.modality else ''}{fact.predicate}"
    return f"{head}({'; '.join(parts)})" if parts else head


def _slot_title(slot, subject: str) -> str:
    """"用户的婶婶 电话号码: 155…", in the sentence's own words: the index finds a slot fact by what was said,
    not by the lexicon's other names for the slot (a "名字" query matched every "我同事叫…" and cost MemDaily dev
    Recall@5)."""
    if not slot.value:  # an end that names no value: "Jon broke up", "用户 辞职了"
        return f"{subject} {slot.slot_surface}"
    head = {"negated": "not ", "ended": "formerly "}.get(slot.polarity, "")
    return f"{subject} {slot.slot_surface}: {head}{slot.value}"


def _day_bucket(time: dict | None, ts: str | None) -> str | None:
    if time and time.get("value") and time.get("granularity") not in (None, "unspecified"):
        try:
            return time_interval(time["value"], time["granularity"])[0].isoformat()
        except ValueError:
            pass
    return ts[:10] if ts else None


def _episode_title(speaker: str | None, summary: str, lang: str) -> str:
    limit = TITLE_CHARS.get(lang, 60)
    head = summary if len(summary) <= limit else summary[: limit - 1].rstrip() + "…"
    return f"{speaker}: {head}" if speaker else head


def _clause(sentence: str, start: int, end: int) -> str:
    """The clause of `sentence` holding [start, end): a preference's own words (以后优先中文回答)."""
    left = max((sentence.rfind(mark, 0, start) for mark in CLAUSE_BREAKS), default=-1) + 1
    rights = [position for mark in CLAUSE_BREAKS if (position := sentence.find(mark, end)) >= 0]
    return sentence[left: min(rights) if rights else len(sentence)].strip()


@lexicon_cache
def _pronouns() -> frozenset:
    return english_words()["pronouns"] | gazetteer().first_person_zh | frozenset({"你", "他", "她", "它", "你们", "他们", "她们"})


def _between_people(meta: dict, previous, following) -> bool:
    """True when the turn answers or is answered by another person, not an assistant: "Keep me posted!" to a
    friend is no instruction to the assistant (issue 18). A turn with no neighbour of another speaker (a note,
    `memctl remember`) may address the assistant."""
    return any(turn is not None and turn.meta["speaker"] and turn.meta["speaker"] != meta["speaker"]
               and not _assistant(turn.meta["speaker"]) for turn in (previous, following))


def _assistant(speaker: str | None) -> bool:
    """The assistant's "以后优先用中文回答你" acknowledges a wish; the wish is the user's, stated elsewhere."""
    return speaker is not None and normalize_text(speaker) in ASSISTANT_SPEAKERS


def _pronoun(name: str) -> bool:
    return name.lower() in _pronouns()
