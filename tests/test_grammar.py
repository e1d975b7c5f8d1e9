"""Tests for simul.corpus.mini.grammar and .lexicon: determinism, sentence shape, vocabulary,
constructions, and the checks on lexicon.yaml."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from simul.corpus.mini import lexicon
from simul.corpus.mini.grammar import MAX_WORDS, MIN_WORDS, VOCABULARY, Grammar, generate
from simul.corpus.mini.lexicon import ADJECTIVES, LEXICON_PATH, NOUNS, VERB_FORMS, load_lexicon

ROOT = Path(__file__).resolve().parents[1]
N = 5000
SHAPE = re.compile(r"[A-Z][a-z]*(,? (?:[a-z]+|I))*[.?]")
NOUN_FORMS = frozenset(form for noun in NOUNS for form in (noun.singular, noun.plural) if form)
RELATIVE = re.compile(r"\b(\w+) (?:who|which|that) ")
SUBORDINATORS = ("because", "when", "although", "if", "before", "after", "while")
PARTICIPLES = frozenset(forms.participle for forms in VERB_FORMS.values())
# Inflected forms that can never follow do-support or "will".
FINITE_ONLY = frozenset(
    form
    for forms in VERB_FORMS.values()
    for form in (forms.third, forms.past)
    if form != forms.base
) - frozenset(forms.base for forms in VERB_FORMS.values())
BARE_ONLY = frozenset(
    f.base for f in VERB_FORMS.values() if f.base not in (f.third, f.past)
) - NOUN_FORMS
THIRD_ONLY = frozenset(f.third for f in VERB_FORMS.values() if f.third != f.base) - NOUN_FORMS
ADJECTIVE_WORDS = frozenset(word for word, *_ in ADJECTIVES)
PERSON_NOUNS = frozenset(
    form for noun in NOUNS if "person" in noun.tags for form in (noun.singular, noun.plural)
)
DETERMINERS = frozenset(
    "the a an this that these those my your his her our their some two three four many".split()
)
DEFINITE = frozenset("the this that these those my your his her our their".split())
# A simple noun phrase: an optional determiner, up to three modifiers, a noun.
_NOUN = "|".join(sorted(NOUN_FORMS, key=len, reverse=True))
ITEM = rf"(?:(?:{'|'.join(sorted(DETERMINERS))}) )?(?:[a-z]+ ){{0,3}}?(?:{_NOUN})"
# Three or four noun phrases with commas and a final "and" (no serial comma).
LIST = re.compile(rf"\b{ITEM}, {ITEM}(?:, {ITEM})? and (?:{ITEM}|I)\b")
# A list opening a statement and the word after it: the verb group of a list subject.
LIST_SUBJECT = re.compile(
    rf"(?:{'|'.join(sorted(d.capitalize() for d in DETERMINERS))}) (?:[a-z]+ ){{0,3}}?"
    rf"(?:{_NOUN}), {ITEM}(?:, {ITEM})? and (?:{ITEM}|I) ([a-z]+) "
)
MARKERS = (
    "Well", "Yes", "No", "Of course", "However", "Then", "Also", "In fact", "Finally", "First",
    "Now",
)


def words(sentence: str) -> list[str]:
    return re.findall(r"[A-Za-z]+", sentence)


@pytest.fixture(scope="module")
def sentences() -> list[str]:
    return generate(N, seed=1)


def test_same_seed_same_sentences():
    assert generate(300, seed=7) == generate(300, seed=7)
    a, b = Grammar(3), Grammar(3)
    assert [a.sentence() for _ in range(50)] == [b.sentence() for _ in range(50)]


def test_different_seeds_differ():
    assert generate(100, seed=1) != generate(100, seed=2)
    a, b = Grammar(1), Grammar(2)
    assert [a.sentence() for _ in range(5)] != [b.sentence() for _ in range(5)]


def test_same_seed_across_processes():
    code = "from simul.corpus.mini.grammar import generate; print('\\n'.join(generate(200, 5)))"
    outputs = []
    for hash_seed in ("0", "123"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        outputs.append(proc.stdout.splitlines())
    assert outputs[0] == outputs[1] == generate(200, seed=5)


def test_generate_distinct_and_respects_exclude():
    first = generate(2000, seed=4)
    assert len(set(first)) == 2000
    excluded = set(first[:500])
    rest = generate(1000, seed=4, exclude=excluded)
    assert not excluded & set(rest)
    assert rest == first[500:1500]
    assert generate(1000, seed=4, exclude=frozenset(excluded)) == rest
    assert generate(0, seed=4) == []


def test_sentence_shape(sentences):
    for s in sentences:
        assert SHAPE.fullmatch(s), s
    assert any(s.endswith("?") for s in sentences)
    assert any(s.endswith(".") for s in sentences)
    assert any("," in s for s in sentences)


def test_length_statistics(sentences):
    lengths = [len(words(s)) for s in sentences]
    assert min(lengths) >= MIN_WORDS >= 4
    assert max(lengths) <= MAX_WORDS <= 40
    assert 13 <= statistics.mean(lengths) <= 19
    long_share = sum(n >= 25 for n in lengths) / len(lengths)
    assert 0.05 <= long_share <= 0.2


def test_vocabulary(sentences):
    assert 500 <= len(VOCABULARY) <= 1500
    assert all(re.fullmatch(r"[a-z]+", w) for w in VOCABULARY)
    emitted = {w.lower() for s in sentences for w in words(s)}
    assert emitted <= VOCABULARY, sorted(emitted - VOCABULARY)


def test_questions(sentences):
    questions = [s for s in sentences if s.endswith("?")]
    assert len(questions) > N // 5
    for wh in ("What", "Who", "Which", "Where", "When", "Why", "How"):
        assert any(q.startswith(wh + " ") for q in questions), wh
    for operator in ("Do", "Does", "Did"):
        assert any(q.startswith(operator + " ") for q in questions), operator
    for operator in ("Is", "Are", "Was", "Were", "Will", "Has", "Have"):
        assert any(q.startswith(operator + " ") for q in questions), operator
    assert any(re.match(r"Who \w+ed\b", q) for q in questions)
    assert any(re.match(r"How [a-z]+ (is|are|was|were) ", q) for q in questions)
    assert any(re.search(r" (to|for|with|at|about)\?$", q) for q in questions)


def test_negation_and_tenses(sentences):
    assert sum(" not " in s for s in sentences) > N // 20
    assert any(re.search(r"\b(did|does|do) not \w+", s) for s in sentences)
    assert any(" will " in s for s in sentences)
    assert any(re.search(r"\b(went|saw|ate|bought|wrote|took)\b", s) for s in sentences)
    assert any(re.search(r"\b\w+ed\b", s) for s in sentences)
    perfect = re.compile(r"\b(has|have)( not| already| just| never| always| ever)? (\w+)")
    assert any(
        m.group(3) in PARTICIPLES for s in sentences for m in perfect.finditer(s.lower())
    )
    assert any(re.search(r"\b(am|is|are) \w+ing\b", s) for s in sentences)
    assert any(re.search(r"\b(was|were) \w+ing\b", s) for s in sentences)


def test_noun_phrases_and_clauses(sentences):
    assert any(" very " in s for s in sentences)
    with_relatives = [
        s for s in sentences if any(m.group(1) in NOUN_FORMS for m in RELATIVE.finditer(s))
    ]
    assert len(with_relatives) > N // 20
    assert any(len(RELATIVE.findall(s)) >= 2 for s in with_relatives)
    for pronoun in ("who", "which", "that"):
        assert any(f" {pronoun} " in s for s in with_relatives), pronoun
    for word in SUBORDINATORS:
        assert any(
            f" {word} " in s or (s.startswith(word.capitalize() + " ") and "," in s)
            for s in sentences
        ), word
    assert any(re.match(r"(Because|When|Although|If|Before|After|While) [^,]+, ", s)
               for s in sentences)
    assert any(" and " in s for s in sentences)
    assert any(", but " in s for s in sentences)
    assert any(re.search(r"\b(in|on|under|near|at|with|from) the \w+", s) for s in sentences)
    assert any(s.startswith("There ") or s.startswith(("Is there ", "Are there "))
               for s in sentences)


def test_agreement_and_articles(sentences):
    bad = [
        re.compile(r"\b(he|she|it) (do|are|were|am)\b"),
        re.compile(r"(?<!will )(?<!does )(?<!did )\b(he|she|it) have\b"),
        re.compile(r"\b(we|they) (does|has|is|was|am)\b"),
        re.compile(r"(^|, )i (is|are|has|does|were)\b"),
        re.compile(r"\b(he|she) do\b|\bthey does\b|\ba apple\b|\ban dog\b"),
    ]
    for s in sentences:
        low = s.lower()
        assert not any(p.search(low) for p in bad), s
        tokens = [w.lower() for w in words(s)]
        if tokens[0] in ("he", "she"):
            assert tokens[1] not in BARE_ONLY, s
        if tokens[0] in ("i", "we", "they"):
            assert tokens[1] not in THIRD_ONLY, s
        for i, (word, following) in enumerate(zip(tokens, tokens[1:], strict=False)):
            if word == "a":
                assert following[0] not in "aeiou" or following == "useful", s
            elif word == "an":
                assert following[0] in "aeiou", s
            elif word in ("did", "does", "do", "will") and following == "not":
                assert tokens[i + 2] not in FINITE_ONLY, s


def test_irregular_and_regular_forms():
    assert VERB_FORMS["go"].third == "goes" and VERB_FORMS["go"].past == "went"
    assert VERB_FORMS["go"].participle == "gone"
    assert VERB_FORMS["have"].third == "has" and VERB_FORMS["have"].past == "had"
    assert VERB_FORMS["carry"].third == "carries" and VERB_FORMS["carry"].past == "carried"
    assert VERB_FORMS["play"].past == "played" and VERB_FORMS["watch"].third == "watches"
    assert VERB_FORMS["stop"].ing == "stopping" and VERB_FORMS["stop"].past == "stopped"
    assert VERB_FORMS["make"].ing == "making" and VERB_FORMS["see"].ing == "seeing"
    assert VERB_FORMS["swim"].participle == "swum" and VERB_FORMS["swim"].ing == "swimming"
    assert VERB_FORMS["write"].participle == "written"


@pytest.mark.apertium
@pytest.mark.skipif(shutil.which("apertium") is None, reason="apertium is not installed")
def test_apertium_knows_every_word(tmp_path):
    path = tmp_path / "vocabulary.txt"
    path.write_text("\n\n".join("I" if w == "i" else w for w in sorted(VOCABULARY)) + "\n")
    proc = subprocess.run(
        ["apertium", "eng-spa", str(path)], capture_output=True, text=True, check=True
    )
    unknown = sorted({token.lstrip("*").lower() for token in re.findall(r"\*\w+", proc.stdout)})
    assert not unknown, unknown


def test_inner_commas(sentences):
    """About as many sentences carry a comma inside as in punctuated TED talks."""
    share = sum("," in s for s in sentences) / len(sentences)
    assert 0.35 <= share <= 0.5, share
    for s in sentences:
        assert not re.search(r",[.?]|,,|^,", s), s


def test_lists(sentences):
    lists = [m.group(0) for s in sentences for m in LIST.finditer(s)]
    assert len(lists) > N // 50
    assert any(item.count(",") == 2 for item in lists)
    assert any(item.endswith(" and I") for item in lists)
    # No serial comma: "the dogs, the cats, and the birds".
    assert not any(re.search(rf"{ITEM}, {ITEM}, and ", s) for s in sentences)
    # Predicates: "The park is big, quiet and beautiful."
    adjective_lists = [
        m.groups() for s in sentences
        for m in re.finditer(r"\b(?:is|are|was|were|be|been) (\w+), (\w+) and (\w+)\b", s)
    ]
    assert sum(set(words) <= ADJECTIVE_WORDS for words in adjective_lists) > N // 200


def test_list_subject_is_plural(sentences):
    verbs = [m.group(1) for s in sentences if s.endswith(".") and (m := LIST_SUBJECT.match(s))]
    assert len(verbs) > N // 200
    singular = {"is", "was", "has", "does", "am"} | THIRD_ONLY
    assert not singular & set(verbs), sorted(singular & set(verbs))
    assert {"are", "were", "have", "do"} & set(verbs)


def test_discourse_markers(sentences):
    opening = {
        marker: [s for s in sentences if s.startswith(marker + ", ")] for marker in MARKERS
    }
    for marker, found in opening.items():
        assert found, marker
    assert sum(len(found) for found in opening.values()) > N // 20
    assert all(" not " not in s for s in opening["Yes"])
    assert all(" not " in s for s in opening["No"])
    assert any(s.endswith("?") for found in opening.values() for s in found)
    assert any(re.search(r", my friends?[.?]$", s) for s in sentences)


def test_nonrestrictive_relatives(sentences):
    """", who ..." for people and ", which ..." for things, after a definite noun phrase."""
    found = 0
    for s in sentences:
        for m in re.finditer(r", (who|which) ", s):
            before = s[: m.start()].split()
            if len(before) == 1:
                continue  # "Well, who ...?": a discourse marker, then a wh-question
            found += 1
            noun = before[-1]
            assert noun in NOUN_FORMS, s
            assert (m.group(1) == "who") == (noun in PERSON_NOUNS), s
            determiner = next(w for w in reversed(before[-5:-1]) if w.lower() in DETERMINERS)
            assert determiner.lower() in DEFINITE, s
    assert found > N // 25
    # A subject with a non-restrictive clause: the clause is closed by a comma before the verb.
    adjectives = "|".join(sorted(ADJECTIVE_WORDS | {"very"}))
    subject = re.compile(
        rf"(?:The|This|These|My|Our|His|Her|Their|Your) (?:(?:{adjectives}) ){{0,3}}"
        rf"(?:{_NOUN}), (?:who|which) "
    )
    opening = [s for s in sentences if subject.match(s)]
    assert len(opening) > N // 200
    assert all(re.match(r"[^,]+, (who|which) [^,]+, [a-z]", s) for s in opening), opening


@pytest.mark.apertium
@pytest.mark.skipif(shutil.which("apertium") is None, reason="apertium is not installed")
def test_apertium_keeps_commas(sentences):
    from simul.corpus.mini.translate import translate

    source = [s for s in sentences if "," in s][:200]
    targets = translate(source, ("es", "pt"))
    for lang, lines in targets.items():
        kept = sum(t.count(",") == s.count(",") for s, t in zip(source, lines, strict=True))
        assert kept >= 0.95 * len(source), (lang, kept)
        assert sum(t.count(",") for t in lines) >= sum(s.count(",") for s in source), lang


def test_lexicon_file_is_what_the_grammar_reads():
    """The module's tables are those of lexicon.yaml (parsed here independently of the loader)."""
    assert LEXICON_PATH == Path(lexicon.__file__).with_name("lexicon.yaml")
    raw = yaml.safe_load(LEXICON_PATH.read_text(encoding="utf-8"))
    assert [list(row) for row in lexicon.COUNT_NOUNS] == raw["count_nouns"]
    assert [list(row) for row in ADJECTIVES] == raw["adjectives"]
    assert [list(row) for row in lexicon.TRANSITIVE] == raw["transitive"]
    assert lexicon.SINGULAR_DETERMINERS == tuple(raw["singular_determiners"].items())
    assert lexicon.P_ADJECTIVE == tuple(raw["probabilities"]["adjective"])
    assert lexicon.P_MARKER == raw["probabilities"]["marker"]
    # The compiled tables come from the file, in its order.
    assert [noun.singular for noun in NOUNS] == [
        row[0] for row in raw["count_nouns"] + raw["mass_nouns"]
    ]
    assert [frame.verb for frame in lexicon.FRAMES["prep"]] == [
        row[0] for row in raw["prepositional"]
    ]
    assert load_lexicon(LEXICON_PATH)["noun_pps"] == lexicon.NOUN_PPS


