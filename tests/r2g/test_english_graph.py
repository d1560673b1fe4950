"""Issue 18, English: Entities are names, a fact's common nouns are its words; misread predicates and roles;
instructions only to an assistant; habits that are deeds; the English slot statements of
memctl/r2g/slot_statements_en.py.

Sentences from the tune split of LoCoMo dev (conv-26, conv-30) or written for the test; none from held-out data.
"""

import pytest

from memctl.r2g.extract import extract
from memctl.r2g.preferences import find_preferences
from r2g_testkit import convert, ingest, nodes_of_type, write_jsonl

REF = "2023-05-10T14:00:00"


def _extract(sentence, speaker="Caroline"):
    return extract(sentence, lang="en", ref_time=REF, speaker=speaker)


def _roles(sentence, speaker="Caroline"):
    """(predicate, modality, {role: [(filler text, entity name or None)]}) of each fact."""
    result = _extract(sentence, speaker)
    return [(fact.predicate, fact.modality,
             {role: [(filler.text, result.entities[filler.entity].canonical if filler.entity is not None else None)
                     for filler in fillers] for role, fillers in fact.roles.items() if role != "TIME"})
            for fact in result.facts]


def _slots(sentence, speaker="Caroline"):
    return [(slot.subject, slot.slot, slot.value) for slot in _extract(sentence, speaker).slots]


@pytest.mark.parametrize("sentence, words", [
    ("I just signed up for a pottery class.", {"pottery class"}),
    ("I'm wrapping up the plan and looking for investors.", {"investors"}),
    ("Yesterday I took the kids to the museum.", {"kids", "museum"}),
])
def test_common_nouns_are_words_of_the_fact_not_entities(sentence, words):
    result = _extract(sentence)
    assert {entity.name for entity in result.entities} == {"I"}
    fillers = {filler.text for fact in result.facts for fillers in fact.roles.values() for filler in fillers
               if filler.entity is None and filler.time is None}
    assert fillers == words


@pytest.mark.parametrize("sentence, speaker, person", [
    ("I just contacted my mentor for adoption advice.", "Caroline", "Caroline's mentor"),
    ("My best friend lives in Vancouver now.", "Ann", "Ann's friend"),
    ("Melanie's kids love nature.", "Caroline", "Melanie's kids"),
])
def test_a_person_named_through_a_holder_is_that_holders(sentence, speaker, person):
    assert person in {(entity.canonical) for entity in _extract(sentence, speaker).entities
                      if entity.type == "Person"}


def test_names_places_and_languages_stay_entities():
    result = _extract("Jon flew to Paris and started learning Spanish with Gina.")
    assert {(entity.name, entity.type) for entity in result.entities} >= {
        ("Jon", "Person"), ("Paris", "Location"), ("Gina", "Person")}


@pytest.mark.parametrize("sentence, title", [
    ('I loved reading "Charlotte\'s Web" as a kid.', "Charlotte's Web"),
    ('I\'m currently reading "The Lean Startup" and hoping it\'ll give me tips for my biz.', "The Lean Startup"),
    ('We just did a contemporary piece called "Finding Freedom."', "Finding Freedom"),
])
def test_a_quoted_title_is_one_name_and_no_person(sentence, title):
    entities = {(entity.name, entity.type) for entity in _extract(sentence).entities}
    assert (title, "Other") in entities
    assert not {name for name, kind in entities if kind == "Person" and name in title}


@pytest.mark.parametrize("sentence, name", [
    ("I came across this cool rainbow sidewalk for Pride Month.", ("Pride Month", "Other")),
    ("Our group, 'Connected LGBTQ Activists', is made of all kinds of people.",
     ("Connected LGBTQ Activists", "Organization")),
])
def test_named_events_and_groups(sentence, name):
    entities = {(entity.name, entity.type) for entity in _extract(sentence).entities}
    assert name in entities and not {kind for _, kind in entities} & {"Person"}


@pytest.mark.parametrize("sentence, pet", [
    ("Thanks, Mel! And yup, I do- Oscar, my guinea pig.", "Oscar"),
    ("I took my dog Max to the vet.", "Max"),
])
def test_a_pets_name_is_no_person(sentence, pet):
    assert (pet, "Other") in {(entity.name, entity.type) for entity in _extract(sentence).entities}


@pytest.mark.parametrize("sentence, group", [("My team won first place.", "team"),
                                             ("I love giving my customers something different.", "customers")])
def test_a_group_is_no_person_of_its_holder(sentence, group):
    assert not [entity for entity in _extract(sentence).entities if group in entity.name]


def test_a_quoted_title_is_the_object_of_its_verb():
    [fact] = _roles('I loved "Becoming Nicole" by Amy Ellis Nutt.')
    assert fact[0] == "like" and fact[2]["PATIENT"] == [("Becoming Nicole", "Becoming Nicole")]


def test_an_unknown_name_before_a_common_noun_is_no_person():
    assert ("Perseid", "Person") not in {(entity.name, entity.type)
                                         for entity in _extract("We saw the Perseid meteor shower.").entities}


