"""The papers' qualitative claims, checked on a run's numbers and reported honestly.

Each notebook ends with a table of claims (``claims.csv``/``.md`` next to its figures):
the claim in the paper's words, whether it holds on this run, and the numbers behind it.
The per-paper checks live in :mod:`simul.papers` (with ``KNOWN_GAPS``, the claims that do
not hold on the full run and why); the test suite reads the saved tables (a quick run checks
the claims that hold on a handful of utterances; the full run's claims are checked by
``tests/test_reproduce_full.py``, run by ``make reproduce``).

:class:`Evidence` is a claim as a measurement: the effect of B over A on the same segments,
its 95 % interval from a paired bootstrap (:func:`bleu_difference` for corpus BLEU,
:func:`mean_difference` for sentence-level latency), and a verdict: holds, contradicted, or
undecided at this sample size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Claim:
    id: str  # e.g. "N21-1"
    text: str  # the claim, as the paper makes it
    holds: bool
    detail: str  # the numbers it was decided on
    needs_full_run: bool = False  # too few utterances in a quick run to decide it


def report(claims: Sequence[Claim], out_dir: str | Path | None = None) -> pd.DataFrame:
    """The claims as a table; saved as ``claims.csv`` and ``claims.md`` under ``out_dir``."""
    columns = [f.name for f in fields(Claim)]  # kept when no claim could be checked
    table = pd.DataFrame([asdict(c) for c in claims], columns=columns)
    if out_dir is not None:
        from simul.tables import save

        save(table, out_dir, "claims")
    return table


def non_decreasing(values: Sequence[float], tol: float = 0.0) -> bool:
    """Each value ≥ the one before, minus ``tol``."""
    return all(b >= a - tol for a, b in zip(values, values[1:], strict=False))


def non_increasing(values: Sequence[float], tol: float = 0.0) -> bool:
    return all(b <= a + tol for a, b in zip(values, values[1:], strict=False))


def monotone_within(rows: pd.DataFrame, *, by: str | Sequence[str], along: str,
                    metric: str = "AL", increasing: bool = True,
                    label=None, sort: bool = True) -> tuple[list[str], int]:
    """For each group of ``by`` with two or more values of ``along``: is ``metric``
    monotone (non-decreasing, or non-increasing) as ``along`` grows? Returns the failures
    (``"<label(key)>: AL 1200, 1100"``), groups in sorted order of their key (``sort``) or
    in order of appearance, and how many groups were checked. The default label is the key
    itself, or ``{column: value}`` when ``by`` is a list of columns."""
    if label is None:
        label = (lambda key: str(dict(zip(by, key, strict=True)))) \
            if not isinstance(by, str) else str
    check = non_decreasing if increasing else non_increasing
    failures, seen = [], 0
    for key, group in rows.groupby(by, sort=sort):
        if group[along].nunique() < 2:
            continue
        seen += 1
        values = group.sort_values(along)[metric].tolist()
        if not check(values):
            failures.append(f"{label(key)}: {metric} {fmt(values)}")
    return failures, seen


def fmt(values: Sequence[float], digits: int = 0) -> str:
    return ", ".join(f"{v:.{digits}f}" for v in values)


def read(out_dir: str | Path) -> pd.DataFrame:
    """A saved claims table."""
    return pd.read_csv(Path(out_dir) / "claims.csv")


# --- Evidence: an effect, its 95 % interval from a paired bootstrap, and a verdict ---------

VERDICTS = ("holds", "contradicted", "undecided")


@dataclass(frozen=True)
class Evidence:
    """A paired comparison of two systems on the same ``n`` segments: ``effect`` = B − A
    on the full sample, (``low``, ``high``) its 95 % percentile interval over bootstrap
    resamples of the segments, and the verdict on a claim that B − A is ``claimed``
    ("greater" or "less" than 0)."""
    effect: float
    low: float
    high: float
    n: int
    claimed: str

    @property
    def verdict(self) -> str:
        """"holds" when the whole interval lies on the claimed side of 0, "contradicted"
        when it lies on the other side, "undecided" when it contains 0."""
        above, below = self.low > 0, self.high < 0
        if not (above or below):
            return "undecided"
        return "holds" if above == (self.claimed == "greater") else "contradicted"

    def segments_needed(self) -> int | None:
        """For an undecided claim, about how many segments would make the interval exclude
        0 if the effect stayed as measured (the half-width shrinks as 1/√n); None when the
        effect is 0 or the claim is decided."""
        if self.verdict != "undecided" or self.effect == 0:
            return None
        half = (self.high - self.low) / 2
        return math.ceil(self.n * (half / abs(self.effect)) ** 2)

    def text(self, digits: int = 1) -> str:
        return (f"{self.effect:+.{digits}f} [{self.low:+.{digits}f}, {self.high:+.{digits}f}], "
                f"n={self.n}: {self.verdict}")


def _claimed(claimed: str) -> str:
    if claimed not in ("greater", "less"):
        raise ValueError(f"claimed must be 'greater' or 'less' (B − A), not {claimed!r}")
    return claimed


def _resamples(n: int, resamples: int, seed: int) -> np.ndarray:
    if n < 2:
        raise ValueError(f"a paired bootstrap needs at least 2 segments, got {n}")
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def mean_difference(a: Sequence[float], b: Sequence[float], *, claimed: str,
                    resamples: int = 1000, seed: int = 0) -> Evidence:
    """Segment-level paired bootstrap of mean(B) − mean(A): ``a[i]`` and ``b[i]`` are two
    systems' values on segment i (e.g. sentence-level AL in ms, whose mean SimulEval
    reports). The same resampled segments are used for both systems."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values needed: {a.shape} vs {b.shape}")
    diff = b - a
    means = diff[_resamples(len(diff), resamples, seed)].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Evidence(float(diff.mean()), float(low), float(high), len(diff), _claimed(claimed))


def bleu_difference(hyps_a: Sequence[str], hyps_b: Sequence[str], refs: Sequence[str], *,
                    claimed: str, resamples: int = 1000, seed: int = 0) -> Evidence:
    """Paired bootstrap of corpus BLEU(B) − BLEU(A), as sacrebleu's paired bootstrap
    resamples (Koehn 2004): segment-level BLEU sufficient statistics summed over the same
    resampled segments for both systems, then scored; sacrebleu's default BLEU (13a)."""
    from sacrebleu.metrics import BLEU

    if not len(hyps_a) == len(hyps_b) == len(refs):
        raise ValueError(f"{len(hyps_a)} and {len(hyps_b)} hypotheses for {len(refs)} "
                         "references: one of each per segment")
    bleu = BLEU()
    stats = [np.asarray(bleu._extract_corpus_statistics(list(h), [list(refs)]), dtype=float)
             for h in (hyps_a, hyps_b)]

    def score(s: np.ndarray) -> float:
        return bleu._compute_score_from_stats(list(s)).score

    effect = score(stats[1].sum(axis=0)) - score(stats[0].sum(axis=0))
    diffs = [score(stats[1][idx].sum(axis=0)) - score(stats[0][idx].sum(axis=0))
             for idx in _resamples(len(refs), resamples, seed)]
    low, high = np.percentile(diffs, [2.5, 97.5])
    return Evidence(effect, float(low), float(high), len(refs), _claimed(claimed))
