"""Seeded probabilistic grammar of everyday English for the synthetic mini corpus.

The sentences are the English side of a synthetic speech-translation corpus: they are
translated by apertium (``eng-spa``) and spoken by espeak-ng, so the grammar only emits plain
lower-case ASCII words that apertium knows (plus a capital first letter, ``I``, commas and a
final ``.`` or ``?``): no digits, contractions, hyphens, quotes or proper names.  Every word of
``VOCABULARY`` (lower-cased, so ``I`` is listed as ``i``) is in apertium's English dictionary;
words whose Spanish apertium fails to generate (farm, station, manager, ...) are left out.

The grammar is a hand-written PCFG.  Its lexicon and probability tables (nouns, adjectives and
verbs with their tags, verb frames, determiners, prepositional-phrase rules, discourse markers,
weights and the ``P_*`` probabilities) live in ``lexicon.yaml`` beside this module, which is
read and checked once at import (``load_lexicon``); the rules that use them are the code below.
Informally, with ``[...]`` optional and ``|`` a weighted choice::

    Sentence     -> [Marker ","] Declarative [Vocative] "."
                  | [QMarker ","] (YesNoQuestion | WhQuestion) [Vocative] "?"
    Declarative  -> Clause | Clause Sub | Sub "," Clause | Time "," Clause
                  | Clause "and" Clause | Clause "," "but" Clause | NP VP ("and" | "but") VP
    Marker       -> well | yes | no | of course | however | in fact | then | finally | ...
    QMarker      -> well | now | then | oh | actually
    Vocative     -> "," my (friend | friends)
    YesNoQuestion-> Operator NP VP' [Sub]             (do-support or auxiliary inversion)
    WhQuestion   -> Wh Operator NP VP'-with-gap [Sub] | "who" VP | "what" VP
    Wh           -> what | who | which Noun | where | when | why | how [Adj]
    Sub          -> (because | when | although | if | before | after | while) Clause
    Clause       -> NP VP | "there" Be NP Location | "it" Weather | NP Be Predicate
    Predicate    -> [very] Adj | Adj "and" Adj | Adj "," Adj "and" Adj | Location | NP
    VP           -> Aux* [not] [Adverb] Verb Complements [Manner] [Location] [With] [Time]
    Complements  -> NP | Prep NP | NP NP | NP "to" NP | "to" NP | "that" Clause | "to" VP | ...
    NP           -> Det [very] Adj [Adj] Noun [PP] [Relative] | Pronoun | NP "and" NP
                  | DefDet [very] Adj [Adj] Noun "," NonRestrictive ","
                  | Item "," Item ["," Item] "and" (Item | "I")       (a list: plural)
    Item         -> Det [very] Adj [Adj] Noun
    Relative     -> (who | which | that) VP | (who | which | that) NP VP-with-gap
    NonRestrictive -> (who | which) VP | (who | which) NP VP-with-gap

A non-restrictive relative clause follows only a noun with a definite or possessive determiner
(the, this, my, our, ...) and takes "who" for people and "which" for the rest, never "that"; its
closing comma is dropped where the sentence ends or another comma follows.  Lists of three or
four noun phrases (no serial comma) are subjects or objects; discourse markers open statements
(and a few questions); each one was checked to come through apertium eng-spa and es-pt whole,
comma included.

A verb comes with a *frame* (intransitive, transitive, prepositional, ditransitive, motion,
that-clause, infinitive) that fixes its complements and, through semantic tags, which nouns can
be its subject and objects: people read books, animals eat food, nobody drives a sandwich.
Nouns, adjectives and locations carry tags too; a noun phrase is drawn among the nouns sharing a
tag with what its slot asks for.

A sentence first picks a time (past, present, future) and from it the tenses of its clauses
(present and past simple, ``will`` future, present and past progressive, present perfect), with
the usual sequence of tenses in subordinate clauses (``if`` + present for the future, ``while`` +
progressive, and so on).  Agreement, irregular forms, ``a``/``an``, do-support and auxiliary
inversion are realised when a clause is turned into words; wh-questions replace a slot of the
clause (object, location, time, manner, stranded preposition, ...) by its wh-word.

Sentence length is controlled by depth-dependent probabilities of optional material (adjectives,
prepositional phrases, relative clauses, lists, adjuncts, subordinate and coordinated clauses,
discourse markers); the rare sentence outside ``MIN_WORDS``..``MAX_WORDS`` is drawn again.  The
comma rules are weighted so that about 40 % of the sentences have a comma inside, which makes
them more like the punctuated talks of MuST-C.  All choices go through one ``random.Random``
over tuples, so a seed fixes the output in every process.
"""

from __future__ import annotations

import math
import random
import re
from bisect import bisect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any, Generic, TypeVar

import yaml

__all__ = ["MAX_WORDS", "MIN_WORDS", "VOCABULARY", "Grammar", "generate"]

MIN_WORDS = 4
MAX_WORDS = 36
# Depth of embedding (0 = main clause) from which the depth-indexed probabilities stop changing.
MAX_DEPTH = 3

T = TypeVar("T")

#: The lexicon and probability tables, read once below.
LEXICON_PATH = Path(__file__).with_name("lexicon.yaml")

# Names the rules dispatch on: the lexicon's tables keyed by them are checked against them.
_TIME_NAMES = ("past", "present", "future")
_TENSE_NAMES = ("pres", "past", "fut", "prog", "pastprog", "perf")
_CLAUSE_KIND_NAMES = (
    "trans", "intr", "motion", "prep", "place", "ditr", "copula", "there", "that", "inf", "weather",
)
_WH_NAMES = ("what", "who", "where", "when", "why", "how")
_MARKER_CONDITIONS = ("", "positive", "negative", *_TIME_NAMES)

# Tenses of the clauses without a progressive (the copula, stative verbs): the simple tense.
STATIVE_TENSE = {"prog": "pres", "pastprog": "past"}

# Words the rules emit directly, besides those of the lexicon's tables.
FUNCTION_WORDS: tuple[str, ...] = (
    "a", "an", "the", "not", "do", "does", "did", "will", "am", "is", "are", "was", "were", "be",
    "been", "has", "have", "to", "and", "but", "that", "which", "who", "what", "where", "when",
    "why", "how", "there", "it", "very", "home", "at", "into", "across", "with", "for", "it",
    "they",
)


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
# Data structures.
# --------------------------------------------------------------------------------------------


