"""Seeded probabilistic grammar of everyday English for the synthetic mini corpus.

The sentences are the English side of a synthetic speech-translation corpus: they are
translated by apertium (``eng-spa``) and spoken by espeak-ng and festival, so the grammar only
emits plain lower-case ASCII words that apertium knows (plus a capital first letter, ``I``,
commas and a final ``.`` or ``?``): no digits, contractions, hyphens, quotes or proper names.
Every word of ``VOCABULARY`` (lower-cased, so ``I`` is listed as ``i``) is in apertium's
English dictionary; words whose Spanish apertium fails to generate (farm, station, manager,
...) are left out.

The grammar is a hand-written PCFG.  Its lexicon and probability tables (nouns, adjectives and
verbs with their tags, verb frames, determiners, prepositional-phrase rules, discourse markers,
weights and the ``P_*`` probabilities) live in ``lexicon.yaml``, read, checked and compiled
once at import by :mod:`simul.corpus.mini.lexicon`; the rules that use them are the code below.
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

Besides its words, the grammar keeps what it drew (:meth:`Grammar.parsed`): clauses with their
verb groups and slots, noun phrases, prepositional phrases, relative and subordinate clauses
and how the sentence joins them (:mod:`simul.corpus.mini.structure`), with the English words
themselves as leaves.  :mod:`simul.corpus.mini.german` says the same structure in German and
links each German word to the English words it translates.  Keeping it draws nothing: the
English of a seed is the same with or without it.
"""

from __future__ import annotations

import random
from bisect import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, Generic, TypeVar

from simul.corpus.mini.lexicon import (
    ADJECTIVE_ENTRIES,
    AGENT_TAGS,
    CLAUSE_KINDS,
    COPULA_ADVERBS,
    DEFINITE_DETERMINERS,
    DISCOURSE_MARKERS,
    EMBEDDED_KINDS,
    EVENT_VERBS,
    FRAMES,
    GROUND_MASS_DETERMINERS,
    GROUND_PLURAL_DETERMINERS,
    GROUND_SINGULAR_DETERMINERS,
    INDEFINITE_MASS_DETERMINERS,
    INDEFINITE_PLURAL_DETERMINERS,
    INFINITIVE_VERBS,
    INTO_VERBS,
    LOCATION_RULES,
    LOCATUM_TAGS,
    MANNER_ADVERBS,
    MASS_DETERMINERS,
    MAX_DEPTH,
    NOUN_PP_RULES,
    NOUNS,
    OBJECT_PRONOUNS,
    P_ADJECTIVE,
    P_ADJECTIVE_LIST,
    P_ADVERB,
    P_COMPANION,
    P_COORDINATED_SUBJECT,
    P_COORDINATION,
    P_FOURTH_ITEM,
    P_FRONT_TIME,
    P_GROUND_PLURAL,
    P_LIST_OBJECT,
    P_LIST_SUBJECT,
    P_LIST_WITH_I,
    P_LOCATION,
    P_MANNER,
    P_MARKER,
    P_NEGATIVE,
    P_NONRESTRICTIVE,
    P_NOUN_PP,
    P_OBJECT_PRONOUN,
    P_PLURAL,
    P_QUESTION_MARKER,
    P_QUESTION_SUBORDINATE,
    P_RELATIVE,
    P_SUBJECT_PRONOUN,
    P_SUBORDINATE,
    P_SUBORDINATE_NEGATIVE,
    P_TIME,
    P_TWO_ADJECTIVES,
    P_VERY,
    P_VOCATIVE,
    P_VP_COORDINATION,
    P_WH,
    P_WHICH,
    P_YES_NO,
    PLURAL_DETERMINERS,
    PRE_ADVERBS,
    PREDICABLE_TAGS,
    QUESTION_MARKERS,
    SINGULAR_DETERMINERS,
    STATIVE_TENSE,
    SUBJECT_PRONOUNS,
    SUBORDINATE_TENSES,
    SUBORDINATORS,
    TENSES,
    TIME_ADVERBIALS,
    TIMES,
    TRANSPORT,
    TRANSPORT_VERBS,
    VERB_FORMS,
    VOCATIVES,
    WEATHER_ADJECTIVES,
    WEATHER_VERBS,
    WH_WORDS,
    Adjective,
    Forms,
    Frame,
    Noun,
    Rule,
    article,
    tags_of,
)
from simul.corpus.mini.structure import NP, PP, Relative, Sentence, Sub, VerbGroup, W
from simul.corpus.mini.structure import words as _ws

