"""The lexicon of the mini corpus' English grammar: ``lexicon.yaml``, checked and compiled.

``lexicon.yaml`` beside this module holds the grammar's words and probability tables: nouns,
adjectives and verbs with their semantic tags, verb frames, determiners, prepositional-phrase
rules, discourse markers, weights and the ``P_*`` probabilities.  :func:`load_lexicon` reads
it once at import and checks every table, and that the tags and subordinators a table names
exist in the tables that define them; a malformed value raises ValueError naming the file,
table, entry and field.  Each table is then a constant here, in the form the rules of
:mod:`simul.corpus.mini.grammar` use, and the entries the rules draw are compiled from them:
nouns with their plurals (:data:`NOUNS`), adjectives, verb frames (:data:`FRAMES`) with every
verb's inflected forms (:data:`VERB_FORMS`), preposition rules, and the article of a word
(:func:`article`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

# Depth of embedding (0 = main clause) from which the depth-indexed probabilities stop changing.
MAX_DEPTH = 3

#: The lexicon and probability tables, read once below.
LEXICON_PATH = Path(__file__).with_name("lexicon.yaml")

# Names the grammar's rules dispatch on: the tables keyed by them are checked against them.
_TIME_NAMES = ("past", "present", "future")
_TENSE_NAMES = ("pres", "past", "fut", "prog", "pastprog", "perf")
_CLAUSE_KIND_NAMES = (
    "trans", "intr", "motion", "prep", "place", "ditr", "copula", "there", "that", "inf", "weather",
)
_WH_NAMES = ("what", "who", "where", "when", "why", "how")
_MARKER_CONDITIONS = ("", "positive", "negative", *_TIME_NAMES)

# Tenses of the clauses without a progressive (the copula, stative verbs): the simple tense.
STATIVE_TENSE = {"prog": "pres", "pastprog": "past"}


# --------------------------------------------------------------------------------------------
# Reading the lexicon file.  Each table of the file has a check that validates it and converts
# it to the tuples (or dicts of tuples) the rules use; a bad value raises ValueError naming
# the file, the table, the entry and the field.
# --------------------------------------------------------------------------------------------

_Check = Callable[[Any, str], Any]


class _Invalid(Exception):
    """A bad value in the lexicon file; the message names the table, entry and field."""


class _UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """PyYAML's safe loader, but a key given twice in one mapping is an error (not the last
    one silently winning)."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, list | dict):
            continue  # unhashable: construct_mapping reports it
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark,
                f"found duplicate key {key!r}", key_node.start_mark,
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=True)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping
)

_WORD = re.compile(r"[a-z]+|I")
_PHRASE = re.compile(r"(?:[a-z]+|I)(?: [a-z]+)*")
_TAG_LIST = re.compile(r"[a-z_]+(?: [a-z_]+)*")


def _got(value: Any) -> str:
    if isinstance(value, bool):
        return f"{value!r} (YAML reads yes, no, on, off as booleans: quote such words)"
    return repr(value)


def _text(pattern: re.Pattern[str], expected: str, *, empty: bool = False) -> _Check:
    def check(value: Any, where: str) -> str:
        if isinstance(value, str) and (pattern.fullmatch(value) or (empty and value == "")):
            return value
        raise _Invalid(f"{where}: expected {expected}, got {_got(value)}")

    return check


_word = _text(_WORD, "a lower-case word")
_optional_word = _text(_WORD, 'a lower-case word or ""', empty=True)
_phrase = _text(_PHRASE, "lower-case words separated by single spaces")
_tag_list = _text(_TAG_LIST, "tags separated by single spaces")


def _tag_set(value: Any, where: str) -> frozenset[str]:
    return frozenset(_tag_list(value, where).split())


def _words_of(value: Any, where: str) -> tuple[str, ...]:
    return tuple(_phrase(value, where).split())


