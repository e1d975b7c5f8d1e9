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
            if len(finite) and (finite == finite.round()).all() and (
                    pd.api.types.is_integer_dtype(values) or col in integer_columns):
                shown[col] = values.astype("Int64").astype(str).replace("<NA>", "")
    text = shown.to_markdown(index=False, floatfmt=f".{digits}f")
    (out_dir / f"{name}.md").write_text((f"{caption}\n\n" if caption else "") + text + "\n")
    return table


def select(summary: pd.DataFrame, columns: Sequence[str], *, sort_by: str | None = None,
           rename: dict[str, str] | None = None) -> pd.DataFrame:
    """Columns of a sweep summary (``param_k`` may be written ``k``), optionally sorted."""
    cols = [c if c in summary else f"param_{c}" for c in columns]
    missing = [c for c in cols if c not in summary]
    if missing:
        raise KeyError(f"summary has no column(s) {missing}; it has {list(summary.columns)}")
    out = summary[cols].rename(columns={f"param_{c}": c for c in columns})
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
        for i, row in g.iterrows():
            better = (g[x] <= row[x]) & (g[y] >= row[y]) & ((g[x] < row[x]) | (g[y] > row[y]))
            if not better.any():
                keep.append(i)
    return df.loc[keep].sort_values([*by, x], kind="stable").reset_index(drop=True)
