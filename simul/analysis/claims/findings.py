"""A paper's findings declared as data (:class:`Finding`), and what a run made of each
(:class:`Claim`): one engine evaluates every paper's claims.

A :class:`Finding` is the paper's sentence (with its section), the half of it checked when
the sentence says two things ("quality and latency increase …"), its kind (superiority,
non-inferiority, equivalence, or a property of every setting), the margin with the reason
the paper gives for it, the settings the statistic reads and the statistic itself in
words. A paper module lists its findings (``FINDINGS``); its claim functions compute each
statistic on a sweep's rows and hand it to the finding (:meth:`Finding.measure`), which
bootstraps it over the segments and returns a :class:`Claim`. A finding whose systems do
not exist yet reports "not measured" with what it needs (:meth:`Finding.not_measured`)
instead of being left out. A finding marked ``own`` is simul's question, not the paper's
(beyond the paper, or the paper's sentence at a setting the paper did not use): reported in
a table of its own and not counted among the paper's claims.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from simul.analysis.claims import resampling
from simul.analysis.claims.evidence import KINDS, Evidence, check, kind_of

PROPERTY = "property"
"""The kind of a finding about every word or setting (checked, not estimated)."""

HALVES = ("", "quality", "latency", "computation", "first", "second")
"""Which half of a compound sentence a finding checks ("" when the sentence says one
thing): "both quality and latency increase with k" is two findings, "quality" and
"latency"; a sentence that contrasts two systems ("X is far from it, while Y almost
reaches it") is "first" and "second"."""

PAPERS = {"N21": "Nguyen et al. 2021", "P22": "Papi et al. 2022", "M20": "Ma et al. 2020",
          "K22": "Polák et al. 2022", "H20": "Han et al. 2020", "simul": "simul"}
"""The papers' short names (README's Citing section), and simul's own questions."""


@dataclass(frozen=True)
class Finding:
    """One claim of a paper, as the paper states it, and how a run tests it.

    ``claimed`` is the direction of the effect B − A that the statistic measures ("greater"
    or "less" than 0, or "within" ±``margin``); ``kind`` must agree with it
    (:func:`simul.analysis.claims.kind_of`): superiority without a margin, non-inferiority or
    equivalence with one, whose ``margin_reason`` says where the paper puts it."""
    id: str
    paper: str  # a key of PAPERS
    where: str  # the paper's section, table or figure: "§5.2", "abstract", "Table 4"
    sentence: str  # the paper's words
    statistic: str  # the effect measured, with its unit
    settings: str  # the settings the statistic reads
    kind: str  # superiority, non-inferiority, equivalence, or property
    claimed: str = "greater"  # "greater", "less", "within" ("" for a property)
    margin: float = 0.0
    margin_reason: str = ""
    half: str = ""  # HALVES
    own: bool = False  # simul's own question: beyond the paper, or not at its setting
    needs_full_run: bool = True  # a quick run's handful of segments cannot decide it

    def __post_init__(self):
        where = f"finding {self.id}"
        if self.paper not in PAPERS:
            raise ValueError(f"{where}: paper {self.paper!r}, not one of {sorted(PAPERS)}")
        if self.half not in HALVES:
            raise ValueError(f"{where}: half {self.half!r}, not one of {HALVES}")
        if not self.sentence.strip() or not self.where.strip():
            raise ValueError(f"{where}: the paper's sentence and its section are required")
        if self.kind == PROPERTY:
            if self.claimed or self.margin:
                raise ValueError(f"{where}: a property has no direction nor margin")
            return
        if self.kind not in KINDS:
            raise ValueError(f"{where}: kind {self.kind!r}, not one of {(*KINDS, PROPERTY)}")
        check(self.claimed, self.margin)
        if kind_of(self.claimed, self.margin) != self.kind:
            raise ValueError(f"{where}: claimed {self.claimed!r} with margin {self.margin:g} "
                             f"is a {kind_of(self.claimed, self.margin)} claim, not "
                             f"{self.kind}")
        if self.margin and not self.margin_reason.strip():
            raise ValueError(f"{where}: a margin needs its reason (the paper's own use of "
                             "its words)")

    @property
    def text(self) -> str:
        """The statistic and, for a claim with a margin, the kind and margin in words."""
        if self.kind in ("non-inferiority", "equivalence"):
            return f"{self.statistic} ({self.kind}, margin {self.margin:g})"
        return self.statistic

    def variant(self, suffix: str, note: str, *, own: bool | None = None) -> Finding:
        """The same finding on other settings: ``suffix`` after the id (``"@en-de"``,
        ``"-eos"``), ``note`` before the settings; ``own`` marks a setting the paper did
        not use as simul's own question."""
        return dataclasses.replace(self, id=self.id + suffix,
                                   settings=f"{note}; {self.settings}" if note else
                                   self.settings,
                                   own=self.own if own is None else own)

    def measure(self, rows: pd.DataFrame, statistic: Callable[[pd.DataFrame], float], *,
                metrics: Sequence[str] = ("AL",), detail: str = "") -> Claim:
        """The claim on a sweep's ``rows``: ``statistic`` bootstrapped over their segments
        (:func:`simul.analysis.claims.evaluate`) with this finding's direction and margin.
        In a quick run (:data:`~simul.analysis.claims.resampling.QUICK`) a finding that needs
        the full run gets its effect alone (:func:`~simul.analysis.claims.point_estimate`)."""
        if self.kind == PROPERTY:
            raise ValueError(f"finding {self.id}: a property is checked (Finding.checked), "
                             "not measured")
        measure = (resampling.point_estimate if resampling.QUICK and self.needs_full_run
                   else resampling.evaluate)
        evidence = measure(rows, statistic, claimed=self.claimed, margin=self.margin,
                           metrics=metrics)
        return self.decided(evidence, detail)

    def decided(self, evidence: Evidence, detail: str = "") -> Claim:
        """The claim decided by ``evidence`` computed elsewhere (its direction and margin
        must be this finding's)."""
        if (evidence.claimed, evidence.margin) != (self.claimed, self.margin):
            raise ValueError(f"finding {self.id}: evidence claimed {evidence.claimed!r} "
                             f"margin {evidence.margin:g}, the finding {self.claimed!r} "
                             f"margin {self.margin:g}")
        return Claim(self.id, self.text, evidence.verdict == "holds", detail,
                     self.needs_full_run, evidence, finding=self)

    def checked(self, holds: bool, detail: str, no_interval: str = "") -> Claim:
        """A property's claim: it holds on every word or setting, or not."""
        if self.kind != PROPERTY:
            raise ValueError(f"finding {self.id}: a {self.kind} claim is measured, not "
                             "checked")
        return Claim(self.id, self.text, bool(holds), detail, False, None, no_interval,
                     finding=self)

    def not_measured(self, needs: str, detail: str = "") -> Claim:
        """The claim of a finding whose systems or settings this run lacks: verdict "not
        measured", and ``needs`` says what would measure it."""
        if not needs.strip():
            raise ValueError(f"finding {self.id}: say what it needs to be measured")
        return Claim(self.id, self.text, False, detail, False, None,
                     f"not measured: needs {needs}", finding=self, needs=needs)


def declare(*findings: Finding) -> dict[str, Finding]:
    """A paper module's ``FINDINGS``: {id: finding}, each id once."""
    out: dict[str, Finding] = {}
    for f in findings:
        if f.id in out:
            raise ValueError(f"finding {f.id} declared twice")
        out[f.id] = f
    return out


@dataclass(frozen=True)
class Claim:
    """A paper's claim as it came out on a run. A measured claim carries its
    :class:`Evidence` (effect, interval, n) and its verdict is the evidence's; a property
    has none, and holds or is contradicted; a claim whose systems do not exist is "not
    measured" (``needs``). ``finding`` is its declaration (:class:`Finding`)."""
    id: str  # e.g. "N21-AL-k"
    text: str  # the statistic, as measured
    holds: bool  # the verdict is "holds"
    detail: str  # the numbers it was decided on
    needs_full_run: bool = False  # too few utterances in a quick run to decide it
    evidence: Evidence | None = None
    no_interval: str = ""  # why a claim without evidence has no effect nor interval
    finding: Finding | None = None
    needs: str = ""  # what a "not measured" claim needs

    @property
    def verdict(self) -> str:
        """"holds", "contradicted", "undecided" (only a claim with evidence can be) or
        "not measured"."""
        if self.needs:
            return "not measured"
        if self.evidence is not None:
            return self.evidence.verdict
        return "holds" if self.holds else "contradicted"

    @property
    def kind(self) -> str:
        """The claim's kind (:data:`~simul.analysis.claims.KINDS`, or "property")."""
        if self.finding is not None:
            return self.finding.kind
        return self.evidence.kind if self.evidence is not None else PROPERTY

    @property
    def own(self) -> bool:
        """simul's own question, not the paper's."""
        return self.finding is not None and self.finding.own

    @classmethod
    def measured(cls, id: str, text: str, evidence: Evidence, detail: str = "", *,
                 needs_full_run: bool = False) -> Claim:
        """A claim decided by ``evidence`` without a declared finding (an ad hoc check,
        e.g. in the docs' example); ``detail`` adds the numbers behind the effect."""
        return cls(id, text, evidence.verdict == "holds", detail, needs_full_run, evidence)


def tagged(claim: Claim, suffix: str, note: str) -> Claim:
    """``claim`` on one of several settings (a language pair of two: ``"@en-de"``): the
    suffix after its id and its finding's, ``note`` before its text."""
    finding = claim.finding.variant(suffix, note) if claim.finding is not None else None
    return dataclasses.replace(claim, id=claim.id + suffix, text=f"{note}: {claim.text}",
                               finding=finding)