@pytest.mark.parametrize("sentence", [
    "I mentor a transgender teen just like me.",  # "like" after a noun is a preposition
    "I love that it teaches me to accept the beauty of imperfections.",  # the speaker is not its own object
    "It's been tough, but I'm living my true self.",  # live without a place
    "I'm living my dream by having my own dance studio.",
    "I'm after Marley flooring, which is what dance studios usually use.",  # a wh-clause has its own subject
])
def test_misread_predicates_and_holders_give_no_fact(sentence):
    assert [fact for fact in _roles(sentence) if fact[0] in ("like", "teach", "live_in", "dance")] == []


@pytest.mark.parametrize("sentence, predicate", [
    ("I really appreciate your help and motivation.", "appreciate_help"),  # thanks, a phatic verb
    ("It's all a process and I'm learning a ton.", "learn"),  # a quantity is no object
    ("We were all freaked when my son got into an accident.", "have"),  # a copula needs a place, not an accident
    ("But overall, I've learned that this biz is no cakewalk.", "learn"),  # a that-clause is no object
    ("I love the self-acceptance and love theme.", "like"),  # a reaction to what is shown
    ("I'd love to see another painting of yours!", "like"),  # a wish to see the other's work
    ("If you ever do it, let me know — I'd love to help in any way I can.", "like"),  # an offer
    ("Seeing my students succeed motivates me.", "succeed_motivate"),  # a group is no holder
    ("I'm working on my business and some new dance routines.", "dance"),  # a noun after an adjective
    ("I got some new offers and promotions going on my online store.", "go_to"),  # a participle of a noun
])
def test_misread_kinds_give_no_such_fact(sentence, predicate):
    assert predicate not in {fact[0] for fact in _roles(sentence)}


def test_the_speakers_thing_holds_a_fact_only_opening_the_sentence():
    facts = _roles("It sets goals and tracks my achievements and helps me find areas to improve.")
    assert all(("achievements", None) not in roles.get("AGENT", []) for _, _, roles in facts)
    assert ("crash", "continuative", {"AGENT": [("laptop", None)]}) in _roles("My laptop keeps freezing.")


@pytest.mark.parametrize("sentence, expected", [
    # a that-clause has its own subject: "you" chose, not the speaker
    ("I love that you chose pottery for your art.", []),
    # a negated copula denies no later verb
    ("I even got to let them know they're not alone by sharing my story.", [("share_story", False)]),
    ("I'm not going to the party.", [("go_to", True)]),  # a progressive: the speaker is the agent
    ("I'll keep ya posted.", []),  # ya is a pronoun
    ("I'll never forget the day my youngest took her first steps.", [("forget", True)]),  # her steps, not mine
])
def test_holders_and_negation_of_clauses(sentence, expected):
    result = _extract(sentence)
    assert [(fact.predicate, fact.negation) for fact in result.facts if "AGENT" in fact.roles] == expected


@pytest.mark.parametrize("sentence, filler", [
    ("I'm starting a dance studio 'cause I'm passionate about dancing.", "dance studio"),  # no stray quote
    ("I went to a LGBTQ support group yesterday.", "LGBTQ support group"),  # a compound noun, whole
    ("By the way, I went to a poetry reading last Fri - it was really powerful!", "poetry reading"),  # last: no verb
    ("I ran into a group of religious conservatives.", "group of religious conservatives"),  # a group of what
    ("Last Friday, I went to an LGBTQ+ counseling workshop.", "LGBTQ+ counseling workshop"),
])
def test_fillers_are_whole_phrases(sentence, filler):
    assert filler in {text for _, _, roles in _roles(sentence) for fillers in roles.values() for text, _ in fillers}


@pytest.mark.parametrize("sentence, fact", [
    ("I'm ready to be a mom and share my love and family.", ("share_love", "intention")),  # "and" shares it
    ("I'm still searching for a place to open my dance studio.", ("open", "intention")),  # a purpose
    ("I'm grateful for the chance to share my story.", ("share_story", None)),  # a chance taken, no purpose
    ("I'm so happy to see my words motivating you, Jon.", ("watch", None)),  # a feeling, no purpose
])
def test_a_modality_reaches_the_verb_it_governs(sentence, fact):
    assert fact in {fact[:2] for fact in _roles(sentence)}


@pytest.mark.parametrize("sentence, activity", [
    ("I love running my own studio.", "running my own studio"),
    ("I love camping trips with my fam.", "camping trips"),
    ("I love swimming.", "swimming"),
])
def test_the_activity_liked_is_whole(sentence, activity):
    [fact] = _roles(sentence)
    assert fact[0] == "like" and fact[2]["PATIENT"] == [(activity, None)]


def test_a_workplace_named_after_a_job_is_an_organisation():
    entities = {(entity.name, entity.type) for entity in
                _extract("Unfortunately, I also lost my job at Door Dash this month.").entities}
    assert ("Door Dash", "Organization") in entities


def test_a_plan_keeps_its_event():
    result = _extract("I wanna start a dance studio so I can teach others.")
    assert ("Caroline", "plan", "start a dance studio") in _slots("I wanna start a dance studio so I can teach others.")
    assert ("start", "intention") in {(fact.predicate, fact.modality) for fact in result.facts}


