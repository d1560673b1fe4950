"""The knowledge-update set: conversations in the LoCoMo shape in which people's attributes change over months.

    python tools/ku/generate.py OUT.json [--seed 19] [--conversations 40] [--split dev|heldout|dev2|all]
                                [--language en|zh|all]

Deterministic: the same seed and options write the same bytes. Each conversation (a LoCoMo sample, what
`memctl ingest --format locomo` reads) is two friends talking over 9-12 sessions a few weeks apart; the first
speaker lives two timelines, the second one. A timeline is one slot of one person (tools/ku/phrases: residence,
employer, job title, partner, relationship status, vehicle, phone, diet, school, manager; pets, sports, hobbies,
languages studied, likes) going through 2-3 values: the first stated as a state, each next one as a change at a
later session with its own time words ("last weekend", "since March", 上个月), which say when it happened.
A single-valued slot's value is sometimes ended first ("I handed in my notice at X") and the next one comes a
session later; a multi-valued slot accumulates its values and sometimes stops one ("I gave up tennis").
Around them: the value in force restated, asked about by the friend, former values mentioned in passing,
plans that are not changes, other people's changes, small talk.

Questions (`qa`), per timeline: `current` (the value in force at the question's time; evidence: the turns that
stated each value in force), `past` (the value in force at a month when an earlier one held; evidence: the
turn that stated it; `as_of`: the middle of that month) and `when` (when a value started, or for a stopped
multi-valued value when it stopped; evidence: the turn that said so; the answer at the time words' precision).
Each qa has question, answer, values (the values asked about: in force, held then, started or stopped), evidence
(dia_ids), category (4 for current, 2 for past and when), kind, slot, person, question_time (a few days after
the last session, in the sessions' date format) and as_of (past only). A sample's `roles` maps the dia_id of
every turn about a timeline to [role, person, slot], role one of state (a value stated or changed), end, stop,
restate, ask, passing, plan, other (someone else's value): what tools/ku/evaluate.py tells first results by.

Split: conversation i (0-based) of each language is held out when i % 3 == 2. A held-out conversation uses the
held-out phrasings, time words and values (tools/ku/phrasebook.py); a sample's `split` says which part it is in.
Beside them, half as many "dev2" conversations per language (sample ids ku-en-d2-001, …): a second held-out
part written later by other hands, with phrasings, time words and values of its own (tools/ku/phrases/
*.dev2.yaml, timewords' dev2 words); their random choices are seeded apart, so adding them changed no byte of
the dev and held-out conversations.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.ku import timewords  # noqa: E402
from tools.ku.phrasebook import entries, fill, phrasebook, placeholders, values  # noqa: E402

DEFAULT_SEED = 19
DEFAULT_CONVERSATIONS = 40  # per language: 3 timelines each, 240 timelines over both languages
LANGUAGES = ("en", "zh")


@dataclass
class Version:
    value: str
    session: int  # where the statement is made
    began: timewords.Moment  # when it started: a change's time words; a first value: the statement's month
    dia: str = ""
    until: date | None = None  # the first day it no longer held
    closed: int | None = None  # the session that ends, replaces or stops it
    stopped: timewords.Moment | None = None  # multi-valued: when it was stopped
    stop_dia: str = ""


@dataclass
class Timeline:
    person: str
    other: str
    slot: str
    multi: bool
    versions: list = field(default_factory=list)
    spare: list = field(default_factory=list)  # values outside the timeline, for plans and other people


@dataclass
class Turn:
    speaker: str
    text: str
    tag: tuple | None = None  # (timeline index, role, value) of a turn about a timeline


class Conversation:
    """One sample being written: its sessions' dates and, per session, the turns planned for it."""

    def __init__(self, language: str, index: int, seed: int, dev2: bool = False):
        self.language = language
        self.index = index
        self.split = "dev2" if dev2 else "heldout" if index % 3 == 2 else "dev"
        self.held_out = self.split == "heldout"
        self.random = random.Random(f"{seed}:{language}:dev2:{index}" if dev2 else f"{seed}:{language}:{index}")
        self.book = phrasebook(language, dev2)
        count = self.random.randint(9, 12)
        day = date(2022, 1, 3) + timedelta(days=self.random.randint(0, 540))
        self.days = []
        for _ in range(count):
            self.days.append(day)
            day += timedelta(days=self.random.randint(18, 45))
        self.planned: list = [[] for _ in range(count)]  # per session: [turn group], each a list of Turn
        self.said: set = set()  # statements already written: a conversation does not repeat itself
        self.timelines: list = []

    # --- choosing --------------------------------------------------------------------------------------------

    def pick(self, items: list):
        return self.random.choice(entries(items, self.held_out))

    def phrase(self, slot: str, kind: str, fields: dict) -> str:
        """A filled template of the slot's `kind`, among those that need no field `fields` does not give; one
        not written yet in this conversation when there is one."""
        templates = entries(self.book["slots"][slot][kind], self.held_out)
        usable = [template for template in templates if placeholders(template) <= set(fields)]
        self.random.shuffle(usable)
        texts = [fill(template, self.language, fields) for template in usable]
        text = next((text for text in texts if text not in self.said), texts[0])
        self.said.add(text)
        return text

    # --- planning a timeline ----------------------------------------------------------------------------------

    def plan(self, person: str, other: str, slot: str) -> None:
        spec = self.book["slots"][slot]
        timeline = Timeline(person, other, slot, bool(spec["multi"]))
        count = len(self.days)
        first = self.random.randint(0, 1)
        chosen, timeline.spare = self._values(spec, self.random.choice((2, 3)))
        changes = self._change_sessions(first, count, len(chosen) - 1)
        number = len(self.timelines)
        self.timelines.append(timeline)
        self._state_first(number, timeline, chosen[0], first)
        for value, session in zip(chosen[1:], changes):
            self._state_change(number, timeline, value, session)
        if timeline.multi and self.random.random() < 0.5:
            self._stop(number, timeline)
        self._distractors(number, timeline)

    def _change_sessions(self, first: int, count: int, wanted: int) -> list:
        for changes in range(wanted, 0, -1):
            candidates = list(range(first + 2, count - 1))
            for _ in range(50):
                sessions = sorted(self.random.sample(candidates, changes)) if len(candidates) >= changes else []
                if sessions and all(later - earlier >= 2 for earlier, later in zip([first] + sessions, sessions)):
                    return sessions
        raise ValueError("a conversation too short for a change")

    def _values(self, spec: dict, versions: int) -> tuple:
        """(the values the timeline goes through, two values outside it)."""
        if "chains" in spec:
            chain = self.random.choice(values(spec["chains"], self.held_out))
            length = min(versions, len(chain))
            start = self.random.randint(0, len(chain) - length)
            taken = chain[start:start + length]
            statuses = sorted({status for item in values(spec["chains"], self.held_out) for status in item})
            others = [status for status in statuses if status not in taken]
            return taken, self.random.sample(others, 2)
        chosen = self.random.sample(values(spec["values"], self.held_out), versions + 2)
        return chosen[:versions], chosen[versions:]

    def _state_first(self, number: int, timeline: Timeline, value: str, session: int) -> None:
        version = Version(value, session, timewords.Moment(self.days[session].replace(day=1), "month"))
        timeline.versions.append(version)
        text = self.phrase(timeline.slot, "set", self._fields(timeline, v=value))
        self._add(session, [Turn(timeline.person, text, (number, "state", value)), self._reaction(timeline)])

    def _state_change(self, number: int, timeline: Timeline, value: str, session: int) -> None:
        previous = timeline.versions[-1] if not timeline.multi else None
        after = self.days[session - 1]  # nothing after the previous session tells of the change
        if previous is not None and self.random.random() < 0.35 and session - 1 > previous.session:
            end_session = session - 1
            text = self.phrase(timeline.slot, "end", self._fields(timeline, old=previous.value))
            self._add(end_session, [Turn(timeline.person, text, (number, "end", previous.value)),
                                    self._reaction(timeline)])
            previous.until, previous.closed = self.days[end_session], end_session
            after = self.days[end_session]
        said = self.random.choice(timewords.choices(self.language, self.split, self.days[session], after))
        fields = self._fields(timeline, v=value, t=said.point)
        if said.since:
            fields["s"] = said.since
        if previous is not None:
            fields["old"] = previous.value
            previous.until = previous.until or said.moment.start
            previous.closed = previous.closed if previous.closed is not None else session
        text = self.phrase(timeline.slot, "change", fields)
        version = Version(value, session, said.moment)
        timeline.versions.append(version)
        self._add(session, [Turn(timeline.person, text, (number, "state", value)), self._reaction(timeline)])

    def _stop(self, number: int, timeline: Timeline) -> None:
        busy = {version.session for version in timeline.versions}
        later = range(timeline.versions[1].session + 1, len(self.days))
        sessions = [session for session in later if session not in busy]
        if not sessions:
            return
        session = self.random.choice(sessions)
        version = timeline.versions[0]
        said = self.random.choice(timewords.choices(self.language, self.split, self.days[session],
                                                    self.days[session - 1]))
        fields = self._fields(timeline, v=version.value, t=said.point)
        if said.since:
            fields["s"] = said.since
        text = self.phrase(timeline.slot, "end", fields)
        version.stopped, version.until, version.closed = said.moment, said.moment.start, session
        self._add(session, [Turn(timeline.person, text, (number, "stop", version.value)), self._reaction(timeline)])

    def _distractors(self, number: int, timeline: Timeline) -> None:
        for version in timeline.versions:
            for session in range(version.session + 1, len(self.days) if version.closed is None else version.closed):
                if self.random.random() < 0.25:
                    text = self.phrase(timeline.slot, "restate", self._fields(timeline, v=version.value))
                    group = [Turn(timeline.person, text, (number, "restate", version.value))]
                    if self.random.random() < 0.4:
                        asked = self.phrase(timeline.slot, "ask", self._fields(timeline, v=version.value))
                        group.insert(0, Turn(timeline.other, asked, (number, "ask", version.value)))
                    self._add(session, group)
            if version.closed is not None and not timeline.multi:
                later = list(range(version.closed + 1, len(self.days)))
                if later and self.random.random() < 0.7:
                    text = self.phrase(timeline.slot, "passing", self._fields(timeline, old=version.value))
                    turn = Turn(timeline.person, text, (number, "passing", version.value))
                    self._add(self.random.choice(later), [turn])
        plan_value, other_value = timeline.spare[:2]
        text = self.phrase(timeline.slot, "plan", self._fields(timeline, x=plan_value))
        self._add(self.random.randrange(len(self.days)), [Turn(timeline.person, text, (number, "plan", plan_value)),
                                                          self._reaction(timeline)])
        session = self.random.randrange(1, len(self.days))
        said = self.random.choice(timewords.choices(self.language, self.split, self.days[session],
                                                    self.days[session - 1]))
        relative = self.random.choice(values(self.book["relatives"], self.held_out))
        fields = self._fields(timeline, x=other_value, t=said.point, who=relative)
        if said.since:
            fields["s"] = said.since
        self._add(session, [Turn(timeline.person, self.phrase(timeline.slot, "other", fields),
                                 (number, "other", other_value)), self._reaction(timeline)])

    def _fields(self, timeline: Timeline, **fields) -> dict:
        return {"name": timeline.person, "other": timeline.other, **fields}

    def _reaction(self, timeline: Timeline) -> Turn:
        return Turn(timeline.other, self.pick(self.book["reactions"]))

    def _add(self, session: int, group: list) -> None:
        self.planned[session].append(group)

    # --- writing ----------------------------------------------------------------------------------------------

    def sample(self, speakers: tuple) -> dict:
        conversation = {"speaker_a": speakers[0], "speaker_b": speakers[1]}
        self.dias: dict = {}  # (timeline index, role, value) → dia_id of statements
        self.roles: dict = {}  # dia_id → [role, person, slot] of every turn about a timeline
        for session, groups in enumerate(self.planned):
            number = session + 1
            conversation[f"session_{number}_date_time"] = self.date_text(self.days[session], session)
            conversation[f"session_{number}"] = self._session_turns(number, groups, speakers)
        for number, timeline in enumerate(self.timelines):
            for version in timeline.versions:
                version.dia = self.dias[(number, "state", version.value)]
                if version.stopped is not None:
                    version.stop_dia = self.dias[(number, "stop", version.value)]
        prefix = "d2-" if self.split == "dev2" else ""
        return {"sample_id": f"ku-{self.language}-{prefix}{self.index + 1:03d}", "lang": self.language,
                "split": self.split,
                "conversation": conversation, "qa": self._questions(), "roles": self.roles}

    def _session_turns(self, number: int, groups: list, speakers: tuple) -> list:
        opener = self.random.randrange(2)
        turns = [Turn(speakers[opener], fill(self.pick(self.book["greetings"]), self.language,
                                             {"other": speakers[1 - opener]})),
                 Turn(speakers[1 - opener], fill(self.pick(self.book["greetings"]), self.language,
                                                 {"other": speakers[opener]}))]
        talk = [[Turn(speakers[first], line), Turn(speakers[1 - first], answer)]
                for line, answer in self.random.sample(values(self.book["small_talk"], self.held_out), 2)
                for first in (self.random.randrange(2),)]
        ordered = list(groups)
        self.random.shuffle(ordered)
        for group in talk:
            ordered.insert(self.random.randint(0, len(ordered)), group)
        turns += [turn for group in ordered for turn in group]
        turns.append(Turn(speakers[self.random.randrange(2)], self.pick(self.book["farewells"])))
        out = []
        for position, turn in enumerate(turns, start=1):
            dia = f"D{number}:{position}"
            if turn.tag is not None:
                timeline = self.timelines[turn.tag[0]]
                self.dias.setdefault(turn.tag, dia)
                self.roles[dia] = [turn.tag[1], timeline.person, timeline.slot]
            out.append({"speaker": turn.speaker, "dia_id": dia, "text": turn.text})
        return out

    def date_text(self, day: date, session: int) -> str:
        hour, minute = 8 + (session * 7 + self.index) % 13, (session * 17 + self.index * 7) % 60
        if self.language == "zh":
            return f"{day.year}年{day.month:02d}月{day.day:02d}日 周{timewords.ZH_WEEKDAYS[day.weekday()]} " \
                   f"{hour:02d}:{minute:02d}"
        suffix = "am" if hour < 12 else "pm"
        month = timewords.EN_MONTHS[day.month - 1]
        return f"{(hour - 1) % 12 + 1}:{minute:02d} {suffix} on {day.day} {month}, {day.year}"

    # --- questions --------------------------------------------------------------------------------------------

    def _questions(self) -> list:
        asked_on = self.days[-1] + timedelta(days=self.random.randint(1, 20))
        moment = self.date_text(asked_on, len(self.days))
        out = []
        for timeline in self.timelines:
            out += [dict(qa, slot=timeline.slot, person=timeline.person, question_time=moment)
                    for qa in self._timeline_questions(timeline, asked_on)]
        return out

    def _timeline_questions(self, timeline: Timeline, asked_on: date) -> list:
        spec = self.book["slots"][timeline.slot]
        names = {"name": timeline.person}
        in_force = [version for version in timeline.versions if version.until is None]
        out = [{"question": self._ask(spec["current"], names), "answer": self._join([v.value for v in in_force]),
                "values": [version.value for version in in_force], "evidence": [version.dia for version in in_force],
                "category": 4, "kind": "current"}]
        past = self._past(timeline)
        if past is not None:
            version, month = past
            out.append({"question": self._ask(spec["past"], {**names, "month": timewords.month_words(
                self.language, month)}), "answer": version.value, "values": [version.value],
                "evidence": [version.dia], "category": 2,
                "kind": "past", "as_of": month.replace(day=15).isoformat()})
        changed = self.random.choice(timeline.versions[1:])
        out.append({"question": self._ask(spec["when"], {**names, "v": changed.value}),
                    "answer": timewords.moment_words(self.language, changed.began),
                    "values": [changed.value], "evidence": [changed.dia], "category": 2, "kind": "when"})
        for version in timeline.versions:
            if version.stopped is not None:
                out.append({"question": self._ask(spec["when_stop"], {**names, "v": version.value}),
                            "answer": timewords.moment_words(self.language, version.stopped), "values": [version.value],
                            "evidence": [version.stop_dia],
                            "category": 2, "kind": "when"})
        return out

    def _past(self, timeline: Timeline):
        """(an earlier version, a month wholly inside its time) or None. Multi-valued: the first value before
        the second one came, when it was the only one."""
        candidates = timeline.versions[:1] if timeline.multi else timeline.versions[:-1]
        options = []
        for version in candidates:
            until = timeline.versions[1].began.start if timeline.multi else version.until
            # A first value held all the month it was stated in; a later one from the month after its change.
            first = version is timeline.versions[0]
            month = version.began.start if first else timewords.next_month(version.began.start)
            while timewords.next_month(month) <= until:
                options.append((version, month))
                month = timewords.next_month(month)
        return self.random.choice(options) if options else None

    def _ask(self, templates: list, fields: dict) -> str:
        return fill(self.random.choice(entries(templates, self.held_out)), self.language, fields)

    def _join(self, answers: list) -> str:
        return ("、" if self.language == "zh" else ", ").join(answers)


