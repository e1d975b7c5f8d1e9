"""The structure of a grammar sentence, kept beside its English words for other realisers.

:mod:`simul.corpus.mini.grammar` draws a sentence as clauses, noun phrases and slots and
turns them into English words as it goes.  It also keeps what it drew: the nodes below, whose
leaves are the English words themselves (:class:`W`), so that a realiser of another language
(:mod:`simul.corpus.mini.german`) can say the same sentence and tell, for each word it
writes, which English words it translates.

An English word is a :class:`W`: a ``str`` like any other (the English rules compare and join
words as strings), told apart from every other word of the sentence by identity.  After the
English sentence is finished, :func:`positions` maps each word object to its index among the
sentence's whitespace-separated words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any


class W(str):
    """One English word of the sentence being built, known by identity."""

    __slots__ = ()


def words(text: str) -> list[W]:
    """The words of ``text`` as fresh :class:`W` objects."""
    return [W(word) for word in text.split()]


def positions(tokens: Iterable[str]) -> dict[int, int]:
    """``id(word) → index`` of the words of a finished token list (commas are not words)."""
    out: dict[int, int] = {}
    for token in tokens:
        if token != ",":
            out[id(token)] = len(out)
    return out


@dataclass(eq=False, slots=True)
class NP:
    """A noun phrase.

    ``kind``: "noun" (determiner, adjectives, noun, optional prepositional phrase and relative
    clause), "pronoun" (``word``), "coord" and "list" (``parts`` joined by the words of
    ``joints``), "gap" (the empty head of a relative clause or of a coordinated verb phrase),
    "wh" (``word`` is "who" or "what" as a subject), "there" and "it" (expletive subjects).
    """

    kind: str
    person: int = 3
    plural: bool = False
    tags: frozenset[str] = frozenset()
    word: W | None = None
    det: W | None = None
    very: W | None = None
    adjectives: list[W] = field(default_factory=list)
    noun: W | None = None
    lemma: str = ""
    mass: bool = False
    pp: PP | None = None
    relative: Relative | None = None
    nonrestrictive: bool = False
    parts: list[NP] = field(default_factory=list)
    joints: list[W] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class PP:
    """A prepositional phrase: ``prep`` (None for "home") and its noun phrase ``np``.

    ``use``: "loc" (where something is), "goal" (where to), "noun" (modifying a noun), "with" and
    "for" (a companion), "home" (``prep`` None: "home" as a goal; ``at`` "at home").
    """

    use: str
    prep: W | None
    np: NP | None
    home: W | None = None


@dataclass(eq=False, slots=True)
class Relative:
    """A relative clause: its pronoun and its clause, where ``gap`` stands for the head noun."""

    pronoun: W
    clause: Any
    gap: NP


@dataclass(eq=False, slots=True)
class VerbGroup:
    """The English verb group of a clause as written: auxiliaries (do-support, will, be, have),
    the main verb form, and "not" and a pre-verbal adverb if any."""

    aux: list[W]
    main: W
    negation: W | None = None
    adverb: W | None = None


@dataclass(eq=False, slots=True)
class Sentence:
    """How the clauses of a sentence are put together.

    ``kind`` and the fields it uses:

    - "clause": ``clause``
    - "main_sub" / "sub_main": ``clause`` and ``sub`` (a :class:`Sub`), in that order / fronted
    - "coord": ``clause``, ``joint`` ("and" or "but"), ``second``
    - "vp": ``clause`` and ``second`` sharing its subject, ``joint``
    - "front": a fronted time phrase ``slot`` then ``clause``
    - "marker": ``marker`` words, then ``inner``
    - "yes_no": ``clause`` inverted, ``sub`` optional
    - "wh": ``wh`` words fronted, ``clause`` inverted with ``slot`` (its slot of the wh-phrase)
      replaced by ``residue`` words, ``sub`` optional
    - "wh_adverb": ``wh`` (when, why, where, how: not a slot of the clause), ``clause``, ``sub``
    - "wh_subject": ``clause`` whose subject is "who" or "what", ``sub`` optional
    - "vocative": ``inner`` then the ``marker`` words of address
    """

    kind: str
    clause: Any = None
    second: Any = None
    sub: Sub | None = None
    joint: W | None = None
    slot: Any = None
    marker: Sequence[W] = ()
    inner: Sentence | None = None
    wh: Sequence[W] = ()
    residue: Sequence[W] = ()
    question: bool = False


@dataclass(eq=False, slots=True)
class Sub:
    """A subordinate clause: its subordinator and its clause."""

    word: W
    clause: Any