def test_the_object_of_help_does_the_next_verb():
    facts = _roles("I'm offering mentoring to help dancers reach their full potential.")
    assert "reach_potential" not in {fact[0] for fact in facts}  # the dancers reach it, not the speaker


@pytest.mark.parametrize("sentence, role", [
    ("I've known these friends for 4 years.", "CAUSE"),  # a duration
    ("I just launched an ad campaign for my clothing store.", "CAUSE"),  # for its good, no cause
    ("I've known them since I moved from my home country.", "LOCATION"),  # where from
    ("I got some promotions to try and bring in new customers.", "LOCATION"),  # an infinitive
])
def test_no_role_for_a_duration_an_origin_or_an_infinitive(sentence, role):
    assert all(role not in roles for _, _, roles in _roles(sentence))


def test_working_on_something_is_no_workplace():
    facts = _roles("I'm working on my online store, growing the customer base.")
    assert ("work", None, {"PATIENT": [("online store", None)], "AGENT": [("I", "Caroline")]}) in facts
    assert "work_at" not in {fact[0] for fact in facts}
    assert _roles("My sister works at Google as a designer.")[0][0] == "work_at"


def test_an_activity_is_no_destination():
    facts = _roles("I took the first step towards becoming a mom - I applied to adoption agencies!")
    assert all("LOCATION" not in roles for _, _, roles in facts)


def test_excited_to_is_an_intention():
    [fact] = _roles("I'm so excited to meet other people in the community.")
    assert fact[:2] == ("meet", "intention")


@pytest.mark.parametrize("sentence", ["I always feel so alive when I dance.", "I usually like them more.",
                                      "I always remember that day."])
def test_a_habit_word_before_a_feeling_is_no_habit(sentence):
    assert find_preferences(sentence, "en") == []


def test_a_dash_ends_a_tastes_object():
    [hit] = find_preferences("I'm a big fan of pottery - the creativity and skill is awesome.", "en")
    assert hit.object == "pottery"


def test_a_habit_is_a_deed():
    [hit] = find_preferences("I usually go running in the morning.", "en")
    assert (hit.kind, hit.object) == ("habit", "go running in the morning")


@pytest.mark.parametrize("sentence, expected", [
    ("My sister Anna lives in Paris.", ("Caroline", "sibling", "Anna")),
    ("My best friend Sarah got married.", ("Caroline", "friend", "Sarah")),
    ("I'm originally from Sweden.", ("Caroline", "hometown", "Sweden")),
    ("I grew up in Ohio.", ("Caroline", "hometown", "Ohio")),
    ("This necklace is a gift from my grandma in my home country, Sweden.", ("Caroline", "hometown", "Sweden")),
    ("Yeah, I play clarinet!", ("Caroline", "hobby", "clarinet")),
    ("I'm getting creative too, just learning the piano.", ("Caroline", "hobby", "piano")),
    ("I wanna start a dance studio so I can teach others.", ("Caroline", "plan", "start a dance studio")),
    ("Gonna continue my edu and check out career options.",
     ("Caroline", "plan", "continue my edu and check out career options")),
])
def test_english_slot_statements(sentence, expected):
    assert expected in _slots(sentence)


@pytest.mark.parametrize("sentence", [
    "I play with my kids every day.",  # no instrument
    "I'm from the future.",  # no place name
    "She is learning the piano.",  # not the speaker
    "Did you grow up in Ohio?",
    "My sister is great.",
    "I want to say thanks for everything.",  # a wish toward the other person
    "I hope to see you soon.",
    "I'll keep pushing and working to make my dreams happen.",
])
def test_no_slot_statement_without_its_form(sentence):
    assert [slot for slot in _slots(sentence) if slot[1] in ("hometown", "hobby", "sibling", "plan")] == []


def test_an_apposition_leaves_the_clause_to_the_other_statements():
    assert ("Anna", "residence", "Paris") in _slots("My sister Anna lives in Paris.")


def _preferences(tmp_path, home, turns):
    ingest(home, write_jsonl(tmp_path / "chat.jsonl", turns))
    convert(home)
    return sorted((node["props"]["attributes"]["kind"], node["props"]["attributes"]["object"])
                  for node in nodes_of_type(home, "Preference").values())


def test_an_instruction_between_people_is_no_preference(isolated_home, tmp_path):
    turns = [{"id": "t1", "speaker": "Jon", "ts": "2023-05-10T14:00:00", "text": "I got the studio!"},
             {"id": "t2", "speaker": "Gina", "ts": "2023-05-10T14:01:00",
              "text": "Keep me posted! I love dancing."}]
    assert _preferences(tmp_path, isolated_home, turns) == [("taste", "dancing")]


def test_an_instruction_to_the_assistant_stays(isolated_home, tmp_path):
    turns = [{"id": "t1", "speaker": "user", "ts": "2023-05-10T14:00:00",
              "text": "Please always answer in English."},
             {"id": "t2", "speaker": "assistant", "ts": "2023-05-10T14:01:00", "text": "Sure, I will."}]
    assert _preferences(tmp_path, isolated_home, turns) == [("instruction", "answer in English")]
