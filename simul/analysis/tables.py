"""Tables for the notebooks: selections of sweep summaries, saved as Markdown and CSV."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

INTEGER_COLUMNS = ("k", "s", "n", "N", "beam", "utterances", "param_k", "param_s", "param_n",
                   "param_beam", "chunk_ms", "step_ms", "stride_ms")
"""Settings that are whole numbers even when a column holds them as floats."""



def save(table: pd.DataFrame, out_dir: str | Path, name: str, *, digits: int = 2,
         caption: str = "", integer_columns: Sequence[str] = INTEGER_COLUMNS) -> pd.DataFrame:
    """Write ``name.md`` (rounded, with an optional caption) and ``name.csv`` (full
    precision) under ``out_dir``; return the table for display. Integer columns, and the
    ``integer_columns`` (settings such as k, s, N held as floats because of NaN), print
    without decimals."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    table.to_csv(out_dir / f"{name}.csv", index=False)
    shown = table.copy()
    for col in shown.columns:  # integer columns (k, n, …) must not print as 100.00
        values = shown[col]
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            finite = values.dropna()
            if not len(finite) and pd.api.types.is_integer_dtype(values):
                shown[col] = ""  # an integer column with no value (Int64, all <NA>)
            elif len(finite) and (finite == finite.round()).all() and (
                    pd.api.types.is_integer_dtype(values) or col in integer_columns):
                # NaN → "" (pandas ≥ 3 turns <NA> into NaN, not "<NA>", with astype(str))
                shown[col] = pd.Series([("" if pd.isna(v) else str(int(v))) for v in values],
                                       index=values.index, dtype=object)
    text = shown.to_markdown(index=False, floatfmt=f".{digits}f")
    (out_dir / f"{name}.md").write_text((f"{caption}\n\n" if caption else "") + text + "\n")
    return table


AMBIGUOUS = {"n": "a sweep summary has two: ask for 'utterances' (the segments scored, "
                   "`simul score`'s n) or 'param_n' (the policy's setting, units per write)"}
"""Bare names :func:`select` does not resolve to a ``param_`` column, and why."""


def select(summary: pd.DataFrame, columns: Sequence[str], *, sort_by: str | None = None,
           rename: dict[str, str] | None = None) -> pd.DataFrame:
    """Columns of a sweep summary, each by its name, optionally sorted (by a name of the
    result) and renamed.

    A name the summary has is taken as it is. A policy setting may also be asked by its
    bare name (``k`` for ``param_k``; the column is then called ``k``) — except a name of
    :data:`AMBIGUOUS`: ``n`` is both the number of segments (``utterances`` in a summary)
    and wait-k's units per write (``param_n``), so it must be asked as one of those."""
    cols = []
    for c in columns:
        if c in summary:
            cols.append(c)
        elif c in AMBIGUOUS:
            raise KeyError(f"summary column {c!r} is ambiguous: {AMBIGUOUS[c]}")
        else:
            cols.append(f"param_{c}")
    missing = [c for c, col in zip(columns, cols, strict=True) if col not in summary]
    if missing:
        raise KeyError(f"summary has no column(s) {missing} (nor param_<name>); it has "
                       f"{list(summary.columns)}")
    out = summary[cols].set_axis(list(columns), axis="columns")
    if sort_by:
        out = out.sort_values(sort_by, kind="stable")
    return out.rename(columns=rename or {}).reset_index(drop=True)


def best_per_bucket(summary: pd.DataFrame, *, latency: str = "AL", quality: str = "BLEU",
                    width_ms: float = 500.0, by: Sequence[str] = ()) -> pd.DataFrame:
    """The best-quality row per latency bucket of ``width_ms`` (Ma et al. 2020, Fig. 3),
    per group of ``by`` columns; a ``bucket_ms`` column gives each bucket's lower edge."""
    df = summary.dropna(subset=[latency, quality]).copy()
    df["bucket_ms"] = (df[latency] // width_ms) * width_ms
    keys = [*by, "bucket_ms"]
    best = df.loc[df.groupby(keys, sort=True)[quality].idxmax()]
    return best.sort_values(keys).reset_index(drop=True)


def pareto_front(summary: pd.DataFrame, *, x: str = "LAAL", y: str = "BLEU",
                 by=("model", "policy")) -> pd.DataFrame:
    """The rows no other row of the same ``by`` group dominates (x no larger and y no
    smaller, one of them strictly), sorted by group and x; rows without x or y are dropped.
    Equal points are all kept."""
    df = summary.dropna(subset=[x, y])
    keep = []
    for _, g in df.groupby(list(by), sort=False):
        xs, ys = g[x].to_numpy(dtype=float), g[y].to_numpy(dtype=float)
        # dominates[i, j]: row j dominates row i
        dominates = ((xs[None, :] <= xs[:, None]) & (ys[None, :] >= ys[:, None])
                     & ((xs[None, :] < xs[:, None]) | (ys[None, :] > ys[:, None])))
        keep.extend(g.index[~dominates.any(axis=1)])
    return df.loc[keep].sort_values([*by, x], kind="stable").reset_index(drop=True)