__all__ = ["MAX_WORDS", "MIN_WORDS", "VOCABULARY", "Grammar", "generate"]

MIN_WORDS = 4
MAX_WORDS = 36

T = TypeVar("T")

# Words the rules emit directly, besides those of the lexicon's tables.
FUNCTION_WORDS: tuple[str, ...] = (
    "a", "an", "the", "not", "do", "does", "did", "will", "am", "is", "are", "was", "were", "be",
    "been", "has", "have", "to", "and", "but", "that", "which", "who", "what", "where", "when",
    "why", "how", "there", "it", "very", "home", "at", "into", "across", "with", "for", "it",
    "they",
)


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


@dataclass(slots=True)
class _Phrase:
    """A noun phrase with what agreement and selection need: person, number, tags, head."""

    words: list[str]
    person: int = 3
    plural: bool = False
    tags: frozenset[str] = frozenset()
    head: str = ""
    node: NP = field(default_factory=lambda: NP("gap"))


@dataclass(slots=True)
class _Slot:
    """Words after the verb group, with the (wh-phrase, words left behind) that may replace them.

    ``role`` and ``node`` keep what the words are, for other realisers: "obj" and "pivot" (a
    noun phrase), "iobj", "pobj", "place", "goal", "loc", "with" (a :class:`PP`), "time",
    "transport" (the phrase's words), "manner" (the adverb), "adj" and "weather" (predicate
    words), "job" (a noun phrase), "that" (a :class:`Sub`), "inf" (the infinitive's clause,
    whose slots follow), "gap" (a wh-question's residue; ``node`` the slot it replaced).
    """

    words: list[str]
    wh: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()
    role: str = ""
    node: Any = None


@dataclass(slots=True)
class _Clause:
    """A clause before word order is fixed; ``verb`` None is the copula ``be``."""

    subject: _Phrase
    verb: Forms | None
    tense: str
    negative: bool = False
    adverb: str = ""
    slots: list[_Slot] = field(default_factory=list)
    open_wh: tuple[str, ...] = ()
    kind: str = ""
    frame: Frame | None = None
    group: VerbGroup | None = None


# --------------------------------------------------------------------------------------------
# The lexicon's tables as weighted choices, and the frame kinds the rules combine.
# --------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------
# Realisation: agreement, verb groups, word order and punctuation.
# --------------------------------------------------------------------------------------------


def _be_present(person: int, plural: bool) -> str:
    if plural or person == 2:
        return "are"
    return "am" if person == 1 else "is"


def _be_past(person: int, plural: bool) -> str:
    return "were" if plural or person == 2 else "was"


def _verb_group(clause: _Clause, inverted: bool) -> tuple[str, list[str]]:
    """The operator (fronted in questions, "" if none) and the rest of the verb group, as
    :class:`W` words; what each word is goes to ``clause.group``."""
    verb, tense, negative = clause.verb, clause.tense, clause.negative
    adverb = W(clause.adverb) if clause.adverb else None
    person, plural = clause.subject.person, clause.subject.plural
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
                finite = W(verb.past)
            else:
                finite = W(verb.third if third else verb.base)
            clause.group = VerbGroup([], finite, None, adverb)
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
    group = [W(word) for word in chain]
    negation = W("not") if negative else None
    clause.group = VerbGroup(group[:-1], group[-1], negation, adverb)
    middle = ([negation] if negation else []) + ([adverb] if adverb else [])
    if inverted:
        return group[0], middle + group[1:]
    return "", [group[0], *middle, *group[1:]]


def _slot_words(slots: Sequence[_Slot]) -> list[str]:
    return [word for slot in slots for word in slot.words]


def _predicate(clause: _Clause) -> list[str]:
    _, group = _verb_group(clause, False)
    return group + _slot_words(clause.slots)


def _declarative(clause: _Clause) -> list[str]:
    return clause.subject.words + _predicate(clause)


def _question(clause: _Clause, slots: Sequence[_Slot] | None = None) -> list[str]:
    operator, rest = _verb_group(clause, True)
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


def node_words(node: NP) -> list[str]:
    """The English words of a simple noun phrase: determiner, "very", adjectives, noun."""
    head = [node.det] if node.det else []
    return [*head, *([node.very] if node.very else []), *node.adjectives, node.noun]