def conversation(language: str, index: int, seed: int, dev2: bool = False) -> dict:
    writer = Conversation(language, index, seed, dev2)
    names = writer.random.sample(writer.book["names"], 2)
    slots = list(writer.book["slots"])
    first, second = writer.random.sample(slots, 2), writer.random.sample(slots, 1)
    for person, other, chosen in ((names[0], names[1], first), (names[1], names[0], second)):
        for slot in chosen:
            writer.plan(person, other, slot)
    return writer.sample(tuple(names))


def generate(seed: int = DEFAULT_SEED, conversations: int = DEFAULT_CONVERSATIONS, split: str = "all",
             languages: tuple = LANGUAGES) -> list:
    """The samples of `split` (dev, heldout, dev2 or all): per language `conversations` dev and held-out ones,
    then half as many dev2 ones."""
    samples = []
    for language in languages:
        if split != "dev2":
            samples += [conversation(language, index, seed) for index in range(conversations)]
        if split in ("all", "dev2"):
            samples += [conversation(language, index, seed, dev2=True) for index in range(conversations // 2)]
    return [sample for sample in samples if split in ("all", sample["split"])]


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the JSON file to write (- for stdout)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--conversations", type=int, default=DEFAULT_CONVERSATIONS, help="per language")
    parser.add_argument("--split", choices=("dev", "heldout", "dev2", "all"), default="all")
    parser.add_argument("--language", choices=LANGUAGES + ("all",), default="all")
    arguments = parser.parse_args(argv)
    languages = LANGUAGES if arguments.language == "all" else (arguments.language,)
    text = json.dumps(generate(arguments.seed, arguments.conversations, arguments.split, languages),
                      ensure_ascii=False, indent=1)
    if arguments.out == "-":
        print(text)
    else:
        Path(arguments.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