class _Weighted(Generic[T]):
    """A weighted table of items, drawn with one ``random()`` call."""

    __slots__ = ("items", "cumulative", "total")

    def __init__(self, table: Iterable[tuple[T, float]]) -> None:
        rows = tuple(table)
        self.items: tuple[T, ...] = tuple(item for item, _ in rows)
        self.cumulative: tuple[float, ...] = tuple(accumulate(weight for _, weight in rows))
        self.total = self.cumulative[-1]

    def pick(self, rng: random.Random) -> T:
        return self.items[bisect(self.cumulative, rng.random() * self.total)]


@dataclass(frozen=True, slots=True)
class _Noun:
    singular: str
    plural: str
    tags: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Adjective:
    word: str
    rank: int
    tags: frozenset[str]
    gradable: bool


@dataclass(frozen=True, slots=True)
class _Forms:
    base: str
    third: str
    past: str
    participle: str
    ing: str


@dataclass(frozen=True, slots=True)
class _Frame:
    """A verb with its complement pattern and the tags of its subject and complements."""

    kind: str
    verb: str
    subject: frozenset[str]
    objects: frozenset[str] = frozenset()
    prep: str = ""
    recipient: frozenset[str] = frozenset()
    stative: bool = False


@dataclass(frozen=True, slots=True)
class _Rule:
    """A preposition linking a host (noun or locatum) to a ground noun phrase."""

    host: frozenset[str]
    prep: str
    ground: frozenset[str]


@dataclass(slots=True)
class _Phrase:
    """A noun phrase with what agreement and selection need: person, number, tags, head."""

    words: list[str]
    person: int = 3
    plural: bool = False
    tags: frozenset[str] = frozenset()
    head: str = ""


@dataclass(slots=True)
class _Slot:
    """Words after the verb group, with the (wh-phrase, words left behind) that may replace them."""

    words: list[str]
    wh: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()


@dataclass(slots=True)
class _Clause:
    """A clause before word order is fixed; ``verb`` None is the copula ``be``."""

    subject: _Phrase
    verb: _Forms | None
    tense: str
    negative: bool = False
    adverb: str = ""
    slots: list[_Slot] = field(default_factory=list)
    open_wh: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------
# Morphology and table compilation.
# --------------------------------------------------------------------------------------------

_VOWELS = "aeiou"


def _tags(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _regular_plural(word: str) -> str:
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2] not in _VOWELS:
        return word[:-1] + "ies"
    return word + "s"


def _verb_forms(base: str, past: str = "", participle: str = "") -> _Forms:
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
    return _Forms(base, third, past, participle or past, ing)


def _compile_nouns() -> tuple[_Noun, ...]:
    nouns = [
        _Noun(singular, plural or _regular_plural(singular), _tags(tags))
        for singular, plural, tags in COUNT_NOUNS
    ]
    nouns += [_Noun(word, "", _tags(tags)) for word, tags in MASS_NOUNS]
    return tuple(nouns)


def _compile_frames() -> dict[str, tuple[_Frame, ...]]:
    stative = frozenset(STATIVE_VERBS)
    frames: dict[str, tuple[_Frame, ...]] = {
        "intr": tuple(_Frame("intr", v, _tags(s)) for v, s in INTRANSITIVE),
        "motion": tuple(_Frame("motion", v, _tags(s)) for v, s in MOTION),
        "trans": tuple(
            _Frame("trans", v, _tags(s), _tags(o), stative=v in stative) for v, s, o in TRANSITIVE
        ),
        "prep": tuple(
            _Frame("prep", v, _tags(s), _tags(o), p, stative=v == "belong")
            for v, p, s, o in PREPOSITIONAL
        ),
        "place": tuple(_Frame("place", v, _tags(s), _tags(o), p) for v, p, s, o in PLACE_VERBS),
        "ditr": tuple(
            _Frame("ditr", v, _tags(s), _tags(o), p, _tags(r)) for v, p, s, r, o in DITRANSITIVE
        ),
        "that": tuple(
            _Frame("that", v, _tags(s), recipient=_tags("person") if r else frozenset(),
                   stative=v in stative)
            for v, s, r in THAT_VERBS
        ),
        "inf": tuple(_Frame("inf", v, _tags(s), stative=v in stative) for v, s in INFINITIVE_VERBS),
        "event": tuple(_Frame("intr", v, _tags("event")) for v in EVENT_VERBS),
    }
    return frames


NOUNS: tuple[_Noun, ...] = _compile_nouns()
ADJECTIVE_ENTRIES: tuple[_Adjective, ...] = tuple(
    _Adjective(word, rank, _tags(tags), gradable) for word, rank, tags, gradable in ADJECTIVES
)
FRAMES: dict[str, tuple[_Frame, ...]] = _compile_frames()
_IRREGULAR = {base: (past, participle) for base, past, participle in IRREGULAR_VERBS}
VERB_FORMS: dict[str, _Forms] = {
    verb: _verb_forms(verb, *_IRREGULAR.get(verb, ("", "")))
    for verb in sorted(
        {frame.verb for frames in FRAMES.values() for frame in frames} | set(WEATHER_VERBS)
    )
}

_NOUN_PP_RULES = tuple((_Rule(_tags(h), p, _tags(g)), w) for h, p, g, w in NOUN_PPS)
_LOCATION_RULES = tuple((_Rule(_tags(h), p, _tags(g)), w) for h, p, g, w in LOCATIONS)
_INFINITIVE_VERBS = frozenset(verb for verb, _ in INFINITIVE_VERBS)
_INNER_KINDS = ("intr", "motion", "trans", "prep", "place", "ditr")
_RELATIVE_SUBJECT_KINDS = ("intr", "motion", "trans", "prep", "place", "ditr", "inf")
_RELATIVE_OBJECT_KINDS = ("trans", "prep", "place", "ditr")

