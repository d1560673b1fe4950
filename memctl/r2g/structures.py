"""What the language analysers hand to `extract`: mentions of things and the facts that link them."""

from __future__ import annotations

from dataclasses import dataclass, field

from memctl.model import normalize_text


@dataclass(slots=True)
class Mention:
    """A span of the sentence that names something: an entity, a pronoun, or a time expression."""

    text: str
    start: int
    end: int
    entity_type: str | None  # None for pronouns and times
    canonical: str = ""  # display name: the alias lexicon's canonical form, else the surface text
    aliases: tuple[str, ...] = ()
    confidence: float = 0.7
    pronoun: bool = False
    time_index: int | None = None  # index into the sentence's times for TIME fillers

    def __post_init__(self):
        if not self.canonical:
            self.canonical = self.text

    @property
    def normalized(self) -> str:
        return normalize_text(self.canonical)


@dataclass(slots=True)
class RawFact:
    """One event or state, before `extract` turns its role mentions into entity references."""

    predicate: str
    raw: str
    start: int
    end: int
    negation: bool = False
    modality: str | None = None
    from_lexicon: bool = False
    roles: dict[str, list[Mention]] = field(default_factory=dict)
    passive: bool = False  # the clause's subject is what the event happened to (PATIENT), not its AGENT

    def add_role(self, role: str, mention: Mention) -> None:
        fillers = self.roles.setdefault(role, [])
        if all((other.start, other.end) != (mention.start, mention.end) for other in fillers):
            fillers.append(mention)


@dataclass(slots=True)
class Analysis:
    """One sentence analysed by nlp_zh or nlp_en."""

    mentions: list[Mention]  # named entities found anywhere in the sentence
    facts: list[RawFact]
    tokens: list[tuple[str, str]]  # (surface, word class) for keywords: "noun", "verb", "name", "other"