def test_lexicon_is_package_data():
    """A plain (non-editable) install ships lexicon.yaml beside lexicon.py."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_data = config["tool"]["setuptools"]["package-data"]
    assert LEXICON_PATH.name in package_data["simul.corpus.mini"]


# (what is wrong, text of lexicon.yaml, its replacement, expected message after the file name)
MALFORMED = [
    ("noun without tags", "  - [man, men, person adult]\n", "  - [man, men]\n",
     r"count_nouns\[0\] \(man\): expected \[singular, plural, tags\], got \['man', 'men'\]"),
    ("capitalised noun", "  - [boy, ", "  - [Boy, ",
     r"count_nouns\[2\] \(Boy\): singular: expected a lower-case word"),
    ("probability above 1", "  plural: 0.3\n", "  plural: 1.5\n",
     r"probabilities: plural: expected a probability from 0 to 1, got 1\.5"),
    ("negative depth probability", "  time: [0.45, 0.25, 0.1, 0.05]",
     "  time: [0.45, -0.25, 0.1, 0.05]",
     r"probabilities: time\[1\]: expected a probability from 0 to 1, got -0\.25"),
    ("depth table too short", "  adjective: [0.45, 0.3, 0.15, 0.08]", "  adjective: [0.45, 0.3]",
     r"probabilities: adjective: expected a list of 4 probabilities"),
    ("missing probability", "  very: 0.15\n", "", r"probabilities: missing 'very'"),
    ("unquoted YAML boolean", '[sit, "on", person animal, furniture]',
     "[sit, on, person animal, furniture]",
     r"prepositional\[12\] \(sit\): preposition: expected a lower-case word, got True .*quote"),
    ("adjective rank", "  - [red, 3, thing, false]", "  - [red, 4, thing, false]",
     r"adjectives\[\d+\] \(red\): rank: expected an integer from 0 to 3, got 4"),
    ("negative weight", "ground_mass_determiners: {the: 80,", "ground_mass_determiners: {the: -80,",
     r"ground_mass_determiners: the: expected a weight"),
    ("tag on no noun", "  - [eat, person animal, food]", "  - [eat, persn animal, food]",
     r"transitive\[0\] \(eat\): tag 'persn' is on no noun"),
    ("unknown tense", "  prog: [now, today,", "  progressive: [now, today,",
     r"time_adverbials: missing 'prog'"),
    ("unknown subordinator", "  because: {future:", "  becaus: {future:",
     r"subordinate_tenses: 'becaus' is not in subordinators"),
    ("missing table", "event_verbs: [happen]\n", "", r"tables: missing 'event_verbs'"),
    ("duplicate key", "times: {past: 45, present: 35, future: 20}",
     "times: {past: 45, present: 35, past: 20}", r"duplicate key 'past'"),
    ("YAML syntax", "  - [man, men, person adult]\n", "  - [man, men, person adult\n",
     r"not valid YAML"),
]


@pytest.mark.parametrize(
    ("old", "new", "message"), [case[1:] for case in MALFORMED], ids=[case[0] for case in MALFORMED]
)
def test_malformed_lexicon_names_file_and_entry(tmp_path, old, new, message):
    text = LEXICON_PATH.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the test's anchor {old!r} is not once in lexicon.yaml"
    path = tmp_path / "lexicon.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(str(path)) + r": (.|\n)*" + message):
        load_lexicon(path)
