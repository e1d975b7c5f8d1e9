"""Statistics of sweep rows that a claim bootstraps (:func:`simul.analysis.claims.bootstrap`), and
the checks a claim's detail reports: each maps rows (BLEU and latency columns) to a number.

- :func:`difference`: one setting's metric − another's;
- :func:`weakest_step` and :func:`mean_step`: how a metric moves along a grid axis, at its
  weakest ("at every value": the smallest step) or on average ("grows with", "tends to":
  the mean step);
- :func:`curve_gap`: two quality–latency curves compared at matched latency.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd


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


def difference(a: pd.Series | dict, b: pd.Series | dict, metric: str = "BLEU"
               ) -> Callable[[pd.DataFrame], float]:
    """``metric`` of setting B − that of setting A, each picked from the rows by its
    ``setting`` (and ``model``, ``split``) column."""
    keys = ("model", "split", "setting")

    def pick(rows: pd.DataFrame, which) -> float:
        mask = np.ones(len(rows), dtype=bool)
        for k in keys:
            if k in rows and k in which:
                mask &= (rows[k] == which[k]).to_numpy()
        if mask.sum() != 1:
            raise ValueError(f"{dict((k, which[k]) for k in keys if k in which)}: "
                             f"{int(mask.sum())} rows match, not one")
        return float(rows.loc[mask, metric].iloc[0])

    return lambda rows: pick(rows, b) - pick(rows, a)


def _steps(rows: pd.DataFrame, by, along: str, metric: str) -> list[float]:
    steps: list[float] = []
    for _, group in rows.groupby(by):
        steps.extend(np.diff(group.sort_values(along)[metric].to_numpy()))
    return steps


def weakest_step(*, by: str | Sequence[str], along: str, metric: str = "AL",
                 increasing: bool = True) -> Callable[[pd.DataFrame], float]:
    """"``metric`` grows (or falls) with ``along`` at every step, at every value of
    ``by``": over the groups of ``by`` with two or more values of ``along``, the smallest
    change of ``metric`` from one value of ``along`` to the next (claim it "greater" than
    0), or the largest (claim it "less", for ``increasing=False``)."""
    def statistic(rows: pd.DataFrame) -> float:
        steps = _steps(rows, by, along, metric)
        if not steps:
            return math.nan
        return float(min(steps) if increasing else max(steps))

    return statistic


def mean_step(*, by: str | Sequence[str], along: str,
              metric: str = "AL") -> Callable[[pd.DataFrame], float]:
    """"``metric`` grows with ``along``" as a trend: the mean change of ``metric`` from one
    value of ``along`` to the next, over every step of every group of ``by`` (claim it
    "greater" than 0 for a growth, "less" for a fall)."""
    def statistic(rows: pd.DataFrame) -> float:
        steps = _steps(rows, by, along, metric)
        return float(np.mean(steps)) if steps else math.nan

    return statistic


def curve_gap(a: pd.DataFrame, b: pd.DataFrame, *, x: str = "AL", y: str = "BLEU",
              points: int = 101, min_x: float = -math.inf, max_x: float = math.inf) -> float:
    """Mean of curve ``a`` minus curve ``b`` (``y`` as a piecewise-linear function of ``x``,
    points sorted by ``x``) over the ``x`` range both cover between ``min_x`` and ``max_x``:
    the comparison of two quality–latency curves at matched latency. NaN when they do not
    overlap there."""
    a, b = a.dropna(subset=[x, y]).sort_values(x), b.dropna(subset=[x, y]).sort_values(x)
    if not len(a) or not len(b):
        return math.nan
    lo, hi = max(a[x].min(), b[x].min(), min_x), min(a[x].max(), b[x].max(), max_x)
    if lo > hi:
        return math.nan
    grid = np.linspace(lo, hi, points) if hi > lo else np.array([lo])
    diff = np.interp(grid, a[x], a[y]) - np.interp(grid, b[x], b[y])
    return float(diff.mean())


def smallest(values) -> float:
    """The smallest of ``values``; NaN when there is none or one is NaN (a claim "at every
    …" is undefined when one of its comparisons is)."""
    values = list(values)
    return min(values) if values and not any(map(math.isnan, values)) else math.nan


def smallest_known(values) -> float:
    """The smallest of the values that are not NaN; NaN when none is."""
    known = [v for v in values if not math.isnan(v)]
    return min(known) if known else math.nan


def mean_known(values) -> float:
    """The mean of the values that are not NaN; NaN when none is."""
    known = [v for v in values if not math.isnan(v)]
    return float(np.mean(known)) if known else math.nan