_W_TIMES = _Weighted(TIMES)
_W_TENSES = {time: _Weighted(table) for time, table in TENSES.items()}
_W_SUBORDINATE_TENSES = {key: _Weighted(table) for key, table in SUBORDINATE_TENSES.items()}
_W_SUBORDINATORS = _Weighted(SUBORDINATORS)
_W_CLAUSE_KINDS = _Weighted(CLAUSE_KINDS)
_W_EMBEDDED_KINDS = _Weighted(EMBEDDED_KINDS)
_W_WH = _Weighted(WH_WORDS)
_W_SINGULAR = _Weighted(SINGULAR_DETERMINERS)
_W_PLURAL = _Weighted(PLURAL_DETERMINERS)
_W_MASS = _Weighted(MASS_DETERMINERS)
_W_INDEF_PLURAL = _Weighted(INDEFINITE_PLURAL_DETERMINERS)
_W_INDEF_MASS = _Weighted(INDEFINITE_MASS_DETERMINERS)
_W_GROUND_SINGULAR = _Weighted(GROUND_SINGULAR_DETERMINERS)
_W_GROUND_PLURAL = _Weighted(GROUND_PLURAL_DETERMINERS)
_W_GROUND_MASS = _Weighted(GROUND_MASS_DETERMINERS)
_W_SUBJECT_PRONOUNS = _Weighted((row[:3], row[3]) for row in SUBJECT_PRONOUNS)
_W_DISCOURSE_MARKERS = _Weighted((row[::2], row[1]) for row in DISCOURSE_MARKERS)
_W_QUESTION_MARKERS = _Weighted(QUESTION_MARKERS)
_W_VOCATIVES = _Weighted(VOCATIVES)


def _article(word: str) -> str:
    if word in A_BEFORE_VOWEL:
        return "a"
    if word[0] in _VOWELS or word in AN_BEFORE_CONSONANT:
        return "an"
    return "a"


def _be_present(person: int, plural: bool) -> str:
    if plural or person == 2:
        return "are"
    return "am" if person == 1 else "is"


def _be_past(person: int, plural: bool) -> str:
    return "were" if plural or person == 2 else "was"


def _verb_group(
    verb: _Forms | None,
    tense: str,
    subject: _Phrase,
    negative: bool,
    adverb: str,
    inverted: bool,
) -> tuple[str, list[str]]:
    """The operator (fronted in questions, "" if none) and the rest of the verb group."""
    person, plural = subject.person, subject.plural
    third = person == 3 and not plural
    if verb is None:
        if tense in ("pres", "prog"):
            chain = [_be_present(person, plural)]
        elif tense in ("past", "pastprog"):
            chain = [_be_past(person, plural)]
        elif tense == "fut":
            chain = ["will", "be"]
        else:
            chain = ["has" if third else "have", "been"]
    elif tense in ("pres", "past"):
        if not negative and not inverted:
            if tense == "past":
                finite = verb.past
            else:
                finite = verb.third if third else verb.base
            return "", [adverb, finite] if adverb else [finite]
        operator = "did" if tense == "past" else "does" if third else "do"
        chain = [operator, verb.base]
    elif tense == "fut":
        chain = ["will", verb.base]
    elif tense == "prog":
        chain = [_be_present(person, plural), verb.ing]
    elif tense == "pastprog":
        chain = [_be_past(person, plural), verb.ing]
    else:
        chain = ["has" if third else "have", verb.participle]
    middle = (["not"] if negative else []) + ([adverb] if adverb else [])
    if inverted:
        return chain[0], middle + chain[1:]
    return "", [chain[0], *middle, *chain[1:]]


def _slot_words(slots: Sequence[_Slot]) -> list[str]:
    return [word for slot in slots for word in slot.words]


def _predicate(clause: _Clause) -> list[str]:
    _, group = _verb_group(
        clause.verb, clause.tense, clause.subject, clause.negative, clause.adverb, False
    )
    return group + _slot_words(clause.slots)


def _declarative(clause: _Clause) -> list[str]:
    return clause.subject.words + _predicate(clause)


def _question(clause: _Clause, slots: Sequence[_Slot] | None = None) -> list[str]:
    operator, rest = _verb_group(
        clause.verb, clause.tense, clause.subject, clause.negative, clause.adverb, True
    )
    if slots is None:
        slots = clause.slots
    return [operator, *clause.subject.words, *rest, *_slot_words(slots)]


def _punctuate(tokens: Sequence[str]) -> list[str]:
    """``tokens`` without the commas that meet another comma or the end of the sentence.

    A non-restrictive relative clause is closed by a comma wherever it ends; when its noun
    phrase ends a clause that is followed by a comma anyway (a fronted subordinate clause,
    ", but") or ends the sentence, the one comma or the final stop is all English writes.
    """
    out: list[str] = []
    for token in tokens:
        if token == "," and (not out or out[-1] == ","):
            continue
        out.append(token)
    while out and out[-1] == ",":
        out.pop()
    return out


def _finish(tokens: Sequence[str], question: bool) -> str:
    first = tokens[0]
    parts = [first[0].upper() + first[1:]]
    for token in tokens[1:]:
        if token == ",":
            parts[-1] += ","
        else:
            parts.append(token)
    return " ".join(parts) + ("?" if question else ".")


def _word_count(tokens: Sequence[str]) -> int:
    return sum(token != "," for token in tokens)


# --------------------------------------------------------------------------------------------
# The grammar.
# --------------------------------------------------------------------------------------------


