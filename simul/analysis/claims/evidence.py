"""Evidence: an effect B − A, its paired-bootstrap interval over the segments, n, and the
verdict its kind gives it (superiority, non-inferiority or equivalence, with a margin)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
import pandas as pd

VERDICTS = ("holds", "contradicted", "undecided", "not measured")
"""A claim's verdicts: the first three from its evidence; "not measured" for a claim whose
systems or settings do not exist yet (:meth:`simul.analysis.claims.Finding.not_measured`)."""

KINDS = ("superiority", "non-inferiority", "equivalence")
"""What a claim says of an effect B − A, and so when it holds (:attr:`Evidence.verdict`):

- superiority ("B beats A", "grows with"): B − A lies on the claimed side of 0;
- non-inferiority ("A ≥ B", "on par or better", "no gain"): B − A is not on the wrong side
  of 0 by more than a margin, taken from the paper's own use of its words;
- equivalence ("on par", "comparable", "the same line"): |B − A| is below the margin
  (two one-sided tests at 5 %: the 90 % interval inside ±margin)."""

POWER = 0.8
"""The chance a second sample of :meth:`Evidence.segments_needed` segments decides an
undecided claim, were its effect as measured (``simul reproduce --confirm --power``)."""


def kind_of(claimed: str, margin: float) -> str:
    """The :data:`KINDS` entry of a claim: ``claimed`` "within" (``margin`` > 0) is
    equivalence; "greater" or "less" is superiority without a margin, non-inferiority
    with one."""
    if claimed == "within":
        return "equivalence"
    return "non-inferiority" if margin else "superiority"


@dataclass(frozen=True)
class Replay:
    """What a confirmatory run needs to decide a claim again on fresh segments: the summary
    rows the statistic read (their ``records`` name the sweeps and settings to decode
    again), the statistic and how it was tested (:func:`simul.analysis.claims.bootstrap`)."""
    rows: pd.DataFrame
    statistic: Callable[[pd.DataFrame], float]
    claimed: str
    margin: float
    metrics: tuple[str, ...]


@dataclass(frozen=True)
class Evidence:
    """A paired comparison on the same ``n`` segments: ``effect`` = B − A on the full
    sample, (``low``, ``high``) its percentile interval over bootstrap resamples of the
    segments (95 %, or 90 % for an equivalence claim: :attr:`level`), and the verdict on a
    claim that B − A is ``claimed``: "greater" or "less" than 0 (or than ∓``margin`` for a
    non-inferiority claim), or "within" ±``margin`` (equivalence); :attr:`kind` names
    which (:data:`KINDS`). ``margin`` is in the effect's unit (e.g.
    :data:`simul.analysis.claims.BLEU_MARGIN`)."""
    effect: float
    low: float
    high: float
    n: int
    claimed: str
    margin: float = 0.0
    replay: Replay | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        check(self.claimed, self.margin)

    @property
    def kind(self) -> str:
        return kind_of(self.claimed, self.margin)

    @property
    def level(self) -> float:
        """The interval's coverage: 0.90 for an equivalence claim (two one-sided tests at
        5 % each), 0.95 otherwise (one side at 2.5 %)."""
        return level(self.claimed)

    def _bounds(self) -> tuple[float, ...]:
        """The values of B − A where the verdict changes."""
        if self.kind == "equivalence":
            return (-self.margin, self.margin)
        return (-self.margin if self.claimed == "greater" else self.margin,)

    @property
    def verdict(self) -> str:
        """superiority: "holds" when the whole interval lies on the claimed side of 0,
        "contradicted" when it lies on the other side, "undecided" when it contains 0.
        non-inferiority, claimed "greater": holds when ``low`` > −margin, contradicted when
        ``high`` < −margin ("less": holds when ``high`` < margin, contradicted when ``low``
        > margin), undecided otherwise. equivalence: holds when the interval lies inside
        (−margin, margin), contradicted when it lies wholly above margin or below −margin,
        undecided otherwise."""
        if self.kind == "equivalence":
            m = self.margin
            if -m < self.low and self.high < m:
                return "holds"
            return "contradicted" if self.low > m or self.high < -m else "undecided"
        (bound,) = self._bounds()
        above, below = self.low > bound, self.high < bound
        if not (above or below):
            return "undecided"
        return "holds" if above == (self.claimed == "greater") else "contradicted"

    def segments_needed(self, power: float = POWER) -> int | None:
        """For an undecided claim, about how many fresh segments would decide it with
        probability ``power`` were the effect as measured: the interval's half-width h
        shrinks as 1/√n, and a second sample of n₂ segments decides when the distance d
        from the effect to the nearest bound of :meth:`verdict` (0, ∓margin or ±margin) is
        at least (z + z_power) standard errors, so n₂ = n · ((z + z_power) · h / (z · d))²
        with z the interval's quantile (1.96 at 95 %, 1.645 at 90 %). ``power`` ½ gives
        n · (h / d)², the half-width equal to the distance. None when the effect sits on a
        bound or is NaN (nothing to compare) or the claim is decided."""
        if not 0 < power < 1:
            raise ValueError(f"power: a probability between 0 and 1, not {power!r}")
        if self.verdict != "undecided" or self.n == 0 or math.isnan(self.high - self.low):
            return None  # decided, or no interval to scale
        distance = min(abs(self.effect - b) for b in self._bounds())
        if not distance > 0:
            return None  # on a bound, or NaN
        half = (self.high - self.low) / 2
        z = NormalDist().inv_cdf(1 - (1 - self.level) / 2)
        scale = (z + NormalDist().inv_cdf(power)) / z
        return math.ceil(self.n * (scale * half / distance) ** 2)

    def text(self, digits: int = 1) -> str:
        if self.n == 0:
            return f"{self.effect:+.{digits}f} (point estimate, no segments): {self.verdict}"
        shown = "" if self.level == 0.95 else f" ({self.level:.0%})"
        return (f"{self.effect:+.{digits}f} [{self.low:+.{digits}f}, {self.high:+.{digits}f}]"
                f"{shown}, n={self.n}: {self.verdict}")


def check(claimed: str, margin: float) -> None:
    """Refuse a claim direction other than "greater", "less" or "within", a negative margin
    or an equivalence claim without one."""
    if claimed not in ("greater", "less", "within"):
        raise ValueError(f"claimed must be 'greater' or 'less' (B − A) or 'within' "
                         f"(±margin), not {claimed!r}")
    if not margin >= 0:
        raise ValueError(f"margin: a number ≥ 0 in the effect's unit, not {margin!r}")
    if claimed == "within" and not margin > 0:
        raise ValueError("claimed 'within' (an equivalence claim) needs a margin > 0")


def level(claimed: str) -> float:
    """The interval's coverage for a claim ``claimed``: 0.90 "within", 0.95 otherwise."""
    return 0.90 if claimed == "within" else 0.95


def interval(values, claimed: str) -> tuple[float, float]:
    """The percentile interval of :func:`level` over bootstrap values."""
    tail = (1 - level(claimed)) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)
