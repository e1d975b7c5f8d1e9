"""The German lexicon of the mini corpus: ``lexicon_de.yaml``, checked and compiled.

The German realiser (:mod:`simul.corpus.mini.german`) says the English grammar's sentences
in German; this module reads the words it needs, once at import: nouns (gender, plural, the
weak masculines' oblique form, feminine forms of jobs, the prepositions a place takes),
adjectives, verbs (principal parts, separable prefix, auxiliary), the German verb and cases of
every English verb frame, and the phrase tables (time adverbials, adverbs, markers, ...) with
the English word each German word translates.  A malformed entry raises ValueError naming the
file, table, entry and field.  Closed classes (articles, pronouns, subordinators, prepositions
and their cases) are rules of the realiser, not data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from simul.corpus.mini import lexicon as en

PATH = Path(__file__).with_name("lexicon_de.yaml")

#: German prepositions a noun may take instead of the realiser's default.
PREPOSITIONS = ("in", "an", "auf", "bei", "zu", "nach", "aus", "von", "unter", "hinter", "über",
                "neben", "vor")
CASES = ("acc", "dat")


@dataclass(frozen=True, slots=True)
class Noun:
    de: str
    gender: str
    plural: str = ""
    weak: str = ""
    female: bool = False
    fem: str = ""
    fem_plural: str = ""
    prep: tuple[tuple[str, str], ...] = ()

    def preposition(self, english: str, default: str) -> str:
        return dict(self.prep).get(english, default)


@dataclass(frozen=True, slots=True)
class Adjective:
    de: str
    stem: str
    very: bool = True


@dataclass(frozen=True, slots=True)
class Verb:
    inf: str
    pres: str
    past: str
    part: str
    aux: str = "haben"
    prefix: str = ""
    ich: str = ""
    du: str = ""
    modal: bool = False

    @property
    def base(self) -> str:
        """The infinitive without its separable prefix."""
        return self.inf[len(self.prefix):]


@dataclass(frozen=True, slots=True)
class Frame:
    verb: str
    case: str = "acc"
    prep: str = ""
    pcase: str = "acc"
    by_tag: tuple[tuple[str, str], ...] = ()
    correlate: str = ""


@dataclass(frozen=True, slots=True)
class Marker:
    words: tuple[tuple[str, tuple[int, ...]], ...]
    v2: bool


class _Bad(Exception):
    pass


def _str(value: Any, where: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise _Bad(f"{where}: expected a word, got {value!r}")
    return value


def _fields(entry: Any, where: str, allowed: dict[str, bool]) -> dict[str, Any]:
    """``entry`` as a mapping with only ``allowed`` keys (True: required)."""
    if not isinstance(entry, dict):
        raise _Bad(f"{where}: expected a mapping, got {entry!r}")
    for key in entry:
        if key not in allowed:
            raise _Bad(f"{where}: unknown field {key!r} (allowed: {', '.join(allowed)})")
    for key, required in allowed.items():
        if required and key not in entry:
            raise _Bad(f"{where}: field {key!r} missing")
    return entry


def _phrase(value: Any, where: str, n_english: int) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """``"vor:2 zwei:0 Tagen:1"`` → ((word, english indices), ...)."""
    out = []
    for item in _str(value, where).split():
        word, _, indices = item.partition(":")
        try:
            links = tuple(int(i) for i in indices.split(",")) if indices else ()
        except ValueError:
            raise _Bad(f"{where}: {item!r} is not WORD or WORD:I[,J]") from None
        if any(not 0 <= i < n_english for i in links):
            raise _Bad(f"{where}: {item!r} points past the {n_english} English words")
        out.append((word, links))
    return tuple(out)


def _required(table: dict, keys: set[str], where: str) -> None:
    missing = sorted(keys - set(table))
    if missing:
        raise _Bad(f"{where}: no entry for {', '.join(map(repr, missing[:5]))}"
                   f"{' ...' if len(missing) > 5 else ''}")


def english_frames() -> set[str]:
    """The keys of ``frames``: one per frame of the English lexicon."""
    keys = set()
    events = set(en.EVENT_VERBS)
    for kind, frames in en.FRAMES.items():
        for frame in frames:
            if frame.verb in events:
                keys.add(f"event {frame.verb}")
            elif kind in ("prep", "place", "ditr"):
                keys.add(f"{kind} {frame.verb} {frame.prep}")
            else:
                keys.add(f"{kind} {frame.verb}")
    keys.update(f"weather {verb}" for verb in en.WEATHER_VERBS)
    return keys


def load(path: Path = PATH) -> dict[str, Any]:
    """Read and check ``lexicon_de.yaml``; every English word the grammar uses must have its
    German."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return _compile(data)
    except _Bad as e:
        raise ValueError(f"{path}: {e}") from None


