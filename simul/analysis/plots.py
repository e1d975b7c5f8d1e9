"""Figures for the notebooks: latency–quality curves, READ/WRITE timelines, saving.

Every figure has labelled axes with units; :func:`save` writes PNG (for the README and
notebooks) and PDF (for papers) under ``figures/<notebook>/``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from simul.corpus import Segment
from simul.metrics.units import text, word_spans
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
             title: str = "", annotate: str | None = None, markers: bool = True,
             legend_outside: bool = False):
    """Latency (x) against quality (y), one line per ``hue`` × ``style_by`` group, points
    joined in order of ``order_by`` (default: x). ``annotate`` labels each point with that
    column's value (e.g. ``k``). ``legend_outside`` puts the legend right of the axes, for
    figures whose curves fill the corners (widen the figure for it)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.4))
    groups = [c for c in (hue, style_by) if c]
    data = data.sort_values([*groups, order_by or x], kind="stable",
                            key=lambda col: col.map(natural_key) if col.name in groups else col)
    point = {"markers": markers} if style_by else {"marker": "o" if markers else None}
    orders = {f"{arg}_order": group_order(data[col]) for arg, col in (("hue", hue),
                                                                      ("style", style_by))
              if col and not pd.api.types.is_numeric_dtype(data[col])}
    sns.lineplot(data=data, x=x, y=y, hue=hue, style=style_by, dashes=False, sort=False,
                 estimator=None, ax=ax, **point, **orders,
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
    if legend_outside and ax.get_legend() is not None:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    return ax


def natural_key(value) -> tuple:
    """A sort key that orders numbers as numbers, also inside labels: ``"k = 50 frames"``
    before ``"k = 100 frames"`` (a string sort puts "100" before "50")."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return ((0, float(value), ""),)
    parts = re.split(r"(\d+(?:\.\d+)?)", str(value))
    return tuple((0, float(p), "") if i % 2 else (1, 0.0, p)
                 for i, p in enumerate(parts) if p)


def group_order(values: pd.Series) -> list:
    """The distinct values of a hue or style column in :func:`natural_key` order: the order
    of a plot's legend and colours."""
    return sorted(values.dropna().unique(), key=natural_key)


def reference_lines(ax, values: dict[str, float], *, axis: str = "y") -> None:
    """Dashed lines for offline scores (e.g. {"offline greedy": 41.2})."""
    colors = sns.color_palette("dark", len(values))
    for (label, value), color in zip(values.items(), colors, strict=True):
        line = ax.axhline if axis == "y" else ax.axvline
        line(value, ls="--", lw=1, color=color, label=label)
    old = ax.get_legend()
    ax.legend(fontsize=8, title=old.get_title().get_text() if old else None)


def save(fig, out_dir: str | Path, name: str) -> list[Path]:
    """Write ``name.png`` (150 dpi) and ``name.pdf`` under ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    paths = [out_dir / f"{name}.png", out_dir / f"{name}.pdf"]
    fig.savefig(paths[0], dpi=150)
    fig.savefig(paths[1])
    return paths


def panels(n: int, *, rows: int = 1, width: float = 5.2, height: float = 4.2,
           sharey: bool = True):
    """A figure of ``rows`` × ``n`` panels and its axes, row by row."""
    fig, axes = plt.subplots(rows, n, figsize=(width * n, height * rows), sharey=sharey,
                             squeeze=False)
    return fig, [ax for row in axes for ax in row]


def _short(label: str, width: int = 14) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def settings_text(record: Record, keys: Sequence[str] | None = None) -> str:
    """``"k=200, s=20, n=2"`` from the record's policy settings (all when ``keys`` is None)."""
    keys = list(record.settings) if keys is None else keys
    return ", ".join(f"{k}={record.settings[k]:g}" if isinstance(record.settings[k], float)
                     else f"{k}={record.settings[k]}" for k in keys if k in record.settings)


def timeline(record: Record, segment: Segment | None = None, *, ax=None, title: str = "",
             max_labels: int = 40, links: bool = False):
    """The READ/WRITE path of one utterance (Nguyen et al. 2021, Fig. 1).

    x: source read (ms); y: output units written. A READ moves right, a WRITE up; every
    output word is written next to the point where its last unit appeared (at most
    ``max_labels`` words: every k-th beyond that). With a ``segment`` that has an oracle
    alignment, the source words are shaded in turn and named on the top axis. ``links``,
    with a segment that has gold word links (en-de): each output word matched to a linked
    reference word gets a bar at its height from its delay to the end of the source words
    it translates: red where it was written before them (anticipated), green where it
    waited for them (:func:`simul.metrics.anticipation.linked_word_times`).
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(9.0, 5.2))
    xs, ys, written = [0.0], [0], 0
    reads, writes, unit_x = [], [], []
    for read_ms, n in record.trace:
        xs.append(read_ms)
        ys.append(written)
        if n:
            written += n
            xs.append(read_ms)
            ys.append(written)
            writes.append((read_ms, written))
            unit_x += [read_ms] * n
        else:
            reads.append((read_ms, written))
    ax.plot(xs, ys, color="0.3", lw=1.3, zorder=2)
    if reads:
        ax.scatter(*zip(*reads, strict=True), marker=">", s=20, color="tab:blue", zorder=3,
                   label=f"READ ({len(reads)})")
    if writes:
        ax.scatter(*zip(*writes, strict=True), marker="^", s=26, color="tab:orange", zorder=3,
                   label=f"WRITE ({len(writes)})")

    spans = word_spans(record.units, record.unit_type)
    every = max(1, math.ceil(len(spans) / max_labels))
    for i, (first, last) in enumerate(spans):
        if i % every and i != len(spans) - 1:
            continue
        word = text(record.units[first:last + 1], record.unit_type)
        ax.annotate(_short(word), (unit_x[last], last + 1), textcoords="offset points",
                    xytext=(-4, 2), ha="right", va="bottom", fontsize=8, color="0.15")

    alignment = getattr(segment, "alignment", None) if segment is not None else None
    if links and alignment is not None and getattr(segment, "links", None):
        _links_overlay(ax, record, segment, spans)
    if alignment is not None and alignment.words:
        top = source_words_axis(ax, alignment.words)
        top.set_xlabel("source words (oracle alignment)", fontsize=9)
    ax.axvline(record.source_length, ls=":", color="0.4", label="end of source")
    ax.set_xlim(0, max(record.source_length, max(xs)) * 1.03)
    ax.set_ylim(0, max(written, 1) * 1.08)
    ax.set_xlabel("source read (ms)")
    ax.set_ylabel("output units written")
    ax.set_title(title or f"{record.policy} ({settings_text(record)})", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    return ax


def _links_overlay(ax, record: Record, segment: Segment, spans) -> None:
    """The bars of ``timeline(..., links=True)``: one per linked output word, at the height
    where its last unit was written, from its delay to when its source words were heard."""
    from simul.metrics.anticipation import linked_word_times

    if len(spans) != len(record.prediction.split()):
        return  # units that do not make the prediction's words: no height to draw at
    labelled = set()
    for w in linked_word_times(record, segment):
        y = spans[w.index][1] + 1
        label = ("written before its source was heard" if w.anticipates
                 else "waited for its source")
        ax.plot([w.delay, w.heard], [y, y], lw=2.2, alpha=0.75, solid_capstyle="butt",
                color="tab:red" if w.anticipates else "tab:green", zorder=1,
                label=None if label in labelled else label)
        ax.plot([w.heard], [y], marker="|", ms=9, color="0.25", zorder=1)
        labelled.add(label)


def source_words_axis(ax, words, *, unit_ms: float = 1.0):
    """Shade every other oracle source word on ``ax`` (x in units of ``unit_ms``: 1 for ms,
    1000 for seconds) and name the words on a secondary top axis, which is returned."""
    for i, w in enumerate(words):
        if i % 2 == 0:
            ax.axvspan(w.start_ms / unit_ms, w.end_ms / unit_ms, color="0.9", zorder=0, lw=0)
    top = ax.secondary_xaxis("top")
    top.set_xticks([(w.start_ms + w.end_ms) / 2 / unit_ms for w in words],
                   labels=[w.text for w in words])
    top.tick_params(axis="x", labelrotation=60, labelsize=8, length=0)
    for label in top.get_xticklabels():
        label.set_horizontalalignment("left")
    return top
