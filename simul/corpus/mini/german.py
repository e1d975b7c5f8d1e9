"""German realisation of the grammar's sentences, with gold word links to the English.

:mod:`simul.corpus.mini.grammar` keeps the structure of every sentence it draws (clauses,
slots, noun phrases: :mod:`simul.corpus.mini.structure`), with the English words as leaves.
This module says the same structure in German, and every German word it writes carries the
English words it translates, so the alignment is exact, not estimated.

What German does differently, and how it is realised:

- **Verb second** in main clauses: the finite verb follows the first constituent; a fronted
  time phrase, subordinate clause, wh-phrase or adverbial discourse marker takes the first
  place and the subject moves after the verb ("Gestern hat der Lehrer ...", "Als sie kam,
  ging er ..."); yes/no questions put the verb first.
- **The verb cluster at the end**: the participle (Perfekt, used for the English simple past
  and present perfect), the infinitive (werden-future, modal verbs), separable prefixes
  ("kam ... an") close the clause; subordinate and relative clauses are verb-final with the
  finite verb last ("..., weil der Hund den Ball gefunden hat").  Zu-infinitives and
  dass-clauses follow the cluster, after a comma.
- **The middle field** in a fixed order: subject (when not first), pronouns, dative objects,
  time, adverbs (oft, immer, nie), direct objects, "nicht", companion, manner, place, then
  the complements closest to the verb (prepositional objects, goals, predicates): time
  before place.
- **Case** on articles, pronouns, adjective endings (strong, weak, mixed declension), weak
  masculine nouns and dative plurals; relative pronouns by the head noun's gender and number
  and their role in the relative clause, with the preposition in front ("der Bus, auf den
  ich warte"); a negated indefinite object or predicate takes "kein".
- **Commas** before subordinate, relative and dass-clauses and around relative clauses.

English tenses map to German ones as spoken German uses them: simple present and present
progressive → Präsens; simple past and present perfect → Perfekt (Präteritum for sein,
haben, wissen and modal verbs); past progressive → Präteritum; will → werden + infinitive;
"after" + past → Plusquamperfekt.

Links are pairs of indices (English word, German word), 0-based over the whitespace-split
sentences.  Function words without a counterpart (do-support, the dative's "to", German's
expletive "es", "zu") stay unlinked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from simul.corpus.mini import lexicon_de as de
from simul.corpus.mini.lexicon import EVENT_VERBS
from simul.corpus.mini.structure import NP, PP, Sentence, Sub, W, positions

__all__ = ["realise", "translate"]


@dataclass(slots=True)
class Tok:
    """A German word and the English words it translates."""

    text: str
    src: tuple[W, ...] = ()


COMMA = Tok(",")

# ------------------------------------------------------------------------------------------
# Closed classes
# ------------------------------------------------------------------------------------------

CASES = ("nom", "acc", "dat")
#: Endings of der-type words (dies-er, jen-er, einig-e, viel-e) by case, then m/f/n/pl.
_DER = {"nom": ("er", "e", "es", "e"), "acc": ("en", "e", "es", "e"),
        "dat": ("em", "er", "em", "en")}
_ARTICLE = {"nom": ("der", "die", "das", "die"), "acc": ("den", "die", "das", "die"),
            "dat": ("dem", "der", "dem", "den")}
#: Endings of ein-type words (ein, kein, mein, ...).
_EIN = {"nom": ("", "e", "", "e"), "acc": ("en", "e", "", "e"), "dat": ("em", "er", "em", "en")}
_WEAK = {"nom": ("e", "e", "e", "en"), "acc": ("en", "e", "e", "en"),
         "dat": ("en", "en", "en", "en")}
_MIXED = {"nom": ("er", "e", "es", "en"), "acc": ("en", "e", "es", "en"),
          "dat": ("en", "en", "en", "en")}
_STRONG = {"nom": ("er", "e", "es", "e"), "acc": ("en", "e", "es", "e"),
           "dat": ("em", "er", "em", "en")}
_RELATIVE = {"nom": ("der", "die", "das", "die"), "acc": ("den", "die", "das", "die"),
             "dat": ("dem", "der", "dem", "denen")}
#: English determiner → (kind, German stem): "def" der/die/das, "der" der-type stem,
#: "ein" ein-type stem, "num" an invariable word, "" none.
_DETERMINERS = {
    "the": ("def", ""), "a": ("ein", "ein"), "an": ("ein", "ein"), "this": ("der", "dies"),
    "these": ("der", "dies"), "that": ("der", "jen"), "those": ("der", "jen"),
    "my": ("ein", "mein"), "your": ("ein", "dein"), "his": ("ein", "sein"),
    "her": ("ein", "ihr"), "our": ("ein", "unser"), "their": ("ein", "ihr"),
    "some": ("der", "einig"), "many": ("der", "viel"), "two": ("num", "zwei"),
    "three": ("num", "drei"), "four": ("num", "vier"),
}
_INDEFINITE = {"", "a", "an", "some"}
_PRONOUNS = {
    (1, False): ("ich", "mich", "mir"), (2, False): ("du", "dich", "dir"),
    (1, True): ("wir", "uns", "uns"), (3, True): ("sie", "sie", "ihnen"),
}
_THIRD = {"he": ("er", "ihn", "ihm"), "him": ("er", "ihn", "ihm"), "she": ("sie", "sie", "ihr"),
          "her": ("sie", "sie", "ihr"), "it": ("es", "es", "ihm")}
#: German prepositions and the case they govern; the two-way ones (None) take the dative
#: for a place and the accusative for a goal.
_GOVERNS = {"mit": "dat", "aus": "dat", "von": "dat", "zu": "dat", "bei": "dat", "nach": "dat",
            "für": "acc", "um": "acc", "über": None, "in": None, "an": None, "auf": None,
            "unter": None, "hinter": None, "neben": None, "vor": None}
_CONTRACTIONS = {("zu", "dem"): "zum", ("zu", "der"): "zur", ("in", "dem"): "im",
                 ("in", "das"): "ins", ("an", "dem"): "am", ("an", "das"): "ans",
                 ("von", "dem"): "vom", ("bei", "dem"): "beim"}
#: English preposition → German, for a place, a goal and a noun's prepositional phrase.
_PLACE = {"in": "in", "on": "auf", "at": "in", "under": "unter", "near": "bei",
          "behind": "hinter"}
_GOAL = {"to": "zu", "into": "in", "across": "über"}
_SUBORDINATORS = {"because": "weil", "although": "obwohl", "if": "wenn", "before": "bevor",
                  "after": "nachdem", "while": "während"}
_WH_ADVERBS = {"when": "wann", "why": "warum", "where": "wo", "how": "wie"}
_WHO = ("wer", "wen", "wem")


# ------------------------------------------------------------------------------------------
# Verbs
# ------------------------------------------------------------------------------------------

_BUILT_IN = {
    "sein": de.Verb("sein", "ist", "war", "gewesen", "sein"),
    "haben": de.Verb("haben", "hat", "hatte", "gehabt"),
    "werden": de.Verb("werden", "wird", "wurde", "geworden", "sein", du="wirst"),
}
_SEIN_PRESENT = ("bin", "bist", "ist", "sind", "seid", "sind")
#: Verbs whose simple past German speech puts in the Präteritum rather than the Perfekt.
_PRETERITE = {"sein", "haben", "werden", "wissen", "geben"}
#: Rank of what follows the verb cluster (a dass-clause) rather than the middle field.
_EXTRAPOSED = 99


def _verb(name: str) -> de.Verb:
    return _BUILT_IN.get(name) or de.LEXICON["verbs"][name]


def _slot(person: int, plural: bool) -> int:
    """Index 0-5: ich, du, er/sie/es, wir, ihr, sie."""
    return (3 if plural else 0) + (person - 1 if person in (1, 2) else 2)


def _stem(verb: de.Verb) -> str:
    base = verb.base
    return base[:-2] if base.endswith("en") else base[:-1]


def present(verb: de.Verb, person: int, plural: bool) -> str:
    """The present tense form (without a separable prefix)."""
    i = _slot(person, plural)
    if verb.inf == "sein":
        return _SEIN_PRESENT[i]
    if i in (3, 5):
        return verb.base
    stem = _stem(verb)
    if i == 2:
        return verb.pres
    if i == 0:
        return verb.ich or stem + "e"
    if i == 1:
        if verb.du:
            return verb.du
        if verb.modal:
            return verb.ich + ("t" if verb.ich[-1] in "sßzx" else "st")
        body = verb.pres[:-1] if verb.pres.endswith("t") else verb.pres
        return verb.pres if body[-1] in "sßzx" else body + "st"
    return stem + ("et" if stem[-1] in "td" else "t")


def past(verb: de.Verb, person: int, plural: bool) -> str:
    """The Präteritum form (without a separable prefix)."""
    i = _slot(person, plural)
    form = verb.past
    if i in (0, 2):
        return form
    weak = form.endswith("e")
    if i == 1:
        return form + ("st" if weak else "est" if form.endswith(("t", "d", "s", "ß", "z", "x",
                                                                   "sch")) else "st")
    if i in (3, 5):
        return form + ("n" if weak else "en")
    return form + ("t" if weak else "et" if form[-1] in "td" else "t")


def zu_infinitive(verb: de.Verb) -> list[str]:
    if verb.prefix:
        return [verb.prefix + "zu" + verb.base]
    return ["zu", verb.inf]


@dataclass(slots=True)
class Cluster:
    """A clause's verbs: the finite form, the non-finite forms that close the clause (in the
    order of a main clause), and a separable prefix left behind by a finite main verb."""

    finite: Tok
    rest: list[Tok] = field(default_factory=list)
    prefix: Tok | None = None

    def main(self) -> list[Tok]:
        """The right bracket of a main clause or question."""
        return ([self.prefix] if self.prefix else []) + self.rest

    def final(self) -> list[Tok]:
        """The end of a subordinate clause: non-finite forms, then the finite verb (with its
        prefix joined to it)."""
        finite = self.finite
        if self.prefix:
            finite = Tok(self.prefix.text + finite.text, finite.src + self.prefix.src)
        return [*self.rest, finite]


def german_tense(tense: str, verb: de.Verb, after: bool = False) -> str:
    """German tense for an English one: pres, past (Präteritum), perf, pluperf, fut."""
    if tense in ("pres", "prog"):
        return "perf" if after else "pres"
    if tense == "pastprog":
        return "past"
    if tense == "fut":
        return "fut"
    if after:
        return "pluperf" if tense == "past" else "perf"
    if verb.modal or verb.inf in _PRETERITE:
        return "past"
    return "perf"


def cluster(verb: de.Verb, tense: str, person: int, plural: bool, aux_src: tuple[W, ...],
            main_src: tuple[W, ...], inner: list[Tok] | None = None) -> Cluster:
    """The verbs of a clause of German tense ``tense``; ``inner``: a modal's infinitive(s)."""
    inner = inner or []
    if tense in ("pres", "past"):
        form = (present if tense == "pres" else past)(verb, person, plural)
        prefix = Tok(verb.prefix, main_src) if verb.prefix else None
        return Cluster(Tok(form, aux_src + main_src), inner, prefix)
    if tense == "fut":
        werden = present(_BUILT_IN["werden"], person, plural)
        return Cluster(Tok(werden, aux_src or main_src), [*inner, Tok(verb.inf, main_src)])
    aux = _verb(verb.aux)
    form = (present if tense == "perf" else past)(aux, person, plural)
    return Cluster(Tok(form, aux_src or main_src), [*inner, Tok(verb.part, main_src)])