def _one_of(names: Sequence[str]) -> _Check:
    def check(value: Any, where: str) -> str:
        if isinstance(value, str) and value in names:
            return value
        raise _Invalid(f"{where}: expected one of {', '.join(map(repr, names))}, got {_got(value)}")

    return check


def _integer(low: int, high: int) -> _Check:
    def check(value: Any, where: str) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return value
        raise _Invalid(f"{where}: expected an integer from {low} to {high}, got {_got(value)}")

    return check


def _boolean(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    raise _Invalid(f"{where}: expected true or false, got {value!r}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _weight(value: Any, where: str) -> float:
    if _is_number(value) and value >= 0:
        return value
    raise _Invalid(f"{where}: expected a weight (a number >= 0), got {_got(value)}")


def _probability(value: Any, where: str) -> float:
    if _is_number(value) and 0 <= value <= 1:
        return value
    raise _Invalid(f"{where}: expected a probability from 0 to 1, got {_got(value)}")


def _sequence(item: _Check) -> _Check:
    def check(value: Any, where: str) -> tuple[Any, ...]:
        if not isinstance(value, list) or not value:
            raise _Invalid(f"{where}: expected a non-empty list, got {_got(value)}")
        return tuple(item(element, f"{where}[{i}]") for i, element in enumerate(value))

    return check


def _depth_probabilities(value: Any, where: str) -> tuple[float, ...]:
    if not isinstance(value, list) or len(value) != MAX_DEPTH + 1:
        raise _Invalid(
            f"{where}: expected a list of {MAX_DEPTH + 1} probabilities (depth 0 to "
            f"{MAX_DEPTH}), got {_got(value)}"
        )
    return _sequence(_probability)(value, where)


def _rows(*fields: tuple[str, _Check]) -> _Check:
    """A list of rows ``[field, ...]``, each a tuple of the checked fields."""
    names = ", ".join(name for name, _ in fields)

    def row(value: Any, where: str) -> tuple[Any, ...]:
        if isinstance(value, list) and value and isinstance(value[0], str):
            where = f"{where} ({value[0]})"
        if not isinstance(value, list) or len(value) != len(fields):
            raise _Invalid(f"{where}: expected [{names}], got {_got(value)}")
        return tuple(
            check(element, f"{where}: {name}")
            for (name, check), element in zip(fields, value, strict=True)
        )

    return _sequence(row)


def _mapping(key: _Check, value: _Check, required: Sequence[str] = ()) -> _Check:
    """A mapping with keys checked by ``key`` (all of ``required`` among them), in file order."""

    def check(data: Any, where: str) -> dict[Any, Any]:
        if not isinstance(data, dict) or not data:
            raise _Invalid(f"{where}: expected a non-empty mapping, got {_got(data)}")
        missing = [name for name in required if name not in data]
        if missing:
            raise _Invalid(f"{where}: missing {', '.join(map(repr, missing))}")
        return {key(k, f"{where}: key"): value(v, f"{where}: {k}") for k, v in data.items()}

    return check


def _weights(key: _Check, required: Sequence[str] = ()) -> _Check:
    """A mapping of items to weights: a tuple of (item, weight) in file order."""
    mapping = _mapping(key, _weight, required)

    def check(data: Any, where: str) -> tuple[tuple[Any, float], ...]:
        table = tuple(mapping(data, where).items())
        if not sum(weight for _, weight in table) > 0:
            raise _Invalid(f"{where}: the weights sum to 0")
        return table

    return check


def _check_names(where: str, data: dict[Any, Any], names: Sequence[str]) -> None:
    missing = [name for name in names if name not in data]
    unknown = [name for name in data if name not in names]
    if missing or unknown:
        problems = [f"missing {name!r}" for name in missing]
        problems += [f"unknown {name!r}" for name in unknown]
        raise _Invalid(f"{where}: {', '.join(problems)} (expected {', '.join(names)})")


def _record(fields: dict[str, _Check]) -> _Check:
    """A mapping with exactly the keys of ``fields``, each value checked by its field's check."""
    names = tuple(fields)

    def check(data: Any, where: str) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise _Invalid(f"{where}: expected a mapping, got {_got(data)}")
        _check_names(where, data, names)
        return {name: fields[name](value, f"{where}: {name}") for name, value in data.items()}

    return check


def _pre_adverbs(data: Any, where: str) -> dict[tuple[str, bool], tuple[str, ...]]:
    """``{tense: {statement: [...], question: [...]}}`` → ``{(tense, is_question): (...)}``."""
    moods = _record({"statement": _sequence(_word), "question": _sequence(_word)})
    tables = _mapping(_one_of(_TENSE_NAMES), moods, _TENSE_NAMES)(data, where)
    return {
        (tense, question): table[mood]
        for tense, table in tables.items()
        for question, mood in ((False, "statement"), (True, "question"))
    }


def _subordinate_tenses(
    data: Any, where: str
) -> dict[tuple[str, str], tuple[tuple[str, float], ...]]:
    """``{subordinator: {time: {tense: weight}}}`` → ``{(subordinator, time): weights}``."""
    by_time = _mapping(_one_of(_TIME_NAMES), _weights(_one_of(_TENSE_NAMES)))
    tables = _mapping(_word, by_time)(data, where)
    return {(word, time): table for word, times in tables.items() for time, table in times.items()}


_PROBABILITIES = (
    "plural", "ground_plural", "very", "subject_pronoun", "object_pronoun", "adverb", "negative",
    "subordinate_negative", "yes_no", "wh", "subordinate", "coordination", "vp_coordination",
    "front_time", "question_subordinate", "which", "marker", "question_marker", "vocative",
    "fourth_item", "list_with_i", "adjective_list",
)
_DEPTH_PROBABILITIES = (
    "adjective", "two_adjectives", "noun_pp", "relative", "coordinated_subject", "location",
    "manner", "companion", "time", "list_subject", "list_object", "nonrestrictive",
)

_VERB = ("verb", _word)
_SUBJECT = ("subject tags", _tag_list)
# The tables of the lexicon file and their checks, in file order.
_SCHEMA: dict[str, _Check] = {
    "count_nouns": _rows(("singular", _word), ("plural", _optional_word), ("tags", _tag_list)),
    "mass_nouns": _rows(("word", _word), ("tags", _tag_list)),
    "adjectives": _rows(
        ("word", _word), ("rank", _integer(0, 3)), ("tags", _tag_list), ("gradable", _boolean)
    ),
    "weather_adjectives": _sequence(_word),
    "weather_verbs": _sequence(_word),
    "irregular_verbs": _rows(("base", _word), ("past", _word), ("participle", _word)),
    "doubling_verbs": _sequence(_word),
    "stative_verbs": _sequence(_word),
    "intransitive": _rows(_VERB, _SUBJECT),
    "motion": _rows(_VERB, _SUBJECT),
    "transitive": _rows(_VERB, _SUBJECT, ("object tags", _tag_list)),
    "prepositional": _rows(
        _VERB, ("preposition", _word), _SUBJECT, ("object tags", _tag_list)
    ),
    "place_verbs": _rows(_VERB, ("preposition", _word), _SUBJECT, ("place tags", _tag_list)),
    "ditransitive": _rows(
        _VERB, ("preposition", _word), _SUBJECT, ("recipient tags", _tag_list),
        ("theme tags", _tag_list),
    ),
    "that_verbs": _rows(_VERB, _SUBJECT, ("takes a recipient", _boolean)),
    "infinitive_verbs": _rows(_VERB, _SUBJECT),
    "event_verbs": _sequence(_word),
    "subject_pronouns": _rows(
        ("word", _word), ("person", _integer(1, 3)), ("plural", _boolean), ("weight", _weight)
    ),
    "object_pronouns": _rows(("word", _word), ("person", _integer(1, 3)), ("plural", _boolean)),
    "singular_determiners": _weights(_optional_word),
    "plural_determiners": _weights(_optional_word),
    "mass_determiners": _weights(_optional_word),
    "indefinite_plural_determiners": _weights(_optional_word),
    "indefinite_mass_determiners": _weights(_optional_word),
    "ground_singular_determiners": _weights(_optional_word),
    "ground_plural_determiners": _weights(_optional_word),
    "ground_mass_determiners": _weights(_optional_word),
    "definite_determiners": _sequence(_word),
    "a_before_vowel": _sequence(_word),
    "an_before_consonant": _sequence(_word),
    "noun_pps": _rows(
        ("host tags", _tag_list), ("preposition", _word), ("ground tags", _tag_list),
        ("weight", _weight),
    ),
    "locations": _rows(
        ("locatum tags", _tag_list), ("preposition", _word), ("ground tags", _tag_list),
        ("weight", _weight),
    ),
    "locatum_tags": _tag_set,
    "agent_tags": _tag_set,
    "predicable_tags": _tag_set,
    "transport": _sequence(_words_of),
    "transport_verbs": _sequence(_word),
    "into_verbs": _sequence(_word),
    "manner_adverbs": _sequence(_word),
    "times": _weights(_one_of(_TIME_NAMES), _TIME_NAMES),
    "tenses": _mapping(_one_of(_TIME_NAMES), _weights(_one_of(_TENSE_NAMES)), _TIME_NAMES),
    "time_adverbials": _mapping(_one_of(_TENSE_NAMES), _sequence(_phrase), _TENSE_NAMES),
    "pre_adverbs": _pre_adverbs,
    "copula_adverbs": _mapping(
        _one_of(_TENSE_NAMES), _sequence(_word),
        tuple(tense for tense in _TENSE_NAMES if tense not in STATIVE_TENSE),
    ),
    "subordinators": _weights(_word),
    "subordinate_tenses": _subordinate_tenses,
    "clause_kinds": _weights(_one_of(_CLAUSE_KIND_NAMES)),
    "embedded_kinds": _weights(_one_of(_CLAUSE_KIND_NAMES)),
    "wh_words": _weights(_one_of(_WH_NAMES)),
    "discourse_markers": _rows(
        ("marker", _phrase), ("weight", _weight), ("condition", _one_of(_MARKER_CONDITIONS))
    ),
    "question_markers": _weights(_phrase),
    "vocatives": _weights(_phrase),
    "probabilities": _record(
        dict.fromkeys(_PROBABILITIES, _probability)
        | dict.fromkeys(_DEPTH_PROBABILITIES, _depth_probabilities)
    ),
}

# The columns of tables that name tags, each of which must be carried by some noun.
_TAG_COLUMNS: dict[str, tuple[int, ...]] = {
    "adjectives": (2,), "intransitive": (1,), "motion": (1,), "transitive": (1, 2),
    "prepositional": (2, 3), "place_verbs": (2, 3), "ditransitive": (2, 3, 4),
    "that_verbs": (1,), "infinitive_verbs": (1,), "noun_pps": (0, 2), "locations": (0, 2),
}


def _check_references(tables: dict[str, Any]) -> None:
    """Cross-table checks: tags name noun tags, subordinate tenses name subordinators."""
    noun_tags = {tag for _, _, tags in tables["count_nouns"] for tag in tags.split()}
    noun_tags.update(tag for _, tags in tables["mass_nouns"] for tag in tags.split())
    for name, columns in _TAG_COLUMNS.items():
        for i, row in enumerate(tables[name]):
            for column in columns:
                unknown = sorted(set(row[column].split()) - noun_tags)
                if unknown:
                    raise _Invalid(
                        f"{name}[{i}] ({row[0]}): tag {unknown[0]!r} is on no noun"
                    )
    for name in ("locatum_tags", "agent_tags", "predicable_tags"):
        unknown = sorted(tables[name] - noun_tags)
        if unknown:
            raise _Invalid(f"{name}: tag {unknown[0]!r} is on no noun")
    subordinators = {word for word, _ in tables["subordinators"]}
    for word, _ in tables["subordinate_tenses"]:
        if word not in subordinators:
            raise _Invalid(f"subordinate_tenses: {word!r} is not in subordinators")


def load_lexicon(path: str | Path) -> dict[str, Any]:
    """The checked tables of the lexicon file at ``path``, by name (see ``_SCHEMA``).

    Raises ValueError naming the file and the table, entry and field at fault.
    """
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as stream:
            data = yaml.load(stream, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not valid YAML: {error}") from None
    try:
        if not isinstance(data, dict):
            raise _Invalid(f"expected a mapping of tables, got {_got(data)}")
        _check_names("tables", data, tuple(_SCHEMA))
        tables = {name: check(data[name], name) for name, check in _SCHEMA.items()}
        _check_references(tables)
    except _Invalid as error:
        raise ValueError(f"{path}: {error}") from None
    return tables


# --------------------------------------------------------------------------------------------
# The lexicon's tables, as the rules use them (see lexicon.yaml for what each one holds).
# --------------------------------------------------------------------------------------------

_LEXICON = load_lexicon(LEXICON_PATH)

# Nouns: (singular, plural or "" for the regular plural, tags) and (word, tags).
COUNT_NOUNS: tuple[tuple[str, str, str], ...] = _LEXICON["count_nouns"]
MASS_NOUNS: tuple[tuple[str, str], ...] = _LEXICON["mass_nouns"]
# (word, rank for ordering: quality < size < age < colour, tags it can modify, gradable)
ADJECTIVES: tuple[tuple[str, int, str, bool], ...] = _LEXICON["adjectives"]
WEATHER_ADJECTIVES: tuple[str, ...] = _LEXICON["weather_adjectives"]
WEATHER_VERBS: tuple[str, ...] = _LEXICON["weather_verbs"]

# Verbs: irregular (base, past, past participle) forms, spelling and aspect classes, and the
# frames (verb, [preposition,] tags of the subject and complements).
IRREGULAR_VERBS: tuple[tuple[str, str, str], ...] = _LEXICON["irregular_verbs"]
DOUBLING_VERBS: tuple[str, ...] = _LEXICON["doubling_verbs"]
STATIVE_VERBS: tuple[str, ...] = _LEXICON["stative_verbs"]
INTRANSITIVE: tuple[tuple[str, str], ...] = _LEXICON["intransitive"]
MOTION: tuple[tuple[str, str], ...] = _LEXICON["motion"]
TRANSITIVE: tuple[tuple[str, str, str], ...] = _LEXICON["transitive"]
PREPOSITIONAL: tuple[tuple[str, str, str, str], ...] = _LEXICON["prepositional"]
PLACE_VERBS: tuple[tuple[str, str, str, str], ...] = _LEXICON["place_verbs"]
DITRANSITIVE: tuple[tuple[str, str, str, str, str], ...] = _LEXICON["ditransitive"]
THAT_VERBS: tuple[tuple[str, str, bool], ...] = _LEXICON["that_verbs"]
INFINITIVE_VERBS: tuple[tuple[str, str], ...] = _LEXICON["infinitive_verbs"]
EVENT_VERBS: tuple[str, ...] = _LEXICON["event_verbs"]

# Function words and phrase tables; (item, weight) pairs are weighted choices.
SUBJECT_PRONOUNS: tuple[tuple[str, int, bool, float], ...] = _LEXICON["subject_pronouns"]
OBJECT_PRONOUNS: tuple[tuple[str, int, bool], ...] = _LEXICON["object_pronouns"]
SINGULAR_DETERMINERS: tuple[tuple[str, float], ...] = _LEXICON["singular_determiners"]
PLURAL_DETERMINERS: tuple[tuple[str, float], ...] = _LEXICON["plural_determiners"]
MASS_DETERMINERS: tuple[tuple[str, float], ...] = _LEXICON["mass_determiners"]
INDEFINITE_PLURAL_DETERMINERS: tuple[tuple[str, float], ...] = _LEXICON[
    "indefinite_plural_determiners"
]
INDEFINITE_MASS_DETERMINERS: tuple[tuple[str, float], ...] = _LEXICON[
    "indefinite_mass_determiners"
]
GROUND_SINGULAR_DETERMINERS: tuple[tuple[str, float], ...] = _LEXICON[
    "ground_singular_determiners"
]
GROUND_PLURAL_DETERMINERS: tuple[tuple[str, float], ...] = _LEXICON["ground_plural_determiners"]
GROUND_MASS_DETERMINERS: tuple[tuple[str, float], ...] = _LEXICON["ground_mass_determiners"]
DEFINITE_DETERMINERS = frozenset(_LEXICON["definite_determiners"])
A_BEFORE_VOWEL: tuple[str, ...] = _LEXICON["a_before_vowel"]
AN_BEFORE_CONSONANT: tuple[str, ...] = _LEXICON["an_before_consonant"]
NOUN_PPS: tuple[tuple[str, str, str, float], ...] = _LEXICON["noun_pps"]
LOCATIONS: tuple[tuple[str, str, str, float], ...] = _LEXICON["locations"]
LOCATUM_TAGS: frozenset[str] = _LEXICON["locatum_tags"]
AGENT_TAGS: frozenset[str] = _LEXICON["agent_tags"]
PREDICABLE_TAGS: frozenset[str] = _LEXICON["predicable_tags"]
TRANSPORT: tuple[tuple[str, ...], ...] = _LEXICON["transport"]
TRANSPORT_VERBS: tuple[str, ...] = _LEXICON["transport_verbs"]
INTO_VERBS: tuple[str, ...] = _LEXICON["into_verbs"]
MANNER_ADVERBS: tuple[str, ...] = _LEXICON["manner_adverbs"]

# Times and tenses.
TIMES: tuple[tuple[str, float], ...] = _LEXICON["times"]
TENSES: dict[str, tuple[tuple[str, float], ...]] = _LEXICON["tenses"]
TIME_ADVERBIALS: dict[str, tuple[str, ...]] = _LEXICON["time_adverbials"]
PRE_ADVERBS: dict[tuple[str, bool], tuple[str, ...]] = _LEXICON["pre_adverbs"]
COPULA_ADVERBS: dict[str, tuple[str, ...]] = _LEXICON["copula_adverbs"]

# Clauses, discourse markers and forms of address.
SUBORDINATORS: tuple[tuple[str, float], ...] = _LEXICON["subordinators"]
SUBORDINATE_TENSES: dict[tuple[str, str], tuple[tuple[str, float], ...]] = _LEXICON[
    "subordinate_tenses"
]
CLAUSE_KINDS: tuple[tuple[str, float], ...] = _LEXICON["clause_kinds"]
EMBEDDED_KINDS: tuple[tuple[str, float], ...] = _LEXICON["embedded_kinds"]
WH_WORDS: tuple[tuple[str, float], ...] = _LEXICON["wh_words"]
DISCOURSE_MARKERS: tuple[tuple[str, float, str], ...] = _LEXICON["discourse_markers"]
QUESTION_MARKERS: tuple[tuple[str, float], ...] = _LEXICON["question_markers"]
VOCATIVES: tuple[tuple[str, float], ...] = _LEXICON["vocatives"]

# Probabilities, indexed by depth (0 = main clause) where they are tuples.
_P: dict[str, Any] = _LEXICON["probabilities"]
P_PLURAL: float = _P["plural"]
P_GROUND_PLURAL: float = _P["ground_plural"]
P_ADJECTIVE: tuple[float, ...] = _P["adjective"]
P_TWO_ADJECTIVES: tuple[float, ...] = _P["two_adjectives"]
P_VERY: float = _P["very"]
P_NOUN_PP: tuple[float, ...] = _P["noun_pp"]
P_RELATIVE: tuple[float, ...] = _P["relative"]
P_SUBJECT_PRONOUN: float = _P["subject_pronoun"]
P_OBJECT_PRONOUN: float = _P["object_pronoun"]
P_COORDINATED_SUBJECT: tuple[float, ...] = _P["coordinated_subject"]
P_LOCATION: tuple[float, ...] = _P["location"]
P_MANNER: tuple[float, ...] = _P["manner"]
P_COMPANION: tuple[float, ...] = _P["companion"]
P_TIME: tuple[float, ...] = _P["time"]
P_ADVERB: float = _P["adverb"]
P_NEGATIVE: float = _P["negative"]
P_SUBORDINATE_NEGATIVE: float = _P["subordinate_negative"]
P_YES_NO: float = _P["yes_no"]
P_WH: float = _P["wh"]
P_SUBORDINATE: float = _P["subordinate"]
P_COORDINATION: float = _P["coordination"]
P_VP_COORDINATION: float = _P["vp_coordination"]
P_FRONT_TIME: float = _P["front_time"]
P_QUESTION_SUBORDINATE: float = _P["question_subordinate"]
P_WHICH: float = _P["which"]
P_MARKER: float = _P["marker"]
P_QUESTION_MARKER: float = _P["question_marker"]
P_VOCATIVE: float = _P["vocative"]
P_LIST_SUBJECT: tuple[float, ...] = _P["list_subject"]
P_LIST_OBJECT: tuple[float, ...] = _P["list_object"]
P_FOURTH_ITEM: float = _P["fourth_item"]
P_LIST_WITH_I: float = _P["list_with_i"]
P_ADJECTIVE_LIST: float = _P["adjective_list"]
P_NONRESTRICTIVE: tuple[float, ...] = _P["nonrestrictive"]


# --------------------------------------------------------------------------------------------
# The entries the rules draw (nouns, adjectives, verb frames, preposition rules), their tags
# as sets: a slot takes the entries that share a tag with what it asks for.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Noun:
    """A count noun, or a mass noun (``plural`` "")."""

    singular: str
    plural: str
    tags: frozenset[str]


@dataclass(frozen=True, slots=True)
class Adjective:
    """An adjective; ``rank`` orders two of them (quality < size < age < colour)."""

    word: str
    rank: int
    tags: frozenset[str]
    gradable: bool


@dataclass(frozen=True, slots=True)
class Forms:
    """The inflected forms of a verb."""

    base: str
    third: str
    past: str
    participle: str
    ing: str


@dataclass(frozen=True, slots=True)
class Frame:
    """A verb with its complement pattern and the tags of its subject and complements."""

    kind: str
    verb: str
    subject: frozenset[str]
    objects: frozenset[str] = frozenset()
    prep: str = ""
    recipient: frozenset[str] = frozenset()
    stative: bool = False


@dataclass(frozen=True, slots=True)
class Rule:
    """A preposition linking a host (noun or locatum) to a ground noun phrase."""

    host: frozenset[str]
    prep: str
    ground: frozenset[str]


# --------------------------------------------------------------------------------------------
# Word forms (plurals, verb inflection, a/an), and the entries compiled from the tables.
# --------------------------------------------------------------------------------------------

_VOWELS = "aeiou"


def tags_of(text: str) -> frozenset[str]:
    """The tags of a space-separated tag list (as the tables write them)."""
    return frozenset(text.split())


def article(word: str) -> str:
    """The indefinite article before ``word``: "an" before a vowel sound, else "a"."""
    if word in A_BEFORE_VOWEL:
        return "a"
    if word[0] in _VOWELS or word in AN_BEFORE_CONSONANT:
        return "an"
    return "a"


def _regular_plural(word: str) -> str:
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2] not in _VOWELS:
        return word[:-1] + "ies"
    return word + "s"


def _verb_forms(base: str, past: str = "", participle: str = "") -> Forms:
    if base == "have":
        third = "has"
    elif base.endswith(("s", "x", "z", "ch", "sh", "o")):
        third = base + "es"
    elif base.endswith("y") and base[-2] not in _VOWELS:
        third = base[:-1] + "ies"
    else:
        third = base + "s"
    doubled = base + base[-1] if base in DOUBLING_VERBS else base
    if not past:
        if base.endswith("e"):
            past = base + "d"
        elif base.endswith("y") and base[-2] not in _VOWELS:
            past = base[:-1] + "ied"
        else:
            past = doubled + "ed"
        participle = past
    if base.endswith("ie"):
        ing = base[:-2] + "ying"
    elif base.endswith("e") and not base.endswith(("ee", "ye", "oe")):
        ing = base[:-1] + "ing"
    else:
        ing = doubled + "ing"
    return Forms(base, third, past, participle or past, ing)


def _compile_nouns() -> tuple[Noun, ...]:
    nouns = [
        Noun(singular, plural or _regular_plural(singular), tags_of(tags))
        for singular, plural, tags in COUNT_NOUNS
    ]
    nouns += [Noun(word, "", tags_of(tags)) for word, tags in MASS_NOUNS]
    return tuple(nouns)


def _compile_frames() -> dict[str, tuple[Frame, ...]]:
    stative = frozenset(STATIVE_VERBS)
    frames: dict[str, tuple[Frame, ...]] = {
        "intr": tuple(Frame("intr", v, tags_of(s)) for v, s in INTRANSITIVE),
        "motion": tuple(Frame("motion", v, tags_of(s)) for v, s in MOTION),
        "trans": tuple(
            Frame("trans", v, tags_of(s), tags_of(o), stative=v in stative)
            for v, s, o in TRANSITIVE
        ),
        "prep": tuple(
            Frame("prep", v, tags_of(s), tags_of(o), p, stative=v == "belong")
            for v, p, s, o in PREPOSITIONAL
        ),
        "place": tuple(Frame("place", v, tags_of(s), tags_of(o), p) for v, p, s, o in PLACE_VERBS),
        "ditr": tuple(
            Frame("ditr", v, tags_of(s), tags_of(o), p, tags_of(r))
            for v, p, s, r, o in DITRANSITIVE
        ),
        "that": tuple(
            Frame("that", v, tags_of(s), recipient=tags_of("person") if r else frozenset(),
                   stative=v in stative)
            for v, s, r in THAT_VERBS
        ),
        "inf": tuple(
            Frame("inf", v, tags_of(s), stative=v in stative) for v, s in INFINITIVE_VERBS
        ),
        "event": tuple(Frame("intr", v, tags_of("event")) for v in EVENT_VERBS),
    }
    return frames


NOUNS: tuple[Noun, ...] = _compile_nouns()
ADJECTIVE_ENTRIES: tuple[Adjective, ...] = tuple(
    Adjective(word, rank, tags_of(tags), gradable) for word, rank, tags, gradable in ADJECTIVES
)
FRAMES: dict[str, tuple[Frame, ...]] = _compile_frames()
_IRREGULAR = {base: (past, participle) for base, past, participle in IRREGULAR_VERBS}
VERB_FORMS: dict[str, Forms] = {
    verb: _verb_forms(verb, *_IRREGULAR.get(verb, ("", "")))
    for verb in sorted(
        {frame.verb for frames in FRAMES.values() for frame in frames} | set(WEATHER_VERBS)
    )
}

# (rule, weight) pairs: prepositional phrases after a noun, and locations of a clause.
NOUN_PP_RULES = tuple((Rule(tags_of(h), p, tags_of(g)), w) for h, p, g, w in NOUN_PPS)
LOCATION_RULES = tuple((Rule(tags_of(h), p, tags_of(g)), w) for h, p, g, w in LOCATIONS)