def _compile(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _Bad("expected a mapping of tables")
    out: dict[str, Any] = {}
    nouns = {}
    for key, entry in data.get("nouns", {}).items():
        where = f"nouns: {key}"
        e = _fields(entry, where, {"de": True, "g": True, "pl": False, "weak": False,
                                   "female": False, "fem": False, "fem_pl": False, "prep": False})
        if e["g"] not in ("m", "f", "n"):
            raise _Bad(f"{where}: field 'g' must be m, f or n, got {e['g']!r}")
        prep = e.get("prep", {})
        for english, german in prep.items():
            if german not in PREPOSITIONS:
                raise _Bad(f"{where}: prep {english}: {german!r} is not one of {PREPOSITIONS}")
        nouns[key] = Noun(_str(e["de"], where), e["g"], e.get("pl", ""), e.get("weak", ""),
                          bool(e.get("female", False)), e.get("fem", ""), e.get("fem_pl", ""),
                          tuple(sorted(prep.items())))
    count = {noun for noun, _, _ in en.COUNT_NOUNS}
    _required(nouns, count | {noun for noun, _ in en.MASS_NOUNS}, "nouns")
    for key in count:
        if not nouns[key].plural:
            raise _Bad(f"nouns: {key}: field 'pl' missing (a count noun)")
    for noun, _, tags in en.COUNT_NOUNS:
        if "job" in tags.split() and not (nouns[noun].fem and nouns[noun].fem_plural):
            raise _Bad(f"nouns: {noun}: fields 'fem' and 'fem_pl' missing (a job)")
    out["nouns"] = nouns

    adjectives = {}
    for key, entry in data.get("adjectives", {}).items():
        where = f"adjectives: {key}"
        e = _fields(entry, where, {"de": True, "stem": False, "very": False})
        adjectives[key] = Adjective(_str(e["de"], where), e.get("stem", e["de"]),
                                    bool(e.get("very", True)))
    _required(adjectives, {a for a, *_ in en.ADJECTIVES}, "adjectives")
    out["adjectives"] = adjectives
    weather = {k: _str(v, f"weather_adjectives: {k}")
               for k, v in data.get("weather_adjectives", {}).items()}
    _required(weather, set(en.WEATHER_ADJECTIVES), "weather_adjectives")
    out["weather_adjectives"] = weather

    verbs = {}
    for key, entry in data.get("verbs", {}).items():
        where = f"verbs: {key}"
        e = _fields(entry, where, {"pres": True, "past": True, "part": True, "aux": False,
                                   "prefix": False, "ich": False, "du": False, "modal": False})
        if e.get("aux", "haben") not in ("haben", "sein"):
            raise _Bad(f"{where}: field 'aux' must be haben or sein")
        prefix = e.get("prefix", "")
        if prefix and not key.startswith(prefix):
            raise _Bad(f"{where}: the infinitive does not start with its prefix {prefix!r}")
        verbs[key] = Verb(key, e["pres"], e["past"], e["part"], e.get("aux", "haben"), prefix,
                          e.get("ich", ""), e.get("du", ""), bool(e.get("modal", False)))
    out["verbs"] = verbs

    frames = {}
    for key, entry in data.get("frames", {}).items():
        where = f"frames: {key}"
        e = _fields(entry, where, {"verb": True, "case": False, "prep": False, "pcase": False,
                                   "by_tag": False, "correlate": False})
        for field in ("case", "pcase"):
            if e.get(field, "acc") not in CASES:
                raise _Bad(f"{where}: field {field!r} must be acc or dat")
        by_tag = tuple(sorted(e.get("by_tag", {}).items()))
        for verb in (e["verb"], *(v for _, v in by_tag)):
            if verb not in verbs and verb not in ("sein", "haben", "werden"):
                raise _Bad(f"{where}: verb {verb!r} is not in the table 'verbs'")
        if e.get("correlate", "") not in ("", "es", "daran"):
            raise _Bad(f"{where}: field 'correlate' must be es or daran")
        frames[key] = Frame(e["verb"], e.get("case", "acc"), e.get("prep", ""),
                            e.get("pcase", "acc"), by_tag, e.get("correlate", ""))
    _required(frames, english_frames(), "frames")
    out["frames"] = frames

    phrases = data.get("phrases", {})
    if not isinstance(phrases, dict):
        raise _Bad("phrases: expected a mapping")
    wanted = {
        "time_adverbials": {p for ps in en.TIME_ADVERBIALS.values() for p in ps},
        "manner_adverbs": set(en.MANNER_ADVERBS),
        "adverbs": {a for table in (*en.PRE_ADVERBS.values(), *en.COPULA_ADVERBS.values())
                    for a in table},
        "transport": {" ".join(t) for t in en.TRANSPORT},
        "vocatives": {v for v, _ in en.VOCATIVES},
    }
    for table, keys in wanted.items():
        rows = phrases.get(table, {})
        out[table] = {k: _phrase(v, f"phrases: {table}: {k}", len(k.split()))
                      for k, v in rows.items()}
        _required(out[table], keys, f"phrases: {table}")
    for table, keys in (("discourse_markers", {m for m, *_ in en.DISCOURSE_MARKERS}),
                        ("question_markers", {m for m, _ in en.QUESTION_MARKERS})):
        rows = phrases.get(table, {})
        compiled = {}
        for k, v in rows.items():
            where = f"phrases: {table}: {k}"
            e = _fields(v, where, {"de": True, "v2": True})
            compiled[k] = Marker(_phrase(e["de"], where, len(k.split())), bool(e["v2"]))
        _required(compiled, keys, f"phrases: {table}")
        out[table] = compiled
    return out


LEXICON = load() if PATH.exists() else {}