def _pronoun(word: str, person: int, plural: bool, tags: frozenset[str]) -> _Phrase:
    w = W(word)
    return _Phrase([w], person, plural, tags, node=NP("pronoun", person, plural, tags, word=w))


def _coordinate(items: Sequence[_Phrase], person: int, tags: frozenset[str],
                kind: str = "coord") -> _Phrase:
    """Noun phrases joined as "A and B" or, for a list, "A, B and C" (plural)."""
    words: list[str] = []
    joints: list[W] = []
    for item in items[:-2]:
        words += [*item.words, ","]
    joint = W("and")
    joints.append(joint)
    words += [*items[-2].words, joint, *items[-1].words]
    node = NP(kind, person, True, tags, parts=[item.node for item in items], joints=joints)
    return _Phrase(words, person, True, tags, node=node)


# --------------------------------------------------------------------------------------------
# The grammar.
# --------------------------------------------------------------------------------------------


class Grammar:
    """A sentence generator with its own ``random.Random(seed)``."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._noun_cache: dict[frozenset[str], tuple[Noun, ...]] = {}
        self._adjective_cache: dict[frozenset[str], tuple[Adjective, ...]] = {}
        self._rule_cache: dict[tuple[str, frozenset[str]], _Weighted[Rule] | None] = {}
        self._frame_cache: dict[tuple[str, frozenset[str]], tuple[Frame, ...]] = {}

    # ---- public ------------------------------------------------------------------------

    def sentence(self) -> str:
        """One sentence, with a capital first letter and a final "." or "?"."""
        return self.parsed()[0]

    def parsed(self) -> tuple[str, list[str], Sentence]:
        """One sentence, its words (:class:`W` objects and "," tokens, before capitals and
        the final stop are added) and its structure."""
        while True:
            tokens, node = self._sentence()
            tokens = _punctuate(tokens)
            if MIN_WORDS <= _word_count(tokens) <= MAX_WORDS:
                return _finish(tokens, node.question), tokens, node

    # ---- lookups -----------------------------------------------------------------------

    def _nouns(self, tags: frozenset[str]) -> tuple[Noun, ...]:
        nouns = self._noun_cache.get(tags)
        if nouns is None:
            nouns = tuple(noun for noun in NOUNS if noun.tags & tags)
            self._noun_cache[tags] = nouns
        return nouns

    def _adjectives_for(self, tags: frozenset[str]) -> tuple[Adjective, ...]:
        adjectives = self._adjective_cache.get(tags)
        if adjectives is None:
            adjectives = tuple(adj for adj in ADJECTIVE_ENTRIES if adj.tags & tags)
            self._adjective_cache[tags] = adjectives
        return adjectives

    def _rules(self, table: str, tags: frozenset[str]) -> _Weighted[Rule] | None:
        key = (table, tags)
        if key not in self._rule_cache:
            rows = NOUN_PP_RULES if table == "noun" else LOCATION_RULES
            matching = [(rule, weight) for rule, weight in rows if rule.host & tags]
            self._rule_cache[key] = _Weighted(matching) if matching else None
        return self._rule_cache[key]

    def _frames(self, kind: str, tags: frozenset[str], role: str = "subject") -> tuple[
        Frame, ...
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

    def _sentence(self) -> tuple[list[str], Sentence]:
        rng = self._rng
        r = rng.random()
        if r < P_YES_NO + P_WH:
            words, node = self._yes_no_question() if r < P_YES_NO else self._wh_question()
            node.question = True
            if rng.random() < P_QUESTION_MARKER:
                marker = _ws(_W_QUESTION_MARKERS.pick(rng))
                words = [*marker, ",", *words]
                node = Sentence("marker", marker=marker, inner=node, question=True)
        else:
            words, node = self._statement()
        if rng.random() < P_VOCATIVE:
            address = _ws(_W_VOCATIVES.pick(rng))
            words += [",", *address]
            node = Sentence("vocative", marker=address, inner=node, question=node.question)
        return words, node

    def _statement(self) -> tuple[list[str], Sentence]:
        rng = self._rng
        time = _W_TIMES.pick(rng)
        words, node = self._declaration(time)
        if rng.random() < P_MARKER:
            marker = self._marker(time, words)
            words = [*marker, ",", *words]
            node = Sentence("marker", marker=marker, inner=node)
        return words, node

    def _marker(self, time: str, words: Sequence[str]) -> list[W]:
        """A discourse marker that fits the statement ``words`` of time ``time``.

        Its condition must hold (see ``DISCOURSE_MARKERS``) and its last word must not occur in
        the statement: no "Finally, he finally left." or "Well, she sings well."
        """
        polarity = "negative" if "not" in words else "positive"
        while True:
            marker, condition = _W_DISCOURSE_MARKERS.pick(self._rng)
            tokens = marker.split()
            if condition in ("", polarity, time) and tokens[-1] not in words:
                return _ws(marker)

    def _declaration(self, time: str) -> tuple[list[str], Sentence]:
        rng = self._rng
        r = rng.random()
        if r < P_SUBORDINATE:
            clause = self._clause(time, 0, neg_p=P_NEGATIVE)
            main = _declarative(clause)
            sub_words, sub = self._subordinate(time, 1)
            if rng.random() < 0.5:
                return sub_words + [","] + main, Sentence("sub_main", clause=clause, sub=sub)
            return main + sub_words, Sentence("main_sub", clause=clause, sub=sub)
        r -= P_SUBORDINATE
        if r < P_COORDINATION:
            first_clause = self._clause(time, 1, neg_p=P_NEGATIVE)
            first = _declarative(first_clause)
            second_clause = self._clause(time, 1, neg_p=0.35)
            second = _declarative(second_clause)
            if rng.random() < 0.55:
                joint = W("and")
                words = first + [joint] + second
            else:
                joint = W("but")
                words = first + [",", joint] + second
            return words, Sentence("coord", clause=first_clause, joint=joint, second=second_clause)
        r -= P_COORDINATION
        if r < P_VP_COORDINATION:
            return self._vp_coordination(time)
        r -= P_VP_COORDINATION
        clause = self._clause(time, 0, neg_p=P_NEGATIVE)
        if r < P_FRONT_TIME:
            for i, slot in enumerate(clause.slots):
                if slot.wh and slot.wh[0][0] == ("when",):
                    del clause.slots[i]
                    words = slot.words + [","] + _declarative(clause)
                    return words, Sentence("front", clause=clause, slot=slot)
        return _declarative(clause), Sentence("clause", clause=clause)

    def _vp_coordination(self, time: str) -> tuple[list[str], Sentence]:
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
        joint = W("but" if but else "and")
        words = _declarative(first) + [joint] + _predicate(second)
        return words, Sentence("vp", clause=first, joint=joint, second=second)

    def _yes_no_question(self) -> tuple[list[str], Sentence]:
        rng = self._rng
        time = _W_TIMES.pick(rng)
        clause = self._clause(time, 0, question=True, neg_p=0.03)
        words = _question(clause)
        sub = None
        if rng.random() < P_QUESTION_SUBORDINATE:
            sub_words, sub = self._subordinate(time, 1)
            words += sub_words
        return words, Sentence("yes_no", clause=clause, sub=sub)

    def _wh_question(self) -> tuple[list[str], Sentence]:
        rng = self._rng
        target = _W_WH.pick(rng)
        time = _W_TIMES.pick(rng)
        found: tuple[list[str], Sentence] | None = None
        while found is None:
            found = self._try_wh(target, time)
        words, node = found
        if rng.random() < P_QUESTION_SUBORDINATE:
            sub_words, node.sub = self._subordinate(
                time, 1, exclude="because" if target == "why" else ""
            )
            words += sub_words
        return words, node

    def _try_wh(self, target: str, time: str) -> tuple[list[str], Sentence] | None:
        rng = self._rng
        if target == "who" and rng.random() < 0.45:
            who = self._wh_phrase("who", tags_of("person"))
            clause = self._clause(time, 0, question=True, subject=who, neg_p=0.05)
            return _declarative(clause), Sentence("wh_subject", clause=clause)
        if target == "what" and rng.random() < 0.15:
            what = self._wh_phrase("what", tags_of("event"))
            if rng.random() < 0.5:
                clause = self._build(FRAMES["event"][0], time, 0, subject=what, question=True)
            else:
                what.tags = what.node.tags = tags_of("portable food")
                clause = self._copula(time, 0, subject=what, question=True, mode="loc")
            return _declarative(clause), Sentence("wh_subject", clause=clause)
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
            wh_words, residue_words = [W(w) for w in wh], [W(w) for w in residue]
            node = Sentence("wh", clause=clause, slot=slots[index], wh=wh_words,
                            residue=residue_words)
            slots[index] = _Slot(residue_words, role="gap", node=slots[index])
            return [*wh_words, *_question(clause, slots)], node
        if target in clause.open_wh:
            wh_word = W(target)
            return [wh_word, *_question(clause)], Sentence("wh_adverb", clause=clause,
                                                           wh=[wh_word])
        return None

    @staticmethod
    def _wh_phrase(word: str, tags: frozenset[str]) -> _Phrase:
        w = W(word)
        return _Phrase([w], 3, False, tags, node=NP("wh", tags=tags, word=w))

    def _subordinate(self, time: str, depth: int, exclude: str = "") -> tuple[list[str], Sub]:
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
        w = W(word)
        return [w, *_declarative(clause)], Sub(w, clause)


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
        frame: Frame,
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
        inner: Frame | None = None
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
            slots.append(_Slot(o.words, self._object_wh(o, ()), "obj", o.node))
        elif kind == "prep":
            o = obj or self._object(frame.objects, depth, subject)
            prep = W(frame.prep)
            slots.append(_Slot([prep, *o.words], self._object_wh(o, (frame.prep,)), "pobj",
                               PP("pobj", prep, o.node)))
        elif kind == "place":
            o = obj or self._noun_phrase(frame.objects, depth + 1, ground=True)
            prep = W(frame.prep)
            slots.append(_Slot([prep, *o.words], ((("where",), ()),), "place",
                               PP("loc", prep, o.node)))
        elif kind == "motion":
            slots.append(self._goal(frame, depth))
            if frame.verb in TRANSPORT_VERBS and "person" in subject.tags and rng.random() < 0.2:
                means = [W(word) for word in rng.choice(TRANSPORT)]
                slots.append(_Slot(means, ((("how",), ()),), "transport", means))
        elif kind == "ditr":
            recipient = self._object(frame.recipient, depth + 1, subject)
            theme = obj or self._noun_phrase(frame.objects, depth)
            if len(recipient.words) <= 3 and rng.random() < 0.55:
                slots.append(_Slot(recipient.words, (), "iobj", PP("iobj", None, recipient.node)))
                slots.append(_Slot(theme.words, self._object_wh(theme, ()), "obj", theme.node))
            else:
                slots.append(_Slot(theme.words, self._object_wh(theme, ()), "obj", theme.node))
                prep = W(frame.prep)
                slots.append(
                    _Slot([prep, *recipient.words], self._object_wh(recipient, (frame.prep,)),
                          "iobj", PP("iobj", prep, recipient.node))
                )
        elif kind == "that":
            if frame.recipient:
                recipient = self._object(frame.recipient, depth + 1, subject)
                slots.append(_Slot(recipient.words, (), "iobj", PP("iobj", None, recipient.node)))
            past = tense in ("past", "pastprog")
            embedded = self._clause(
                "past" if past else _W_TIMES.pick(rng), depth + 1, neg_p=P_NEGATIVE, embedded=True
            )
            that = W("that")
            slots.append(_Slot([that, *_declarative(embedded)], ((("what",), ()),), "that",
                               Sub(that, embedded)))
        elif kind == "inf" and inner is not None:
            clause = self._build(inner, time, depth + 1, subject=subject, finite=False)
            assert clause.verb is not None
            to, verb = W("to"), W(clause.verb.base)
            clause.group = VerbGroup([to], verb)
            slots.append(_Slot([to, verb], (), "inf", clause))
            slots.extend(clause.slots)

        agentive = not frame.stative and bool(subject.tags & AGENT_TAGS)
        clausal = kind in ("that", "inf")
        open_wh = ("when", "why", "where", "how") if agentive and not clausal else ("when", "why")
        if not clausal:
            if agentive and rng.random() < P_MANNER[d]:
                manner = W(rng.choice(MANNER_ADVERBS))
                slots.append(_Slot([manner], ((("how",), ()),), "manner", manner))
            located = agentive or "event" in subject.tags
            if located and kind not in ("place", "motion") and rng.random() < P_LOCATION[d]:
                slots.append(self._location(subject.tags, depth + 1))
            if agentive and "person" in subject.tags and rng.random() < P_COMPANION[d]:
                prep = "with" if rng.random() < 0.6 else "for"
                companion = self._noun_phrase(tags_of("person"), depth + 1)
                w = W(prep)
                slots.append(_Slot([w, *companion.words], ((("who",), (prep,)),), "with",
                                   PP(prep, w, companion.node)))
        negative = False
        adverb = ""
        if finite:
            negative = rng.random() < neg_p
            if not negative and rng.random() < P_ADVERB:
                adverb = rng.choice(PRE_ADVERBS[(tense, question)])
            if rng.random() < P_TIME[d]:
                key = adverbial or tense
                phrase = _ws(rng.choice(TIME_ADVERBIALS[key]))
                slots.append(_Slot(phrase, ((("when",), ()),), "time", phrase))
        return _Clause(
            subject, VERB_FORMS[frame.verb], tense, negative, adverb, slots, open_wh, kind, frame
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
                subject = self._subject(tags_of("person"), depth)
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
            slots.append(_Slot(listed, (), "adj", listed))
        elif mode == "adj":
            adjectives = self._adjectives_for(subject.tags)
            first = rng.choice(adjectives)
            r = rng.random()
            if r < 0.25 and first.gradable:
                predicate = _ws(f"very {first.word}")
                slots.append(_Slot(predicate, (), "adj", predicate))
            elif r < 0.4:
                second = rng.choice(adjectives)
                if second.word == first.word:
                    predicate = [W(first.word)]
                else:
                    predicate = _ws(f"{first.word} and {second.word}")
                slots.append(_Slot(predicate, (), "adj", predicate))
            else:
                wh = ((("how", first.word), ()),) if first.gradable else ()
                predicate = [W(first.word)]
                slots.append(_Slot(predicate, wh, "adj", predicate))
        elif mode == "loc":
            slots.append(self._location(subject.tags, depth + 1))
            open_wh = ("why", "when")
        else:
            noun = rng.choice(self._nouns(tags_of("job")))
            adjectives = self._adjectives(noun, depth + 1)
            node = NP("noun", tags=noun.tags, lemma=noun.singular, plural=subject.plural)
            self._describe(node, adjectives)
            if subject.plural:
                node.noun = W(noun.plural)
                slots.append(_Slot([*node_words(node)], (), "job", node))
            else:
                node.noun = W(noun.singular)
                node.det = W(article((adjectives or [noun.singular])[0]))
                slots.append(_Slot([*node_words(node)], (), "job", node))
        negative = rng.random() < neg_p
        adverb = ""
        if not negative and not question and rng.random() < P_ADVERB:
            adverb = rng.choice(COPULA_ADVERBS[tense])
        if rng.random() < P_TIME[d]:
            phrase = _ws(rng.choice(TIME_ADVERBIALS[adverbial or tense]))
            slots.append(_Slot(phrase, ((("when",), ()),), "time", phrase))
        return _Clause(subject, None, tense, negative, adverb, slots, open_wh, "copula")

    def _adjective_list(self, adjectives: Sequence[Adjective]) -> list[str] | None:
        """Three predicate adjectives: "big, quiet and friendly" (at most one of each size, age
        and colour rank, so no "big, small and ..."); None if there are not enough."""
        picked: list[Adjective] = []
        for adjective in self._rng.sample(adjectives, min(len(adjectives), 8)):
            if adjective.rank == 0 or all(adjective.rank != p.rank for p in picked):
                picked.append(adjective)
                if len(picked) == 3:
                    return [W(picked[0].word), ",", W(picked[1].word), W("and"),
                            W(picked[2].word)]
        return None

    def _existential(self, time: str, depth: int, *, tense: str, adverbial: str) -> _Clause:
        rng = self._rng
        tense = self._tense(time, tense, True)
        pivot = self._noun_phrase(LOCATUM_TAGS, depth + 1, indefinite=True)
        there = W("there")
        subject = _Phrase([there], 3, pivot.plural, node=NP("there", word=there))
        location = self._location(pivot.tags, depth + 1)
        location.wh = ()
        slots = [_Slot(pivot.words, (), "pivot", pivot.node), location]
        if rng.random() < P_TIME[min(depth, MAX_DEPTH)]:
            phrase = _ws(rng.choice(TIME_ADVERBIALS[adverbial or tense]))
            slots.append(_Slot(phrase, (), "time", phrase))
        return _Clause(subject, None, tense, False, "", slots, (), "there")

    def _weather(
        self, time: str, depth: int, *, question: bool, neg_p: float, tense: str, adverbial: str
    ) -> _Clause:
        rng = self._rng
        word = W("it")
        it = _Phrase([word], 3, False, tags_of("weather"), node=NP("it", word=word))
        if rng.random() < 0.5:
            tense = self._tense(time, tense, False)
            slots: list[_Slot] = []
            verb: Forms | None = VERB_FORMS[rng.choice(WEATHER_VERBS)]
            open_wh: tuple[str, ...] = ("when", "where", "why")
        else:
            tense = self._tense(time, tense, True)
            adjective = rng.choice(WEATHER_ADJECTIVES)
            if rng.random() < 0.25:
                predicate = _ws(f"very {adjective}")
                slots = [_Slot(predicate, (), "weather", predicate)]
            else:
                predicate = [W(adjective)]
                slots = [_Slot(predicate, ((("how", adjective), ()),), "weather", predicate)]
            verb = None
            open_wh = ("why",)
        negative = rng.random() < neg_p
        if rng.random() < P_TIME[min(depth, MAX_DEPTH)] + 0.2:
            phrase = _ws(rng.choice(TIME_ADVERBIALS[adverbial or tense]))
            slots.append(_Slot(phrase, ((("when",), ()),), "time", phrase))
        return _Clause(it, verb, tense, negative, "", slots, open_wh, "weather")

    # ---- phrases -----------------------------------------------------------------------

    def _subject(self, tags: frozenset[str], depth: int) -> _Phrase:
        rng = self._rng
        d = min(depth, MAX_DEPTH)
        r = rng.random()
        if "person" in tags:
            if r < P_SUBJECT_PRONOUN:
                word, person, plural = _W_SUBJECT_PRONOUNS.pick(rng)
                return _pronoun(word, person, plural, tags_of("person"))
            r -= P_SUBJECT_PRONOUN
            if r < P_COORDINATED_SUBJECT[d]:
                first = self._noun_phrase(tags_of("person"), depth + 1)
                if rng.random() < 0.3:
                    second = _pronoun("I", 1, False, tags_of("person"))
                    return _coordinate([first, second], 1, tags_of("person"))
                second = self._noun_phrase(tags_of("person"), depth + 1)
                return _coordinate([first, second], 3, tags_of("person"))
            r -= P_COORDINATED_SUBJECT[d]
        elif "animal" in tags:
            if r < 0.08:
                plural = rng.random() < 0.3
                return _pronoun("they" if plural else "it", 3, plural, tags_of("animal"))
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
                return _pronoun(word, person, plural, tags_of("person"))
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
        categories = [tag for tag in sorted(tags) if len(self._nouns(tags_of(tag))) >= 4]
        if not categories:
            return None
        category = tags_of(categories[int(rng.random() * len(categories))])
        size = 4 if rng.random() < P_FOURTH_ITEM else 3
        with_i = subject and "person" in category and rng.random() < P_LIST_WITH_I
        nouns = rng.sample(self._nouns(category), size - with_i)
        items = [self._noun_phrase(category, depth + 1, noun=noun, simple=True) for noun in nouns]
        if with_i:
            items.append(_pronoun("I", 1, False, tags_of("person")))
        common = frozenset.intersection(*(item.tags for item in items))
        return _coordinate(items, 1 if with_i else 3, common, kind="list")

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
        noun: Noun | None = None,
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
            det = article((adjectives or [form])[0])
        node = NP("noun", 3, plural, noun.tags, noun=W(form), lemma=noun.singular,
                  mass=not noun.plural, det=W(det) if det else None)
        self._describe(node, adjectives)
        words: list[str] = node_words(node)
        head = form if noun.plural else ""
        if simple:
            return _Phrase(words, 3, plural, noun.tags, head, node)
        with_pp = rng.random() < P_NOUN_PP[d]
        if with_pp:
            pp_words, node.pp = self._noun_pp(noun, depth + 1)
            words += pp_words
        if rng.random() < P_RELATIVE[d]:
            relative_words, node.relative = self._relative(noun, plural, depth + 1)
            words += relative_words
        elif (
            nonrestrictive and det in DEFINITE_DETERMINERS and not with_pp
            and rng.random() < P_NONRESTRICTIVE[d]
        ):
            # Only right after the head noun, so that the clause cannot be read as describing
            # the noun of a prepositional phrase; set off by commas on both sides, and
            # _punctuate drops the closing one where the sentence ends or a comma follows anyway.
            relative_words, node.relative = self._relative(
                noun, plural, depth + 1, nonrestrictive=True
            )
            node.nonrestrictive = True
            words += [",", *relative_words, ","]
        return _Phrase(words, 3, plural, noun.tags, head, node)

    @staticmethod
    def _describe(node: NP, adjectives: Sequence[str]) -> None:
        """Put the adjective words ``adjectives`` ("very" first, if any) on ``node``."""
        if adjectives and adjectives[0] == "very":
            node.very = W("very")
            adjectives = adjectives[1:]
        node.adjectives = [W(word) for word in adjectives]

    def _adjectives(self, noun: Noun, depth: int) -> list[str]:
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

    def _noun_pp(self, noun: Noun, depth: int) -> tuple[list[str], PP | None]:
        rules = self._rules("noun", noun.tags)
        if rules is None:
            return [], None
        rule = rules.pick(self._rng)
        # No non-restrictive clause on the ground: its closing comma would make the relative
        # clause of the host look non-restrictive too ("the cup on the table, which ...,
        # which I bought").
        ground = self._noun_phrase(
            rule.ground, depth, ground=True, avoid=noun.singular, nonrestrictive=False
        )
        prep = W(rule.prep)
        return [prep, *ground.words], PP("noun", prep, ground.node)

    def _location(self, tags: frozenset[str], depth: int) -> _Slot:
        """Where someone or something is: a slot that "where" can question."""
        rng = self._rng
        if "person" in tags and rng.random() < 0.06:
            at, home = W("at"), W("home")
            return _Slot([at, home], ((("where",), ()),), "loc", PP("loc", at, None, home))
        rules = self._rules("location", tags)
        if rules is None:
            rules = self._rules("location", tags_of("person"))
            assert rules is not None
        rule = rules.pick(rng)
        prep = W(rule.prep)
        ground = self._noun_phrase(rule.ground, depth, ground=True)
        return _Slot([prep, *ground.words], ((("where",), ()),), "loc",
                     PP("loc", prep, ground.node))

    def _goal(self, frame: Frame, depth: int) -> _Slot:
        rng = self._rng
        r = rng.random()
        if r < 0.12:
            home = W("home")
            return _Slot([home], ((("where",), ()),), "goal", PP("goal", None, None, home))
        if r < 0.8:
            prep, goal = "to", self._noun_phrase(tags_of("goal"), depth + 1, ground=True)
        elif r < 0.9 and frame.verb in INTO_VERBS:
            prep = "into"
            goal = self._noun_phrase(tags_of("room building"), depth + 1, ground=True)
        else:
            prep, goal = "across", self._noun_phrase(tags_of("across"), depth + 1, ground=True)
        w = W(prep)
        return _Slot([w, *goal.words], ((("where",), ()),), "goal", PP("goal", w, goal.node))

    def _relative(
        self, noun: Noun, plural: bool, depth: int, *, nonrestrictive: bool = False
    ) -> tuple[list[str], Relative]:
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
        word = W(pronoun)
        head = _Phrase([], 3, plural, noun.tags, node=NP("gap", 3, plural, noun.tags))
        r = rng.random()
        if r < 0.45:
            frames = [f for k in _RELATIVE_SUBJECT_KINDS for f in self._frames(k, noun.tags)]
            if frames:
                frame = frames[int(rng.random() * len(frames))]
                clause = self._build(frame, time, depth, subject=head, neg_p=0.08)
                return [word, *_predicate(clause)], Relative(word, clause, head.node)
        elif r < 0.8:
            frames = [
                f for k in _RELATIVE_OBJECT_KINDS for f in self._frames(k, noun.tags, "object")
            ]
            if frames:
                frame = frames[int(rng.random() * len(frames))]
                gap = _Phrase([], 3, plural, noun.tags, node=NP("gap", 3, plural, noun.tags))
                clause = self._build(frame, time, depth, obj=gap, neg_p=0.05)
                return [word, *_declarative(clause)], Relative(word, clause, gap.node)
        clause = self._copula(time, depth, subject=head, neg_p=0.05)
        return [word, *_predicate(clause)], Relative(word, clause, head.node)


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
    words.update(rule.prep for rule, _ in NOUN_PP_RULES + LOCATION_RULES)
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
