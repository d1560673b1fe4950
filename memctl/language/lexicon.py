"""The lexicons shipped in memctl/data, loaded once per process and turned into lookup tables.

Loading costs tens of milliseconds, so it happens on first use (never at import) and is cached. R2G reads every
table; recall reads the aliases, to find the stored Entity a query names by another form ("Win11" → "Windows
11", as R2G stored it). The files stay in memctl/data, the directory the `r2g.lexicon_directory` setting
stands in for.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from memctl.model import normalize_text

DATA_DIRECTORY = Path(__file__).resolve().parent.parent / "data"

_directory: Path | None = None  # the r2g.lexicon_directory setting in use
_caches: list = []  # what lexicon_cache functions remember, forgotten when the directory changes


def lexicon_cache(function):
    """functools.cache for what is read or derived from the lexicon files: use_directory forgets it."""
    cached = cache(function)
    _caches.append(cached)
    return cached


def use_directory(directory: str | None) -> None:
    """Read the lexicons from `directory` (setting r2g.lexicon_directory; None: the shipped memctl/data); a file
    missing there is read from memctl/data. Tables loaded from another directory are forgotten."""
    global _directory
    path = None if directory is None else Path(directory).expanduser()
    if path is not None and not path.is_dir():
        from engine.errors import InputError

        raise InputError("lexicon directory not found (setting r2g.lexicon_directory)", where=str(directory))
    if path != _directory:
        _directory = path
        for cached in _caches:
            cached.cache_clear()


def load_yaml(name: str):
    """The lexicon file `name` of the lexicon directory in use, else the shipped one."""
    path = DATA_DIRECTORY / name
    if _directory is not None and (_directory / name).is_file():
        path = _directory / name
    return read_yaml(path)


def load_yaml_layers(name: str) -> list:
    """The shipped lexicon file `name`, then the lexicon directory's file of that name when it has one: for a
    lexicon a user extends rather than replaces (slots.yaml)."""
    layers = [(DATA_DIRECTORY / name, read_yaml(DATA_DIRECTORY / name))]
    if _directory is not None and (_directory / name).is_file():
        layers.append((_directory / name, read_yaml(_directory / name)))
    return layers


def read_yaml(path: Path):
    """The parsed YAML file at `path`, kept across processes by memctl.language.parsed_lexicons."""
    from memctl.language.parsed_lexicons import cached

    return cached(str(path), _parse_yaml)


def _parse_yaml(path: str):
    import yaml

    # libyaml's parser reads the lexicons about ten times faster than the pure-Python one (2 s → 0.2 s).
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as handle:
        try:
            return yaml.load(handle, Loader=loader)
        except yaml.YAMLError as error:
            from engine.errors import InputError

            mark = getattr(error, "problem_mark", None)
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
            raise InputError(f"invalid lexicon YAML: {getattr(error, 'problem', None) or error}", where=where) from None


@dataclass(frozen=True, slots=True)
class AliasEntry:
    canonical: str
    entity_type: str
    aliases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Aliases:
    exact: dict  # surface form → AliasEntry (case-sensitive: "US" is a country, "us" a pronoun)
    folded: dict  # casefolded surface → AliasEntry, for forms that cannot be confused with ordinary words

    def lookup(self, surface: str) -> AliasEntry | None:
        entry = self.exact.get(surface)
        if entry is None:
            entry = self.folded.get(normalize_text(surface))
        return entry


@lexicon_cache
def aliases() -> Aliases:
    exact: dict[str, AliasEntry] = {}
    folded: dict[str, AliasEntry] = {}
    for canonical, spec in load_yaml("aliases.yaml").items():
        forms = tuple(dict.fromkeys([canonical, *spec.get("aliases", [])]))
        entry = AliasEntry(canonical, spec["type"], forms)
        for form in forms:
            exact.setdefault(form, entry)
            # Short all-capital forms (US, LA, IG) are only trusted as written.
            if not (form.isupper() and len(form) <= 3):
                folded.setdefault(normalize_text(form), entry)
    return Aliases(exact, folded)


@dataclass(frozen=True, slots=True)
class Gazetteer:
    given_names: frozenset
    locations: frozenset
    organizations: frozenset
    organization_heads: frozenset
    location_heads: frozenset
    person_titles: frozenset
    not_names: frozenset
    languages: frozenset
    place_nouns_en: frozenset
    place_nouns_zh: frozenset
    place_suffixes_zh: tuple
    organization_suffixes_zh: tuple
    place_name_suffixes_zh: tuple
    occupation_nouns_zh: frozenset
    person_nouns_en: frozenset
    person_nouns_zh: frozenset
    first_person_en: frozenset
    first_person_zh: frozenset


@lexicon_cache
def gazetteer() -> Gazetteer:
    data = load_yaml("gazetteer.yaml")
    folded = {"given_names", "locations", "organizations", "organization_heads", "location_heads",
              "person_titles", "not_names", "languages", "place_nouns_en", "person_nouns_en", "first_person_en"}
    values = {}
    for name, words in data.items():
        if name in folded:
            values[name] = frozenset(normalize_text(str(word)) for word in words)
        elif name.endswith("suffixes_zh"):
            values[name] = tuple(sorted(words, key=len, reverse=True))
        else:
            values[name] = frozenset(words)
    values["not_names"] = values["not_names"] | values["languages"]
    return Gazetteer(**values)


@lexicon_cache
def english_words() -> dict:
    data = load_yaml("en_words.yaml")
    lemma_of: dict[str, str] = {}
    for base, forms in data["irregular_verbs"].items():
        for form in forms:
            lemma_of.setdefault(form, base)
    verbs = frozenset(data["verbs"]) | frozenset(data["irregular_verbs"])
    return {
        "lemma_of": lemma_of,
        "irregular_forms": frozenset(lemma_of),
        "verbs": verbs,
        "catenatives": data["catenatives"],
        "modals": data["modals"],
        "negations": frozenset(data["negations"]),
        "auxiliaries": frozenset(data["auxiliaries"]),
        "pronouns": frozenset(data["pronouns"]),
        "subject_pronouns": frozenset(data["subject_pronouns"]),
        "determiners": frozenset(data["determiners"]),
        "prepositions": frozenset(data["prepositions"]),
        "particles": frozenset(data["particles"]),
        "conjunctions": frozenset(data["conjunctions"]),
        "non_objects": frozenset(data["non_objects"]),
        "light_nouns": frozenset(data["light_nouns"]),
        "interjections": frozenset(data["interjections"]),
        "content_free_predicates": frozenset(data["content_free_predicates"]),
    }


@lexicon_cache
def chinese_words() -> dict:
    data = load_yaml("zh_words.yaml")
    return {
        "negations": frozenset(data["negations"]),
        "modals": data["modals"],
        "location_prepositions": frozenset(data["location_prepositions"]),
        "localizers": frozenset(data["localizers"]),
        "motion_verbs": frozenset(data["motion_verbs"]),
        "aspect_particles": frozenset(data["aspect_particles"]),
        "stop_words": frozenset(data["stop_words"]),
        "pronouns": frozenset(data["pronouns"]),
    }


@lexicon_cache
def sentiment_lexicon() -> dict:
    data = load_yaml("sentiment.yaml")
    return {lang: {word: tuple(values) for word, values in words.items()} for lang, words in data.items()}
