"""Figures for the notebooks: latency–quality curves, READ/WRITE timelines, saving.

Every figure has labelled axes with units; :func:`save` writes PNG (for the README and
notebooks) and PDF (for papers) under ``figures/<notebook>/``.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from simul.records import Record

UNITS = {"BLEU": "BLEU", "chrF": "chrF", "AP": "AP (ratio)", "RTF": "RTF (ratio)",
         "length_diff": "words (hypothesis − reference)"}


def axis_label(metric: str) -> str:
    """``LAAL_CA`` → ``LAAL, computation-aware (ms)``; units for every metric we plot."""
    if metric in UNITS:
        return UNITS[metric]
    base, ca = (metric[:-3], True) if metric.endswith("_CA") else (metric, False)
    if base in UNITS:
        return UNITS[base] + (", computation-aware" if ca else "")
    return f"{base}{', computation-aware' if ca else ''} (ms)"


def style() -> None:
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")


def tradeoff(data: pd.DataFrame, *, x: str = "LAAL", y: str = "BLEU", hue: str | None = None,
             style_by: str | None = None, order_by: str | None = None, ax=None,
             title: str = "", annotate: str | None = None, markers: bool = True):
    """Latency (x) against quality (y), one line per ``hue`` × ``style_by`` group, points
    joined in order of ``order_by`` (default: x). ``annotate`` labels each point with that
    column's value (e.g. ``k``)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.4))
    groups = [c for c in (hue, style_by) if c]
    data = data.sort_values([*groups, order_by or x], kind="stable")
    point = {"markers": markers} if style_by else {"marker": "o" if markers else None}
    sns.lineplot(data=data, x=x, y=y, hue=hue, style=style_by, dashes=False, sort=False,
                 estimator=None, ax=ax, **point,
                 units=None if not groups else data[groups].astype(str).agg("/".join, axis=1))
    if annotate:
        for _, row in data.iterrows():
            ax.annotate(f"{row[annotate]:g}" if isinstance(row[annotate], float)
                        else str(row[annotate]), (row[x], row[y]), textcoords="offset points",
                        xytext=(3, 3), fontsize=7, color="0.35")
    ax.set_xlabel(axis_label(x))
    ax.set_ylabel(axis_label(y))
    if title:
        ax.set_title(title)
    return ax


def reference_lines(ax, values: dict[str, float], *, axis: str = "y") -> None:
    """Dashed lines for offline scores (e.g. {"offline greedy": 41.2})."""
    colors = sns.color_palette("dark", len(values))
    for (label, value), color in zip(values.items(), colors, strict=True):
        line = ax.axhline if axis == "y" else ax.axvline
        line(value, ls="--", lw=1, color=color, label=label)
    ax.legend(fontsize=8)


def timeline(record: Record, *, ax=None, title: str = "", max_units: int | None = None):
    """The READ/WRITE timeline of one simulated utterance (Nguyen et al. 2021, Fig. 1):
    source time read (ms) on x, output units written on y; reads are horizontal moves,
    writes vertical ones, each written unit labelled."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 4.2))
    xs, ys = [0.0], [0]
    written = 0
    reads, writes = [], []
    for read_ms, n in record.trace:
        xs.append(read_ms)
        ys.append(written)
        if n:
            writes.append((read_ms, written, n))
            written += n
            xs.append(read_ms)
            ys.append(written)
        else:
            reads.append((read_ms, written))
    ax.plot(xs, ys, color="0.3", lw=1.2, drawstyle="default")
    if reads:
        ax.scatter(*zip(*reads, strict=True), marker=">", s=24, color="tab:blue", label="READ",
                   zorder=3)
    if writes:
        ax.scatter([w[0] for w in writes], [w[1] + w[2] for w in writes], marker="^", s=28,
                   color="tab:orange", label="WRITE", zorder=3)
    units = record.units[: max_units or len(record.units)]
    pos = 0
    for read_ms, start, n in writes:
        for i in range(n):
            if pos < len(units):
                ax.annotate(units[pos].replace("▁", "_"), (read_ms, start + i + 1),
                            textcoords="offset points", xytext=(4, -3), fontsize=7)
            pos += 1
    ax.axvline(record.source_length, ls=":", color="0.5", label="end of source")
    ax.set_xlabel("source read (ms)")
    ax.set_ylabel("output units written")
    ax.set_title(title or f"{record.policy} {record.settings}", fontsize=9)
    ax.legend(loc="upper left", fontsize=8)
    return ax


def save(fig, out_dir: str | Path, name: str) -> list[Path]:
    """Write ``name.png`` (150 dpi) and ``name.pdf`` under ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    paths = [out_dir / f"{name}.png", out_dir / f"{name}.pdf"]
    fig.savefig(paths[0], dpi=150)
    fig.savefig(paths[1])
    return paths


def panels(n: int, *, width: float = 5.2, height: float = 4.2, sharey: bool = True):
    fig, axes = plt.subplots(1, n, figsize=(width * n, height), sharey=sharey, squeeze=False)
    return fig, list(axes[0])