class Grammar:
    """A sentence generator with its own ``random.Random(seed)``."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._noun_cache: dict[frozenset[str], tuple[_Noun, ...]] = {}
        self._adjective_cache: dict[frozenset[str], tuple[_Adjective, ...]] = {}
        self._rule_cache: dict[tuple[str, frozenset[str]], _Weighted[_Rule] | None] = {}
        self._frame_cache: dict[tuple[str, frozenset[str]], tuple[_Frame, ...]] = {}

    # ---- public ------------------------------------------------------------------------

    def sentence(self) -> str:
        """One sentence, with a capital first letter and a final "." or "?"."""
        while True:
            tokens, question = self._sentence()
            tokens = _punctuate(tokens)
            if MIN_WORDS <= _word_count(tokens) <= MAX_WORDS:
                return _finish(tokens, question)

    # ---- lookups -----------------------------------------------------------------------

    def _nouns(self, tags: frozenset[str]) -> tuple[_Noun, ...]:
        nouns = self._noun_cache.get(tags)
        if nouns is None:
            nouns = tuple(noun for noun in NOUNS if noun.tags & tags)
            self._noun_cache[tags] = nouns
        return nouns

    def _adjectives_for(self, tags: frozenset[str]) -> tuple[_Adjective, ...]:
        adjectives = self._adjective_cache.get(tags)
        if adjectives is None:
            adjectives = tuple(adj for adj in ADJECTIVE_ENTRIES if adj.tags & tags)
            self._adjective_cache[tags] = adjectives
        return adjectives

    def _rules(self, table: str, tags: frozenset[str]) -> _Weighted[_Rule] | None:
        key = (table, tags)
        if key not in self._rule_cache:
            rows = _NOUN_PP_RULES if table == "noun" else _LOCATION_RULES
            matching = [(rule, weight) for rule, weight in rows if rule.host & tags]
            self._rule_cache[key] = _Weighted(matching) if matching else None
        return self._rule_cache[key]

    def _frames(self, kind: str, tags: frozenset[str], role: str = "subject") -> tuple[
        _Frame, ...
    ]:
        key = (kind + ":" + role, tags)
        frames = self._frame_cache.get(key)
        if frames is None:
            if role == "subject":
                frames = tuple(f for f in FRAMES[kind] if f.subject & tags)
            else:
                frames = tuple(f for f in FRAMES[kind] if f.objects & tags)
            self._frame_cache[key] = frames
        return frames

    # ---- sentences ---------------------------------------------------------------------

    def _sentence(self) -> tuple[list[str], bool]:
        rng = self._rng
        r = rng.random()
        if r < P_YES_NO + P_WH:
            words = self._yes_no_question() if r < P_YES_NO else self._wh_question()
            if rng.random() < P_QUESTION_MARKER:
                words = [*_W_QUESTION_MARKERS.pick(rng).split(), ",", *words]
            question = True
        else:
            words = self._statement()
            question = False
        if rng.random() < P_VOCATIVE:
            words += [",", *_W_VOCATIVES.pick(rng).split()]
        return words, question

    def _statement(self) -> list[str]:
        rng = self._rng
        time = _W_TIMES.pick(rng)
        words = self._declaration(time)
        if rng.random() < P_MARKER:
            words = [*self._marker(time, words), ",", *words]
        return words

    def _marker(self, time: str, words: Sequence[str]) -> list[str]:
        """A discourse marker that fits the statement ``words`` of time ``time``.

        Its condition must hold (see ``DISCOURSE_MARKERS``) and its last word must not occur in
        the statement: no "Finally, he finally left." or "Well, she sings well."
        """
        polarity = "negative" if "not" in words else "positive"
        while True:
            marker, condition = _W_DISCOURSE_MARKERS.pick(self._rng)
            tokens = marker.split()
            if condition in ("", polarity, time) and tokens[-1] not in words:
                return tokens

    def _declaration(self, time: str) -> list[str]:
        rng = self._rng
        r = rng.random()
        if r < P_SUBORDINATE:
            main = _declarative(self._clause(time, 0, neg_p=P_NEGATIVE))
            sub = self._subordinate(time, 1)
            if rng.random() < 0.5:
                return sub + [","] + main
            return main + sub
        r -= P_SUBORDINATE
        if r < P_COORDINATION:
            first = _declarative(self._clause(time, 1, neg_p=P_NEGATIVE))
            second = _declarative(self._clause(time, 1, neg_p=0.35))
            if rng.random() < 0.55:
                return first + ["and"] + second
            return first + [",", "but"] + second
        r -= P_COORDINATION
        if r < P_VP_COORDINATION:
            return self._vp_coordination(time)
        r -= P_VP_COORDINATION
        clause = self._clause(time, 0, neg_p=P_NEGATIVE)
        if r < P_FRONT_TIME:
            for i, slot in enumerate(clause.slots):
                if slot.wh and slot.wh[0][0] == ("when",):
                    del clause.slots[i]
                    return slot.words + [","] + _declarative(clause)
        return _declarative(clause)

    def _vp_coordination(self, time: str) -> list[str]:
        rng = self._rng
        tense = _W_TENSES[time].pick(rng)
        kind = _W_CLAUSE_KINDS.pick(rng)
        while kind in ("there", "weather", "that", "copula"):
            kind = _W_CLAUSE_KINDS.pick(rng)
        first = self._clause(time, 1, kind=kind, tense=tense, neg_p=0.1)
        but = rng.random() < 0.4
        second = self._clause(
            time, 1, kind=rng.choice(("trans", "trans", "intr", "motion", "prep")),
            subject=first.subject, tense=first.tense,
            neg_p=0.6 if but else 0.0,
        )
        return _declarative(first) + ["but" if but else "and"] + _predicate(second)

    def _yes_no_question(self) -> list[str]:
        rng = self._rng
        time = _W_TIMES.pick(rng)
        clause = self._clause(time, 0, question=True, neg_p=0.03)
        words = _question(clause)
        if rng.random() < P_QUESTION_SUBORDINATE:
            words += self._subordinate(time, 1)
        return words

    def _wh_question(self) -> list[str]:
        rng = self._rng
        target = _W_WH.pick(rng)
        time = _W_TIMES.pick(rng)
        words: list[str] | None = None
        while words is None:
            words = self._try_wh(target, time)
        if rng.random() < P_QUESTION_SUBORDINATE:
            words += self._subordinate(time, 1, exclude="because" if target == "why" else "")
        return words

    def _try_wh(self, target: str, time: str) -> list[str] | None:
        rng = self._rng
        if target == "who" and rng.random() < 0.45:
            who = _Phrase(["who"], 3, False, _tags("person"))
            return _declarative(self._clause(time, 0, question=True, subject=who, neg_p=0.05))
        if target == "what" and rng.random() < 0.15:
            what = _Phrase(["what"], 3, False, _tags("event"))
            if rng.random() < 0.5:
                clause = self._build(FRAMES["event"][0], time, 0, subject=what, question=True)
            else:
                what.tags = _tags("portable food")
                clause = self._copula(time, 0, subject=what, question=True, mode="loc")
            return _declarative(clause)
        neg_p = 0.25 if target == "why" else 0.02
        clause = self._clause(time, 0, question=True, neg_p=neg_p, exclude=("there",))
        word = "which" if target in ("what", "who") and rng.random() < P_WHICH else target
        options = [
            (i, wh, residue)
            for i, slot in enumerate(clause.slots)
            for wh, residue in slot.wh
            if wh[0] == word
        ]
        if options:
            index, wh, residue = options[int(rng.random() * len(options))]
            slots = list(clause.slots)
            slots[index] = _Slot(list(residue))
            return [*wh, *_question(clause, slots)]
        if target in clause.open_wh:
            return [target, *_question(clause)]
        return None

    def _subordinate(self, time: str, depth: int, exclude: str = "") -> list[str]:
        rng = self._rng
        word = _W_SUBORDINATORS.pick(rng)
        while word == exclude or (word == "if" and time == "past"):
            word = _W_SUBORDINATORS.pick(rng)
        table = _W_SUBORDINATE_TENSES.get((word, time)) or _W_TENSES[time]
        tense = table.pick(rng)
        adverbial = "fut" if time == "future" and tense in ("pres", "prog") else tense
        clause = self._clause(
            time, depth, neg_p=P_SUBORDINATE_NEGATIVE, tense=tense, adverbial=adverbial,
            embedded=True,
        )
        return [word, *_declarative(clause)]

    # ---- clauses -----------------------------------------------------------------------

    def _clause(
        self,
        time: str,
        depth: int,
        *,
        question: bool = False,
        neg_p: float = 0.0,
        kind: str = "",
        subject: _Phrase | None = None,
        tense: str = "",
        adverbial: str = "",
        embedded: bool = False,
        exclude: tuple[str, ...] = (),
    ) -> _Clause:
        rng = self._rng
        kinds = _W_EMBEDDED_KINDS if embedded or depth > 0 else _W_CLAUSE_KINDS
        while not kind:
            kind = kinds.pick(rng)
            if kind in exclude or (subject is not None and kind in ("there", "weather")):
                kind = ""
            elif depth >= 2 and kind in ("that", "inf"):
                kind = ""
        if kind == "copula":
            return self._copula(
                time, depth, subject=subject, question=question, neg_p=neg_p, tense=tense,
                adverbial=adverbial,
            )
        if kind == "there":
            return self._existential(time, depth, tense=tense, adverbial=adverbial)
        if kind == "weather":
            return self._weather(time, depth, question=question, neg_p=neg_p, tense=tense,
                                 adverbial=adverbial)
        if subject is None:
            frame = rng.choice(FRAMES[kind])
        else:
            frames = self._frames(kind, subject.tags)
            if not frames:
                return self._clause(time, depth, question=question, neg_p=neg_p,
                                    subject=subject, tense=tense, adverbial=adverbial,
                                    embedded=embedded, kind="trans" if kind != "trans" else "intr")
            frame = rng.choice(frames)
        return self._build(
            frame, time, depth, subject=subject, question=question, neg_p=neg_p, tense=tense,
            adverbial=adverbial,
        )

    def _tense(self, time: str, tense: str, stative: bool) -> str:
        if not tense:
            tense = _W_TENSES[time].pick(self._rng)
        if stative:
            return STATIVE_TENSE.get(tense, tense)
        return tense

    def _build(
        self,
        frame: _Frame,
        time: str,
        depth: int,
        *,
        subject: _Phrase | None = None,
        obj: _Phrase | None = None,
        question: bool = False,
        neg_p: float = 0.0,
        tense: str = "",
        adverbial: str = "",
        finite: bool = True,
    ) -> _Clause:
        rng = self._rng
        d = min(depth, MAX_DEPTH)
        tense = self._tense(time, tense, frame.stative)
        kind = frame.kind
        inner: _Frame | None = None
        if kind == "inf":
            subject_tags = subject.tags if subject is not None else frame.subject
            candidates = [
                f
                for k in _INNER_KINDS
                for f in self._frames(k, subject_tags & frame.subject or frame.subject)
                if f.verb not in _INFINITIVE_VERBS
            ]
            inner = candidates[int(rng.random() * len(candidates))]
            if subject is None:
                subject = self._subject(frame.subject & inner.subject, depth)
        if subject is None:
            subject = self._subject(frame.subject, depth)
        slots: list[_Slot] = []
        if kind == "trans":
            o = obj or self._object(frame.objects, depth, subject)
            slots.append(_Slot(o.words, self._object_wh(o, ())))
        elif kind == "prep":
            o = obj or self._object(frame.objects, depth, subject)
            slots.append(_Slot([frame.prep, *o.words], self._object_wh(o, (frame.prep,))))
        elif kind == "place":
            o = obj or self._noun_phrase(frame.objects, depth + 1, ground=True)
            slots.append(_Slot([frame.prep, *o.words], ((("where",), ()),)))
        elif kind == "motion":
            slots.append(self._goal(frame, depth))
            if frame.verb in TRANSPORT_VERBS and "person" in subject.tags and rng.random() < 0.2:
                slots.append(_Slot(list(rng.choice(TRANSPORT)), ((("how",), ()),)))
        elif kind == "ditr":
            recipient = self._object(frame.recipient, depth + 1, subject)
            theme = obj or self._noun_phrase(frame.objects, depth)
            if len(recipient.words) <= 3 and rng.random() < 0.55:
                slots.append(_Slot(recipient.words))
                slots.append(_Slot(theme.words, self._object_wh(theme, ())))
            else:
                slots.append(_Slot(theme.words, self._object_wh(theme, ())))
                slots.append(
                    _Slot([frame.prep, *recipient.words], self._object_wh(recipient, (frame.prep,)))
                )
        elif kind == "that":
            if frame.recipient:
                slots.append(_Slot(self._object(frame.recipient, depth + 1, subject).words))
            past = tense in ("past", "pastprog")
            embedded = self._clause(
                "past" if past else _W_TIMES.pick(rng), depth + 1, neg_p=P_NEGATIVE, embedded=True
            )
            slots.append(_Slot(["that", *_declarative(embedded)], ((("what",), ()),)))
        elif kind == "inf" and inner is not None:
            clause = self._build(inner, time, depth + 1, subject=subject, finite=False)
            assert clause.verb is not None
            slots.append(_Slot(["to", clause.verb.base]))
            slots.extend(clause.slots)

        agentive = not frame.stative and bool(subject.tags & AGENT_TAGS)
        clausal = kind in ("that", "inf")
        open_wh = ("when", "why", "where", "how") if agentive and not clausal else ("when", "why")
        if not clausal:
            if agentive and rng.random() < P_MANNER[d]:
                slots.append(_Slot([rng.choice(MANNER_ADVERBS)], ((("how",), ()),)))
            located = agentive or "event" in subject.tags
            if located and kind not in ("place", "motion") and rng.random() < P_LOCATION[d]:
                slots.append(_Slot(self._location(subject.tags, depth + 1), ((("where",), ()),)))
            if agentive and "person" in subject.tags and rng.random() < P_COMPANION[d]:
                prep = "with" if rng.random() < 0.6 else "for"
                companion = self._noun_phrase(_tags("person"), depth + 1)
                slots.append(_Slot([prep, *companion.words], ((("who",), (prep,)),)))
        negative = False
        adverb = ""
        if finite:
            negative = rng.random() < neg_p
            if not negative and rng.random() < P_ADVERB:
                adverb = rng.choice(PRE_ADVERBS[(tense, question)])
            if rng.random() < P_TIME[d]:
                key = adverbial or tense
                phrase = rng.choice(TIME_ADVERBIALS[key])
                slots.append(_Slot(phrase.split(), ((("when",), ()),)))
        return _Clause(
            subject, VERB_FORMS[frame.verb], tense, negative, adverb, slots, open_wh
        )

    def _copula(
        self,
        time: str,
        depth: int,
        *,
        subject: _Phrase | None = None,
        question: bool = False,
        neg_p: float = 0.0,
        tense: str = "",
        adverbial: str = "",
        mode: str = "",
    ) -> _Clause:
        rng = self._rng
        d = min(depth, MAX_DEPTH)
        tense = self._tense(time, tense, True)
        if not mode:
            r = rng.random()
            mode = "adj" if r < 0.5 else "loc" if r < 0.8 else "job"
            if subject is not None:
                if mode == "job" and "person" not in subject.tags:
                    mode = "adj"
                if mode == "loc" and not subject.tags & LOCATUM_TAGS:
                    mode = "adj"
                if mode == "adj" and not self._adjectives_for(subject.tags):
                    mode = "loc"
        if subject is None:
            if mode == "job":
                subject = self._subject(_tags("person"), depth)
            elif mode == "loc":
                subject = self._subject(LOCATUM_TAGS, depth)
            else:
                subject = self._subject(PREDICABLE_TAGS, depth)
        slots: list[_Slot] = []
        open_wh: tuple[str, ...] = ("why",)
        listed: list[str] | None = None
        if mode == "adj" and rng.random() < P_ADJECTIVE_LIST:
            listed = self._adjective_list(self._adjectives_for(subject.tags))
        if listed is not None:
            slots.append(_Slot(listed))
        elif mode == "adj":
            adjectives = self._adjectives_for(subject.tags)
            first = rng.choice(adjectives)
            r = rng.random()
            if r < 0.25 and first.gradable:
                slots.append(_Slot(["very", first.word]))
            elif r < 0.4:
                second = rng.choice(adjectives)
                if second.word == first.word:
                    slots.append(_Slot([first.word]))
                else:
                    slots.append(_Slot([first.word, "and", second.word]))
            else:
                wh = ((("how", first.word), ()),) if first.gradable else ()
                slots.append(_Slot([first.word], wh))
        elif mode == "loc":
            slots.append(_Slot(self._location(subject.tags, depth + 1), ((("where",), ()),)))
            open_wh = ("why", "when")
        else:
            noun = rng.choice(self._nouns(_tags("job")))
            adjectives = self._adjectives(noun, depth + 1)
            if subject.plural:
                slots.append(_Slot([*adjectives, noun.plural]))
            else:
                slots.append(_Slot([_article((adjectives or [noun.singular])[0]), *adjectives,
                                    noun.singular]))
        negative = rng.random() < neg_p
        adverb = ""
        if not negative and not question and rng.random() < P_ADVERB:
            adverb = rng.choice(COPULA_ADVERBS[tense])
        if rng.random() < P_TIME[d]:
            slots.append(
                _Slot(rng.choice(TIME_ADVERBIALS[adverbial or tense]).split(), ((("when",), ()),))
            )
        return _Clause(subject, None, tense, negative, adverb, slots, open_wh)

    def _adjective_list(self, adjectives: Sequence[_Adjective]) -> list[str] | None:
        """Three predicate adjectives: "big, quiet and friendly" (at most one of each size, age
        and colour rank, so no "big, small and ..."); None if there are not enough."""
        picked: list[_Adjective] = []
        for adjective in self._rng.sample(adjectives, min(len(adjectives), 8)):
            if adjective.rank == 0 or all(adjective.rank != p.rank for p in picked):
                picked.append(adjective)
                if len(picked) == 3:
                    return [picked[0].word, ",", picked[1].word, "and", picked[2].word]
        return None

    def _existential(self, time: str, depth: int, *, tense: str, adverbial: str) -> _Clause:
        rng = self._rng
        tense = self._tense(time, tense, True)
        pivot = self._noun_phrase(LOCATUM_TAGS, depth + 1, indefinite=True)
        subject = _Phrase(["there"], 3, pivot.plural)
        slots = [_Slot(pivot.words), _Slot(self._location(pivot.tags, depth + 1))]
        if rng.random() < P_TIME[min(depth, MAX_DEPTH)]:
            slots.append(_Slot(rng.choice(TIME_ADVERBIALS[adverbial or tense]).split()))
        return _Clause(subject, None, tense, False, "", slots, ())

    def _weather(
        self, time: str, depth: int, *, question: bool, neg_p: float, tense: str, adverbial: str
    ) -> _Clause:
        rng = self._rng
        it = _Phrase(["it"], 3, False, _tags("weather"))
        if rng.random() < 0.5:
            tense = self._tense(time, tense, False)
            slots: list[_Slot] = []
            verb: _Forms | None = VERB_FORMS[rng.choice(WEATHER_VERBS)]
            open_wh: tuple[str, ...] = ("when", "where", "why")
        else:
            tense = self._tense(time, tense, True)
            adjective = rng.choice(WEATHER_ADJECTIVES)
            if rng.random() < 0.25:
                slots = [_Slot(["very", adjective])]
            else:
                slots = [_Slot([adjective], ((("how", adjective), ()),))]
            verb = None
            open_wh = ("why",)
        negative = rng.random() < neg_p
        if rng.random() < P_TIME[min(depth, MAX_DEPTH)] + 0.2:
            slots.append(
                _Slot(rng.choice(TIME_ADVERBIALS[adverbial or tense]).split(), ((("when",), ()),))
            )
        return _Clause(it, verb, tense, negative, "", slots, open_wh)

    # ---- phrases -----------------------------------------------------------------------

    def _subject(self, tags: frozenset[str], depth: int) -> _Phrase:
        rng = self._rng
        d = min(depth, MAX_DEPTH)
        r = rng.random()
        if "person" in tags:
            if r < P_SUBJECT_PRONOUN:
                word, person, plural = _W_SUBJECT_PRONOUNS.pick(rng)
                return _Phrase([word], person, plural, _tags("person"))
            r -= P_SUBJECT_PRONOUN
            if r < P_COORDINATED_SUBJECT[d]:
                first = self._noun_phrase(_tags("person"), depth + 1)
                if rng.random() < 0.3:
                    return _Phrase([*first.words, "and", "I"], 1, True, _tags("person"))
                second = self._noun_phrase(_tags("person"), depth + 1)
                return _Phrase([*first.words, "and", *second.words], 3, True, _tags("person"))
            r -= P_COORDINATED_SUBJECT[d]
        elif "animal" in tags:
            if r < 0.08:
                plural = rng.random() < 0.3
                return _Phrase(["they" if plural else "it"], 3, plural, _tags("animal"))
            r -= 0.08
        if r < P_LIST_SUBJECT[d]:
            listed = self._list(tags, depth, subject=True)
            if listed is not None:
                return listed
        return self._noun_phrase(tags, depth)

    def _object(self, tags: frozenset[str], depth: int, subject: _Phrase) -> _Phrase:
        rng = self._rng
        if "person" in tags and rng.random() < P_OBJECT_PRONOUN:
            word, person, plural = rng.choice(OBJECT_PRONOUNS)
            if person == 3 or person != subject.person:
                return _Phrase([word], person, plural, _tags("person"))
        if rng.random() < P_LIST_OBJECT[min(depth, MAX_DEPTH)]:
            listed = self._list(tags, depth)
            if listed is not None:
                return listed
        return self._noun_phrase(tags, depth)

    def _list(self, tags: frozenset[str], depth: int, *, subject: bool = False) -> _Phrase | None:
        """Three or four noun phrases: "the dogs, the cats and the birds" (no serial comma).

        The items share one of the slot's tags (they must all fit the verb) and are distinct
        nouns without prepositional phrases or relative clauses, so that every comma of the
        list separates items.  A list is plural; a subject list may end in "and I" (first
        person: "my brother, my sister and I are").  None if no tag of ``tags`` has enough
        nouns for a list.
        """
        rng = self._rng
        categories = [tag for tag in sorted(tags) if len(self._nouns(_tags(tag))) >= 4]
        if not categories:
            return None
        category = _tags(categories[int(rng.random() * len(categories))])
        size = 4 if rng.random() < P_FOURTH_ITEM else 3
        with_i = subject and "person" in category and rng.random() < P_LIST_WITH_I
        nouns = rng.sample(self._nouns(category), size - with_i)
        items = [self._noun_phrase(category, depth + 1, noun=noun, simple=True) for noun in nouns]
        if with_i:
            items.append(_Phrase(["I"], 1, False, _tags("person")))
        words: list[str] = []
        for item in items[:-2]:
            words += [*item.words, ","]
        words += [*items[-2].words, "and", *items[-1].words]
        common = frozenset.intersection(*(item.tags for item in items))
        return _Phrase(words, 1 if with_i else 3, True, common)

    @staticmethod
    def _object_wh(
        phrase: _Phrase, residue: tuple[str, ...]
    ) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
        word = "who" if "person" in phrase.tags else "what"
        if phrase.head:
            return (((word,), residue), (("which", phrase.head), residue))
        return (((word,), residue),)

    def _noun_phrase(
        self,
        tags: frozenset[str],
        depth: int,
        *,
        indefinite: bool = False,
        ground: bool = False,
        avoid: str = "",
        noun: _Noun | None = None,
        simple: bool = False,
        nonrestrictive: bool = True,
    ) -> _Phrase:
        """A noun phrase whose head shares a tag with ``tags`` (or is ``noun``).

        ``simple`` leaves out prepositional phrases and relative clauses (list items);
        ``nonrestrictive`` False leaves out non-restrictive ones.
        """
        rng = self._rng
        d = min(depth, MAX_DEPTH)
        if noun is None:
            nouns = self._nouns(tags)
            noun = nouns[int(rng.random() * len(nouns))]
            if noun.singular == avoid:
                noun = nouns[int(rng.random() * len(nouns))]
        plural = bool(noun.plural) and rng.random() < (P_GROUND_PLURAL if ground else P_PLURAL)
        form = noun.plural if plural else noun.singular
        adjectives = self._adjectives(noun, depth)
        if not noun.plural:
            table = _W_INDEF_MASS if indefinite else _W_GROUND_MASS if ground else _W_MASS
        elif plural:
            table = _W_INDEF_PLURAL if indefinite else _W_GROUND_PLURAL if ground else _W_PLURAL
        else:
            table = _W_GROUND_SINGULAR if ground else _W_SINGULAR
        det = "a" if indefinite and noun.plural and not plural else table.pick(rng)
        if det == "a":
            det = _article((adjectives or [form])[0])
        words = [det, *adjectives, form] if det else [*adjectives, form]
        head = form if noun.plural else ""
        if simple:
            return _Phrase(words, 3, plural, noun.tags, head)
        with_pp = rng.random() < P_NOUN_PP[d]
        if with_pp:
            words += self._noun_pp(noun, depth + 1)
        if rng.random() < P_RELATIVE[d]:
            words += self._relative(noun, plural, depth + 1)
        elif (
            nonrestrictive and det in DEFINITE_DETERMINERS and not with_pp
            and rng.random() < P_NONRESTRICTIVE[d]
        ):
            # Only right after the head noun, so that the clause cannot be read as describing
            # the noun of a prepositional phrase; set off by commas on both sides, and
            # _punctuate drops the closing one where the sentence ends or a comma follows anyway.
            words += [",", *self._relative(noun, plural, depth + 1, nonrestrictive=True), ","]
        return _Phrase(words, 3, plural, noun.tags, head)

    def _adjectives(self, noun: _Noun, depth: int) -> list[str]:
        rng = self._rng
        d = min(depth, MAX_DEPTH)
        r = rng.random()
        if r >= P_ADJECTIVE[d]:
            return []
        candidates = self._adjectives_for(noun.tags)
        if not candidates:
            return []
        first = rng.choice(candidates)
        chosen = [first]
        if r < P_TWO_ADJECTIVES[d]:
            second = rng.choice(candidates)
            if second.rank != first.rank:
                chosen = sorted((first, second), key=lambda adj: adj.rank)
        words = [adj.word for adj in chosen]
        if chosen[0].gradable and rng.random() < P_VERY:
            words.insert(0, "very")
        return words

    def _noun_pp(self, noun: _Noun, depth: int) -> list[str]:
        rules = self._rules("noun", noun.tags)
        if rules is None:
            return []
        rule = rules.pick(self._rng)
        # No non-restrictive clause on the ground: its closing comma would make the relative
        # clause of the host look non-restrictive too ("the cup on the table, which ...,
        # which I bought").
        ground = self._noun_phrase(
            rule.ground, depth, ground=True, avoid=noun.singular, nonrestrictive=False
        )
        return [rule.prep, *ground.words]

    def _location(self, tags: frozenset[str], depth: int) -> list[str]:
        rng = self._rng
        if "person" in tags and rng.random() < 0.06:
            return ["at", "home"]
        rules = self._rules("location", tags)
        if rules is None:
            rules = self._rules("location", _tags("person"))
            assert rules is not None
        rule = rules.pick(rng)
        return [rule.prep, *self._noun_phrase(rule.ground, depth, ground=True).words]

    def _goal(self, frame: _Frame, depth: int) -> _Slot:
        rng = self._rng
        r = rng.random()
        if r < 0.12:
            words = ["home"]
        elif r < 0.8:
            words = ["to", *self._noun_phrase(_tags("goal"), depth + 1, ground=True).words]
        elif r < 0.9 and frame.verb in INTO_VERBS:
            goal = self._noun_phrase(_tags("room building"), depth + 1, ground=True)
            words = ["into", *goal.words]
        else:
            words = ["across", *self._noun_phrase(_tags("across"), depth + 1, ground=True).words]
        return _Slot(words, ((("where",), ()),))

    def _relative(
        self, noun: _Noun, plural: bool, depth: int, *, nonrestrictive: bool = False
    ) -> list[str]:
        """A relative clause on ``noun``; a non-restrictive one takes "who" or "which", never
        "that"."""
        rng = self._rng
        if nonrestrictive:
            pronoun = "who" if "person" in noun.tags else "which"
        elif "person" in noun.tags:
            pronoun = "who" if rng.random() < 0.65 else "that"
        else:
            pronoun = "which" if rng.random() < 0.5 else "that"
        time = _W_TIMES.pick(rng)
        head = _Phrase([], 3, plural, noun.tags)
        r = rng.random()
        if r < 0.45:
            frames = [f for k in _RELATIVE_SUBJECT_KINDS for f in self._frames(k, noun.tags)]
            if frames:
                frame = frames[int(rng.random() * len(frames))]
                clause = self._build(frame, time, depth, subject=head, neg_p=0.08)
                return [pronoun, *_predicate(clause)]
        elif r < 0.8:
            frames = [
                f for k in _RELATIVE_OBJECT_KINDS for f in self._frames(k, noun.tags, "object")
            ]
            if frames:
                frame = frames[int(rng.random() * len(frames))]
                gap = _Phrase([], 3, plural, noun.tags)
                clause = self._build(frame, time, depth, obj=gap, neg_p=0.05)
                return [pronoun, *_declarative(clause)]
        clause = self._copula(time, depth, subject=head, neg_p=0.05)
        return [pronoun, *_predicate(clause)]


# --------------------------------------------------------------------------------------------
# Vocabulary and batch generation.
# --------------------------------------------------------------------------------------------


def _collect_vocabulary() -> frozenset[str]:
    words: set[str] = set(FUNCTION_WORDS)
    for noun in NOUNS:
        words.add(noun.singular)
        if noun.plural:
            words.add(noun.plural)
    words.update(adj.word for adj in ADJECTIVE_ENTRIES)
    words.update(WEATHER_ADJECTIVES)
    progressive: set[str] = set(WEATHER_VERBS) | set(EVENT_VERBS)
    for frames in FRAMES.values():
        progressive.update(frame.verb for frame in frames if not frame.stative)
    for verb, forms in VERB_FORMS.items():
        words.update((forms.base, forms.third, forms.past, forms.participle))
        if verb in progressive:
            words.add(forms.ing)
    words.update(word.lower() for word, *_ in SUBJECT_PRONOUNS)
    words.update(word for word, *_ in OBJECT_PRONOUNS)
    for table in (
        SINGULAR_DETERMINERS, PLURAL_DETERMINERS, MASS_DETERMINERS,
        INDEFINITE_PLURAL_DETERMINERS, SUBORDINATORS,
    ):
        words.update(word for word, _ in table if word)
    words.update(rule.prep for rule, _ in _NOUN_PP_RULES + _LOCATION_RULES)
    words.update(frame.prep for frames in FRAMES.values() for frame in frames if frame.prep)
    words.update(word for phrase in TRANSPORT for word in phrase)
    words.update(MANNER_ADVERBS)
    for phrases in TIME_ADVERBIALS.values():
        words.update(word for phrase in phrases for word in phrase.split())
    for adverbs in (*PRE_ADVERBS.values(), *COPULA_ADVERBS.values()):
        words.update(adverbs)
    for phrase in (
        *(marker for marker, *_ in DISCOURSE_MARKERS), *(marker for marker, _ in QUESTION_MARKERS),
        *(vocative for vocative, _ in VOCATIVES),
    ):
        words.update(phrase.split())
    return frozenset(words)


VOCABULARY: frozenset[str] = _collect_vocabulary()


def generate(n: int, seed: int, exclude: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """``n`` distinct sentences from ``Grammar(seed)``, none of them in ``exclude``."""
    grammar = Grammar(seed)
    seen: set[str] = set()
    sentences: list[str] = []
    attempts = 0
    limit = 50 * n + 1000
    while len(sentences) < n:
        if attempts >= limit:
            raise RuntimeError(f"could not draw {n} distinct sentences in {limit} attempts")
        attempts += 1
        sentence = grammar.sentence()
        if sentence not in seen and sentence not in exclude:
            seen.add(sentence)
            sentences.append(sentence)
    return sentences