# ------------------------------------------------------------------------------------------
# Noun phrases
# ------------------------------------------------------------------------------------------


def _gender_index(gender: str, plural: bool) -> int:
    return 3 if plural else "mfn".index(gender)


def _noun_form(noun: de.Noun, plural: bool, case: str) -> str:
    if plural:
        form = noun.plural
        return form + "n" if case == "dat" and form[-1] not in "ns" else form
    if noun.weak and case != "nom":
        return noun.weak
    return noun.de


def _adjective(word: str, ending: str) -> str:
    return de.LEXICON["adjectives"][word].stem + ending


class Realiser:
    """Says one sentence structure in German."""

    def __init__(self) -> None:
        self.lex = de.LEXICON

    # ---- noun phrases ----------------------------------------------------------------------

    def np(self, node: NP, case: str, *, negate: W | None = None) -> list[Tok]:
        """``node`` in ``case``; ``negate`` (the English "not"): an indefinite phrase takes
        "kein", which translates it."""
        if node.kind == "pronoun":
            return [Tok(self._pronoun(node, case), (node.word,))]
        if node.kind in ("coord", "list"):
            out: list[Tok] = []
            for i, part in enumerate(node.parts):
                if i:
                    joint = node.joints[0] if i == len(node.parts) - 1 else None
                    out += [Tok("und", (joint,))] if joint else [COMMA]
                out += self.np(part, case, negate=negate if i == 0 else None)
            return out
        if node.kind in ("there", "it"):
            return [Tok("es", (node.word,))]
        if node.kind == "wh":
            if node.word == "who":
                return [Tok(_WHO[CASES.index(case)], (node.word,))]
            return [Tok("was", (node.word,))]
        if node.kind == "gap":
            return []
        return self._noun_phrase(node, case, negate)

    def _pronoun(self, node: NP, case: str) -> str:
        i = CASES.index(case)
        word = node.word.lower()
        if word in _THIRD:
            return _THIRD[word][i]
        return _PRONOUNS[(node.person, node.plural)][i]

    def _noun_phrase(self, node: NP, case: str, negate: W | None, *,
                     job_for: bool | None = None) -> list[Tok]:
        noun = self.lex["nouns"][node.lemma]
        plural = node.plural
        g = _gender_index("f" if job_for else noun.gender, plural)
        det_word = node.det or ""
        kind, stem = _DETERMINERS.get(det_word.lower(), ("", ""))
        out: list[Tok] = []
        det_src = (node.det,) if node.det else ()
        if negate is not None and det_word.lower() in _INDEFINITE:
            kind, stem = "ein", "kein"
            det_src = (*det_src, negate)
        if job_for is not None and kind == "ein" and stem == "ein" and not node.adjectives:
            kind = ""  # "Er ist Lehrer": no article before a bare profession
        if kind == "def":
            out.append(Tok(_ARTICLE[case][g], det_src))
            table = _WEAK
        elif kind == "der":
            if stem == "einig" and node.mass:
                out.append(Tok("etwas", det_src))
                table = _STRONG
            else:
                out.append(Tok(stem + _DER[case][g], det_src))
                table = _STRONG if stem in ("einig", "viel") else _WEAK
        elif kind == "ein":
            out.append(Tok(stem + _EIN[case][g], det_src))
            table = _MIXED
        elif kind == "num":
            out.append(Tok(stem, det_src))
            table = _STRONG
        else:
            table = _STRONG
        if node.very:
            out.append(Tok("sehr", (node.very,)))
        for adjective in node.adjectives:
            out.append(Tok(_adjective(adjective, table[case][g]), (adjective,)))
        if job_for:
            form = noun.fem_plural if plural else noun.fem
        else:
            form = _noun_form(noun, plural, case)
        out.append(Tok(form, (node.noun,)))
        if node.pp is not None:
            out += self.pp(node.pp, noun_host=True)
        if node.relative is not None:
            out += [COMMA, *self.relative(node), COMMA]
        return out

    def pp(self, pp: PP, *, noun_host: bool = False) -> list[Tok]:
        """A prepositional phrase of a place, goal, companion or noun."""
        if pp.np is None:  # home
            if pp.use == "goal":
                return [Tok("nach", (pp.home,)), Tok("Hause", (pp.home,))]
            return [Tok("zu", (pp.prep, pp.home)), Tok("Hause", (pp.home,))]
        english = pp.prep.lower()
        ground = pp.np
        if english in ("with", "for"):
            german, case = ("mit", "dat") if english == "with" else ("für", "acc")
        elif english == "from":
            german = self._noun_prep(ground, english,
                                     "von" if "person" in ground.tags else "aus")
            case = "dat"
        elif english == "about":
            german, case = "über", "acc"
        elif pp.use == "goal":
            german = self._noun_prep(ground, english, _GOAL[english])
            case = _GOVERNS[german] or "acc"
        else:
            german = self._noun_prep(ground, english, _PLACE[english])
            case = _GOVERNS[german] or "dat"
        return self._with_prep(german, (pp.prep,), ground, case)

    def _noun_prep(self, ground: NP, english: str, default: str) -> str:
        if ground.kind != "noun":
            return default
        return self.lex["nouns"][ground.lemma].preposition(english, default)

    def _with_prep(self, german: str, src: tuple[W, ...], ground: NP, case: str) -> list[Tok]:
        phrase = self.np(ground, case)
        if (ground.kind == "noun" and phrase and ground.det is not None
                and ground.det.lower() == "the" and not ground.relative):
            short = _CONTRACTIONS.get((german, phrase[0].text))
            if short:
                return [Tok(short, src + phrase[0].src), *phrase[1:]]
        return [Tok(german, src), *phrase]

    def relative(self, head: NP) -> list[Tok]:
        """The relative clause of ``head`` (verb-final, pronoun by gender and role)."""
        rel = head.relative
        assert rel is not None
        noun = self.lex["nouns"][head.lemma]
        g = _gender_index(noun.gender, head.plural)
        clause = rel.clause
        female = noun.female
        if clause.subject.node is rel.gap:
            front = [Tok(_RELATIVE["nom"][g], (rel.pronoun,))]
            return front + self.clause(clause, "sub", female=female)
        for slot in clause.slots:
            node = slot.node
            if slot.role == "obj" and node is rel.gap:
                case = self.frame(clause).case if clause.kind == "trans" else "acc"
                front = [Tok(_RELATIVE[case][g], (rel.pronoun,))]
                return front + self.clause(clause, "sub", skip=slot)
            if isinstance(node, PP) and node.np is rel.gap:
                prep, case = self._slot_prep(clause, slot)
                pronoun = Tok(_RELATIVE[case][g], (rel.pronoun,))
                front = [Tok(prep, (node.prep,)), pronoun] if prep else [pronoun]
                return front + self.clause(clause, "sub", skip=slot)
        raise AssertionError("relative clause without its gap")

    def _slot_prep(self, clause, slot) -> tuple[str, str]:
        """German preposition ("" for none) and case of a slot's noun phrase."""
        node: PP = slot.node
        if slot.role == "pobj":
            frame = self.frame(clause)
            return (frame.prep, frame.pcase) if frame.prep else ("", frame.case)
        if slot.role == "iobj":
            return "", "dat"
        if slot.role == "with":
            return ("mit", "dat") if node.prep == "with" else ("für", "acc")
        english = node.prep.lower()
        if node.use == "goal":
            german = self._noun_prep(node.np, english, _GOAL[english])
            return german, _GOVERNS[german] or "acc"
        german = self._noun_prep(node.np, english, _PLACE[english])
        return german, _GOVERNS[german] or "dat"

    # ---- clauses ---------------------------------------------------------------------------

    def frame(self, clause) -> de.Frame:
        frame = clause.frame
        if clause.kind == "weather":
            return self.lex["frames"][f"weather {clause.verb.base}"]
        if frame.verb in EVENT_VERBS:
            return self.lex["frames"][f"event {frame.verb}"]
        if frame.kind in ("prep", "place", "ditr"):
            return self.lex["frames"][f"{frame.kind} {frame.verb} {frame.prep}"]
        return self.lex["frames"][f"{frame.kind} {frame.verb}"]

    def _german_verb(self, clause) -> tuple[de.Verb, de.Frame | None]:
        if clause.kind in ("copula",) or (clause.kind == "weather" and clause.verb is None):
            return _BUILT_IN["sein"], None
        if clause.kind == "there":
            return de.Verb("geben", "gibt", "gab", "gegeben"), None
        frame = self.frame(clause)
        name = frame.verb
        for slot in clause.slots:
            if slot.role == "obj" and isinstance(slot.node, NP):
                for tag, other in frame.by_tag:
                    if tag in slot.node.tags:
                        name = other
            if slot.role == "transport" and slot.node[0] == "by" and name == "gehen":
                name = "fahren"  # "go by bus": German rides
        return _verb(name), frame

    def clause(self, clause, order: str, *, vorfeld: list[Tok] | None = None,
               skip=None, wh_slot=None, subject: bool = True, female: bool = False,
               after: bool = False) -> list[Tok]:
        """A clause in ``order``: "v2" (``vorfeld`` first, else the subject), "v1" (questions)
        or "sub" (verb-final); ``skip``: a slot not said here (a relative clause's gap, a
        wh-phrase); ``subject`` False: the subject is not said (coordinated verb phrase)."""
        verb, frame = self._german_verb(clause)
        group = clause.group
        negative = group.negation is not None
        field_items: list[tuple[float, list[Tok]]] = []
        extra: list[Tok] = []
        subj = clause.subject.node
        subject_toks = self.np(subj, "nom") if subject else []
        female = female or (subj.kind == "pronoun" and subj.word.lower() == "she") or (
            subj.kind == "noun" and self.lex["nouns"][subj.lemma].female)
        negated = [False]

        def add(rank: float, toks: list[Tok]) -> None:
            if toks:
                field_items.append((rank, toks))

        inner_verbs: list[Tok] = []
        inner_slots = set()
        for slot in clause.slots:
            if slot.role == "inf":
                inner_slots |= {id(s) for s in slot.node.slots}
        for slot in clause.slots:
            if slot is skip or slot is wh_slot or id(slot) in inner_slots:
                continue
            if slot.role == "gap":
                continue
            if slot.role == "inf":
                toks, verbs_ = self._infinitive(slot, frame, wh_slot)
                if verbs_ is None:
                    extra += toks
                else:
                    inner_verbs = verbs_
                    for rank, t in toks:
                        add(rank, t)
                continue
            for rank, toks in self._slot(clause, slot, frame, group.negation, negated, female):
                if rank == _EXTRAPOSED:
                    extra += toks
                else:
                    add(rank, toks)
        if frame is not None and frame.correlate:
            add(1, [Tok(frame.correlate, (group.main,))])
        if group.adverb is not None:
            add(5.5, self._phrase("adverbs", group.adverb))
        if negative and not negated[0]:
            add(8, [Tok("nicht", (group.negation,))])
        field_items.sort(key=lambda item: item[0])
        middle = [t for _, toks in field_items for t in toks]
        tense = german_tense(clause.tense, verb, after)
        aux_src = tuple(clause.group.aux)
        main_src = (clause.group.main,)
        person, plural = clause.subject.person, clause.subject.plural
        if clause.kind == "there":
            person, plural = 3, False
        verbs = cluster(verb, tense, person, plural, aux_src, main_src, inner_verbs)
        if order == "sub":
            return [*subject_toks, *middle, *verbs.final(), *extra]
        if order == "v1":
            return [verbs.finite, *subject_toks, *middle, *verbs.main(), *extra]
        if vorfeld is None:
            return [*subject_toks, verbs.finite, *middle, *verbs.main(), *extra]
        return [*vorfeld, verbs.finite, *subject_toks, *middle, *verbs.main(), *extra]

    def _infinitive(self, slot, frame: de.Frame | None, wh_slot):
        """An infinitive complement: for a modal, middle-field items and the infinitive(s)
        for the cluster; else the extraposed ", ... zu <verb>" (and None)."""
        inner = slot.node
        verb, inner_frame = self._german_verb(inner)
        items: list[tuple[int, list[Tok]]] = []
        for s in inner.slots:
            if s is not wh_slot:
                items += self._slot(inner, s, inner_frame, None, [True], False)
        to, main = inner.group.aux[0], inner.group.main
        assert frame is not None
        if _verb(frame.verb).modal:
            infinitive = [Tok(verb.inf, (main,))]
            return items, infinitive
        items.sort(key=lambda item: item[0])
        middle = [t for _, toks in items for t in toks]
        zu = zu_infinitive(verb)
        if len(zu) == 1:
            tail = [Tok(zu[0], (to, main))]
        else:
            tail = [Tok("zu", (to,)), Tok(zu[1], (main,))]
        return [COMMA, *middle, *tail, COMMA], None

    def _slot(self, clause, slot, frame: de.Frame | None, negation: W | None,
              negated: list[bool], female: bool) -> list[tuple[float, list[Tok]]]:
        """(rank in the middle field, German words) of one slot."""
        role, node = slot.role, slot.node
        if role == "obj":
            case = frame.case if frame is not None and clause.kind == "trans" else "acc"
            return [self._object(node, case, negation, negated)]
        if role == "pivot":
            return [self._object(node, "acc", negation, negated)]
        if role == "iobj":
            phrase = self.np(node.np, "dat")
            return [(3 if node.np.kind == "pronoun" else 4, phrase)]
        if role == "pobj":
            prep, case = self._slot_prep(clause, slot)
            if prep:
                return [(13, self._with_prep(prep, (node.prep,), node.np, case))]
            return [self._object(node.np, case, negation, negated)]
        if role in ("place", "goal", "loc"):
            rank = 12 if role == "loc" else 13
            if clause.kind == "copula":
                rank = 13
            return [(rank, self.pp(node))]
        if role == "with":
            return [(10, self.pp(node))]
        if role == "manner":
            return [(11, self._phrase("manner_adverbs", node))]
        if role == "transport":
            return [(12, self._phrase("transport", *node))]
        if role == "time":
            return [(5, self._phrase("time_adverbials", *node))]
        if role in ("adj", "weather"):
            return [(13, self._predicate(node))]
        if role == "job":
            neg = negation if not negated[0] else None
            negated[0] = negated[0] or neg is not None
            return [(13, self._noun_phrase(node, "nom", neg, job_for=female))]
        if role == "that":
            sub: Sub = node
            return [(_EXTRAPOSED, [COMMA, Tok("dass", (sub.word,)), *self.clause(sub.clause, "sub"),
                          COMMA])]
        raise AssertionError(f"slot role {role!r}")

    def _object(self, node: NP, case: str, negation: W | None,
                negated: list[bool]) -> tuple[float, list[Tok]]:
        if node.kind == "pronoun":
            return (2 if case == "acc" else 3), self.np(node, case)
        det = (node.det or "").lower() if node.kind == "noun" else "the"
        if negation is not None and not negated[0] and node.kind == "noun" and det in _INDEFINITE:
            negated[0] = True
            return 9, self.np(node, case, negate=negation)
        if node.kind == "noun" and det in ("two", "three", "four", "many"):
            return 9, self.np(node, case)
        return 6, self.np(node, case)

    def _predicate(self, words: Sequence[W]) -> list[Tok]:
        out = []
        for w in words:
            if w == ",":
                out.append(COMMA)
            elif w == "very":
                out.append(Tok("sehr", (w,)))
            elif w == "and":
                out.append(Tok("und", (w,)))
            elif w in self.lex["adjectives"]:
                out.append(Tok(self.lex["adjectives"][w].de, (w,)))
            else:
                out.append(Tok(self.lex["weather_adjectives"][w], (w,)))
        return out

    def _phrase(self, table: str, *words: W) -> list[Tok]:
        key = " ".join(words)
        return [Tok(text, tuple(words[i] for i in links))
                for text, links in self.lex[table][key]]

    # ---- sentences -------------------------------------------------------------------------

    def sentence(self, node: Sentence) -> list[Tok]:
        kind = node.kind
        if kind == "vocative":
            address = [Tok(t, tuple(node.marker[i] for i in links))
                       for t, links in self.lex["vocatives"][" ".join(node.marker)]]
            return [*self.sentence(node.inner), COMMA, *address]
        if kind == "marker":
            inner = node.inner
            table = "question_markers" if inner.question else "discourse_markers"
            marker = self.lex[table][" ".join(node.marker).lower()]
            toks = [Tok(t, tuple(node.marker[i] for i in links)) for t, links in marker.words]
            if marker.v2 and not inner.question:
                return self.statement(inner, vorfeld=toks)
            return [*toks, COMMA, *self.sentence(inner)]
        if kind in ("yes_no", "wh", "wh_adverb", "wh_subject"):
            return self.question(node)
        return self.statement(node)

    def statement(self, node: Sentence, vorfeld: list[Tok] | None = None) -> list[Tok]:
        kind = node.kind
        if kind == "clause":
            return self.clause(node.clause, "v2", vorfeld=vorfeld)
        if kind == "front":
            time = self._phrase("time_adverbials", *node.slot.node)
            if vorfeld is not None:
                node.clause.slots.append(node.slot)
                return self.clause(node.clause, "v2", vorfeld=vorfeld)
            return self.clause(node.clause, "v2", vorfeld=time)
        if kind == "main_sub":
            return [*self.clause(node.clause, "v2", vorfeld=vorfeld), COMMA,
                    *self.subordinate(node.sub)]
        if kind == "sub_main":
            sub = self.subordinate(node.sub)
            if vorfeld is not None:
                return [*self.clause(node.clause, "v2", vorfeld=vorfeld), COMMA, *sub]
            return self.clause(node.clause, "v2", vorfeld=[*sub, COMMA])
        if kind == "coord":
            first = self.clause(node.clause, "v2", vorfeld=vorfeld)
            second = self.clause(node.second, "v2")
            if node.joint == "but":
                return [*first, COMMA, Tok("aber", (node.joint,)), *second]
            return [*first, Tok("und", (node.joint,)), *second]
        if kind == "vp":
            first = self.clause(node.clause, "v2", vorfeld=vorfeld)
            second = self.clause(node.second, "v2", subject=False)
            if node.joint == "but":
                return [*first, COMMA, Tok("aber", (node.joint,)), *second]
            return [*first, Tok("und", (node.joint,)), *second]
        raise AssertionError(f"statement kind {kind!r}")

    def subordinate(self, sub: Sub) -> list[Tok]:
        word = sub.word.lower()
        clause = sub.clause
        if word == "when":
            past_ = clause.tense in ("past", "pastprog")
            conj = "als" if past_ else "wenn"
        else:
            conj = _SUBORDINATORS[word]
        return [Tok(conj, (sub.word,)), *self.clause(clause, "sub", after=word == "after")]

    def question(self, node: Sentence) -> list[Tok]:
        kind = node.kind
        clause = node.clause
        if kind == "yes_no":
            out = self.clause(clause, "v1")
        elif kind == "wh_subject":
            out = self.clause(clause, "v2")
        elif kind == "wh_adverb":
            wh = node.wh[0]
            out = self.clause(clause, "v2", vorfeld=[Tok(_WH_ADVERBS[wh.lower()], (wh,))])
        else:
            out = self.clause(clause, "v2", vorfeld=self._wh_phrase(node), wh_slot=node.slot)
        if node.sub is not None:
            out += [COMMA, *self.subordinate(node.sub)]
        return out

    def _wh_phrase(self, node: Sentence) -> list[Tok]:
        """The German of a fronted wh-phrase that stands for ``node.slot``."""
        slot, clause, wh = node.slot, node.clause, list(node.wh)
        first = wh[0].lower()
        src = tuple(wh) + tuple(node.residue)
        if first == "how":
            if len(wh) == 2:
                return [Tok("wie", (wh[0],)), *self._predicate([wh[1]])]
            return [Tok("wie", (wh[0],))]
        if first == "when":
            return [Tok("wann", (wh[0],))]
        if first == "where":
            return [Tok("wohin" if slot.role == "goal" else "wo", (wh[0],))]
        if slot.role in ("obj", "pivot"):
            frame = self.frame(clause) if clause.kind == "trans" else None
            prep, case = "", frame.case if frame is not None else "acc"
            target = slot.node
        elif slot.role == "that":
            return [Tok("was", src)]
        else:
            prep, case = self._slot_prep(clause, slot)
            target = slot.node.np
        if first == "which":
            noun = self.lex["nouns"][target.lemma]
            g = _gender_index(noun.gender, target.plural)
            phrase = [Tok("welch" + _DER[case][g], (wh[0],)),
                      Tok(_noun_form(noun, target.plural, case), (wh[1],))]
        elif first == "who":
            phrase = [Tok(_WHO[CASES.index(case)], (wh[0],))]
        else:
            if prep:
                joined = "wo" + ("r" if prep[0] in "aeiouü" else "") + prep
                return [Tok(joined, (wh[0], *node.residue))]
            phrase = [Tok("was", (wh[0],))]
        if prep:
            return [Tok(prep, tuple(node.residue)), *phrase]
        return phrase


def _punctuate(tokens: list[Tok]) -> list[Tok]:
    out: list[Tok] = []
    for tok in tokens:
        if tok.text == "," and (not out or out[-1].text == ","):
            continue
        out.append(tok)
    while out and out[-1].text == ",":
        out.pop()
    return out


def realise(node: Sentence) -> list[Tok]:
    """The German words of a sentence structure (commas included, no final stop)."""
    return _punctuate(Realiser().sentence(node))


def translate(tokens: Sequence[str], node: Sentence) -> tuple[str, list[tuple[int, int]]]:
    """German for the English sentence of :meth:`Grammar.parsed` (its ``tokens`` and
    structure): the German sentence and its links ``(English index, German index)``."""
    where = positions(tokens)
    words = realise(node)
    parts: list[str] = []
    links: list[tuple[int, int]] = []
    for tok in words:
        if tok.text == ",":
            parts[-1] += ","
            continue
        j = len(parts)
        text = tok.text
        parts.append(text[0].upper() + text[1:] if j == 0 else text)
        for w in tok.src:
            if w is not None and id(w) in where:
                links.append((where[id(w)], j))
    sentence = " ".join(parts) + ("?" if node.question else ".")
    return sentence, sorted(set(links))
