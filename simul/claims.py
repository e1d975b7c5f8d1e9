"""The papers' qualitative claims, checked on a run's numbers and reported honestly.

Each notebook ends with a table of claims (``claims.csv``/``.md`` next to its figures):
the claim in the paper's words, whether it holds on this run, and the numbers behind it.
The per-paper checks live in :mod:`simul.papers` (with ``KNOWN_GAPS``, the claims that do
not hold on the full run and why); the test suite reads the saved tables (a quick run checks
the claims that hold on a handful of utterances; the full run's claims are checked by
``tests/test_reproduce_full.py``, run by ``make reproduce``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

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
